"""The command behaves as Unix users expect and never harms a file: each case runs the installed
``hlo-rewrite`` (or ``python -m hlo_rewrite``) in a real process, with real files, pipes,
terminals and signals."""

from __future__ import annotations

import contextlib
import gzip
import json
import os
import pty
import re
import signal
import stat
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest
from conftest import ALLREDUCE_MODULE, REPO
from test_cli_subprocess import EXE, _read_terminal, env, hlo
from test_plugins import site  # noqa: F401 - the example plugin, installed once (a fixture)

pytestmark = pytest.mark.skipif(not EXE.exists(), reason=f"{EXE} not installed")

CONVERT = "convert-collectives-to-custom-call"
AR = ALLREDUCE_MODULE
AR_OUT = AR.replace(
    "ROOT %ar = f32[8]{0} all-reduce(f32[8]{0} %p), replica_groups={{0,1}}, to_apply=%add",
    'ROOT %ar = f32[8]{0} custom-call(f32[8]{0} %p), custom_call_target="AwsNeuronAllReduceAdd_f32", '
    "replica_groups={{0,1}}, to_apply=%add",
)

# the all-reduce in %body is outside the default scope (ENTRY only)
CALLED = AR.replace("ENTRY %main", """%body (q: f32[8]) -> f32[8] {
  %q = f32[8]{0} parameter(0)
  ROOT %inner = f32[8]{0} all-reduce(f32[8]{0} %q), replica_groups={{0,1}}, to_apply=%add
}

ENTRY %main""").replace("ROOT %ar = f32[8]{0} all-reduce(f32[8]{0} %p)",
                        "%c = f32[8]{0} call(f32[8]{0} %p), to_apply=%body\n  ROOT %ar = f32[8]{0} all-reduce(f32[8]{0} %c)")

BAD = AR.replace("(f32[8]{0} %p), replica", "(f32[8]{0} %x), replica")


@pytest.fixture(scope="module")
def expected_out() -> bytes:
    r = hlo("--passes", CONVERT, input=AR.encode())
    assert r.returncode == 0, r.stderr
    return r.stdout


def write(path: Path, text: str | bytes) -> Path:
    path.write_bytes(text.encode() if isinstance(text, str) else text)
    return path


def no_temporaries(directory: Path) -> bool:
    return not [p for p in directory.rglob("*") if p.name.endswith(".tmp")]


def run_umask(mask: int, *args: str) -> subprocess.CompletedProcess:
    """Run under ``umask mask``, set by a shell (not in the forked child of this threaded process)."""
    return subprocess.run(["sh", "-c", f'umask {mask:03o} && exec "$0" "$@"', str(EXE), *args],
                          capture_output=True, env=env(), timeout=120)


# --------------------------------------------------------------------------- 1. devices and FIFOs


def test_a_fifo_given_to_o_is_written_through(tmp_path, expected_out):
    src = write(tmp_path / "in.hlo", AR)
    fifo = tmp_path / "out.fifo"
    os.mkfifo(fifo)
    got: list[bytes] = []
    reader = threading.Thread(target=lambda: got.append(fifo.read_bytes()))
    reader.start()
    r = hlo("--passes", CONVERT, str(src), "-o", str(fifo))
    reader.join(timeout=60)
    assert r.returncode == 0, r.stderr
    assert got == [expected_out]
    assert stat.S_ISFIFO(fifo.lstat().st_mode)
    assert sorted(os.listdir(tmp_path)) == ["in.hlo", "out.fifo"]


@pytest.mark.parametrize("size", ["small", "large"])
def test_a_fifo_given_as_input_is_read_once(tmp_path, size):
    """A named pipe is read as it is written (a large regular file is mapped into memory, a
    FIFO never)."""
    text = AR if size == "small" else AR + "// padding\n" * 200_000
    fifo = tmp_path / "in.fifo"
    os.mkfifo(fifo)

    def produce() -> None:
        # written at once: a reader that opened the pipe only to look, and closed it, leaves
        # this writer with no reader (a broken pipe) and the command waiting for a writer
        with contextlib.suppress(BrokenPipeError), open(fifo, "wb") as fh:
            fh.write(text.encode())

    writer = threading.Thread(target=produce)
    writer.start()
    try:
        r = subprocess.run([str(EXE), "--passes", "none", str(fifo), "-o", str(tmp_path / "out.hlo")],
                           capture_output=True, env=env(), timeout=20)
    finally:
        if writer.is_alive():  # the command waits for a writer that is gone: let it end
            with contextlib.suppress(OSError), open(fifo, "wb"):
                pass
        writer.join(timeout=60)
    assert r.returncode == 0, r.stderr
    assert (tmp_path / "out.hlo").read_text() == text


