"""The command reads a large input while its modules load (hlo_rewrite.early).

The console script guesses its input from the words of its command line before the options
are parsed, decodes it and starts the reading's workers. That must only ever save time: the
text is used only for the very file the run reads, the workers only for that very text, a wrong
guess ends them, and the outcome (output, messages, exit status) is the one of a run without it.
"""

from __future__ import annotations

import gzip
import os
import signal
import subprocess
import sys

import pytest

from hlo_rewrite import early
from hlo_rewrite.formats.walk import Entry
from hlo_rewrite.opcodes import AttrSpec, OpcodeSpec
from hlo_rewrite.reader import parallel
from hlo_rewrite.reader.block import BodyCheck

pytestmark = [
    pytest.mark.skipif(not sys.platform.startswith("linux"), reason="workers are forked on Linux only"),
    pytest.mark.filterwarnings("ignore:os.fork:RuntimeWarning"),
]

#: the size from which an input is read with workers, and so guessed
LIMIT = parallel.PARALLEL_MIN_BYTES

#: the command without the early reading: the command line module's own entry
PLAIN = "import sys; from hlo_rewrite.cli import console_main; sys.argv[0] = 'hlo-rewrite'; console_main()"


def _module(computations: int) -> str:
    """Computations that each call the one before, then an ENTRY with two collectives."""
    parts = [
        "HloModule m, entry_computation_layout={(f32[8]{0})->f32[8]{0}}\n"
        "\n%add (a: f32[8]) -> f32[8] {\n  ROOT %a = f32[8]{0} parameter(0)\n}\n"
        "\n%sum (x: f32[], y: f32[]) -> f32[] {\n  %x = f32[] parameter(0)\n  %y = f32[] parameter(1)\n"
        "  ROOT %s = f32[] add(%x, %y)\n}\n"
    ]
    for k in range(computations):
        callee = f"to_apply=%c.{k - 1}" if k else "to_apply=%add"
        parts.append(
            f"\n%c.{k} (p.{k}: f32[8]) -> f32[8] {{\n  %p.{k} = f32[8]{{0}} parameter(0)\n"
            f"  %n.{k} = f32[8]{{0}} negate(%p.{k}), metadata={{op_name=\"neg\"}}\n"
            f"  ROOT %r.{k} = f32[8]{{0}} call(%n.{k}), {callee}\n}}\n"
        )
    parts.append(
        "\nENTRY %main (x: f32[8]) -> f32[8] {\n  %x = f32[8]{0} parameter(0)\n"
        "  %all-reduce = f32[8]{0} all-reduce(%x), channel_id=1, replica_groups={{0,1}}, to_apply=%sum\n"
        "  %all-gather = f32[16]{0} all-gather(%all-reduce), channel_id=2, replica_groups={{0,1}}, dimensions={0}\n"
        f"  ROOT %y = f32[8]{{0}} call(%all-reduce), to_apply=%c.{computations - 1}\n}}\n"
    )
    return "".join(parts)


