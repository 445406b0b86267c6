"""Reading a large module with worker processes gives what reading it in one process gives.

Above :data:`hlo_rewrite.reader.parallel.PARALLEL_MIN_BYTES` (lowered here so that small
modules take that path), and when the caller allows more than one process, forked workers
check the bodies of the later stretches of a module. The module read, and every error with its
location, must not depend on it; a worker that fails only costs time; no worker outlives the
reading.
"""

from __future__ import annotations

import os
import sys
import threading
import time
from array import array
from bisect import bisect_left

import fuzz_corpus
import pytest

from hlo_rewrite import parse_module, print_module
from hlo_rewrite.passes import DEFAULT_PIPELINE, anchor_opcodes
from hlo_rewrite.pipeline import run_passes
from hlo_rewrite.reader import parallel
from hlo_rewrite.reader.block import BodyChecker
from hlo_rewrite.reader.lines import newline_starts
from hlo_rewrite.reader.patterns import OPCODE_SPELLINGS
from hlo_rewrite.reader.plain import Scanner

#: the size from which the command reads with workers (the fixture below lowers it)
LIMIT = parallel.PARALLEL_MIN_BYTES

pytestmark = [
    pytest.mark.skipif(not sys.platform.startswith("linux"), reason="workers are forked on Linux only"),
    pytest.mark.filterwarnings("ignore:os.fork:RuntimeWarning"),
]


@pytest.fixture(autouse=True)
def _small_modules_in_parallel(monkeypatch):
    monkeypatch.setattr(parallel, "PARALLEL_MIN_BYTES", 0)
    # the test process may have threads (jaxlib's, when an oracle test ran before): the
    # workers here only read text, so forking anyway is safe for these tests
    monkeypatch.setattr(parallel, "single_threaded", lambda: True)


class Collected(list):
    """How many bodies of its own stretch each worker sent back (in the order the reader first
    heard from them), and how many of the reader's stretch the reader took from the first one."""

    def __init__(self) -> None:
        super().__init__()
        self.seen: dict[int, int] = {}
        self.taken_back = 0


@pytest.fixture
def collected(monkeypatch):
    counts = Collected()
    receive, take = parallel._receive, parallel.Prechecked.take

    def spy_receive(worker, *, wait=False):
        had = worker.results is not None
        receive(worker, wait=wait)
        if not had and worker.results is not None:
            counts.seen[id(worker)] = len(counts)
            counts.append(len(worker.results))

    def spy_take(self, first, offset):
        found = take(self, first, offset)
        if found is not parallel.MISSING and offset < self._offsets[0]:
            counts.taken_back += 1
        return found

    monkeypatch.setattr(parallel, "_receive", spy_receive)
    monkeypatch.setattr(parallel.Prechecked, "take", spy_take)
    return counts


def _module(computations: int = 24) -> str:
    """Computations that each call the one before, ENTRY last calling the final one."""
    parts = ["HloModule m, entry_computation_layout={(f32[8]{0})->f32[8]{0}}\n"]
    previous = None
    for k in range(computations):
        body = [f"  %p.{k} = f32[8]{{0}} parameter(0)"]
        body.append(f"  %n.{k} = f32[8]{{0}} negate(%p.{k}), metadata={{op_name=\"neg\"}}")
        if previous is None:
            body.append(f"  ROOT %r.{k} = f32[8]{{0}} add(%n.{k}, /*index=1*/%p.{k})")
        else:
            body.append(f"  ROOT %r.{k} = f32[8]{{0}} call(%n.{k}), to_apply=%c.{previous}")
        parts.append(f"\n%c.{k} (p.{k}: f32[8]) -> f32[8] {{\n" + "\n".join(body) + "\n}\n")
        previous = k
    parts.append(
        "\nENTRY %main (x: f32[8]) -> f32[8] {\n  %x = f32[8]{0} parameter(0)\n"
        f"  %all-reduce = f32[8]{{0}} all-reduce(%x), replica_groups={{}}, to_apply=%c.0\n"
        f"  ROOT %y = f32[8]{{0}} call(%all-reduce), to_apply=%c.{previous}\n}}\n"
    )
    return "".join(parts)


#: what the default pipeline looks for: the reading builds ENTRY early when it holds one
ANCHORS = anchor_opcodes(DEFAULT_PIPELINE)


def _both(text: str, processes: int = 2, build_entry_for=()) -> tuple:
    alone = fuzz_corpus.reading(text, "m.hlo", blocks=True)
    shared = fuzz_corpus.reading(text, "m.hlo", blocks=True, processes=processes, build_entry_for=build_entry_for)
    assert shared == alone
    return shared