@pytest.mark.skipif(os.geteuid() != 0, reason="making a device node needs root")
def test_a_device_given_to_o_or_report_is_written_through_not_replaced(tmp_path):
    src = write(tmp_path / "in.hlo", AR)
    null = tmp_path / "null"
    os.mknod(null, stat.S_IFCHR | 0o666, os.makedev(1, 3))  # a copy of /dev/null
    for args in (["-o", str(null)], ["--report", str(null), "-o", str(tmp_path / "o.hlo")]):
        r = hlo("--passes", CONVERT, str(src), *args)
        assert r.returncode == 0, r.stderr
        assert stat.S_ISCHR(null.lstat().st_mode)
    assert no_temporaries(tmp_path)


@pytest.mark.skipif(not stat.S_ISCHR(os.stat("/dev/null").st_mode), reason="/dev/null is not a device here")
def test_dev_null_as_output_and_report():
    r = hlo("--passes", CONVERT, "-", "-o", "/dev/null", "--report", "/dev/null", input=AR.encode())
    assert r.returncode == 0, r.stderr
    assert stat.S_ISCHR(os.stat("/dev/null").st_mode)


# --------------------------------------------------------------------------- 2. symbolic links


@pytest.mark.parametrize("how", ["-i", "-o"])
def test_a_link_stays_and_its_target_is_rewritten(tmp_path, how, expected_out):
    real = write(tmp_path / "real.hlo", AR)
    (tmp_path / "sub").mkdir()
    link = tmp_path / "sub" / "link.hlo"
    link.symlink_to(Path("..") / "real.hlo")
    chain = tmp_path / "chain.hlo"
    chain.symlink_to(link)  # a link to a link
    if how == "-i":
        r = hlo("--passes", CONVERT, "-i", str(chain))
    else:
        src = write(tmp_path / "src.hlo", AR)
        r = hlo("--passes", CONVERT, str(src), "-o", str(chain))
    assert r.returncode == 0, r.stderr
    assert chain.is_symlink() and link.is_symlink()
    assert os.readlink(link) == os.path.join("..", "real.hlo")
    assert real.read_bytes() == expected_out
    assert no_temporaries(tmp_path)


def test_a_dangling_link_given_to_o_creates_its_target(tmp_path, expected_out):
    src = write(tmp_path / "src.hlo", AR)
    link = tmp_path / "link.hlo"
    link.symlink_to("made.hlo")
    r = hlo("--passes", CONVERT, str(src), "-o", str(link))
    assert r.returncode == 0, r.stderr
    assert link.is_symlink() and (tmp_path / "made.hlo").read_bytes() == expected_out


# --------------------------------------------------------------------------- 3. permissions


@pytest.mark.parametrize("mask", [0o022, 0o077, 0o002])
def test_new_files_get_the_mode_open_gives_under_the_umask(tmp_path, mask):
    src = write(tmp_path / "in.hlo", AR)
    want = 0o666 & ~mask
    r = run_umask(mask, "--passes", CONVERT, str(src), "-o", str(tmp_path / "one.hlo"),
                  "--report", str(tmp_path / "r.json"))
    assert r.returncode == 0, r.stderr
    r = run_umask(mask, "--passes", CONVERT, str(src), "-o", f"{tmp_path / 'dir'}/")
    assert r.returncode == 0, r.stderr
    for p in (tmp_path / "one.hlo", tmp_path / "r.json", tmp_path / "dir" / "in.hlo"):
        assert stat.S_IMODE(p.stat().st_mode) == want, (p, oct(p.stat().st_mode))


@pytest.mark.parametrize("mode", [0o640, 0o604, 0o755])
def test_rewritten_and_overwritten_files_keep_their_mode(tmp_path, mode):
    a = write(tmp_path / "a.hlo", AR)
    out = write(tmp_path / "out.hlo", "old")
    a.chmod(mode)
    out.chmod(mode)
    for args in (["-i", str(a)], [str(write(tmp_path / "src.hlo", AR)), "-o", str(out)]):
        r = run_umask(0o077, "--passes", CONVERT, *args)
        assert r.returncode == 0, r.stderr
    for p in (a, out):
        assert "AwsNeuronAllReduceAdd_f32" in p.read_text()
        assert stat.S_IMODE(p.stat().st_mode) == mode


# --------------------------------------------------------------------------- 4. report over an input or output