@pytest.fixture(scope="module")
def large(tmp_path_factory) -> str:
    """A module just over the size from which the command reads with workers, and its file."""
    text = _module(LIMIT // 170)
    assert len(text) > LIMIT
    path = tmp_path_factory.mktemp("early") / "large.hlo"
    path.write_text(text)
    return str(path)


@pytest.fixture
def files(tmp_path):
    """Make a file of ``size`` bytes (sparse: only its size counts for the guess)."""

    def make(name: str, size: int = LIMIT) -> str:
        path = tmp_path / name
        with open(path, "wb") as fh:
            fh.truncate(size)
        return str(path)

    return make


@pytest.fixture(autouse=True)
def _nothing_left_over():
    yield
    early.drop()


# ----------------------------------------------------------------------------- the guess


def test_the_one_large_file_named_is_the_input(files):
    big, small = files("in.hlo"), files("small.hlo", 1000)
    assert early.guess([big]) == big
    assert early.guess(["--passes", "none", big, "-j", "2"]) == big
    assert early.guess([small]) is None
    assert early.guess([big[:-1] + "x"]) is None  # no such file


@pytest.mark.parametrize("words", [
    ["{in}", "-o", "{out}"],
    ["-o", "{out}", "{in}"],
    ["--output", "{out}", "--strict", "{in}"],
    ["--output={out}", "{in}"],
    ["-o{out}", "{in}"],
    ["-i", "{in}"],
    ["--", "{in}"],
])
def test_the_output_is_not_taken_for_the_input(files, words):
    """`-o OUT` names a file that may exist, large, from an earlier run: it is not an input."""
    big, out = files("in.hlo"), files("out.hlo")
    assert early.guess([w.format(**{"in": big, "out": out}) for w in words]) == big


def test_no_guess_when_the_command_line_is_not_plainly_one_large_file(files, tmp_path):
    a, b = files("a.hlo"), files("b.hlo")
    assert early.guess([a, b]) is None  # two inputs
    assert early.guess([a, "--", "-o", b]) is None  # after "--", "-o" and what follows are inputs
    assert early.guess(["-"]) is None  # standard input
    assert early.guess([str(tmp_path)]) is None  # a directory
    os.symlink(a, tmp_path / "link.hlo")
    assert early.guess([a, str(tmp_path / "link.hlo")]) == a  # one file, named twice
    os.mkfifo(tmp_path / "fifo")
    assert early.guess([str(tmp_path / "fifo")]) is None  # never opened: only a regular file is


def test_the_output_option_is_spelled_as_the_command_line_spells_it():
    from hlo_rewrite.cli import main

    output = next(p for p in main.params if p.name == "output")
    assert sorted(output.opts + output.secondary_opts) == sorted(early.OUTPUT_OPTIONS)


# ----------------------------------------------------------------------------- in one process


@pytest.fixture
def forks(monkeypatch):
    """The processes forked, counted."""
    monkeypatch.setattr(parallel, "single_threaded", lambda: True)  # the test process may have threads
    count = []
    fork = os.fork

    def counting():
        count.append(1)
        return fork()

    monkeypatch.setattr(os, "fork", counting)
    return count


def _no_child_left():
    with pytest.raises(ChildProcessError):
        os.waitpid(-1, os.WNOHANG)


def test_the_reading_takes_over_the_workers_started_early(large, forks):
    from hlo_rewrite import parse_module

    early.begin([large])
    assert len(forks) == (1 if parallel.usable_cpus() > 1 else 0)
    doc = early.take(large, "shown.hlo")
    if not forks:
        assert doc is None  # one usable processor: nothing to start early, nothing kept
        return
    assert doc is not None and doc.name == "shown.hlo"
    assert doc.text == open(large).read()
    module = parse_module(doc.text, processes=2)
    assert len(forks) == 1  # no second worker: the one started early checked its stretch
    assert module.computation("c.100").get("r.100").operands == ["n.100"]
    _no_child_left()
    assert early.take(large, large) is None  # it served one reading


def test_a_file_changed_since_is_read_again(large, forks, tmp_path):
    changed = tmp_path / "changed.hlo"
    changed.write_text(open(large).read())
    early.begin([str(changed)])
    os.utime(changed, ns=(0, 0))
    assert early.take(str(changed), str(changed)) is None


def test_another_input_is_read_as_usual_and_the_early_workers_end(large, forks, tmp_path):
    from hlo_rewrite import parse_module

    other = tmp_path / "other.hlo"
    other.write_text(open(large).read())
    early.begin([large])
    assert early.take(str(other), str(other)) is None
    text = other.read_text()
    parse_module(text, processes=2)  # its own workers; those started early are ended first
    _no_child_left()


@pytest.mark.parametrize("strict, processes", [(True, 2), (False, 1)])
def test_a_reading_without_workers_ends_those_started_early(large, forks, strict, processes):
    from hlo_rewrite import parse_module

    early.begin([large])
    doc = early.take(large, large)
    if doc is None:
        pytest.skip("one usable processor")
    parse_module(doc.text, strict=strict, processes=processes)
    _no_child_left()


def test_with_one_usable_processor_nothing_is_read_early(large, forks, monkeypatch):
    """The reading would run in one process: the file is not even decoded (it would be twice)."""
    from hlo_rewrite.formats import mapped

    decoded = []
    monkeypatch.setattr(parallel, "usable_cpus", lambda: 1)
    monkeypatch.setattr(mapped, "map_text", lambda *a: decoded.append(a))
    early.begin([large])
    assert forks == [] and decoded == []
    assert early.take(large, large) is None


def test_what_is_not_plain_hlo_text_is_not_read_early(large, forks, tmp_path):
    zipped = tmp_path / "large.hlo.gz"
    zipped.write_bytes(gzip.compress(open(large, "rb").read(), compresslevel=1) + os.urandom(LIMIT))
    early.begin([str(zipped)])
    assert forks == []
    assert early.take(str(zipped), str(zipped)) is None


# ----------------------------------------------------------------------------- as the command


def _run(entry: list[str], args: list[str], cwd) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, *entry, *args], capture_output=True, text=True, cwd=cwd)


