"""The command line, in process (click's CliRunner): options, outputs, exit codes."""

from __future__ import annotations

import json
import os
import re
from pathlib import Path

import pytest
from click.testing import CliRunner
from conftest import ALLREDUCE_MODULE, CORPUS, read_exact

from hlo_rewrite import __version__, cli, outputs
from hlo_rewrite.errors import HloInternalError
from hlo_rewrite.outputs import color_diff, unified_diff
from hlo_rewrite.passes import DEFAULT_PIPELINE, REGISTRY, Pass
from hlo_rewrite.report import worst_exit_code
from hlo_rewrite.reporter import use_color
from hlo_rewrite.safety import check_output
from hlo_rewrite.split import join_chunks, split_chunks

CONVERT = "convert-collectives-to-custom-call"

# one all-reduce in ENTRY: the convert pass rewrites it
AR = ALLREDUCE_MODULE

# nothing for any pass to do
PLAIN = """HloModule plain

ENTRY %main (p: f32[8]) -> f32[8] {
  %p = f32[8]{0} parameter(0)
  ROOT %n = f32[8]{0} negate(f32[8]{0} %p)
}
"""

# an undefined operand on line 5
BAD = """HloModule bad

ENTRY %main (p: f32[8]) -> f32[8] {
  %p = f32[8]{0} parameter(0)
  ROOT %n = f32[8]{0} add(f32[8]{0} %p, f32[8]{0} %q)
}
"""
BAD_COLUMN = BAD.splitlines()[4].index("%q") + 2  # the name after the %


def run(args, input=None, **kw):
    return CliRunner().invoke(cli.main, args, input=input, catch_exceptions=False, **kw)


def write(path: Path, text: str) -> Path:
    path.write_bytes(text.encode())
    return path


# --------------------------------------------------------------------------- fake passes (registered per test)


class _GrowMetadata(Pass):
    """Not idempotent: every run makes the ROOT's op_name one character longer."""

    name = "test-grow-metadata"
    description = "test pass that is not idempotent"

    def run_on(self, module, report):
        root = module.entry.root
        old = root.attr_text("metadata") or '{op_name=""}'
        root.set_attr("metadata", old[:-2] + 'x"}')
        report.add_rewritten(module.entry, root, "grown")


class _BreakShape(Pass):
    """Prints a module that does not read back."""

    name = "test-break-shape"
    description = "test pass that prints garbage"

    def run_on(self, module, report):
        root = module.entry.root
        root.shape = "f32[8"
        root.mark_changed()
        module.edits += 1


class _Crash(Pass):
    name = "test-crash"
    description = "test pass that has a bug"

    def run_on(self, module, report):
        raise ZeroDivisionError("division by zero in a pass")


@pytest.fixture
def fake_passes(monkeypatch):
    for p in (_GrowMetadata, _BreakShape, _Crash):
        monkeypatch.setitem(REGISTRY, p.name, lambda p=p: p)


# --------------------------------------------------------------------------- help, version, pass list


def test_version():
    r = run(["--version"])
    assert r.exit_code == 0
    assert r.stdout.strip() == f"hlo-rewrite {__version__}"


def test_every_option_has_a_help_sentence_and_the_epilog_lists_exit_codes():
    for param in cli.main.params:
        if param.param_type_name == "option":
            assert param.help and param.help.rstrip().endswith(".") and len(param.help) > 20, param.name
    r = run(["--help"])
    assert r.exit_code == 0
    for code in range(6):
        assert f"\n    {code}  " in r.stdout
    assert "5 > 4 > 3 > 1 > 0" in r.stdout


def test_list_passes_names_descriptions_and_default_order(monkeypatch):
    def broken():
        raise ImportError("not written yet")

    monkeypatch.setitem(REGISTRY, "test-not-yet", broken)
    r = run(["--list-passes"])
    assert r.exit_code == 0
    lines = r.stdout.splitlines()
    for name in REGISTRY:
        (line,) = [ln for ln in lines if f" {name} " in ln + " "]
        assert line.startswith("  * " if name in DEFAULT_PIPELINE else "    ")
        if name == "test-not-yet":
            assert line.rstrip().endswith("(unavailable: ImportError: not written yet)")
        else:
            assert line.rstrip().endswith(REGISTRY[name]().description)
    # a pass's options are listed under it
    at = [i for i, ln in enumerate(lines) if " fuse-send-recv " in ln][0]
    assert lines[at + 1].strip().startswith("--send-recv-target NAME: ")
    assert lines[-1] == "default order (* above): " + ",".join(DEFAULT_PIPELINE)
    assert r.stderr == ""


