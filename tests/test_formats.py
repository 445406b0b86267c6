"""The formats dumps come in (hlo_rewrite.formats, hlo_rewrite.xla_bridge).

For every format the rewritten module must be exactly what the same run gives on the
equivalent plain HLO text. The formats JAX/jaxlib makes (tests/format_inputs.py) are tested in
test_formats_xla.py.
"""

from __future__ import annotations

import gzip
import os
import sys

import pytest
from conftest import ALLREDUCE_MODULE

from hlo_rewrite import formats, parse_module, print_module, xla_bridge
from hlo_rewrite.errors import HloParseError
from hlo_rewrite.formats import wire
from hlo_rewrite.passes import DEFAULT_PIPELINE, PassOptions
from hlo_rewrite.pipeline import run_passes

OPTIONS = PassOptions(all_computations=True)


def rewrite(text: str, name: str = "in.hlo") -> str:
    module = parse_module(text, name)
    run_passes(module, DEFAULT_PIPELINE, OPTIONS)
    return print_module(module)


def rewrite_doc(doc: formats.Document) -> list[str]:
    return [rewrite(u.text, doc.name) for u in doc.units]


@pytest.fixture
def hlo_text() -> str:
    """A hand-written module (test_formats_xla.py runs the same tests on one JAX lowered)."""
    return ALLREDUCE_MODULE


# --------------------------------------------------------------------------- plain text and sniffing


def test_plain_text_is_one_unit_and_unchanged_bytes_come_back(hlo_text):
    doc = formats.from_bytes(hlo_text.encode(), "a.hlo")
    assert doc.format == formats.HLO and not doc.compressed
    assert [u.text for u in doc.units] == [hlo_text]
    assert doc.encode([hlo_text]) == hlo_text.encode()
    out = rewrite(hlo_text)
    assert out != hlo_text  # the passes do something on these inputs
    assert doc.encode([out]) == out.encode()


@pytest.mark.parametrize("data, expected", [
    (b"// a comment\n/* and another */\nHloModule m\n", "hlo"),
    (b"\xef\xbb\xbfHloModule m\n", "hlo"),
    (b"ENTRY e {\n  ROOT p = f32[] parameter(0)\n}\n", "hlo"),
    (b"%add.1 (a: f32[], b: f32[]) -> f32[] {\n  ROOT %s = f32[] add(%a, %b)\n}\n", "hlo"),  # no header line
    (b"add {\n  ROOT s = f32[] add(a, b)\n}\n\nENTRY e {\n}\n", "hlo"),
    (b"body {\n  color: red;\n}\n", None),  # a bare block and no ENTRY: not HLO
    (b"#loc1 = loc(\"x\")\n" * 5000 + b"module @m {\n  %0 = stablehlo.constant dense<1> : tensor<i32>\n}\n",
     "stablehlo"),  # the first operation past the first 64 KB
    (b"#loc = loc(unknown)\nmodule @m {\n  func.func @main() {\n    stablehlo.return\n  }\n}\n", "stablehlo"),
    (b"# comment\nname: \"m\"\nentry_computation_name: \"main\"\ncomputations {\n}\n", "pbtxt"),
    (b"[g]\nTensorsGraphInfo:\n\n## BEGIN_GRAPH\nIR {\n}\n\n## END_GRAPH\n", "torch_xla"),
    (b"just some notes about HloModule\n", None),
    (b"module @m { func.func @f() { return } }\n", None),  # MLIR, but not StableHLO/MHLO
    (bytes(range(256)) * 4, None),
    (b"", None),
])
def test_sniff_judges_by_content(data, expected):
    assert formats.sniff(data) == expected


