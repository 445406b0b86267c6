"""strip-debug-info: metadata and the stack-frame tables go, every other byte stays."""

from __future__ import annotations

import importlib
import re
from pathlib import Path
from typing import Any

import pytest
from conftest import CORPUS, read_exact

from hlo_rewrite import DEFAULT_PIPELINE, parse_module, print_module, run_passes
from hlo_rewrite.passes import PassReport

GOLDEN_JAX = Path(__file__).resolve().parent / "golden" / "convert-collectives-to-custom-call" / \
    "jax_post_shard_map.hlo"
TABLES = ("FileNames", "FunctionNames", "FileLocations", "StackFrames")

SMALL = """HloModule small, entry_computation_layout={(f32[4]{0})->f32[4]{0}}

FileNames
1 "a.py"

FunctionNames
1 "f"

FileLocations
1 {file_name_id=1 function_name_id=1 line=3 end_line=3 column=1 end_column=9}

StackFrames
1 {file_location_id=1 parent_frame_id=0}


%add (a: f32[], b: f32[]) -> f32[] {
  %a = f32[] parameter(0)
  %b = f32[] parameter(1)
  ROOT %s = f32[] add(f32[] %a, f32[] %b), metadata={op_name="add, {tricky}" source_file="a.py" source_line=3 stack_frame_id=1}
}

ENTRY %main (p: f32[4]) -> f32[4] {
  %p = f32[4]{0} parameter(0), metadata={op_name="p"}
  // a comment stays
  %n = f32[4]{0} negate(f32[4]{0} %p), metadata={op_name="neg"}, sharding={replicated}
  ROOT %ar = f32[4]{0} all-reduce(f32[4]{0} %n), replica_groups={{0,1}}, to_apply=%add, metadata={op_name="psum" stack_frame_id=1}
}
"""

EXPECTED = """HloModule small, entry_computation_layout={(f32[4]{0})->f32[4]{0}}

%add (a: f32[], b: f32[]) -> f32[] {
  %a = f32[] parameter(0)
  %b = f32[] parameter(1)
  ROOT %s = f32[] add(f32[] %a, f32[] %b)
}

ENTRY %main (p: f32[4]) -> f32[4] {
  %p = f32[4]{0} parameter(0)
  // a comment stays
  %n = f32[4]{0} negate(f32[4]{0} %p), sharding={replicated}
  ROOT %ar = f32[4]{0} all-reduce(f32[4]{0} %n), replica_groups={{0,1}}, to_apply=%add
}
"""


def strip(text: str, *more: str) -> tuple[str, PassReport]:
    module = parse_module(text, "in.hlo")
    reports = run_passes(module, [*more, "strip-debug-info"])
    return print_module(module), reports[-1]


def xla() -> Any:
    pytest.importorskip("jax", reason="jax/jaxlib (the XLA oracle) is not installed")
    return importlib.import_module("xla_oracle")


def assert_only_debug_info_removed(before: str, after: str) -> None:
    """Every line of ``after`` is a line of ``before``, or one with one ``, metadata={...}``
    (or ``, stack_frame_id=N``) cut out; the tables' lines are the only ones dropped."""
    old = before.splitlines(keepends=True)
    new = after.splitlines(keepends=True)
    i = 0
    for line in new:
        while old[i] != line and not _cut_once(old[i], line):
            dropped = old[i]
            assert not dropped.strip() or dropped.strip() in TABLES or dropped[:1].isdigit(), dropped
            i += 1
        i += 1
    assert all(not d.strip() or d.strip() in TABLES or d[:1].isdigit() for d in old[i:])


def _cut_once(old: str, new: str) -> bool:
    d = len(old) - len(new)
    if d <= 0:
        return False
    common = 0
    while common < len(new) and new[common] == old[common]:
        common += 1
    for k in range(common, max(-1, common - 3), -1):  # the cut may start at the comma before
        cut = old[k : k + d]
        if old[k + d :] == new[k:] and re.fullmatch(r", (metadata=\{.*\}|stack_frame_id=\d+)", cut, flags=re.S):
            return True
    return False