def test_a_report_path_that_is_an_input_or_output_is_a_usage_error(tmp_path):
    a = write(tmp_path / "a.hlo", AR)
    b = write(tmp_path / "b.hlo", AR)
    (tmp_path / "out").mkdir()
    os.link(a, tmp_path / "hard.hlo")
    (tmp_path / "alias.hlo").symlink_to("a.hlo")
    cases = [
        ["-i", str(a), "--report", str(a)],
        ["-i", str(a), "--report", str(tmp_path / "alias.hlo")],
        ["-i", str(a), "--report", str(tmp_path / "hard.hlo")],
        ["-i", str(a), "--report", str(tmp_path / "x" / ".." / "a.hlo")],
        [str(a), "--report", str(a)],
        [str(a), "-o", str(b), "--report", str(b)],
        [str(a), "-o", str(tmp_path / "new.hlo"), "--report", str(tmp_path / "new.hlo")],
        [str(a), str(b), "-o", str(tmp_path / "out"), "--report", str(tmp_path / "out" / "b.hlo")],
    ]
    (tmp_path / "x").mkdir()
    before = {p.name: p.read_bytes() for p in tmp_path.iterdir() if p.is_file()}
    for args in cases:
        r = hlo("--passes", CONVERT, *args)
        assert r.returncode == 2, (args, r.stderr)
        assert b"--report" in r.stderr and b"Traceback" not in r.stderr
    after = {p.name: p.read_bytes() for p in tmp_path.iterdir() if p.is_file()}
    assert after == before
    assert os.listdir(tmp_path / "out") == []


# --------------------------------------------------------------------------- 5. full disk


@pytest.mark.skipif(not os.path.exists("/dev/full"), reason="no /dev/full")
@pytest.mark.parametrize("args", [[CONVERT], ["--help"], ["--version"], ["--list-passes"],
                                  ["--diff", "--passes", CONVERT]])
def test_a_full_standard_output_is_one_line_and_exit_4(tmp_path, args):
    src = write(tmp_path / "in.hlo", AR)
    if args == [CONVERT]:
        args = ["--passes", CONVERT, str(src)]
    elif args[0] == "--diff":
        args = [*args, str(src)]
    with open("/dev/full", "wb") as full:
        r = subprocess.run([str(EXE), *args], stdout=full, stderr=subprocess.PIPE, env=env(), timeout=60)
    assert r.returncode == 4
    assert r.stderr == b"cannot write standard output: No space left on device\n"


@pytest.mark.skipif(not os.path.exists("/dev/full"), reason="no /dev/full")
def test_a_full_disk_for_an_output_file_keeps_the_old_file(tmp_path):
    """/dev/full as -o is a device: written through, and the error is an I/O error."""
    src = write(tmp_path / "in.hlo", AR)
    r = hlo("--passes", CONVERT, str(src), "-o", "/dev/full")
    assert r.returncode == 4
    assert b"/dev/full: error: cannot write output: No space left on device" in r.stderr
    assert b"Traceback" not in r.stderr


# --------------------------------------------------------------------------- 6. interrupt


@pytest.mark.parametrize("more", [[], ["--fast"]], ids=["plain command line", "through click"])
def test_interrupt_while_reading_exits_130_and_writes_nothing(tmp_path, more):
    out = tmp_path / "out.hlo"
    p = subprocess.Popen([str(EXE), "-", "-o", str(out), *more], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                         stderr=subprocess.PIPE, env=env())
    assert p.stdin is not None
    p.stdin.write(AR[:40].encode())
    p.stdin.flush()
    time.sleep(1.0)  # started, and waiting for the rest of standard input
    p.send_signal(signal.SIGINT)
    _out, err = p.communicate(timeout=60)
    assert p.returncode == 130
    assert err == b"hlo-rewrite: interrupted\n"
    assert os.listdir(tmp_path) == []


def _big_module(n: int) -> str:
    body = "".join(f"  %n{i} = f32[8]{{0}} negate(f32[8]{{0}} %{'p' if i == 0 else f'n{i - 1}'})\n"
                   for i in range(n))
    return AR.replace("  ROOT %ar = f32[8]{0} all-reduce(f32[8]{0} %p)",
                      body + f"  ROOT %ar = f32[8]{{0}} all-reduce(f32[8]{{0}} %n{n - 1})")


@pytest.mark.parametrize(("jobs", "signum", "code", "word"), [
    ("1", signal.SIGINT, 130, b"interrupted"),
    ("2", signal.SIGINT, 130, b"interrupted"),
    ("2", signal.SIGTERM, 143, b"terminated"),
])
def test_interrupt_at_any_moment_leaves_whole_files_and_no_temporaries(tmp_path, jobs, signum, code, word):
    big = _big_module(10_000)  # about 0.5 MB
    ref = hlo("--passes", CONVERT, input=big.encode())
    assert ref.returncode == 0
    inputs = [write(tmp_path / f"in{i:02}.hlo", big) for i in range(16)]
    outs = tmp_path / "out"
    outs.mkdir()
    # an existing output: replaced whole, or left as it was
    write(outs / "in00.hlo", "old")
    codes = set()
    # a signal before the command has installed its handlers is Python's own: wait for the
    # slowest of three start-ups, twice over (a loaded machine starts some much slower)
    times = []
    for _ in range(3):
        t0 = time.monotonic()
        assert hlo("--version").returncode == 0
        times.append(time.monotonic() - t0)
    startup = 2 * max(times)
    for delay in (0.2, 0.8, 1.8):
        p = subprocess.Popen([str(EXE), "--passes", CONVERT, "-j", jobs, "-o", str(outs), *map(str, inputs)],
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env())
        time.sleep(startup + delay)
        p.send_signal(signum)
        _o, err = p.communicate(timeout=120)
        codes.add(p.returncode)
        if p.returncode == -signum:
            # a start-up slower than any measured: the signal came before the command's handlers,
            # so Python's default action ended it, and it must not have written anything yet
            assert sorted(f.name for f in outs.iterdir()) == ["in00.hlo"]
        else:
            assert p.returncode in (0, code), err
        assert b"Traceback" not in err and b"Aborted" not in err
        if p.returncode == code:
            assert err.endswith(b"hlo-rewrite: " + word + b"\n")
        assert no_temporaries(tmp_path)
        for f in outs.iterdir():
            assert f.read_bytes() in (ref.stdout, b"old"), f
        for f in inputs:
            assert f.read_text() == big
    assert code in codes