@pytest.fixture
def entry_built_early(monkeypatch):
    """How many times the reading built ENTRY early, and took what it built."""
    counts = {"built": 0, "taken": 0}
    build, take = Scanner._build_entry_early, Scanner._take_entry_built

    def spy_build(self, found):
        build(self, found)
        counts["built"] += self._entry_built is not None

    def spy_take(self, comp):
        counts["taken"] += 1
        take(self, comp)

    monkeypatch.setattr(Scanner, "_build_entry_early", spy_build)
    monkeypatch.setattr(Scanner, "_take_entry_built", spy_take)
    return counts


@pytest.mark.parametrize("wanted, built", [(ANCHORS, True), ({"all-reduce"}, True), ({"send"}, False), ((), False)])
def test_entry_is_built_while_a_worker_checks_when_it_holds_what_is_wanted(entry_built_early, wanted, built):
    text = _module(60)
    module = parse_module(text, processes=2, build_entry_for=wanted)
    assert entry_built_early == {"built": int(built), "taken": int(built)}
    assert module.entry.is_built is built
    alone = parse_module(text)
    assert repr(module.style) == repr(alone.style)
    assert [(i.name, i.opcode, i.operands, i.line, i.column, i.text, i.computation is module.entry)
            for i in module.entry.instructions] == [
        (i.name, i.opcode, i.operands, i.line, i.column, i.text, True) for i in alone.entry.instructions]
    run_passes(module, DEFAULT_PIPELINE)
    run_passes(alone, DEFAULT_PIPELINE)
    assert print_module(module) == print_module(alone)
    assert "custom-call" in print_module(module)


@pytest.mark.parametrize("old, new, message, built", [
    ("call(%all-reduce)", "call(%nothing)", "operand 'nothing' of 'y' is not defined", 0),  # in ENTRY
    ("all-reduce(%x)", "all-reduce(\n%x)", "", 0),  # ENTRY not plain: read line by line
    ("to_apply=%c.59\n}\n", "to_apply=%c.59\n} junk\n", None, 1),  # after its body: read again
    # elsewhere: in the reader's stretch (perhaps found before the worker's findings are in)
    ("negate(%p.20)", "negate(%q.20)", "operand 'q.20' of 'n.20' is not defined", None),
    ("negate(%p.50)", "negate(%q.50)", "operand 'q.50' of 'n.50' is not defined", 1),  # the worker's
])
def test_a_flaw_is_found_and_located_as_in_one_process_with_entry_built_early(
        entry_built_early, old, new, message, built):
    text = _module(60)
    assert old in text
    outcome = _both(text.replace(old, new, 1), build_entry_for=ANCHORS)  # as read in one process
    if message:
        assert outcome[0] == "error" and message in outcome[1]
    elif message == "":
        assert outcome[0] == "ok"
    if built is not None:
        assert entry_built_early["built"] == built


def test_a_worker_checks_the_later_bodies_and_the_module_is_the_same(collected):
    text = _module()
    outcome = _both(text)
    assert outcome[0] == "ok"
    assert collected and collected[0] >= 8  # the worker really checked a stretch
    module = parse_module(text, processes=2)
    assert print_module(module) == text
    assert module.computation("c.20").get("r.20").operands == ["n.20"]


def test_bodies_a_worker_checked_share_one_opcode_set_spelled_as_the_table(collected):
    # the later computations use an opcode no earlier body does: their set is first met in a
    # worker's findings, whose strings are the worker's own copies
    text = _module(40)
    for k in range(30, 40):
        text = text.replace(f"%n.{k} = f32[8]{{0}} negate(", f"%n.{k} = f32[8]{{0}} abs(")
    module = parse_module(text, processes=2)
    assert collected and collected[0] >= 10
    later = [module.computation(f"c.{k}").opcodes() for k in range(30, 40)]
    assert later[0] == {"parameter", "abs", "call"}
    assert all(s is later[0] for s in later)  # one object for the one set
    assert all(op is OPCODE_SPELLINGS[op] for op in later[0])
    assert all(not module.computation(f"c.{k}").is_built for k in range(30, 40))


@pytest.mark.parametrize("processes", [3, 4])
def test_several_workers(collected, processes):
    assert _both(_module(40), processes)[0] == "ok"
    assert len(collected) == processes - 1


