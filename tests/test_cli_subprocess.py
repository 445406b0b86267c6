"""The command line as users run it: the installed ``hlo-rewrite`` script and
``python -m hlo_rewrite``, in real processes with real pipes and terminals."""

from __future__ import annotations

import os
import pty
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import read_exact

from hlo_rewrite import __version__
from hlo_rewrite.passes import DEFAULT_PIPELINE, get_pass

BIN = Path(sys.executable).parent
EXE = BIN / "hlo-rewrite"
CONVERT = "convert-collectives-to-custom-call"

pytestmark = pytest.mark.skipif(not EXE.exists(), reason=f"{EXE} not installed")

PLAIN = """HloModule plain

ENTRY %main (p: f32[8]) -> f32[8] {
  %p = f32[8]{0} parameter(0)
  ROOT %n = f32[8]{0} negate(f32[8]{0} %p)
}
"""


def env(**extra: str) -> dict[str, str]:
    e = dict(os.environ)
    e["PATH"] = f"{BIN}{os.pathsep}{e.get('PATH', '')}"
    e.pop("NO_COLOR", None)
    e.update(extra)
    return e


def sh(script: str, cwd: Path | None = None, **extra: str) -> subprocess.CompletedProcess:
    return subprocess.run(["bash", "-o", "pipefail", "-c", script], capture_output=True, cwd=cwd,
                          env=env(**extra), timeout=120)


def hlo(*args: str, input: bytes | None = None, **extra: str) -> subprocess.CompletedProcess:
    return subprocess.run([str(EXE), *args], input=input, capture_output=True, env=env(**extra), timeout=120)


def default_pipeline_available() -> bool:
    try:
        for name in DEFAULT_PIPELINE:
            get_pass(name)
    except Exception:
        return False
    return True


@pytest.fixture(scope="module")
def gpt2(corpus) -> Path:
    path = corpus / "torch-neuronx" / "gpt" / "gpt2_tp=2.hlo"
    if not path.exists():
        pytest.skip("gpt2_tp=2.hlo not in the corpus")
    return path


def test_pipe_through_stdin_and_grep(gpt2):
    if not default_pipeline_available():
        pytest.skip("a default pass is not importable yet")
    r = sh(f"cat '{gpt2}' | hlo-rewrite - | grep AwsNeuron")
    assert r.returncode == 0, r.stderr
    lines = r.stdout.decode().splitlines()
    assert lines and all("custom-call(" in ln for ln in lines)
    assert sum("AwsNeuronAllReduceAdd_f32" in ln for ln in lines) == read_exact(gpt2).count(" all-reduce(")
    assert r.stderr == b""


def test_python_dash_m_matches_the_script(gpt2):
    data = gpt2.read_bytes()
    a = subprocess.run([sys.executable, "-m", "hlo_rewrite", "--passes", CONVERT], input=data,
                       capture_output=True, env=env(), timeout=120)
    b = hlo("--passes", CONVERT, input=data)
    assert a.returncode == b.returncode == 0
    assert a.stdout == b.stdout and b"AwsNeuronAllReduce" in a.stdout
    v = subprocess.run([sys.executable, "-m", "hlo_rewrite", "--version"], capture_output=True, env=env())
    assert v.stdout.decode().strip() == f"hlo-rewrite {__version__}"


def test_passes_none_round_trips_every_byte(gpt2):
    data = gpt2.read_bytes()
    r = hlo("--passes", "none", input=data)
    assert (r.returncode, r.stdout, r.stderr) == (0, data, b"")


def test_every_exit_code(tmp_path, gpt2):
    good = tmp_path / "good.hlo"
    good.write_text(PLAIN)
    bad = tmp_path / "bad.hlo"
    bad.write_text(PLAIN.replace("%p)", "%x)"))
    assert hlo("--check", "--passes", CONVERT, str(good)).returncode == 0
    assert hlo("--check", "--passes", CONVERT, str(gpt2)).returncode == 1
    usage = hlo("--passes", "no-such-pass", str(good))
    assert usage.returncode == 2 and b"no-such-pass" in usage.stderr
    invalid = hlo(str(bad))
    assert invalid.returncode == 3 and b"bad.hlo:5:" in invalid.stderr and b"Traceback" not in invalid.stderr
    assert hlo(str(tmp_path / "missing.hlo")).returncode == 4
    # an internal error: a pass with a bug, registered before the real command runs
    code = (
        "import sys\n"
        "from hlo_rewrite import cli\n"
        "from hlo_rewrite.passes import REGISTRY, Pass\n"
        "class Bug(Pass):\n"
        "    name = 'bug'\n"
        "    description = 'has a bug'\n"
        "    def run_on(self, module, report):\n"
        "        return [][1]\n"
        "REGISTRY['bug'] = lambda: Bug\n"
        "cli.main(prog_name='hlo-rewrite')\n"
    )
    r = subprocess.run([sys.executable, "-c", code, "--passes", "bug", str(good)], capture_output=True, env=env())
    assert r.returncode == 5 and r.stdout == b""
    err = r.stderr.decode()
    assert "internal error: IndexError: list index out of range" in err and "please report it" in err
    assert "Traceback" not in err
    r = subprocess.run([sys.executable, "-c", code, "--passes", "bug", "-v", str(good)], capture_output=True, env=env())
    assert r.returncode == 5 and "Traceback (most recent call last)" in r.stderr.decode()
    # worst of several: 4 (missing) beats 3 (invalid) beats 1 (would change)
    assert hlo("--check", "--passes", CONVERT, str(gpt2), str(bad)).returncode == 3
    assert hlo("--check", "--passes", CONVERT, str(gpt2), str(bad), str(tmp_path / "missing.hlo")).returncode == 4