def test_wire_format_check_reads_only_well_formed_messages():
    # field 1 (name) "m", field 3 (computations) an empty message
    assert wire.is_module(b"\x0a\x01m\x1a\x00")
    assert not wire.is_module(b"\x0a\x01m")  # no computations
    assert not wire.is_module(b"\x0a\x05m")  # length past the end
    assert not wire.is_module(b"\x0a\x01m\x1a\x00\x0f")  # wire type 7
    module = b"\x0a\x01m\x12\x01e\x1a\x00"
    assert wire.hlo_proto_kind(module) == wire.MODULE
    wrapped = wire.wrap(module) + b"\x1a\x02\x08\x01"  # an HloProto with a buffer assignment
    assert wire.hlo_proto_kind(wrapped) == wire.WRAPPED and wire.unwrap(wrapped) == module
    assert wire.hlo_proto_kind(wire.wrap(b"\x08\x01")) is None  # field 1 holds no module
    assert wire.varint(300) == b"\xac\x02" and wire.read_varint(b"\xac\x02", 0) == (300, 2)
    with_id = module + b"\x28\x07"  # id: 7
    assert wire.varint_field(with_id, wire.MODULE_ID) == 7 and wire.varint_field(module, wire.MODULE_ID) is None
    assert wire.with_varint_field(with_id, wire.MODULE_ID, 300) == module + b"\x28\xac\x02"


# --------------------------------------------------------------------------- gzip


def test_gzip_is_read_by_its_magic_bytes_and_written_back_as_gzip(hlo_text):
    raw = gzip.compress(hlo_text.encode())
    doc = formats.from_bytes(raw, "dump.txt")  # no .gz in the name: the magic bytes decide
    assert doc.format == formats.HLO and doc.compressed
    assert doc.text == hlo_text
    outputs = rewrite_doc(doc)
    assert outputs == [rewrite(hlo_text)]
    data = doc.encode(outputs)
    assert data[:2] == b"\x1f\x8b"
    assert gzip.decompress(data).decode() == rewrite(hlo_text)
    assert doc.encode(outputs) == data  # no timestamp in the header: same bytes every time
    assert doc.encode(outputs, compress=False) == rewrite(hlo_text).encode()
    assert doc.encode([hlo_text]) == raw  # unchanged: the input's own bytes


def test_plain_input_written_as_gzip_when_asked():
    doc = formats.from_bytes(ALLREDUCE_MODULE.encode(), "a.hlo")
    assert gzip.decompress(doc.encode([ALLREDUCE_MODULE], compress=True)) == ALLREDUCE_MODULE.encode()


def test_damaged_gzip_is_a_located_error():
    raw = gzip.compress(ALLREDUCE_MODULE.encode())[:-12]
    with pytest.raises(HloParseError) as info:
        formats.from_bytes(raw, "bad.hlo.gz")
    assert info.value.filename == "bad.hlo.gz" and "gzip" in info.value.message


def test_invalid_utf8_inside_gzip_names_the_line():
    raw = gzip.compress(b"HloModule m\n\nENTRY e {\n  \xff\n}\n")
    with pytest.raises(HloParseError) as info:
        formats.from_bytes(raw, "x.gz")
    assert (info.value.line, info.value.column) == (4, 3)


@pytest.mark.parametrize("path, fmt, gz", [
    ("out.hlo", None, False), ("out.hlo.gz", None, True), ("out.pb", "proto", False),
    ("out.pb.gz", "proto", True), ("x/out.mlir", "stablehlo", False), ("out.pbtxt", "pbtxt", False),
    ("-", None, False), (None, None, False),
])
def test_destination_names_choose_format_and_compression(path, fmt, gz):
    assert formats.format_for_destination(path) == fmt
    assert formats.wants_gzip(path) == gz


# --------------------------------------------------------------------------- torch_xla dumps

IR_GRAPH = "IR {\n  %0 = f32[] prim::Constant(), value=1\n  %1 = f32[4]{0} aten::expand(%0), size=(4)\n}\n"


@pytest.mark.parametrize("body, line, message", [
    ("## BEGIN_GRAPH\nHloModule m\n", 1, "## BEGIN_GRAPH without ## END_GRAPH"),
    ("## BEGIN_GRAPH\nHloModule m\n## END_GRAPH\n[g]\n## END_GRAPH\n", 5, "## END_GRAPH without ## BEGIN_GRAPH"),
    ("## BEGIN_GRAPH\nx\n## BEGIN_GRAPH\n", 3, "## BEGIN_GRAPH inside a graph that is not closed"),
])
def test_torch_xla_framing_errors_are_located(body, line, message):
    with pytest.raises(HloParseError) as info:
        formats.from_bytes(body.encode(), "t.txt")
    assert (info.value.line, info.value.column, info.value.message) == (line, 1, message)