def test_the_option_table_of_the_docs_is_the_generated_one():
    from hlo_rewrite.passes import BUILTIN_PASSES, pass_info
    from hlo_rewrite.passflags import build_flags, flags_table

    doc = (Path(__file__).resolve().parents[1] / "docs" / "cli.md").read_text()
    start = "<!-- generated: flags_table -->\n"
    block = doc.split(start, 1)[1].split("<!-- end generated -->", 1)[0]
    assert block == flags_table(build_flags([pass_info(n) for n in BUILTIN_PASSES])), "regenerate the table in docs/cli.md from passflags.flags_table"


def test_every_registered_pass_has_its_flags():
    from hlo_rewrite.passes import all_options, pass_infos

    params = {o for p in cli.main.params for o in p.opts + p.secondary_opts}
    for info in pass_infos():
        stem = info.toggle or info.name
        assert {f"--{stem}", f"--no-{stem}"} <= params, info.name
    for opt in all_options():
        assert opt.flag in params


def test_unknown_pass_is_a_usage_error_listing_valid_ones():
    r = run(["--passes", "convert-collectives,none"], input=PLAIN)
    assert r.exit_code == 2
    assert "unknown pass 'convert-collectives'" in r.stderr
    for name in REGISTRY:
        assert name in r.stderr
    assert r.stdout == ""


@pytest.mark.parametrize(
    ("names", "toggles", "expected"),
    [
        (list(DEFAULT_PIPELINE), {"fuse_send_recv": False}, ["fuse-reduce-scatter", CONVERT]),
        (list(DEFAULT_PIPELINE), {"convert_collectives": True}, list(DEFAULT_PIPELINE)),
        ([CONVERT], {"fuse_reduce_scatter": True}, ["fuse-reduce-scatter", CONVERT]),
        ([CONVERT], {"fuse_send_recv": True, "fuse_reduce_scatter": True}, list(DEFAULT_PIPELINE)),
        ([], {"convert_collectives": True}, [CONVERT]),
        (["fuse-send-recv"], {"fuse_send_recv": False, "convert_collectives": True}, [CONVERT]),
        (["convert-custom-calls-to-collectives"], {"fuse_send_recv": True},
         ["convert-custom-calls-to-collectives", "fuse-send-recv"]),
    ],
)
def test_toggles_edit_the_pass_list(names, toggles, expected):
    assert cli.apply_toggles(names, toggles) == expected


def test_toggle_applies_to_passes_list(tmp_path):
    # --passes none plus --convert-collectives runs just the convert pass
    r = run(["--passes", "none", "--convert-collectives"], input=AR)
    assert r.exit_code == 0, r.stderr
    assert 'custom_call_target="AwsNeuronAllReduceAdd_f32"' in r.stdout
    r = run(["--passes", CONVERT, "--no-convert-collectives"], input=AR)
    assert r.exit_code == 0 and r.stdout == AR


# --------------------------------------------------------------------------- stdin/stdout, -o


def test_passes_none_is_byte_exact_including_crlf():
    crlf = AR.replace("\n", "\r\n")
    for text in (AR, crlf, AR.rstrip("\n")):
        r = run(["--passes", "none"], input=text.encode())
        assert r.exit_code == 0
        assert r.stdout_bytes == text.encode()
        assert r.stderr == ""


def test_stdin_dash_converts_and_stdout_has_only_hlo():
    r = run(["-", "--passes", CONVERT], input=AR)
    assert r.exit_code == 0, r.stderr
    assert "AwsNeuronAllReduceAdd_f32" in r.stdout
    assert r.stdout.startswith("HloModule m\n")
    assert r.stderr == ""


def test_output_file(tmp_path):
    src = write(tmp_path / "in.hlo", AR)
    out = tmp_path / "out.hlo"
    r = run([str(src), "-o", str(out), "--passes", CONVERT])
    assert r.exit_code == 0 and r.stdout == ""
    assert "AwsNeuronAllReduceAdd_f32" in out.read_text()
    assert src.read_text() == AR