@pytest.mark.parametrize("change", [
    None,
    ("negate(%p.20000)", "negate(%q.20000)"),  # in the worker's stretch
    ("negate(%p.5)", "negate(%q.5)"),  # in the reader's
    ("to_apply=%c.20001", "to_apply=%c.99999"),  # a callee checked at the end
])
def test_the_command_with_and_without_the_early_reading_agree(large, tmp_path, change):
    text = open(large).read()
    if change is not None:
        assert change[0] in text
        text = text.replace(change[0], change[1], 1)
    src = tmp_path / "in.hlo"
    src.write_text(text)
    outcomes = []
    for entry in (["-m", "hlo_rewrite"], ["-c", PLAIN]):
        out = tmp_path / "out.hlo"
        done = _run(entry, [str(src), "-o", str(out)], tmp_path)
        outcomes.append((done.returncode, done.stdout, done.stderr.replace("python -m hlo_rewrite", "hlo-rewrite"),
                         out.read_text() if out.exists() else None))
        if out.exists():
            out.unlink()
    assert outcomes[0] == outcomes[1]
    if change is None:
        assert outcomes[0][0] == 0 and "custom-call" in outcomes[0][3]
    else:
        assert outcomes[0][0] != 0 and outcomes[0][3] is None


def test_the_command_takes_the_workers_started_early_over(large, tmp_path):
    probe = (
        "import sys\n"
        "from hlo_rewrite.reader import parallel\n"
        "forks = []\n"
        "fork = parallel._fork\n"
        "parallel._fork = lambda *a, **k: forks.append(1) or fork(*a, **k)\n"
        "import atexit\n"
        "atexit.register(lambda: print(len(forks)))\n"
        "from hlo_rewrite.__main__ import console_main\n"
        "console_main()\n"
    )
    out = tmp_path / "out.hlo"
    done = _run(["-c", probe], ["--passes", "none", large, "-o", str(out)], tmp_path)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == ("1" if parallel.usable_cpus() > 1 else "0")  # one worker, started early
    assert out.read_text() == open(large).read()


#: the command, printing at its end the process ids of the reading's workers it forked
FORKS_PRINTED = (
    "import os, sys\n"
    "from hlo_rewrite.reader import parallel\n"
    "pids = []\n"
    "fork = parallel._fork\n"
    "def spy(*a, **k):\n"
    "    w = fork(*a, **k)\n"
    "    pids.append(w.pid)\n"
    "    return w\n"
    "parallel._fork = spy\n"
    "import atexit\n"
    "def report():\n"
    "    print(pids, file=sys.stderr)\n"
    "atexit.register(report)\n"  # runs after the ending (registered later, run first)
    "from hlo_rewrite.__main__ import console_main\n"
    "console_main()\n"
)


def _forked_and_gone(done: subprocess.CompletedProcess) -> list[int]:
    """The workers a run of :data:`FORKS_PRINTED` forked, each checked to be gone."""
    pids = eval(done.stderr.strip().splitlines()[-1])  # noqa: S307 - a list of numbers printed above
    for pid in pids:
        with pytest.raises(ProcessLookupError):
            os.kill(pid, 0)
    return pids