# --------------------------------------------------------------------------- HloModuleProto and StableHLO


def test_without_the_extra_one_line_says_what_to_install(monkeypatch):
    monkeypatch.setitem(sys.modules, "jax._src.lib", None)  # import fails as without jaxlib
    assert not xla_bridge.available()
    proto = b"\x0a\x01m\x1a\x00"
    with pytest.raises(xla_bridge.XlaUnavailable) as info:
        formats.from_bytes(proto, "graph.hlo")
    rendered = info.value.render()
    assert rendered == ("graph.hlo: error: reading or writing a binary HloModuleProto needs jaxlib: "
                        "pip install 'hlo-rewrite[xla]'")
    assert info.value.exit_code == 3
    doc = formats.from_bytes(ALLREDUCE_MODULE.encode(), "a.hlo")
    with pytest.raises(xla_bridge.XlaUnavailable, match=r"hlo-rewrite\[xla\]"):
        doc.encode([rewrite(ALLREDUCE_MODULE)], output_format=formats.STABLEHLO)
    # plain text needs nothing from jaxlib
    assert doc.encode([ALLREDUCE_MODULE]) == ALLREDUCE_MODULE.encode()


def test_docs_formats_python_examples_run():
    """The python blocks of docs/formats.md run as written."""
    import re

    from conftest import REPO

    doc = (REPO / "docs" / "formats.md").read_text(encoding="utf-8")
    blocks = re.findall(r"^```python\n(.*?)^```$", doc, re.S | re.M)
    assert blocks
    for block in blocks:
        exec(compile(block, "docs/formats.md", "exec"), {})


def _large(text: str) -> str:
    """``text`` with comment lines after it, to at least the size that is mapped."""
    pad = "// padding to the size the reader maps\n" * (formats.mapped.MAP_MIN_BYTES // 30)
    return text + pad


def test_a_large_hlo_text_file_is_decoded_from_a_map_as_it_would_be_read(tmp_path):
    path = tmp_path / "big.hlo"
    text = _large(ALLREDUCE_MODULE)
    path.write_bytes(text.encode())
    mapped = formats.map_hlo_text(str(path), "big.hlo")
    read = formats.from_bytes(formats.read_bytes(str(path)), "big.hlo")
    assert mapped is not None and read is not None
    assert (mapped.format, mapped.compressed, mapped.text, mapped.units) == (read.format, read.compressed,
                                                                            read.text, read.units)
    assert mapped.text == text


@pytest.mark.parametrize("kind", ["small", "gzip", "not-utf8", "proto", "stdin", "missing", "directory"])
def test_only_large_plain_utf8_hlo_text_is_mapped(tmp_path, kind):
    """Everything else is read as before, so its errors (a located UTF-8 error, a missing file)
    are said the same way."""
    path = tmp_path / "in.hlo"
    text = _large(ALLREDUCE_MODULE)
    data = {
        "small": ALLREDUCE_MODULE.encode(),
        "gzip": gzip.compress(text.encode()),
        "not-utf8": text.encode().replace(b"// padding", b"// pad\xffing", 1),
        "proto": b"\x0a\x03abc" * (formats.mapped.MAP_MIN_BYTES // 4),
    }.get(kind)
    if data is not None:
        path.write_bytes(data)
    elif kind == "directory":
        path.mkdir()
    target = "-" if kind == "stdin" else str(path)
    assert formats.map_hlo_text(target, "in.hlo") is None


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="no named pipes here")
def test_a_fifo_is_not_opened_to_see_whether_it_could_be_mapped(tmp_path):
    """Opening a FIFO waits for its writer, and a reader that opens it only to look, then
    closes it, can leave the writer with a broken pipe: only a regular file is opened."""
    import threading

    fifo = tmp_path / "in.hlo"
    os.mkfifo(fifo)
    found: list[object] = []
    looker = threading.Thread(target=lambda: found.append(formats.map_hlo_text(str(fifo), "in.hlo")))
    looker.start()
    looker.join(timeout=10)
    stuck = looker.is_alive()
    if stuck:  # it opened the pipe and waits for a writer: give it one, so the thread ends
        with open(fifo, "wb"):
            pass
        looker.join(timeout=10)
    assert not stuck and found == [None]