def test_jobs_2_same_bytes_as_jobs_1(tmp_path, corpus):
    files = [str(p) for p in sorted((corpus / "torch-neuronx").rglob("*.hlo"))[:10]]
    outs = {}
    for j in ("1", "2"):
        r = hlo("-j", j, "--passes", CONVERT, *files)
        outs[j] = (r.returncode, r.stdout, r.stderr)
        d = tmp_path / f"j{j}"
        r = hlo("-j", j, "--passes", CONVERT, "-o", f"{d}/", *files)
        assert r.returncode == outs[j][0]
    assert outs["1"] == outs["2"]
    names = sorted(os.listdir(tmp_path / "j1"))
    assert names == sorted(os.listdir(tmp_path / "j2"))
    for n in names:
        assert (tmp_path / "j1" / n).read_bytes() == (tmp_path / "j2" / n).read_bytes()


def test_stdout_is_only_hlo_with_stats_and_verbose(gpt2, tmp_path):
    plain = hlo("--passes", CONVERT, str(gpt2))
    noisy = hlo("--passes", CONVERT, "--stats", "-v", "--report", str(tmp_path / "r.json"), str(gpt2))
    assert plain.returncode == noisy.returncode == 0
    assert noisy.stdout == plain.stdout
    assert CONVERT.encode() in noisy.stderr and b"rewritten" in noisy.stderr


def test_closed_pipe_is_not_an_error(corpus):
    big = max((corpus / "torch-neuronx").rglob("*.hlo"), key=lambda p: p.stat().st_size)
    r = sh(f"hlo-rewrite --passes none '{big}' | head -n 1")
    assert r.returncode == 0
    assert r.stdout.decode().startswith("HloModule")
    assert b"Traceback" not in r.stderr and b"Error" not in r.stderr


def run_on_terminal(args: list[str], **extra: str) -> tuple[int, bytes, bytes]:
    """Run with standard output on a pseudo-terminal (standard error a pipe)."""
    master, slave = pty.openpty()
    p = subprocess.Popen([str(EXE), *args], stdout=slave, stderr=subprocess.PIPE, env=env(**extra))
    os.close(slave)
    out = _read_terminal(master)
    err = p.stderr.read() if p.stderr else b""
    code = p.wait(timeout=60)
    os.close(master)
    return code, out, err


def _read_terminal(master: int) -> bytes:
    """Everything written to a pseudo-terminal until its other end closes."""
    chunks = []
    while True:
        try:
            data = os.read(master, 65536)
        except OSError:
            break
        if not data:
            break
        chunks.append(data)
    return b"".join(chunks)


def test_diff_is_coloured_on_a_terminal_unless_no_color(gpt2):
    code, out, _ = run_on_terminal(["--diff", "--passes", CONVERT, str(gpt2)])
    assert code == 0 and b"\x1b[32m+" in out and b"\x1b[31m-" in out
    code, out, _ = run_on_terminal(["--diff", "--passes", CONVERT, str(gpt2)], NO_COLOR="1")
    assert code == 0 and b"\x1b[" not in out and b"\n+" in out.replace(b"\r\n", b"\n")
    piped = hlo("--diff", "--passes", CONVERT, str(gpt2))
    assert b"\x1b[" not in piped.stdout and piped.stdout.startswith(b"--- ")


def test_progress_bar_on_a_terminal_does_not_touch_outputs(tmp_path, corpus):
    """Standard error on a terminal with many files: a progress bar, same outputs."""
    files = [str(p) for p in sorted((corpus / "jax").rglob("*.hlo"))[:10]]
    master, slave = pty.openpty()
    p = subprocess.Popen([str(EXE), "--passes", CONVERT, "-o", f"{tmp_path / 'tty'}/", *files],
                         stdout=subprocess.PIPE, stderr=slave, env=env())
    os.close(slave)
    err = _read_terminal(master)
    out = p.stdout.read() if p.stdout else b""
    assert p.wait(timeout=60) == 0 and out == b""
    assert b"10/10" in err  # the bar's final count
    ref = hlo("-q", "--passes", CONVERT, "-o", f"{tmp_path / 'pipe'}/", *files)
    assert ref.returncode == 0 and ref.stderr == b""
    for name in os.listdir(tmp_path / "pipe"):
        assert (tmp_path / "tty" / name).read_bytes() == (tmp_path / "pipe" / name).read_bytes()


@pytest.mark.parametrize("args, code", [(["--version"], 0), (["--passes", "none", "-"], 0), (["nowhere.hlo"], 4)])
def test_the_console_script_runs_atexit_functions_and_flushes_before_it_leaves(tmp_path, args, code):
    """The script leaves without the interpreter's teardown (os._exit), but only after the
    atexit functions ran and the standard streams were flushed, whatever the exit code."""
    probe = (
        "import atexit, sys\n"
        "atexit.register(lambda: print('atexit ran', file=sys.stderr))\n"
        "from hlo_rewrite.cli import console_main\n"
        "sys.argv = ['hlo-rewrite', *sys.argv[1:]]\n"
        "console_main()\n"
    )
    done = subprocess.run([sys.executable, "-c", probe, *args], input=PLAIN, capture_output=True, text=True,
                          cwd=tmp_path, env=env())
    assert done.returncode == code, done.stderr
    assert done.stderr.rstrip().endswith("atexit ran")
    if args[0] == "--passes":
        assert done.stdout == PLAIN  # all of it, flushed
    if args[0] == "--version":
        assert __version__ in done.stdout
