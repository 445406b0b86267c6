"""Walking an XLA --xla_dump_to tree made by JAX in the test: formats judged by content, and a
proto dump rewritten like its plain text. Skipped, with one reason, without jax."""

from __future__ import annotations

import pytest
from conftest import needs_xla

from hlo_rewrite import formats

needs_xla()
pytestmark = pytest.mark.xla


@pytest.fixture(scope="module")
def xla_dump():
    import format_inputs

    return format_inputs.xla_dump()


def test_xla_dump_tree_formats_are_judged_by_content(xla_dump):
    found = {}
    for e in formats.walk(str(xla_dump)):
        doc = formats.load(e.path, fallback=None)
        found[e.relpath] = None if doc is None else (doc.format, doc.compressed, doc.wrapped)
    hlo = {r for r, k in found.items() if k is not None}
    assert hlo  # and every HLO file is one of the three kinds XLA wrote
    for rel in hlo:
        if rel.endswith(".hlo.pb.gz"):
            assert found[rel] == ("proto", True, True)  # an HloProto, gzipped
        elif rel.endswith(".txt"):
            assert found[rel] == ("hlo", False, False)
        else:
            assert rel.endswith("/module.mlir") and found[rel] == ("stablehlo", False, False)
    # the other protos (topology, compile options, memory reports), reports, LLVM IR, objects: skipped
    assert any(r.endswith("topology.pb") for r in found) and not any(r.endswith("topology.pb") for r in hlo)
    assert any(r.endswith("memory-usage-report.pb.gz") for r in found)
    assert not any(r.endswith(("memory-usage-report.pb.gz", "compile_options.pb", ".ll", ".o", "live-range.txt"))
                   for r in hlo)
    # the same file names stand in several folders
    names = [r.rsplit("/", 1)[-1] for r in found if "/" in r]
    assert names.count("module.mlir") == len([r for r in found if r.endswith("/module.mlir")]) >= 2


def test_xla_proto_dump_rewrites_like_its_plain_text(xla_dump):
    from test_formats import rewrite

    protos = [e for e in formats.walk(str(xla_dump), include=["*.hlo.pb.gz"])]
    assert protos
    changed = 0
    for e in protos:
        doc = formats.load(e.path)
        out = [rewrite(u.text, e.relpath) for u in doc.units]
        assert out == [rewrite(doc.text)]
        changed += out[0] != doc.text
        written = doc.encode(out, output_format=formats.PROTO)  # an HloProto again, gzipped like the input
        again = formats.from_bytes(written, e.relpath)
        assert (again.format, again.compressed, again.wrapped) == ("proto", True, True)
    assert changed  # the module with the psum and all-gather was rewritten
