"""Plain command lines run without loading click (hlo_rewrite.plain_args).

The console script reads the plain forms itself and hands the run the options click would have
given; anything else goes to the command line. So: what it reads, it reads as click does (the
same parameters, for every spelling it takes); what it does not read, it leaves alone; and a run
either way ends the same (output files, standard output, standard error, exit status).
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import click
import pytest
from conftest import ALLREDUCE_MODULE
from hypothesis import given, settings
from hypothesis import strategies as st

from hlo_rewrite import cli, plain_args

EXE = Path(sys.executable).parent / "hlo-rewrite"

#: the command line module's own entry: every command line through click
THROUGH_CLICK = ("import sys; from hlo_rewrite.cli import console_main; sys.argv[0] = 'hlo-rewrite'; "
                 "console_main()")

PLAIN_MODULE = """HloModule plain

ENTRY %main (p: f32[8]) -> f32[8] {
  %p = f32[8]{0} parameter(0)
  ROOT %n = f32[8]{0} negate(f32[8]{0} %p)
}
"""

BROKEN_MODULE = PLAIN_MODULE.replace("negate(f32[8]{0} %p)", "negate(f32[8]{0} %q)")


def click_params(words: list[str]) -> dict | None:
    """The parameters click gives for ``words`` (the per-pass flags left out), or None when it
    refuses them."""
    try:
        ctx = cli.main.make_context("hlo-rewrite", list(words))
    except (click.exceptions.ClickException, click.exceptions.Exit):
        return None
    return {k: v for k, v in ctx.params.items() if k in plain_args.DEFAULTS}


# --------------------------------------------------------------------------- the options


def test_the_defaults_are_the_command_lines_own():
    assert click_params([]) == plain_args.DEFAULTS
    # every parameter the run reads is there (the per-pass flags are the command line's only)
    names = {p.name for p in cli.main.params if p.expose_value} - set(cli.FLAGS.toggles) - set(cli.FLAGS.options)
    assert names == set(plain_args.DEFAULTS)


@pytest.mark.parametrize("words", [
    ["in.hlo"],
    ["in.hlo", "-o", "out.hlo"],
    ["-o", "out.hlo", "in.hlo"],
    ["--output", "out.hlo", "a.hlo", "b.hlo"],
    ["--output=out.hlo", "in.hlo"],
    ["in.hlo", "--passes", "none"],
    ["--passes=fuse-send-recv,convert-collectives-to-custom-call", "in.hlo"],
    ["-j", "2", "d"],
    ["--jobs", "0", "d"],
    ["--jobs=3", "d"],
    ["-"],
    *([spelling, "in.hlo"] for spelling in plain_args.FLAGS),
    ["-i", "--check", "--diff", "--strict", "--all-computations", "-q", "in.hlo"],
])
def test_each_spelling_read_gives_what_click_gives(words):
    got = plain_args.read(words)
    assert got is not None
    assert got == click_params(words)


@pytest.mark.parametrize("words", [
    ["--help"],
    ["--version"],
    ["in.hlo", "-v"],  # says which configuration was used
    ["in.hlo", "--safe"],
    ["in.hlo", "--no-config"],
    ["in.hlo", "--report", "r.json"],
    ["in.hlo", "--send-recv-target", "X"],  # a per-pass flag
    ["in.hlo", "--no-fuse-send-recv"],
    ["--", "in.hlo"],
    ["-oout.hlo", "in.hlo"],
    ["-o=out.hlo", "in.hlo"],
    ["-iq", "in.hlo"],
    ["in.hlo", "-o"],
    ["in.hlo", "-o", "-"],
    ["in.hlo", "--output="],
    ["in.hlo", "-o", "a.hlo", "-o", "b.hlo"],
    ["in.hlo", "-q", "-q"],
    ["in.hlo", "--passes", "bogus"],
    ["in.hlo", "--passes", " "],
    ["in.hlo", "--passes", "none", "--passes", "none"],
    ["d", "-j", "+2"],
    ["d", "-j", "-1"],
    ["d", "-j", "٣"],
    ["in.hlo", "--out", "o.hlo"],
])
def test_anything_else_is_left_to_the_command_line(words):
    assert plain_args.read(words) is None


WORDS = st.sampled_from([
    "in.hlo", "b.hlo", "-", "o.hlo", "-o", "--output", "--output=o.hlo", "-oo.hlo", "-o=x",
    "--passes", "none", "fuse-send-recv", "bogus", "--passes=none", "--passes=", " ", "-j", "--jobs",
    "--jobs=2", "2", "02", "+2", "-1", "-i", "--in-place", "--check", "--diff", "--strict",
    "--all-computations", "-q", "--quiet", "-v", "--", "-iq", "--out", "--safe", "=",
])


@settings(max_examples=400, deadline=None)
@given(st.lists(WORDS, max_size=7))
def test_whatever_it_reads_click_reads_the_same(words):
    got = plain_args.read(words)
    if got is not None:
        assert got == click_params(words), words


# --------------------------------------------------------------------------- whole runs


def _run(how: str, words: list[str], cwd: Path, stdin: str | None) -> subprocess.CompletedProcess:
    cmd = [str(EXE), *words] if how == "plain" else [sys.executable, "-c", THROUGH_CLICK, *words]
    env = {k: v for k, v in os.environ.items() if k not in ("NO_COLOR", "FORCE_COLOR")}
    return subprocess.run(cmd, cwd=cwd, input=stdin, capture_output=True, text=True, env=env, timeout=120)


def _tree(root: Path) -> dict[str, bytes]:
    return {str(p.relative_to(root)): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()}


def _inputs(root: Path) -> None:
    (root / "changes.hlo").write_text(ALLREDUCE_MODULE)
    (root / "same.hlo").write_text(PLAIN_MODULE)
    (root / "broken.hlo").write_text(BROKEN_MODULE)
    (root / "d").mkdir()
    for i in range(3):
        (root / "d" / f"m{i}.hlo").write_text(ALLREDUCE_MODULE if i % 2 else PLAIN_MODULE)
    (root / "d" / "notes.txt").write_text("not HLO\n")


SCENARIOS = [
    (["changes.hlo", "-o", "out.hlo"], None),
    (["same.hlo", "-o", "out.hlo"], None),
    (["changes.hlo", "--passes", "none", "-o", "out.hlo"], None),
    (["changes.hlo"], None),
    (["-"], ALLREDUCE_MODULE),
    (["broken.hlo", "-o", "out.hlo"], None),
    (["nowhere.hlo", "-o", "out.hlo"], None),
    (["changes.hlo", "same.hlo", "--check"], None),
    (["changes.hlo", "--diff"], None),
    (["-i", "changes.hlo", "same.hlo"], None),
    (["-q", "changes.hlo", "broken.hlo", "-o", "outdir/"], None),
    (["d", "-o", "mirror", "-j", "2"], None),
    (["d", "--all-computations", "--strict", "-o", "mirror"], None),
    (["changes.hlo", "-i", "-o", "out.hlo"], None),  # a usage problem: the command line says it
    (["changes.hlo", "--passes", "bogus"], None),
    (["changes.hlo", "-", "-o", "out.hlo"], None),
    (["project/in.hlo", "-o", "out.hlo"], None),  # a [tool.hlo-rewrite] table applies
]


@pytest.mark.parametrize(("words", "stdin"), SCENARIOS, ids=[" ".join(w) for w, _ in SCENARIOS])
def test_a_run_ends_the_same_with_or_without_click(tmp_path, words, stdin):
    outcomes = []
    for how in ("plain", "click"):
        root = tmp_path / how
        root.mkdir()
        _inputs(root)
        (root / "project").mkdir()
        (root / "project" / "pyproject.toml").write_text('[tool.hlo-rewrite]\npasses = "none"\n')
        (root / "project" / "in.hlo").write_text(ALLREDUCE_MODULE)
        done = _run(how, words, root, stdin)
        outcomes.append((done.returncode, done.stdout, done.stderr.replace(str(root), "ROOT"), _tree(root)))
    assert outcomes[0] == outcomes[1]
    assert "Traceback" not in outcomes[0][2]


@pytest.mark.parametrize(("words", "loads_click"), [
    (["same.hlo", "-o", "out.hlo"], False),
    (["same.hlo", "--passes", "none", "-o", "out.hlo", "-j", "2"], False),
    (["same.hlo", "--safe", "-o", "out.hlo"], True),
    (["same.hlo", "--passes", "bogus"], True),
])
def test_a_plain_command_line_does_not_load_click(tmp_path, words, loads_click):
    _inputs(tmp_path)
    probe = ("import atexit, sys\n"
             "atexit.register(lambda: print('click:', 'click' in sys.modules, file=sys.stderr))\n"
             "sys.argv = ['hlo-rewrite', *sys.argv[1:]]\n"
             "from hlo_rewrite.__main__ import console_main\n"
             "console_main()\n")
    done = subprocess.run([sys.executable, "-c", probe, *words], cwd=tmp_path, capture_output=True, text=True,
                          timeout=120)
    assert done.stderr.rstrip().endswith(f"click: {loads_click}"), done.stderr