@pytest.mark.parametrize("old, new, message", [
    ("negate(%p.20)", "negate(%q.20)", "operand 'q.20' of 'n.20' is not defined"),
    ("%n.21 = f32[8]{0} negate", "%p.21 = f32[8]{0} negate", "defined twice"),
    ("negate(%p.22)", "negat(%p.22)", "unknown opcode"),
    ("to_apply=%c.19", "to_apply=%c.99", "calls computation 'c.99', which is not defined"),
    ("to_apply=%c.19", "to_apply=%c.23", ""),  # a computation defined later: XLA reads it
    ('op_name="neg"}', 'op_name="neg"} %x.21 = f32[8]{0} negate(%p.21)', ""),  # two on a line
    ("  %n.22 = f32[8]{0} negate(%p.22)", "  %n.22 = f32[8]{0} negate(\n%p.22)", ""),  # split line
    ("ROOT %r.20", "ROOT %r.20 = f32[8]{0} negate(%p.20)\n  ROOT %s.20", "a second ROOT"),
    ("negate(%p.23)", "negate(%p.23), control-predecessors={%p.23}", ""),
    ("negate(%p.23)", "negate(%p.23), control-predecessors={%zz}", "control predecessor 'zz'"),
    # a flaw in the reader's own stretch, while the worker runs
    ("negate(%p.1)", "negate(%q.1)", "operand 'q.1' of 'n.1' is not defined"),
])
def test_a_flaw_is_found_and_located_as_in_one_process(old, new, message):
    text = _module()
    assert old in text
    outcome = _both(text.replace(old, new, 1))
    if message:
        assert outcome[0] == "error" and message in outcome[1]


def test_a_worker_that_fails_costs_only_time(monkeypatch, collected):
    reader = os.getpid()
    check = BodyChecker.check

    def failing(self, first, known, before=None):
        if os.getpid() != reader:
            raise MemoryError("the worker runs out of memory")
        return check(self, first, known, before)

    monkeypatch.setattr(BodyChecker, "check", failing)
    assert _both(_module())[0] == "ok"
    assert collected == [0]  # nothing came back: the reader checked everything itself


@pytest.mark.parametrize("keep", [0, 3, 8, 20])
def test_a_message_cut_short_costs_only_time(monkeypatch, collected, keep):
    """A worker that ends in the middle of its message (its length, or its findings) has sent
    nothing the reader takes: the reader checks that stretch itself."""
    send = parallel._send

    def cut_short(fd, message):
        r, w = os.pipe()
        send(w, message)
        os.close(w)
        whole = os.read(r, 1 << 20)
        os.write(fd, whole[:keep])
        os._exit(0)  # (and nothing more)

    monkeypatch.setattr(parallel, "_send", cut_short)
    assert _both(_module())[0] == "ok"
    assert collected == [0] and collected.taken_back == 0


@pytest.fixture
def slow_reader(monkeypatch):
    """The reader checks each body slowly (the worker does not), looks at what came back at
    every body, and the first worker sends its findings for the reader's stretch two at a time."""
    reader = os.getpid()
    check = BodyChecker.check

    def slow(self, first, known, before=None):
        if os.getpid() == reader:
            time.sleep(0.004)
        return check(self, first, known, before)

    monkeypatch.setattr(BodyChecker, "check", slow)
    monkeypatch.setattr(parallel, "POLL_EVERY", 1)
    monkeypatch.setattr(parallel, "BACK_EVERY", 2)


def test_a_slow_reader_takes_over_what_the_first_worker_checked_of_its_stretch(slow_reader, collected):
    """The first worker goes on from its stretch into the reader's, from its end back; the
    reader takes the bodies it has not reached yet from there, and the module is the same."""
    text = _module(60)
    outcome = _both(text)
    assert outcome[0] == "ok"
    assert collected.taken_back >= 4
    assert print_module(parse_module(text, processes=2)) == text


@pytest.mark.parametrize("old, new, message", [
    ("negate(%p.12)", "negate(%q.12)", "operand 'q.12' of 'n.12' is not defined"),
    ("%n.13 = f32[8]{0} negate", "%p.13 = f32[8]{0} negate", "defined twice"),
    ("negate(%p.14)", "negate(\n%p.14)", ""),  # a split line: not plain, read line by line
    ("to_apply=%c.11", "to_apply=%c.99", "calls computation 'c.99', which is not defined"),
])
def test_a_flaw_the_first_worker_finds_in_the_readers_stretch_is_located_as_in_one_process(
        slow_reader, collected, old, new, message):
    text = _module(60)
    assert old in text
    outcome = _both(text.replace(old, new, 1))
    if message:
        assert outcome[0] == "error" and message in outcome[1]
    else:
        assert outcome[0] == "ok"