def _many_computations(n: int) -> str:
    """A module of ``n`` small computations as XLA prints them (every body read in one pass),
    over the size from which the command reads with a worker process."""
    comps = [
        f"%c.{k} (p.{k}: f32[8]) -> f32[8] {{\n  %p.{k} = f32[8]{{0}} parameter(0)\n"
        f"  %n.{k} = f32[8]{{0}} negate(%p.{k}), metadata={{op_name=\"neg\"}}\n"
        f"  ROOT %r.{k} = f32[8]{{0}} add(%n.{k}, %p.{k})\n}}\n\n"
        for k in range(n)
    ]
    entry = ("ENTRY %main (x: f32[8]) -> f32[8] {\n  %x = f32[8]{0} parameter(0)\n"
             "  ROOT %y = f32[8]{0} call(%x), to_apply=%c.0\n}\n")
    return "HloModule many\n\n" + "".join(comps) + entry


@pytest.mark.skipif(not sys.platform.startswith("linux") or len(os.sched_getaffinity(0)) < 2,
                    reason="the command forks a worker on Linux with two usable CPUs")
@pytest.mark.parametrize(("signum", "code"), [(signal.SIGINT, 130), (signal.SIGTERM, 143)])
def test_a_signal_while_a_worker_reads_ends_both_and_writes_nothing(tmp_path, signum, code):
    from hlo_rewrite.reader.parallel import PARALLEL_MIN_BYTES

    text = _many_computations(60_000)
    assert len(text) > 2 * PARALLEL_MIN_BYTES  # so that two processes read it
    src = write(tmp_path / "many.hlo", text)
    out = tmp_path / "out.hlo"
    done = hlo("--passes", "none", str(src), "-o", str(out))
    assert done.returncode == 0 and out.read_text() == text  # read whole, with a worker
    out.unlink()
    startup = 0.0
    for _ in range(3):
        t0 = time.monotonic()
        assert hlo("--version").returncode == 0
        startup = max(startup, time.monotonic() - t0)
    p = subprocess.Popen([str(EXE), "--passes", "none", str(src), "-o", str(out)],
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env())
    time.sleep(2 * startup + 0.1)  # reading by now
    p.send_signal(signum)
    _o, err = p.communicate(timeout=120)
    assert p.returncode in (code, 0), err
    assert b"Traceback" not in err
    if p.returncode == code:
        assert not out.exists()
    assert no_temporaries(tmp_path)
    # no worker left behind: none of this command's processes runs any more
    time.sleep(0.2)
    left = []
    for pid in filter(str.isdigit, os.listdir("/proc")):
        try:
            cmdline = Path(f"/proc/{pid}/cmdline").read_bytes()
        except OSError:
            continue  # ended meanwhile
        if str(src).encode() in cmdline:
            left.append(pid)
    assert left == []


# --------------------------------------------------------------------------- 7. usage errors


def test_usage_errors_instead_of_silent_surprises(tmp_path):
    a = write(tmp_path / "a.hlo", AR)
    b = write(tmp_path / "b.hlo", AR)
    cases = {
        ("--passes", "", str(a)): "--passes",
        ("--passes", " ", str(a)): "--passes",
        ("--send-recv-target", "", str(a)): "--send-recv-target",
        (str(a), str(b), "-o", str(tmp_path / "x.hlo")): "existing directory",
        (str(a), str(b), "-o", str(a)): "this is a file",
    }
    for args, word in cases.items():
        r = hlo(*args)
        assert r.returncode == 2, args
        err = r.stderr.decode()
        (reason,) = [ln for ln in err.splitlines() if ln.startswith("Error: ")]
        assert word in reason, (args, err)
    assert sorted(os.listdir(tmp_path)) == ["a.hlo", "b.hlo"]
    assert a.read_text() == AR