def test_small_module() -> None:
    out, report = strip(SMALL)
    assert out == EXPECTED
    assert [(r.computation, r.instruction) for r in report.records] == [
        ("", "FileNames"), ("", "FunctionNames"), ("", "FileLocations"), ("", "StackFrames"),
        ("add", "s"), ("main", "p"), ("main", "n"), ("main", "ar"),
    ]
    assert report.records[0].line == 3 and report.records[4].line == 19
    assert all(r.action == "rewritten" and r.target == "debug info removed" for r in report.records)
    assert_only_debug_info_removed(SMALL, out)


def test_output_parses_with_xla_and_equals_xla_without_metadata() -> None:
    oracle = xla()
    for text in (SMALL, read_exact(GOLDEN_JAX)):
        out, _ = strip(text)
        assert oracle.xla_reprint(out) == oracle.xla_reprint(text, metadata=False)


def test_real_jax_module() -> None:
    text = read_exact(GOLDEN_JAX)
    assert "stack_frame_id=" in text and "\nStackFrames\n" in text
    out, report = strip(text)
    assert "metadata=" not in out and "stack_frame_id" not in out
    assert not any(line.strip() in TABLES for line in out.splitlines())
    assert_only_debug_info_removed(text, out)
    assert len(report.rewritten) == text.count("metadata=") + 4


def test_crlf_and_a_module_without_debug_info() -> None:
    out, _ = strip(SMALL.replace("\n", "\r\n"))
    assert out == EXPECTED.replace("\n", "\r\n")
    module = parse_module(EXPECTED)
    [report] = run_passes(module, ["strip-debug-info"])
    assert not module.changed and not report.records
    assert print_module(module) == EXPECTED


def test_lines_another_pass_reprinted_lose_their_metadata_too() -> None:
    out, report = strip(SMALL, "convert-collectives-to-custom-call")
    assert "metadata=" not in out
    assert 'ROOT %ar = f32[4]{0} custom-call(f32[4]{0} %n), custom_call_target="AwsNeuronAllReduceAdd_f32"' in out
    again, report2 = strip(out)
    assert again == out and not report2.records


def test_not_in_the_default_pipeline() -> None:
    assert "strip-debug-info" not in DEFAULT_PIPELINE
    module = parse_module(SMALL)
    run_passes(module)
    assert "metadata=" in print_module(module)


def test_a_multi_line_instruction() -> None:
    text = EXPECTED.replace(
        "  %n = f32[4]{0} negate(f32[4]{0} %p), sharding={replicated}\n",
        "  %n = f32[4]{0} negate(f32[4]{0} %p), metadata={op_name=\"neg\"\n    source_line=4}, sharding={replicated}\n",
    )
    out, report = strip(text)
    assert out == EXPECTED
    assert [r.instruction for r in report.records] == ["n"]


def corpus_with_metadata() -> list[Path]:
    if not CORPUS.is_dir():
        return []
    files = [p for p in sorted(CORPUS.rglob("*.hlo")) if p.stat().st_size < 1_000_000]
    return [p for p in files if "metadata=" in p.read_text(encoding="utf-8", errors="replace")][:12]


@pytest.mark.parametrize("path", corpus_with_metadata(), ids=lambda p: p.name)
def test_corpus(path: Path) -> None:
    text = read_exact(path)
    try:
        module = parse_module(text, str(path))
    except Exception as exc:  # some corpus files are meant to be rejected
        pytest.skip(f"not a valid module: {exc}")
    run_passes(module, ["strip-debug-info"])
    out = print_module(module)
    assert "metadata={" not in out
    assert_only_debug_info_removed(text, out)
    assert print_module(parse_module(out)) == out
