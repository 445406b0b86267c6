"""The formats made by JAX/jaxlib in the test (tests/format_inputs.py): torch_xla dumps of JAX
modules, HloModuleProto (binary and text) and StableHLO, each rewritten exactly as its plain HLO
text. Skipped, with one reason, without jax."""

from __future__ import annotations

import gzip

import pytest
from conftest import ALLREDUCE_MODULE, needs_xla
from test_formats import (
    IR_GRAPH,
    rewrite,
    rewrite_doc,
    test_gzip_is_read_by_its_magic_bytes_and_written_back_as_gzip,
    test_plain_text_is_one_unit_and_unchanged_bytes_come_back,
)

from hlo_rewrite import formats, xla_bridge
from hlo_rewrite.errors import HloError, HloParseError

needs_xla()
pytestmark = pytest.mark.xla

# the plain-text tests of test_formats.py, run again here on a module JAX lowered
__all__ = ["test_gzip_is_read_by_its_magic_bytes_and_written_back_as_gzip",
           "test_plain_text_is_one_unit_and_unchanged_bytes_come_back"]


@pytest.fixture(scope="module")
def fi():
    import format_inputs

    return format_inputs


@pytest.fixture
def hlo_text(fi) -> str:
    """A module JAX lowered (the tests imported from test_formats.py run on it here)."""
    return fi.jax_hlo()


def test_torch_xla_dump_rewrites_each_graph_and_keeps_every_byte_outside(fi, hlo_text):
    other = ALLREDUCE_MODULE.replace("HloModule m", "HloModule other")
    text = fi.torch_xla_dump([hlo_text, IR_GRAPH, other])
    doc = formats.from_bytes(text.encode(), "tensors.txt")
    assert doc.format == formats.TORCH_XLA
    assert [u.label for u in doc.units] == ["graph 1 [SyncTensorsGraph.0]", "graph 3 [SyncTensorsGraph.2]"]
    assert doc.kept == ["graph 2 [SyncTensorsGraph.1]"]
    # each unit is the graph torch_xla printed, newline before ## END_GRAPH included
    assert [u.text for u in doc.units] == [hlo_text + "\n", other + "\n"]
    for unit in doc.units:  # each unit starts on the line after its ## BEGIN_GRAPH
        assert text.split("\n")[unit.line_offset - 1] == "## BEGIN_GRAPH"
    outputs = rewrite_doc(doc)
    assert outputs == [rewrite(hlo_text + "\n"), rewrite(other + "\n")]
    rebuilt = doc.encode(outputs).decode()
    assert rebuilt == fi.torch_xla_dump([rewrite(hlo_text + "\n")[:-1], IR_GRAPH, rewrite(other + "\n")[:-1]])
    assert doc.encode([u.text for u in doc.units]) == text.encode()


def test_torch_xla_dump_error_points_at_the_line_in_the_whole_file(fi):
    broken = ALLREDUCE_MODULE.replace("all-reduce(", "all-reduce(f32[8]{0} %nope, ")
    text = fi.torch_xla_dump([ALLREDUCE_MODULE, broken])
    doc = formats.from_bytes(text.encode(), "tensors.txt")
    unit = doc.units[1]
    with pytest.raises(HloError) as info:
        rewrite(unit.text)
    line = info.value.line + unit.line_offset
    assert "%nope" in text.split("\n")[line - 1]


def test_torch_xla_dump_without_hlo_graphs(fi):
    data = fi.torch_xla_dump([IR_GRAPH]).encode()
    with pytest.raises(formats.FormatError, match="XLA_SAVE_TENSORS_FMT=hlo"):
        formats.from_bytes(data, "t.txt")
    assert formats.from_bytes(data, "t.txt", fallback=None) is None


def test_torch_xla_dump_keeps_crlf_and_gzip(fi):
    text = fi.torch_xla_dump([ALLREDUCE_MODULE]).replace("\n", "\r\n")
    doc = formats.from_bytes(gzip.compress(text.encode()), "t.gz")
    assert doc.format == formats.TORCH_XLA and doc.compressed
    out = rewrite_doc(doc)
    assert out == [rewrite(doc.units[0].text)]
    rebuilt = gzip.decompress(doc.encode(out)).decode()
    assert rebuilt.startswith(text[: text.index("## BEGIN_GRAPH\r\n") + 16])
    assert rebuilt.endswith("## END_GRAPH\r\n\r\n\r\n")