def test_no_input_while_standard_input_is_a_terminal_is_a_usage_error():
    master, slave = pty.openpty()
    try:
        r = subprocess.run([str(EXE)], stdin=slave, capture_output=True, env=env(), timeout=30)
    finally:
        os.close(slave)
        os.close(master)
    assert r.returncode == 2
    assert "no input" in r.stderr.decode()


# --------------------------------------------------------------------------- 8. what the input looks like


def test_input_that_is_not_hlo_text_says_what_it_looks_like(tmp_path):
    zst = write(tmp_path / "m.hlo.zst", b"\x28\xb5\x2f\xfd" + bytes(16))
    proto = write(tmp_path / "m.pb", b"\x0a\x04main\x12\x02\x08\x01\x1a\x10\x0a\x03add\x10\x02\x00\x00")
    mlir2 = write(tmp_path / "s.mlir", "// a comment\nfunc.func @main() {\n  return\n}\n")
    for path, words in ((zst, ["zstd", f"zstd -dc {zst}"]), (proto, ["protocol buffer"]), (mlir2, ["MLIR"])):
        r = hlo(str(path))
        assert r.returncode == 3, path
        err = r.stderr.decode()
        assert err.startswith(f"{path}: error: ") and err.count("\n") == 1, err
        for w in words:
            assert w in err, (w, err)


def test_gzip_is_read_from_a_file_and_from_standard_input(tmp_path, expected_out):
    gz = write(tmp_path / "m.hlo.gz", gzip.compress(AR.encode()))  # docs/formats.md
    r = hlo(str(gz), "--passes", CONVERT)
    assert r.returncode == 0 and r.stdout == expected_out
    r = hlo("-", "--passes", CONVERT, input=gzip.compress(AR.encode()))
    assert r.returncode == 0 and r.stdout == expected_out


def test_an_unknown_element_type_is_named(tmp_path):
    bad = write(tmp_path / "t.hlo", AR.replace("%p = f32[8]{0} parameter(0)", "%p = f33[8]{0} parameter(0)"))
    r = hlo(str(bad))
    assert r.returncode == 3
    assert "unknown element type 'f33'" in r.stderr.decode()


def test_a_byte_order_mark_is_accepted_and_kept(tmp_path, expected_out):
    bom = b"\xef\xbb\xbf"
    src = write(tmp_path / "bom.hlo", bom + AR.encode())
    r = hlo("--passes", CONVERT, str(src))
    assert r.returncode == 0, r.stderr
    assert r.stdout == bom + expected_out
    r = hlo("--passes", "none", str(src))
    assert r.stdout == bom + AR.encode()
    r = hlo("--passes", CONVERT, "--split-input-file", str(src))
    assert r.stdout == bom + expected_out
    r = hlo("--passes", CONVERT, "-i", str(src))
    assert r.returncode == 0 and src.read_bytes() == bom + expected_out


# --------------------------------------------------------------------------- 9. python -m


def test_python_dash_m_names_itself_in_help_and_errors():
    r = subprocess.run([sys.executable, "-m", "hlo_rewrite", "--help"], capture_output=True, env=env(), timeout=60)
    assert r.returncode == 0
    assert r.stdout.decode().startswith("Usage: python -m hlo_rewrite [OPTIONS]")
    r = subprocess.run([sys.executable, "-m", "hlo_rewrite", "--passes", ""], capture_output=True, env=env(),
                       timeout=60)
    assert r.returncode == 2 and "Try 'python -m hlo_rewrite --help'" in r.stderr.decode()
    r = hlo("--help")
    assert r.stdout.decode().startswith("Usage: hlo-rewrite [OPTIONS]")


# --------------------------------------------------------------------------- 10. collectives left alone


def test_one_warning_line_when_collectives_are_left_alone(tmp_path):
    src = write(tmp_path / "called.hlo", CALLED)
    r = hlo("--passes", CONVERT, str(src))
    assert r.returncode == 0
    assert r.stderr.decode() == ("warning: 1 all-reduce left alone: not in the ENTRY computation "
                                 "(--all-computations includes it; -v for details)\n")
    assert hlo("--passes", CONVERT, "-q", str(src)).stderr == b""
    assert hlo("--passes", CONVERT, "--all-computations", str(src)).stderr == b""
    v = hlo("--passes", CONVERT, "-v", str(src)).stderr.decode()
    assert f"{src}:11: {CONVERT} left all-reduce 'inner' (computation 'body') alone: outside scope" in v
    # over several files: still one line, with the total
    two = write(tmp_path / "two.hlo", CALLED)
    r = hlo("--passes", CONVERT, str(src), str(two))
    lines = r.stderr.decode().splitlines()
    assert lines == ["warning: 2 all-reduces left alone: not in the ENTRY computation "
                     "(--all-computations includes them; -v for details)"]


# --------------------------------------------------------------------------- 11. colour and tables