def test_a_worker_that_dies_checking_back_costs_only_time(slow_reader, monkeypatch, collected):
    """Killed after its first findings for the reader's stretch: the reader takes those, and
    checks the rest itself."""
    send = parallel._send
    sent = []

    def then_die(fd, message):
        send(fd, message)
        sent.append(message)
        if len(sent) == 2:  # its own stretch, then two bodies of the reader's
            os._exit(1)

    monkeypatch.setattr(parallel, "_send", then_die)
    assert _both(_module(60))[0] == "ok"
    assert 1 <= collected.taken_back <= 2


def test_no_worker_outlives_a_reading_that_fails_early():
    text = _module().replace("negate(%p.0)", "negate(%q.0)", 1)
    with pytest.raises(Exception, match="'q.0'"):
        parse_module(text, processes=2)
    with pytest.raises(ChildProcessError):
        os.waitpid(-1, os.WNOHANG)  # no child left, not even a finished one


@pytest.mark.parametrize("old, new", [
    ("%n.3 = f32[8]{0} negate", "%n.3 = /* a comment */ f32[8]{0} negate"),  # for the token reader
    ("%n.30 = f32[8]{0} negate(%p.30)", "%n.30 = f32[8]{0} negate(\n  %p.30)"),  # not plain: line by line
])
def test_workers_started_for_text_the_line_reader_does_not_take_are_ended(old, new):
    """The workers are forked before the reader has looked at the text: when it is not for
    the line reader after all, they are ended unheard, and the module is the same."""
    text = _module(40).replace(old, new, 1)
    assert text.count(new) == 1
    assert _both(text)[0] == "ok"
    with pytest.raises(ChildProcessError):
        os.waitpid(-1, os.WNOHANG)


def test_strict_mode_and_one_process_fork_nothing(collected):
    text = _module()
    parse_module(text, processes=1)
    parse_module(text, strict=True, processes=2)
    assert collected == []


def test_a_process_with_threads_reads_in_one_process(monkeypatch, collected):
    monkeypatch.undo()  # the real check, and the real size limit
    monkeypatch.setattr(parallel, "PARALLEL_MIN_BYTES", 0)
    spy = []
    original = parallel._fork
    monkeypatch.setattr(parallel, "_fork", lambda *a, **k: spy.append(a) or original(*a, **k))
    stop = threading.Event()
    thread = threading.Thread(target=stop.wait)
    thread.start()
    try:
        assert not parallel.single_threaded()
        assert parse_module(_module(), processes=2).computation("c.20") is not None
    finally:
        stop.set()
        thread.join()
    assert spy == []