def test_output_directory_for_several_inputs(tmp_path):
    a = write(tmp_path / "a.hlo", AR)
    b = write(tmp_path / "b.hlo", PLAIN)
    outdir = tmp_path / "new" / "dir"
    r = run([str(a), str(b), "-o", str(outdir), "--passes", CONVERT])
    assert r.exit_code == 2 and "existing directory" in r.stderr and not outdir.parent.exists()
    r = run([str(a), str(b), "-o", str(outdir) + "/", "--passes", CONVERT])
    assert r.exit_code == 0, r.stderr
    assert sorted(os.listdir(outdir)) == ["a.hlo", "b.hlo"]
    assert "AwsNeuronAllReduceAdd_f32" in (outdir / "a.hlo").read_text()
    assert (outdir / "b.hlo").read_text() == PLAIN
    assert r.stdout == ""


def test_output_directory_usage_errors(tmp_path):
    a = write(tmp_path / "a.hlo", AR)
    (tmp_path / "sub").mkdir()
    a2 = write(tmp_path / "sub" / "a.hlo", AR)
    r = run([str(a), str(a2), "-o", str(tmp_path / "out") + "/"])
    assert r.exit_code == 2 and "same name: a.hlo" in r.stderr
    f = write(tmp_path / "file", "")
    r = run([str(a), str(a2.with_name("b.hlo")), "-o", str(f)])
    assert r.exit_code == 2
    r = run(["-", "-o", str(tmp_path / "sub")], input=AR)
    assert r.exit_code == 2
    r = run([str(a), "-"], input=AR)
    assert r.exit_code == 2 and "only input" in r.stderr


def test_single_input_into_existing_directory(tmp_path):
    a = write(tmp_path / "a.hlo", PLAIN)
    (tmp_path / "out").mkdir()
    r = run([str(a), "-o", str(tmp_path / "out"), "--passes", "none"])
    assert r.exit_code == 0
    assert (tmp_path / "out" / "a.hlo").read_text() == PLAIN


def test_several_inputs_to_stdout_are_separated_and_split_back(tmp_path):
    a = write(tmp_path / "a.hlo", AR)
    b = write(tmp_path / "b.hlo", PLAIN)
    r = run([str(a), str(b), "--passes", "none"])
    assert r.exit_code == 0
    assert r.stdout == AR + "// -----\n" + PLAIN
    again = run(["--split-input-file", "--passes", "none"], input=r.stdout)
    assert again.exit_code == 0 and again.stdout == r.stdout


# --------------------------------------------------------------------------- -i


def test_in_place_rewrites_changed_files_only(tmp_path):
    a = write(tmp_path / "a.hlo", AR)
    b = write(tmp_path / "b.hlo", PLAIN)
    os.utime(b, (1_000_000, 1_000_000))
    r = run(["-i", str(a), str(b), "--passes", CONVERT])
    assert r.exit_code == 0, r.stderr
    assert "AwsNeuronAllReduceAdd_f32" in a.read_text()
    assert b.read_text() == PLAIN and b.stat().st_mtime == 1_000_000
    assert f"rewrote {a}" in r.stderr and str(b) not in r.stderr.replace("left unchanged", "")
    assert r.stdout == ""
    # a second run changes nothing
    r = run(["-i", str(a), "--passes", CONVERT, "--check"])
    assert r.exit_code == 2  # --check and -i exclude each other
    r = run([str(a), "--passes", CONVERT, "--check"])
    assert r.exit_code == 0