def test_a_usage_error_leaves_no_worker_behind(large, tmp_path):
    """The workers start before the options are read; the command ends them when it stops."""
    done = _run(["-c", FORKS_PRINTED], [large, "--no-such-option"], tmp_path)
    assert done.returncode == 2 and "no-such-option" in done.stderr
    assert len(_forked_and_gone(done)) == (1 if parallel.usable_cpus() > 1 else 0)


def test_files_read_by_a_pool_leave_no_early_worker_behind(large, tmp_path):
    """With -j and several files, each file is read whole in a pool process: the workers started
    early for the large one do not outlive the run, and the outputs are those of a run without
    them."""
    small = tmp_path / "small.hlo"
    small.write_text(_module(3))
    outputs = []
    for entry in (["-c", FORKS_PRINTED], ["-c", PLAIN]):
        out = tmp_path / f"out{len(outputs)}"
        done = _run(entry, ["-j", "2", large, str(small), "-o", f"{out}/"], tmp_path)
        assert done.returncode == 0, done.stderr
        outputs.append({p.name: p.read_text() for p in out.iterdir()})
        if entry[1] is FORKS_PRINTED:
            _forked_and_gone(done)
    assert outputs[0] == outputs[1] and len(outputs[0]) == 2


def test_the_workers_start_before_the_command_loads():
    """The early reading imports only what the check needs: not the IR, the readers, the passes
    nor the command line, which load while the workers check (docs/decisions.md)."""
    code = (
        "import sys\n"
        "import hlo_rewrite.__main__, hlo_rewrite.early, hlo_rewrite.formats.mapped, hlo_rewrite.reader.parallel\n"
        "print(' '.join(sorted(sys.modules)))\n"
    )
    loaded = set(subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout.split())
    assert {"hlo_rewrite.reader.block", "hlo_rewrite.reader.patterns"} <= loaded
    later = {"hlo_rewrite.ir", "hlo_rewrite.reader.plain", "hlo_rewrite.reader.choice", "hlo_rewrite.passes",
             "hlo_rewrite.formats.document", "hlo_rewrite.cli", "click", "dataclasses", "inspect", "typing"}
    assert not later & loaded


@pytest.mark.parametrize("record", [BodyCheck, AttrSpec, OpcodeSpec, Entry], ids=lambda r: r.__name__)
def test_the_early_records_are_typed_field_by_field(record):
    """The records on the early path are collections.namedtuple classes (typing is not loaded
    there), each field named once for namedtuple and once with its type, in the same order."""
    assert tuple(record.__annotations__) == record._fields
    assert record.__slots__ == ()  # no instance dict: as small as typing.NamedTuple's


def test_the_collector_is_off_while_the_command_runs():
    """The console script runs the command without automatic collections (what it loaded
    frozen): collections after a module is read walk every object just read."""
    code = (
        "import gc, sys\n"
        "import hlo_rewrite.cli as cli\n"
        "cli.console_main = lambda prog_name: sys.exit(3 if gc.isenabled() or not gc.get_freeze_count() else 0)\n"
        "from hlo_rewrite.__main__ import console_main\n"
        "console_main()\n"
    )
    assert subprocess.run([sys.executable, "-c", code, "--version"]).returncode == 0


#: the command as the console script runs it, over the files named, printing for each module
#: it reads how many of the modules read before it are still alive
MODULES_ALIVE = (
    "import sys, weakref\n"
    "from hlo_rewrite import runner\n"
    "read, alive = [], []\n"
    "_parse = runner.parse_module\n"
    "def parse(*args, **kwargs):\n"
    "    alive.append(sum(r() is not None for r in read))\n"
    "    module = _parse(*args, **kwargs)\n"
    "    read.append(weakref.ref(module))\n"
    "    return module\n"
    "runner.parse_module = parse\n"
    "import atexit\n"
    "atexit.register(lambda: print(alive))\n"
    "sys.argv[0] = 'hlo-rewrite'\n"
    "from hlo_rewrite.__main__ import console_main\n"
    "console_main()\n"
)