def test_the_command_reads_a_large_module_with_a_worker(tmp_path):
    """Run as the command (one thread), a module over the size limit is read by two processes
    when two are usable, and the output is the input (no pass changes anything)."""
    import subprocess

    text = _module(LIMIT // 180)
    assert len(text) > LIMIT
    src = tmp_path / "big.hlo"
    src.write_text(text)
    probe = (
        "import sys\n"
        "from hlo_rewrite.reader import parallel\n"
        "seen = []\n"
        "original = parallel._receive\n"
        "parallel._receive = lambda w, **k: seen.append(id(w)) or original(w, **k)\n"
        "from hlo_rewrite.cli import main\n"
        "try:\n"
        "    main(['--passes', 'none', sys.argv[1], '-o', sys.argv[2]], prog_name='hlo-rewrite')\n"
        "finally:\n"
        "    print(len(set(seen)))\n"
    )
    out = tmp_path / "out.hlo"
    done = subprocess.run([sys.executable, "-c", probe, str(src), str(out)], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    usable = len(os.sched_getaffinity(0))
    assert done.stdout.strip() == ("1" if usable > 1 else "0")
    assert out.read_text() == text


def test_a_many_core_machine_forks_a_few_workers_each_with_a_real_share(monkeypatch, collected):
    monkeypatch.setattr(parallel, "PARALLEL_MIN_BYTES", 4000)  # a process per 2,000 bytes at most
    text = _module(40)
    assert _both(text, processes=64)[0] == "ok"
    assert 1 <= len(collected) <= min(parallel.MAX_PROCESSES, len(text) // 2000) - 1


def test_crlf_line_ends_are_split_between_processes_too(collected):
    text = _module().replace("\n", "\r\n")
    assert _both(text)[0] == "ok"
    assert collected and collected[0] >= 8


def _findings(text: str, bounded: bool) -> dict:
    """Every body's finding, as a worker gives it (each body's end looked for back from the
    next header) or as the reader does (forward through the body)."""
    starts = newline_starts(text)
    checker = BodyChecker.of(text, starts)
    heads = parallel._heads(text, 0, len(text))
    if bounded:
        return parallel._check_bodies(checker, heads, range(len(heads) - 1))
    found = {}
    for at in range(len(heads) - 1):
        first = bisect_left(starts, heads[at][1])
        checked = checker.check(first, frozenset())
        found[first] = None if checked is None else tuple(checked)
    return found


@pytest.mark.parametrize("computations", [1, 5, 24])
def test_a_worker_finds_each_body_as_the_reader_would(computations):
    text = _module(computations)
    bounded = _findings(text, bounded=True)
    assert bounded == _findings(text, bounded=False)
    assert len(bounded) == computations + 1 and None not in bounded.values()


@pytest.mark.parametrize("junk", ["}\n", "}\n// a comment\n}\n", "  %z = f32[8]{0} parameter(0)\n}\n"])
def test_a_closing_line_before_the_next_header_makes_the_body_not_plain_for_a_worker(junk):
    """A second '}' line (or more) after a body, before the next header: the worker does not
    vouch for that body, and the module reads and fails as in one process."""
    text = _module(6)
    cut = text.index("\n%c.3 ")  # after the body of c.2 and its blank line
    broken = text[:cut] + "\n" + junk + text[cut:]
    bounded = _findings(broken, bounded=True)
    c2 = broken.index("%c.2 ")
    first = broken.count("\n", 0, c2) + 1  # the 0-based line after c.2's header
    assert bounded[first] is None
    outcome = _both(broken)
    assert outcome[0] == "error"


# ----------------------------------------------------------------------------- workers started early


def _early_and_alone(text: str) -> tuple:
    """What reading ``text`` gives with its workers started early (:func:`parallel.begin`, as
    the command starts them while it loads) and in one process: the same."""
    alone = fuzz_corpus.reading(text, "m.hlo", blocks=True)
    assert parallel.begin(text, 2)
    early = fuzz_corpus.reading(text, "m.hlo", blocks=True, processes=2)
    assert early == alone
    return early


@pytest.mark.parametrize("crlf", [False, True])
def test_the_first_early_worker_sends_the_line_starts_the_reader_would_find(crlf):
    text = _module()
    if crlf:
        text = text.replace("\n", "\r\n")
    assert parallel.begin(text, 2)
    prechecked = parallel.start(text, 2)  # (takes them over)
    assert prechecked is not None
    try:
        assert prechecked.line_starts(len(text)) == newline_starts(text)
        assert prechecked.line_starts(len(text)) is None  # given once: the reader keeps them
    finally:
        prechecked.close()
    assert _early_and_alone(text)[0] == "ok"


def test_workers_the_reading_starts_itself_send_no_line_starts():
    """Started with the reading, a worker would find the line starts while the reader waits
    for them: the reader finds them itself, at once."""
    text = _module()
    prechecked = parallel.start(text, 2)
    assert prechecked is not None
    try:
        assert prechecked.line_starts(len(text)) is None
    finally:
        prechecked.close()


@pytest.mark.parametrize("how", ["dies", "cut", "another text"])
def test_line_starts_that_do_not_come_whole_cost_only_time(monkeypatch, collected, how):
    """The first worker ends before it sends the line starts, or sends fewer of them than the
    text has lines, or those of a text of another length: the reader finds them itself, and the
    reading is the same (every instruction's line and column are compared)."""
    send = parallel._send

    def broken_lines(fd, message):
        if not isinstance(message[1], str):  # findings
            return send(fd, message)
        if how == "dies":
            os._exit(0)
        data, typecode = message
        if how == "cut":
            data = data[: -2 * array(typecode).itemsize]  # the last two lines left out
        else:
            data = array(typecode, [0, 5, 7]).tobytes()  # a text of 6 characters
        return send(fd, (data, typecode))

    monkeypatch.setattr(parallel, "_send", broken_lines)
    assert _early_and_alone(_module())[0] == "ok"
    if how == "dies":
        assert collected == [0]  # nothing came: the reader checked everything itself
    else:
        assert len(collected) == 1 and collected[0] > 0  # the findings did come