@pytest.mark.parametrize(("exc", "code"), [(OSError(28, "No space left on device"), 4), (RuntimeError("boom"), 5)])
def test_in_place_keeps_the_input_when_the_write_fails_midway(tmp_path, monkeypatch, exc, code):
    import hlo_rewrite.outputs as outputs

    a = write(tmp_path / "a.hlo", AR)
    real_write = os.write

    def half_write(fd, data):
        real_write(fd, bytes(data[: len(data) // 2]))
        raise exc

    monkeypatch.setattr(outputs.os, "write", half_write)
    r = run(["-i", str(a), "--passes", CONVERT])
    assert r.exit_code == code
    assert a.read_text() == AR
    assert os.listdir(tmp_path) == ["a.hlo"]  # no temporary file left behind
    assert "Traceback" not in r.stderr
    if code == 5:
        assert "internal error: RuntimeError: boom" in r.stderr


def test_a_large_output_is_handed_to_the_disk_as_it_is_written(tmp_path, monkeypatch):
    """Each megabyte of a file's output is handed to the disk once written (the fsync before
    the rename then waits for less); a file system that refuses the hint still gets it all, and
    a file written through (not replaced) is not asked."""
    import hlo_rewrite.outputs as outputs

    calls = []
    monkeypatch.setattr(outputs, "_start_writeback", lambda fd, offset, size, advice: calls.append((offset, size)))
    text = "HloModule m\n" + "x" * (3 * 2**20 + 12345)
    outputs.write_file(str(tmp_path / "out.hlo"), text)
    assert (tmp_path / "out.hlo").read_text() == text
    assert len(calls) == 3 and calls[0][0] == 0
    assert all(offset + size == after for (offset, size), (after, _) in zip(calls, calls[1:], strict=False))
    assert all(size >= 2**20 for _, size in calls)

    def refuse(fd, offset, size, advice):
        calls.append("refused")
        raise OSError(22, "Invalid argument")

    calls.clear()
    monkeypatch.setattr(outputs, "_start_writeback", refuse)
    outputs.write_file(str(tmp_path / "out.hlo"), text[::-1])
    assert (tmp_path / "out.hlo").read_text() == text[::-1]
    assert calls == ["refused"]  # asked once, then no more
    calls.clear()
    outputs.write_file(os.devnull, text)
    assert calls == []


def test_in_place_one_bad_file_does_not_stop_the_others(tmp_path):
    bad = write(tmp_path / "bad.hlo", BAD)
    a = write(tmp_path / "a.hlo", AR)
    r = run(["-i", str(bad), str(a), "--passes", CONVERT])
    assert r.exit_code == 3
    assert bad.read_text() == BAD
    assert "AwsNeuronAllReduceAdd_f32" in a.read_text()
    assert f"{bad}:5:" in r.stderr


# --------------------------------------------------------------------------- --check, --diff


def test_check_exit_codes_and_writes_nothing(tmp_path):
    a = write(tmp_path / "a.hlo", AR)
    b = write(tmp_path / "b.hlo", PLAIN)
    r = run(["--check", str(b), "--passes", CONVERT])
    assert (r.exit_code, r.stdout, r.stderr) == (0, "", "")
    r = run(["--check", str(a), str(b), "--passes", CONVERT])
    assert r.exit_code == 1 and r.stdout == ""
    assert f"would rewrite {a}" in r.stderr
    assert "1 file would be rewritten, 1 file would be left unchanged." in r.stderr
    assert a.read_text() == AR
    assert sorted(os.listdir(tmp_path)) == ["a.hlo", "b.hlo"]
    r = run(["--check", "-q", str(a), "--passes", CONVERT])
    assert (r.exit_code, r.stderr) == (1, "")
    # invalid input is worse than "would change"
    bad = write(tmp_path / "bad.hlo", BAD)
    r = run(["--check", str(a), str(bad), "--passes", CONVERT])
    assert r.exit_code == 3


def test_diff_is_a_unified_diff_that_applies(tmp_path):
    a = write(tmp_path / "a.hlo", AR)
    r = run(["--diff", str(a), "--passes", CONVERT])
    assert r.exit_code == 0, r.stderr
    lines = r.stdout.splitlines()
    assert lines[0] == f"--- {a}\t(original)" and lines[1] == f"+++ {a}\t(rewritten)"
    assert lines[2].startswith("@@ ")
    minus = [ln for ln in lines[2:] if ln.startswith("-")]
    plus = [ln for ln in lines[2:] if ln.startswith("+")]
    assert len(minus) == len(plus) == 1 and "all-reduce(" in minus[0] and "custom-call(" in plus[0]
    assert "\x1b[" not in r.stdout  # not a terminal: no colour
    assert a.read_text() == AR
    r = run(["--diff", "--check", str(a), "--passes", CONVERT])
    assert r.exit_code == 1 and r.stdout.startswith("--- ")
    r = run(["--diff", str(a), "--passes", "none"])
    assert (r.exit_code, r.stdout) == (0, "")


def test_diff_marks_missing_final_newline():
    diff = outputs.unified_diff("a\nb", "a\nc", "x")
    assert diff.endswith("-b\n\\ No newline at end of file\n+c\n\\ No newline at end of file\n")


class _Tty:
    def isatty(self):
        return True


def test_colour_only_on_a_terminal_and_never_with_no_color():
    assert use_color(_Tty(), environ={})
    assert not use_color(object(), environ={})
    assert not use_color(_Tty(), environ={"NO_COLOR": "1"})
    coloured = color_diff(unified_diff("a\n", "b\n", "x"))
    assert "\x1b[31m-a\x1b[0m\n" in coloured and "\x1b[32m+b\x1b[0m\n" in coloured


# --------------------------------------------------------------------------- --split-input-file


def test_split_chunks_roundtrip_and_offsets():
    text = "a\n// -----\nb\nc\n//  -----\n// ----- \r\nd"
    chunks, seps = split_chunks(text)
    assert [c.text for c in chunks] == ["a\n", "b\nc\n//  -----\n", "d"]
    assert [c.line_offset for c in chunks] == [0, 2, 6]
    assert join_chunks([c.text for c in chunks], seps) == text
    assert join_chunks(["x", "y"], ["// -----\n"]) == "x\n// -----\ny"


def test_split_input_file_keeps_true_line_numbers_in_errors():
    text = AR + "// -----\n" + BAD + "// -----\n" + PLAIN
    r = run(["--split-input-file", "--passes", CONVERT], input=text)
    assert r.exit_code == 3
    bad_line = AR.count("\n") + 1 + 5
    assert f"<stdin>:{bad_line}:{BAD_COLUMN}: error: operand 'q'" in r.stderr
    assert "%q)\n" in r.stderr and r.stderr.rstrip().endswith("^")
    assert r.stdout == ""  # a file is written whole or not at all


def test_split_input_file_joins_outputs_with_the_separator():
    text = AR + "// -----\n" + PLAIN + "// -----\n"
    r = run(["--split-input-file", "--passes", CONVERT], input=text)
    assert r.exit_code == 0, r.stderr
    outs = r.stdout.split("// -----\n")
    assert len(outs) == 3 and "AwsNeuronAllReduceAdd_f32" in outs[0] and outs[1] == PLAIN and outs[2] == ""


def test_split_input_file_blank_chunks():
    # blank chunks next to a module pass through; a blank input is an error with or without the split
    r = run(["--split-input-file", "--passes", "none"], input="\n// -----\n" + PLAIN)
    assert r.exit_code == 0 and r.stdout == "\n// -----\n" + PLAIN
    for args in (["--split-input-file"], []):
        r = run(args + ["--passes", "none"], input="\n")
        assert r.exit_code == 3 and "<stdin>:1:1: error: empty input" in r.stderr


def test_without_split_a_separator_is_just_a_comment():
    r = run(["--passes", "none"], input=PLAIN + "// -----\n")
    assert r.exit_code == 0 and r.stdout == PLAIN + "// -----\n"


# --------------------------------------------------------------------------- --stats, --report


def test_stats_go_to_stderr_and_leave_stdout_alone():
    plain = run(["--passes", CONVERT], input=AR)
    r = run(["--passes", CONVERT, "--stats"], input=AR)
    assert r.exit_code == 0
    assert r.stdout == plain.stdout
    assert CONVERT in r.stderr and "matched" in r.stderr and "rewritten" in r.stderr
    row = [ln for ln in r.stderr.splitlines() if CONVERT in ln][0]
    assert row.split("\t")[1:4] == ["1", "1", "0"]


CALLED = AR.replace("ENTRY %main", """%body (q: f32[8]) -> f32[8] {
  %q = f32[8]{0} parameter(0)
  ROOT %inner = f32[8]{0} all-reduce(f32[8]{0} %q), replica_groups={{0,1}}, to_apply=%add
}

ENTRY %main""").replace("ROOT %ar = f32[8]{0} all-reduce(f32[8]{0} %p)",
                        "%c = f32[8]{0} call(f32[8]{0} %p), to_apply=%body\n  ROOT %ar = f32[8]{0} all-reduce(f32[8]{0} %c)")


def test_stats_show_why_things_were_left(tmp_path):
    # the all-reduce in %body is outside the default scope (ENTRY only)
    r = run(["--passes", CONVERT, "--stats", "--report", str(tmp_path / "r.json")], input=CALLED)
    assert r.exit_code == 0, r.stderr
    assert r.stdout.count("AwsNeuronAllReduceAdd_f32") == 1
    report = json.loads((tmp_path / "r.json").read_text())
    (reason,) = report["totals"][CONVERT]["left_reasons"]
    assert "outside scope" in reason
    assert "left alone, and why" in r.stderr and "outside scope" in r.stderr
    row = [ln for ln in r.stderr.splitlines() if CONVERT in ln][0]
    assert row.split("\t")[1:4] == ["2", "1", "1"]
    # --all-computations takes it in
    r = run(["--passes", CONVERT, "--all-computations"], input=CALLED)
    assert r.exit_code == 0 and r.stdout.count("AwsNeuronAllReduceAdd_f32") == 2


def test_report_json_schema(tmp_path):
    a = write(tmp_path / "a.hlo", AR + "// -----\n" + AR)
    bad = write(tmp_path / "bad.hlo", BAD)
    rep = tmp_path / "report.json"
    r = run([str(a), str(bad), "--split-input-file", "--passes", CONVERT, "--report", str(rep),
             "--safe", "-o", str(tmp_path / "out") + "/"])
    assert r.exit_code == 3
    doc = json.loads(rep.read_text())
    assert doc["schema"] == 1 and doc["tool"] == "hlo-rewrite" and doc["version"] == __version__
    assert doc["passes"] == [CONVERT] and doc["exit_code"] == 3
    assert doc["options"]["split_input_file"] is True and doc["options"]["safe"] is True
    fa, fb = doc["files"]
    assert (fa["file"], fa["status"], fa["changed"], fa["exit_code"]) == (str(a), "ok", True, 0)
    assert fa["output"] == str(tmp_path / "out" / "a.hlo") and fa["written"] is True
    assert [m["first_line"] for m in fa["modules"]] == [1, AR.count("\n") + 2]
    for m in fa["modules"]:
        (p,) = m["passes"]
        assert (p["pass"], p["matched"], p["rewritten"], p["left"]) == (CONVERT, 1, 1, 0)
        (rec,) = p["records"]
        assert rec["pass"] == CONVERT and rec["opcode"] == "all-reduce" and rec["action"] == "rewritten"
        assert rec["target"] == "AwsNeuronAllReduceAdd_f32" and rec["instruction"] == "ar"
        assert rec["line"] == m["first_line"] - 1 + 11
        assert set(m["seconds"]) >= {"parse", "passes", "print", "check"}
    assert (fb["status"], fb["exit_code"], fb["written"], fb["changed"]) == ("error", 3, False, None)
    (err,) = fb["errors"]
    assert (err["kind"], err["line"], err["column"], err["exit_code"]) == ("HloVerifyError", 5, BAD_COLUMN, 3)
    assert doc["totals"][CONVERT]["rewritten"] == 2


def test_report_to_stdout_is_refused():
    r = run(["--report", "-"], input=PLAIN)
    assert r.exit_code == 2


# --------------------------------------------------------------------------- exit codes


def test_exit_code_order():
    assert worst_exit_code([0, 1, 3]) == 3
    assert worst_exit_code([5, 4, 3, 1, 0]) == 5
    assert worst_exit_code([1, 4, 0]) == 4
    assert worst_exit_code([1, 0]) == 1
    assert worst_exit_code([]) == 0


def test_exit_3_invalid_input_renders_location_and_caret(tmp_path):
    bad = write(tmp_path / "bad.hlo", BAD)
    r = run([str(bad), "--passes", "none"])
    assert r.exit_code == 3 and r.stdout == ""
    first, src, caret = r.stderr.splitlines()[:3]
    assert first.startswith(f"{bad}:5:{BAD_COLUMN}: error: ")
    assert caret.index("^") == src.index("%q") + 1
    assert "Traceback" not in r.stderr


def test_exit_3_not_utf8():
    r = run(["--passes", "none"], input=b"HloModule m\n\xff\n")
    assert r.exit_code == 3 and "<stdin>:2:1: error: the input is not UTF-8" in r.stderr


def test_exit_4_io_errors(tmp_path):
    r = run([str(tmp_path / "missing.hlo")])
    assert r.exit_code == 4 and "missing.hlo: error: cannot read input" in r.stderr
    a = write(tmp_path / "a.hlo", PLAIN)
    r = run([str(a), "-o", str(tmp_path / "no" / "such" / "dir" / "x.hlo"), "--passes", "none"])
    assert r.exit_code == 4 and "cannot write output" in r.stderr
    r = run([str(a), "--passes", "none", "--report", str(tmp_path / "no" / "r.json")], )
    assert r.exit_code == 4 and r.stdout == PLAIN


def test_one_missing_file_does_not_stop_the_others(tmp_path):
    a = write(tmp_path / "a.hlo", AR)
    r = run([str(tmp_path / "missing.hlo"), str(a), "-o", str(tmp_path / "out") + "/", "--passes", CONVERT])
    assert r.exit_code == 4
    assert os.listdir(tmp_path / "out") == ["a.hlo"]


def test_exit_5_internal_error_asks_for_a_report(fake_passes, tmp_path):
    a = write(tmp_path / "a.hlo", PLAIN)
    r = run([str(a), "--passes", "test-crash"])
    assert r.exit_code == 5 and r.stdout == ""
    assert f"{a}: internal error: ZeroDivisionError: division by zero in a pass" in r.stderr
    assert "please report it as an issue" in r.stderr and "--passes test-crash" in r.stderr
    assert "Traceback" not in r.stderr
    r = run([str(a), "--passes", "test-crash", "-v"])
    assert r.exit_code == 5 and "Traceback (most recent call last)" in r.stderr and "run_on" in r.stderr
    # the worst code wins over an invalid input
    bad = write(tmp_path / "bad.hlo", BAD)
    r = run([str(bad), str(a), "--passes", "test-crash", "-o", str(tmp_path / "o") + "/"])
    assert r.exit_code == 5


def test_quiet_and_verbose(tmp_path):
    a = write(tmp_path / "a.hlo", AR)
    r = run(["-q", "-v", str(a)])
    assert r.exit_code == 2
    r = run(["-v", str(a), "--passes", CONVERT, "-o", str(tmp_path / "o.hlo")])
    assert r.exit_code == 0 and f"{a}: changed; 1 rewritten, 0 left alone" in r.stderr


def test_strict_parse(corpus):
    text = read_exact(CORPUS / "torch-neuronx" / "gpt" / "gpt2_tp=2.hlo")
    r = run(["--strict", "--passes", "none"], input=text)
    assert r.exit_code == 0, r.stderr
    assert r.stdout == text


# --------------------------------------------------------------------------- safe mode


def test_safe_mode_catches_a_pass_that_is_not_idempotent(fake_passes):
    r = run(["--passes", "test-grow-metadata", "--safe"], input=PLAIN)
    assert r.exit_code == 5 and r.stdout == ""
    assert "second run of the passes over the output changed it" in r.stderr
    r = run(["--passes", "test-grow-metadata", "--fast"], input=PLAIN)
    assert r.exit_code == 0 and 'op_name="x"' in r.stdout


def test_safe_mode_catches_output_that_does_not_read_back(fake_passes, tmp_path):
    out = tmp_path / "o.hlo"
    write(out, "old\n")
    r = run(["--passes", "test-break-shape", "--safe", "-o", str(out)], input=PLAIN)
    assert r.exit_code == 5
    assert "does not read back" in r.stderr
    assert out.read_text() == "old\n"


def test_check_output_directly():
    check_output(AR, [], None, "x.hlo")  # fine: parses, verifies, nothing to do
    with pytest.raises(HloInternalError, match="does not read back"):
        check_output(AR.replace("f32[8]{0} %p)", "f32[8]{0} %nope)"), [], None, "x.hlo")
    # the convert pass is idempotent on its own output
    r = run(["--passes", CONVERT, "--fast"], input=AR)
    check_output(r.stdout, [CONVERT], None, "x.hlo")
    # but the output of one pass is not a fixed point of its reverse
    with pytest.raises(HloInternalError, match="changed it"):
        check_output(r.stdout, ["convert-custom-calls-to-collectives"], None, "x.hlo")


# --------------------------------------------------------------------------- -j


def test_jobs_2_gives_the_same_bytes_as_jobs_1(tmp_path, corpus):
    files = sorted((corpus / "torch-neuronx" / "gpt").glob("*.hlo"))[:3] + [write(tmp_path / "bad.hlo", BAD)]
    files += [write(tmp_path / "ar.hlo", AR), write(tmp_path / "plain.hlo", PLAIN)]
    args = [str(f) for f in files] + ["--passes", CONVERT]
    one = run(args + ["-j", "1", "-o", str(tmp_path / "j1") + "/", "--report", str(tmp_path / "r1.json")])
    two = run(args + ["-j", "2", "-o", str(tmp_path / "j2") + "/", "--report", str(tmp_path / "r2.json")])
    assert one.exit_code == two.exit_code == 3
    assert one.stderr == two.stderr
    names = sorted(os.listdir(tmp_path / "j1"))
    assert names == sorted(os.listdir(tmp_path / "j2")) and len(names) == len(files) - 1
    for n in names:
        assert (tmp_path / "j1" / n).read_bytes() == (tmp_path / "j2" / n).read_bytes()
    # to stdout, in input order
    s1 = run(args + ["-j", "1"])
    s2 = run(args + ["-j", "2"])
    assert s1.stdout_bytes == s2.stdout_bytes and s1.stdout.count("// -----\n") == len(files) - 2

    def strip_times(doc):
        for f in doc["files"]:
            for m in f["modules"]:
                m["seconds"] = {}
                for p in m["passes"]:
                    p["seconds"] = 0
        for t in doc["totals"].values():
            t["seconds"] = 0
        return doc

    r1 = strip_times(json.loads((tmp_path / "r1.json").read_text()))
    r2 = strip_times(json.loads((tmp_path / "r2.json").read_text()))
    for f in r1["files"] + r2["files"]:
        f["output"] = os.path.basename(f["output"] or "")
    assert r1 == r2


def test_exit_codes_have_one_source_the_help_and_docs_agree():
    from hlo_rewrite.errors import ExitCode

    r = run(["--help"])
    for code in ExitCode:
        assert f"{int(code):<3} {code.meaning}" in r.stdout
    doc = (Path(__file__).resolve().parents[1] / "docs" / "cli.md").read_text()
    section = doc.split("## Exit codes", 1)[1]
    rows = [ln.split("|")[1:3] for ln in section.splitlines() if re.match(r"\| \d+ \|", ln)]
    assert [(int(c), n.strip().strip("`")) for c, n in rows] == [(int(c), c.name) for c in ExitCode]


def test_left_alone_warning_words():
    from hlo_rewrite.reporter import LeftAlone, left_alone_warning

    def item(opcode, reason):
        return LeftAlone("f.hlo", 3, "p", "fusion.2", "x", opcode, reason)

    entry = "outside scope: computation 'fusion.2' is not the ENTRY computation; all_computations extends the scope"
    fusion = "outside scope: computation 'fused' is a fusion computation"
    assert left_alone_warning([]) is None
    assert left_alone_warning([item("all-reduce", entry)]) == (
        "1 all-reduce left alone: not in the ENTRY computation (--all-computations includes it; -v for details)")
    assert left_alone_warning([item("all-reduce", entry), item("all-gather", fusion), item("all-gather", fusion)]) == (
        "1 all-reduce and 2 all-gathers left alone: 1 not in the ENTRY computation, 2 in a fusion computation "
        "(--all-computations includes it; -v for details)")
    assert left_alone_warning([item("send", "host transfer (is_host_transfer=true)")]) == (
        "1 send left alone: host transfer (is_host_transfer=true) (-v for details)")
    many = [item("send", "a"), item("recv", "b"), item("all-reduce", "c"), item("all-reduce", entry)]
    assert left_alone_warning(many) == (
        "1 send, 1 recv and 2 all-reduces left alone: 1 not in the ENTRY computation, 3 for other reasons "
        "(--all-computations includes it; -v for details)")
    assert left_alone_warning(many[:3]) == (
        "1 send, 1 recv and 1 all-reduce left alone: for 3 different reasons (-v for details)")


@pytest.mark.parametrize("passes", [None, "none"])
def test_a_byte_order_mark_is_written_back_before_the_output(tmp_path, passes):
    """docs/cli.md: a UTF-8 BOM before the module is accepted and written back before the
    output; a module the passes leave alone comes back byte for byte."""
    plain = tmp_path / "plain.hlo"
    marked = tmp_path / "marked.hlo"
    plain.write_bytes(ALLREDUCE_MODULE.encode())
    marked.write_bytes(b"\xef\xbb\xbf" + ALLREDUCE_MODULE.encode())
    extra = ["--passes", passes] if passes else []
    outs = []
    for src in (plain, marked):
        out = tmp_path / ("out-" + src.name)
        result = CliRunner().invoke(cli.main, [*extra, str(src), "-o", str(out)])
        assert result.exit_code in (0, 1), result.output
        outs.append((result.exit_code, out.read_bytes()))
    (code_plain, out_plain), (code_marked, out_marked) = outs
    assert out_marked == b"\xef\xbb\xbf" + out_plain and code_marked == code_plain
    assert (out_plain == plain.read_bytes()) == (passes == "none")
