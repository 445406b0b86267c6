"""The command line on the formats made by JAX/jaxlib in the test: protos, StableHLO, an XLA dump
tree, each written exactly as the same run on its plain HLO text. Skipped, with one reason,
without jax."""

from __future__ import annotations

from pathlib import Path

import pytest
from conftest import needs_xla
from test_formats_cli import ALL, rewritten, run

from hlo_rewrite import formats

needs_xla()
pytestmark = pytest.mark.xla


@pytest.fixture(scope="module")
def fi():
    import format_inputs

    return format_inputs


def test_binary_proto_named_hlo(fi, tmp_path):
    proto = fi.to_proto(fi.jax_hlo())
    src = tmp_path / "graph.hlo"
    src.write_bytes(proto)
    plain = tmp_path / "plain.hlo"
    plain.write_text(fi.xla_text(proto))  # the equivalent plain HLO text
    expected = rewritten(plain, *ALL)
    assert rewritten(src, *ALL) == expected != plain.read_bytes()
    r = run([src, *ALL, "-o", tmp_path / "out.pb"])
    assert r.exit_code == 0, r.stderr
    out = (tmp_path / "out.pb").read_bytes()
    assert fi.xla_text(out) == fi.xla_text(fi.to_proto(expected.decode()))
    r = run([src, *ALL, "--output-format", "proto"])
    assert r.exit_code == 0 and r.stdout_bytes == out
    r = run(["-i", src, *ALL])
    assert r.exit_code == 0 and src.read_bytes() == out  # in place: still a binary proto
    r = run([src, plain, "--output-format", "proto"])
    assert r.exit_code == 2 and "one binary module" in r.stderr


def test_xla_dump_tree_with_hloproto(fi, tmp_path):
    tree = Path(fi.xla_dump())
    r = run([tree, "-o", tmp_path / "out", *ALL, "--include", "*.hlo.pb.gz", "--include", "*.txt"])
    assert r.exit_code == 0, r.stderr
    protos = sorted(p for p in tree.rglob("*.hlo.pb.gz"))
    assert protos
    for p in protos:
        rel = p.relative_to(tree)
        out = tmp_path / "out" / rel
        assert out.read_bytes()[:2] == b"\x1f\x8b"  # named .gz: gzip
        doc = formats.load(str(out))
        assert (doc.format, doc.wrapped) == (formats.PROTO, True)  # .pb: an HloProto again
        plain = tmp_path / "plain.hlo"
        plain.write_text(formats.load(str(p)).text)
        assert doc.text == fi.xla_text(fi.to_proto(rewritten(plain, *ALL).decode()))


def test_pbtxt(fi, tmp_path):
    pytest.importorskip("google.protobuf", reason="protobuf not installed (pip install 'hlo-rewrite[xla]')")
    from hlo_rewrite import xla_bridge

    proto = fi.to_proto(fi.jax_hlo())
    src = tmp_path / "module.pbtxt"
    src.write_text(xla_bridge.proto_to_pbtxt(proto))
    plain = tmp_path / "plain.hlo"
    plain.write_text(fi.xla_text(proto))
    assert rewritten(src, *ALL) == rewritten(plain, *ALL)
    r = run([src, *ALL, "-o", tmp_path / "out.pbtxt"])
    assert r.exit_code == 0, r.stderr
    assert formats.load(str(tmp_path / "out.pbtxt")).format == formats.PBTXT


def test_stablehlo(fi, tmp_path):
    mlir = fi.jax_stablehlo()
    src = tmp_path / "module.mlir"
    src.write_text(mlir)
    plain = tmp_path / "plain.hlo"
    plain.write_text(fi.xla_text_of_mlir(mlir))  # the equivalent plain HLO text
    expected = rewritten(plain, *ALL)
    assert rewritten(src, *ALL) == expected
    r = run([src, *ALL, "-o", tmp_path / "out.mlir"])
    assert r.exit_code == 0, r.stderr
    out = (tmp_path / "out.mlir").read_text()
    assert "stablehlo.custom_call @AwsNeuron" in out
    assert fi.xla_text_of_mlir(out) == fi.xla_text_of_mlir(
        run([plain, *ALL, "--output-format", "stablehlo"]).stdout)
    r = run(["-i", src, *ALL, "--output-format", "hlo"])
    assert r.exit_code == 2 and "keeps each file's format" in r.stderr