@pytest.mark.parametrize("split", [False, True])
def test_a_run_over_many_modules_does_not_keep_them(tmp_path, split):
    """Without automatic collections, what each module left (a module and its computations
    refer to each other) is collected before the next one is read: files one after another,
    and the modules of one file."""
    if split:
        (tmp_path / "all.hlo").write_text("\n// -----\n".join(_module(k) for k in (1, 2, 3, 4)))
        args = ["--split-input-file", "all.hlo", "-o", "out.hlo"]
    else:
        for k in (1, 2, 3, 4):
            (tmp_path / f"m{k}.hlo").write_text(_module(k))
        args = ["m1.hlo", "m2.hlo", "m3.hlo", "m4.hlo", "-o", "out/"]
    done = _run(["-c", MODULES_ALIVE], args, tmp_path)
    assert done.returncode == 0, done.stderr
    assert done.stdout.split("\n")[-2] == "[0, 0, 0, 0]"


def test_pool_processes_do_not_keep_the_modules_either(tmp_path):
    """The processes of ``-j`` are forked with the collector off too, and read many files each:
    they collect before each module as the command's own process does."""
    for k in range(1, 9):
        (tmp_path / f"m{k}.hlo").write_text(_module(k))
    code = MODULES_ALIVE.replace(
        "    alive.append(sum(r() is not None for r in read))\n",
        "    alive.append(sum(r() is not None for r in read))\n"
        "    os.write(2, f'alive {os.getpid()} {alive[-1]}\\n'.encode())\n",
    ).replace("import sys, weakref\n", "import os, sys, weakref\n")
    done = _run(["-c", code], ["-j", "2", *(f"m{k}.hlo" for k in range(1, 9)), "-o", "out/"], tmp_path)
    assert done.returncode == 0, done.stderr
    seen = [line.split() for line in done.stderr.splitlines() if line.startswith("alive ")]
    assert len(seen) == 8 and len({pid for _, pid, _ in seen}) == 2  # both pool processes read files
    assert [count for _, _, count in seen] == ["0"] * 8


#: the command, signalled (the signal named by its first word) while it loads, once the workers
#: for its large input have started
SIGNALLED_WHILE_LOADING = FORKS_PRINTED.replace(
    "from hlo_rewrite.__main__ import console_main\n",
    "import signal\n"
    "from hlo_rewrite.reader import parallel as _p\n"
    "_begin = _p.begin\n"
    "def _signalled(*a):\n"
    "    started = _begin(*a)\n"
    "    os.kill(os.getpid(), getattr(signal, sys.argv.pop(1)))\n"
    "    return started\n"
    "_p.begin = _signalled\n"
    "from hlo_rewrite.__main__ import console_main\n",
)


@pytest.mark.parametrize(("name", "code", "word"), [("SIGINT", 130, "interrupted"), ("SIGTERM", 143, "terminated")])
def test_a_signal_while_the_command_loads_ends_it_quietly(large, tmp_path, name, code, word):
    """Ctrl-C or SIGTERM before the command has taken them over: its message and exit code, no
    traceback, no output, and no worker left behind."""
    out = tmp_path / "out.hlo"
    done = _run(["-c", SIGNALLED_WHILE_LOADING], [name, "--passes", "none", large, "-o", str(out)], tmp_path)
    assert (done.returncode, done.stderr.splitlines()[0]) == (code, f"hlo-rewrite: {word}"), done.stderr
    assert "Traceback" not in done.stderr and not out.exists()
    assert len(_forked_and_gone(done)) == (1 if parallel.usable_cpus() > 1 else 0)


def test_a_signal_before_the_exit_codes_load_is_its_default_action(tmp_path):
    """In the first milliseconds the signal's own action ends the process, without a traceback."""
    code = (
        "import signal, sys\n"
        "import hlo_rewrite.__main__ as m\n"
        "sys.modules.pop('hlo_rewrite.errors', None)\n"
        "m._stopped_while_loading(signal.SIGINT, None)\n"
        "print('not reached')\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert done.returncode == -signal.SIGINT and done.stdout == "" and "Traceback" not in done.stderr