def _stderr_on_terminal(args: list[str], **extra: str) -> tuple[int, bytes]:
    master, slave = pty.openpty()
    p = subprocess.Popen([str(EXE), *args], stdout=subprocess.DEVNULL, stderr=slave, env=env(**extra))
    os.close(slave)
    err = _read_terminal(master)
    code = p.wait(timeout=60)
    os.close(master)
    return code, err


def test_stats_are_plain_lines_when_stderr_is_not_a_terminal(tmp_path):
    src = write(tmp_path / "called.hlo", CALLED)
    r = hlo("--passes", CONVERT, "--stats", "-q", str(src))
    err = r.stderr.decode()
    assert not re.search("[\u2500-\u257f]", err)  # no box drawing
    assert "  " not in err and not any(ln != ln.strip() for ln in err.splitlines())  # no padding
    lines = err.splitlines()
    assert lines[0] == "hlo-rewrite: 1 file, 1 changed"
    assert lines[1].split("\t") == ["pass", "matched", "rewritten", "left", "time"]
    assert lines[2].split("\t")[:4] == [CONVERT, "2", "1", "1"]
    assert "\x1b[" not in err


def test_stats_on_a_narrow_terminal_never_cut_pass_names(tmp_path):
    src = write(tmp_path / "called.hlo", CALLED)
    code, err = _stderr_on_terminal(["--stats", str(src)], COLUMNS="40", TERM="xterm")
    assert code == 0
    text = err.decode()
    assert "\u2503" in text or "\u2502" in text  # a box-drawn table
    for name in ("fuse-reduce-scatter", "fuse-send-recv", CONVERT):
        assert name in text
    assert "\u2026" not in text.split("left alone, and why")[0]  # no ellipsis in the first table


@pytest.mark.parametrize(("args", "extra", "on_terminal", "coloured"), [
    ([], {}, True, True),
    ([], {}, False, False),
    ([], {"NO_COLOR": "1"}, True, False),
    ([], {"TERM": "dumb"}, True, False),
    ([], {"FORCE_COLOR": "1"}, False, True),
    ([], {"FORCE_COLOR": "1", "NO_COLOR": "1"}, False, False),
    (["--color=always"], {}, False, True),
    (["--color=always"], {"NO_COLOR": "1"}, False, True),
    (["--color=never"], {}, True, False),
    (["--color=never"], {"FORCE_COLOR": "1"}, True, False),
])
def test_colour_choice_and_environment(tmp_path, args, extra, on_terminal, coloured):
    bad = write(tmp_path / "bad.hlo", BAD)
    extra = {"TERM": "xterm", **extra}
    if on_terminal:
        code, err = _stderr_on_terminal([*args, str(bad)], **extra)
    else:
        r = hlo(*args, str(bad), **extra)
        code, err = r.returncode, r.stderr
    assert code == 3
    assert (b"\x1b[" in err) is coloured, err


def test_color_rejects_an_unknown_choice():
    r = hlo("--color=sometimes", "-", input=AR.encode())
    assert r.returncode == 2


# --------------------------------------------------------------------------- 12. the --report JSON


@pytest.fixture(scope="module")
def schema_validator():
    jsonschema = pytest.importorskip("jsonschema")
    schema = json.loads((REPO / "docs" / "report.schema.json").read_text())
    jsonschema.Draft202012Validator.check_schema(schema)
    return jsonschema.Draft202012Validator(schema)


def _keys(value: object) -> set[str]:
    """Every key of every object in a JSON document."""
    if isinstance(value, dict):
        return set(value).union(*(_keys(v) for v in value.values()))
    if isinstance(value, list):
        return set().union(*(_keys(v) for v in value))
    return set()


def _report(tmp_path: Path, *args: str) -> tuple[int, dict]:
    path = tmp_path / "report.json"
    if path.exists():
        path.unlink()
    r = hlo(*args, "--report", str(path))
    return r.returncode, json.loads(path.read_text())


def test_reports_follow_the_schema_with_one_set_of_keys(tmp_path, schema_validator):
    a = write(tmp_path / "a.hlo", AR)
    called = write(tmp_path / "called.hlo", CALLED)
    split = write(tmp_path / "split.hlo", AR + "// -----\n" + CALLED + "// -----\n")
    bad = write(tmp_path / "bad.hlo", BAD)
    runs = [
        ["--passes", CONVERT, str(a)],
        [str(a), str(called), str(bad), "-o", f"{tmp_path / 'out'}/"],
        ["--split-input-file", "--safe", str(split), str(bad), "--check"],
        ["--passes", "none", "-", ],
        [str(tmp_path / "missing.hlo"), str(a), "--diff"],
    ]
    docs = []
    for args in runs:
        code, doc = _report(tmp_path, *args) if args[-1] != "-" else (None, None)
        if doc is None:
            path = tmp_path / "stdin.json"
            r = hlo(*args, "--report", str(path), input=AR.encode())
            code, doc = r.returncode, json.loads(path.read_text())
        schema_validator.validate(doc)
        assert doc["exit_code"] == code
        assert "pass_name" not in _keys(doc)
        docs.append(doc)
    # the schema catches a stray key
    doc = docs[0]
    doc["files"][0]["modules"][0]["passes"][0]["records"].append(
        {"pass_name": "x", "computation": "c", "instruction": "i", "opcode": "o", "action": "left",
         "target": None, "reason": "r", "line": 1})
    with pytest.raises(Exception, match="pass_name|pass"):
        schema_validator.validate(doc)