def test_binary_proto_named_like_text_is_read_as_a_proto(fi):
    text = fi.jax_hlo()
    proto = fi.to_proto(text)
    doc = formats.from_bytes(proto, "graph.hlo")
    assert doc.format == formats.PROTO
    plain = fi.xla_text(proto)  # the equivalent plain HLO text: XLA's print of the proto
    assert doc.text == plain
    outputs = rewrite_doc(doc)
    assert outputs == [rewrite(plain)]
    assert outputs[0] != plain
    assert doc.encode(outputs) == rewrite(plain).encode()  # written as HLO text by default
    assert doc.encode([doc.text], output_format=formats.PROTO) == proto  # unchanged: the same bytes
    written = doc.encode(outputs, output_format=formats.PROTO)
    assert doc.encode(outputs, output_format=formats.PROTO) == written  # the same bytes every time
    assert formats.sniff(written) == formats.PROTO
    assert fi.xla_text(written) == fi.xla_text(fi.to_proto(outputs[0]))
    again = formats.from_bytes(gzip.compress(written), "g.pb.gz")
    assert again.format == formats.PROTO and again.compressed
    assert rewrite_doc(again) == [again.text]  # a rewritten module is a fixed point


def test_stablehlo_text_is_converted_by_xla(fi):
    mlir = fi.jax_stablehlo()
    doc = formats.from_bytes(mlir.encode(), "module.txt")
    assert doc.format == formats.STABLEHLO
    plain = xla_bridge.mlir_to_text(mlir)  # the equivalent plain HLO text
    assert doc.text == plain and plain.startswith("HloModule")
    outputs = rewrite_doc(doc)
    assert outputs == [rewrite(plain)]
    assert outputs[0] != plain
    assert doc.encode(outputs) == outputs[0].encode()
    back = doc.encode(outputs, output_format=formats.STABLEHLO).decode()
    assert formats.sniff(back.encode()) == formats.STABLEHLO
    assert "AwsNeuron" in back
    assert xla_bridge.mlir_to_text(back) == xla_bridge.mlir_to_text(xla_bridge.text_to_mlir(outputs[0]))


def test_xla_rejection_is_a_clear_error(fi):
    with pytest.raises(HloParseError, match="XLA cannot convert this MLIR module") as info:
        formats.from_bytes(b"module @m {\n  func.func @main() {\n    stablehlo.bogus\n  }\n}\n", "m.mlir")
    assert info.value.filename == "m.mlir"
    with pytest.raises(HloParseError, match="XLA's parser refuses"):
        formats.from_bytes(ALLREDUCE_MODULE.encode(), "a.hlo").encode(["HloModule x\nENTRY e {\n}\n"],
                                                                       output_format=formats.PROTO)


@pytest.mark.parametrize("wrapped", [False, True])
def test_pbtxt_is_read_and_written_through_xla_schema(fi, wrapped):
    pytest.importorskip("google.protobuf", reason="protobuf not installed (pip install 'hlo-rewrite[xla]')")
    proto = fi.to_proto(fi.jax_hlo())
    pbtxt = xla_bridge.proto_to_pbtxt(proto, wrapped)
    assert pbtxt.startswith("hlo_module {" if wrapped else 'name: "')
    doc = formats.from_bytes(pbtxt.encode(), "module.txt")
    assert (doc.format, doc.wrapped) == (formats.PBTXT, wrapped)
    plain = fi.xla_text(proto)  # the equivalent plain HLO text
    assert doc.text == plain
    outputs = rewrite_doc(doc)
    assert outputs == [rewrite(plain)] and outputs[0] != plain
    assert doc.encode(outputs) == outputs[0].encode()
    back = doc.encode(outputs, output_format=formats.PBTXT)
    again = formats.from_bytes(back, "again.pbtxt")
    assert (again.format, again.wrapped) == (formats.PBTXT, wrapped)
    assert again.text == fi.xla_text(fi.to_proto(outputs[0]))
    assert doc.encode([doc.text], output_format=formats.PBTXT) == pbtxt.encode()  # unchanged: same bytes


def test_pbtxt_syntax_error_is_located(fi):
    pytest.importorskip("google.protobuf", reason="protobuf not installed (pip install 'hlo-rewrite[xla]')")
    data = b'name: "m"\nentry_computation_name: "main"\ncomputations {\n  name: "main"\n  bogus_field: 3\n}\n'
    with pytest.raises(HloParseError) as info:
        formats.from_bytes(data, "m.pbtxt")
    err = info.value
    assert (err.filename, err.line, err.source_line) == ("m.pbtxt", 5, "  bogus_field: 3")
    assert "bogus_field" in err.message