def test_a_files_exit_code_agrees_with_the_run_under_check(tmp_path):
    a = write(tmp_path / "a.hlo", AR)
    same = write(tmp_path / "same.hlo", AR_OUT)
    code, doc = _report(tmp_path, "--check", "--passes", CONVERT, str(a), str(same))
    assert code == 1 == doc["exit_code"]
    assert [(f["changed"], f["exit_code"]) for f in doc["files"]] == [(True, 1), (False, 0)]
    code, doc = _report(tmp_path, "--passes", CONVERT, str(a), str(same), "--diff")
    assert code == 0 and [f["exit_code"] for f in doc["files"]] == [0, 0]


@pytest.mark.parametrize("jobs", ["1", "2"])
def test_a_result_stays_at_its_inputs_position_when_an_input_fails(tmp_path, jobs):
    names = ["a.hlo", "missing.hlo", "bad.hlo", "b.hlo", "c.hlo"]
    for n in ("a.hlo", "b.hlo", "c.hlo"):
        write(tmp_path / n, AR)
    write(tmp_path / "bad.hlo", BAD)
    code, doc = _report(tmp_path, "-j", jobs, "--passes", CONVERT, "-o", f"{tmp_path / 'out'}/",
                        *[str(tmp_path / n) for n in names])
    assert code == 4
    assert [f["file"] for f in doc["files"]] == [str(tmp_path / n) for n in names]
    assert [f["status"] for f in doc["files"]] == ["ok", "error", "error", "ok", "ok"]
    assert [f["exit_code"] for f in doc["files"]] == [0, 4, 3, 0, 0]
    assert sorted(os.listdir(tmp_path / "out")) == ["a.hlo", "b.hlo", "c.hlo"]


# --------------------------------------------------------------------------- 13. [tool.hlo-rewrite]


def test_pyproject_configuration_sets_passes_and_options(tmp_path):
    project = tmp_path / "project"
    (project / "golden" / "deep").mkdir(parents=True)
    write(project / "pyproject.toml", '[project]\nname = "x"\n\n[tool.hlo-rewrite]\n'
                                      f'passes = ["{CONVERT}"]\nall-computations = true\n')
    # a nearer pyproject.toml without the table does not hide it
    write(project / "golden" / "pyproject.toml", '[tool.other]\nx = 1\n')
    src = write(project / "golden" / "deep" / "called.hlo", CALLED)
    r = hlo(str(src))
    assert r.returncode == 0 and r.stdout.count(b"AwsNeuronAllReduceAdd_f32") == 2 and r.stderr == b""
    # the command line overrides it
    r = hlo("--passes", "none", str(src))
    assert r.stdout == CALLED.encode()
    # --no-config ignores it: the default pipeline, ENTRY only
    r = hlo("--no-config", str(src))
    assert r.stdout.count(b"AwsNeuronAllReduceAdd_f32") == 1
    # -v says which file was used
    r = hlo("-v", str(src))
    assert f"configuration: [tool.hlo-rewrite] in {project / 'pyproject.toml'}" in r.stderr.decode()
    r = hlo("-v", "--no-config", str(src))
    assert b"configuration: " not in r.stderr
    # standard input: looked for from the current directory
    r = subprocess.run([str(EXE), "-"], input=CALLED.encode(), capture_output=True, env=env(), cwd=project,
                       timeout=60)
    assert r.stdout.count(b"AwsNeuronAllReduceAdd_f32") == 2


@pytest.mark.parametrize("nearer", ['[tool.other]\nx = 1\n', "not [ valid TOML\n", 'name = "x"\n'])
def test_a_pyproject_that_does_not_name_the_tool_is_passed_over(tmp_path, nearer):
    """Only a file that names the tool can hold its table: another (valid or not) is not
    parsed, and the table further up is found."""
    project = tmp_path / "project"
    (project / "sub").mkdir(parents=True)
    write(project / "pyproject.toml", f'[tool.hlo-rewrite]\npasses = ["{CONVERT}"]\nall-computations = true\n')
    write(project / "sub" / "pyproject.toml", nearer)
    src = write(project / "sub" / "called.hlo", CALLED)
    r = hlo("-v", str(src))
    assert r.returncode == 0, r.stderr
    assert r.stdout.count(b"AwsNeuronAllReduceAdd_f32") == 2
    assert f"configuration: [tool.hlo-rewrite] in {project / 'pyproject.toml'}" in r.stderr.decode()
    # a key written with escapes still names the table
    write(project / "sub" / "pyproject.toml", '[tool."hlo\\u002Drewrite"]\npasses = "none"\n')
    assert hlo(str(src)).stdout == CALLED.encode()


@pytest.mark.parametrize(("table", "word"), [
    ("passes = []", "passes: is empty"),
    ('passes = "no-such-pass"', "no-such-pass"),
    ("send-recv-target = ''", "send-recv-target"),
    ("all-computations = 'yes'", "true or false"),
    ("output = 'x.hlo'", "unknown key 'output'"),
    ("jobs = -1", "jobs"),
    ("[[", "not valid TOML"),
])
def test_a_bad_configuration_is_a_usage_error_naming_the_file(tmp_path, table, word):
    write(tmp_path / "pyproject.toml", f"[tool.hlo-rewrite]\n{table}\n")
    src = write(tmp_path / "a.hlo", AR)
    r = hlo(str(src))
    assert r.returncode == 2, r.stderr
    err = r.stderr.decode()
    assert str(tmp_path / "pyproject.toml") in err and word in err, err
    assert b"Traceback" not in r.stderr
    assert hlo("--no-config", str(src)).returncode == 0


# --------------------------------------------------------------------------- 14. shell completion


def test_shell_completion_as_documented():
    doc = (REPO / "docs" / "cli.md").read_text()
    assert "_HLO_REWRITE_COMPLETE=bash_source" in doc and "_HLO_REWRITE_COMPLETE=zsh_source" in doc
    r = hlo(_HLO_REWRITE_COMPLETE="bash_source")
    assert r.returncode == 0 and b"complete -o nosort -F _hlo_rewrite_completion hlo-rewrite" in r.stdout
    r = hlo(_HLO_REWRITE_COMPLETE="bash_complete", COMP_WORDS="hlo-rewrite --pas", COMP_CWORD="1")
    assert "plain,--passes" in r.stdout.decode().splitlines()
    r = hlo(_HLO_REWRITE_COMPLETE="bash_complete", COMP_WORDS="hlo-rewrite --passes fuse-send-recv,conv",
            COMP_CWORD="2")
    assert r.stdout.decode().splitlines() == [f"plain,fuse-send-recv,{CONVERT}",
                                              "plain,fuse-send-recv,convert-custom-calls-to-collectives"]


# --------------------------------------------------------------------------- plugins on the command line


def test_a_plugin_brings_its_toggle_options_and_listing(site, tmp_path):  # noqa: F811 - the fixture
    from test_plugins import PAIR
    from test_plugins import run as run_with

    src = write(tmp_path / "in.hlo", PAIR)
    listing = run_with(site, "-m", "hlo_rewrite", "--list-passes")
    assert listing.returncode == 0, listing.stderr
    lines = listing.stdout.splitlines()
    at = [i for i, ln in enumerate(lines) if " rename-custom-call-target " in ln][0]
    assert lines[at].startswith("    rename-custom-call-target ")  # not in the default pipeline
    assert lines[at + 1].strip() == ("from plugin hlo-rewrite-rename-target 0.1.0 "
                                     "(hlo_rewrite_rename_target:RenameCustomCallTarget)")
    assert lines[at + 2].strip().startswith("--rename-custom-call-target-old NAME: ")
    helptext = run_with(site, "-m", "hlo_rewrite", "--help").stdout
    assert "--rename-custom-call-target / --no-rename-custom-call-target" in helptext
    assert "--rename-custom-call-target-new NAME" in helptext
    # the toggle adds it after the default pipeline; its option flag sets its option
    r = run_with(site, "-m", "hlo_rewrite", "--rename-custom-call-target", "--rename-custom-call-target-new",
                 "Mine", str(src))
    assert r.returncode == 0, r.stderr
    assert 'custom_call_target="Mine"' in r.stdout
    # a value the plugin refuses is a usage error before anything is read
    r = run_with(site, "-m", "hlo_rewrite", "--rename-custom-call-target", "--rename-custom-call-target-new",
                 'a"b', str(src))
    assert r.returncode == 2 and "not a plain target name" in r.stderr
    # [tool.hlo-rewrite] sets a plugin's options too
    write(tmp_path / "pyproject.toml", "[tool.hlo-rewrite]\nrename-custom-call-target = true\n"
                                       "rename-custom-call-target-new = \"FromConfig\"\n")
    r = run_with(site, "-m", "hlo_rewrite", str(src))
    assert r.returncode == 0, r.stderr
    assert 'custom_call_target="FromConfig"' in r.stdout
