"""Checking a large module's computation bodies in worker processes while the reader reads on.

The one-pass body check (:class:`.block.BodyChecker`) reads only the module's text, so it can
run anywhere the text is. For a large module, when the caller allows more than one process,
the reader forks workers before it does anything else with the text (POSIX ``fork``: the text
is shared, not copied). Each worker finds the line starts and computation bodies of one later
stretch of the module itself, checks those bodies and sends back what it found; the reader
meanwhile looks at the whole text, finds its lines, checks the bodies of the first stretch and
reads on, and takes a worker's findings when it reaches that worker's stretch. A body a worker
did not check, or found not plain, is read by the reader as always, so the errors and their
locations do not depend on the path taken: a worker only ever saves the reader work it would
have done the same way (and if the text is not for the line reader at all, the workers are
ended unheard).

The stretches are cut for a machine that runs both processes alike, which a shared machine
does not: the reader, which also loads the command and builds the module, often reaches the
first worker's stretch well after that worker is done. So the first worker then goes on
checking the reader's own stretch from its end back, and sends what it found a few bodies at a
time (:data:`BACK_EVERY`); the reader looks at what has come every :data:`POLL_EVERY` bodies
and takes over the bodies the worker has checked from there on, so the two meet wherever the
machine lets them.

A worker that fails in any way (killed, out of memory, an exception) costs only time: the
reader then checks that stretch itself. Workers are ended with the reading, whatever ends it.

The command can start the workers even sooner, while its own modules load (:func:`begin`,
:mod:`hlo_rewrite.early`): the reader then takes them over when it is given that very text, and
any other reading ends them. The first of those workers then also finds the offsets of all the
text's lines first thing and sends them (:meth:`Prechecked.line_starts`): it needs them for its
checking back anyway, and the reader, still loading, need not find them again.

Forking is safe only in a process with one thread (another thread may hold a lock the worker
would need), so workers are forked only on Linux, where ``/proc`` tells how many threads the
process has, and only when it has one: the command does, a program that embeds the library
and runs threads (or has loaded jaxlib) reads in one process.
"""

from __future__ import annotations

import atexit
import enum
import gc
import marshal
import os
import re
import select
import signal
import sys
from array import array
from bisect import bisect_left
from collections.abc import Callable, Iterable

from .. import pipes
from .block import BodyChecker
from .lines import fill_newline_starts, newline_starts

TYPE_CHECKING = False  # typing is not imported at run time here (docs/decisions.md)

if TYPE_CHECKING:
    from typing import Final, Literal

#: a module smaller than this is read in one process: forking and sending results back
#: would cost more than it saves
PARALLEL_MIN_BYTES: Final = 4 << 20

#: the most processes one module is read with
MAX_PROCESSES: Final = 8

#: the part of the text the reader checks itself (when it has one worker; with more, less):
#: it also does the rest of the reading, and takes in the workers' findings
OWN_SHARE_OF_TWO: Final = 0.41

#: the same for workers started while the command's modules load (:func:`begin`): they check
#: for that long before the reader can. Less would balance a quiet machine (0.31 did), but a
#: reader that is late costs only what the first worker cannot check back for it, a worker that
#: is late the whole wait (measured: docs/performance.md)
EARLY_OWN_SHARE_OF_TWO: Final = 0.43


#: the first worker checks the reader's stretch back (module docstring) and sends its findings
#: this many bodies at a time
BACK_EVERY: Final = 16

#: the reader looks for those findings every this many bodies of its own stretch
POLL_EVERY: Final = 16


class _Missing(enum.Enum):
    MISSING = 0


#: what :meth:`Prechecked.take` gives for a body no worker checked
MISSING: Final = _Missing.MISSING

# the end of a computation's header line as XLA prints it: the body starts on the next line
# (a line taken for a header by mistake only makes a worker check text nobody asks about)
_HEAD_END = re.compile(r" \{\r?\n")


class _Worker:
    """One forked worker: its process (0 once it has been waited for), the read end of its pipe
    (-1 once closed: nothing more comes), where its stretch starts, whether it sends the text's
    line starts first (and they, once in), its stretch's findings once they are in, and, for
    the first worker, its findings for the reader's stretch (``back``)
    and how far back they go (``low``: every body of the reader's stretch whose first line is
    at or after this one has been checked)."""

    __slots__ = ("pid", "fd", "offset", "sends_lines", "lines", "results", "back", "low", "pending")

    def __init__(self, pid: int, fd: int, offset: int, *, sends_lines: bool = False) -> None:
        self.pid = pid
        self.fd = fd
        self.offset = offset
        self.sends_lines = sends_lines
        self.lines: array | None = None
        self.results: dict[int, tuple | None] | None = None
        self.back: dict[int, tuple | None] = {}
        self.low = _NOWHERE
        self.pending = bytearray()  # received, not yet a whole message
        os.set_blocking(fd, False)  # (read when the reader looks, without waiting: _receive)


#: ``low`` of a worker that has sent nothing for the reader's stretch
_NOWHERE: Final = 1 << 62


class Prechecked:
    """The findings of the workers checking the later stretches of one module."""

    def __init__(self, workers: list[_Worker]) -> None:
        self._workers = workers  # in text order
        self._offsets = [w.offset for w in workers]
        self._asked = 0  # bodies of the reader's own stretch asked for
        self._when_in: Callable[[dict[int, tuple | None]], None] | None = None

    def line_starts(self, length: int) -> array | None:
        """The offsets of the lines of the text (of ``length`` characters), as
        :func:`.lines.newline_starts` gives them, when the first worker was asked to find them
        (workers :func:`begin` started) and sent them; None when it was not, or it ended
        without them: the reader then finds them itself. They are its first message: waiting
        for it, the reader most often finds it there already."""
        worker = self._workers[0]
        while worker.sends_lines and worker.lines is None and worker.fd >= 0:
            _receive(worker, wait=True)
        starts, worker.lines, worker.sends_lines = worker.lines, None, False  # (given once)
        if starts is None or len(starts) < 2 or starts[0] != 0 or starts[-1] != length + 1:
            return None  # (not what newline_starts gives for this text: found again here)
        return starts

    def when_first_in(self, callback: Callable[[dict[int, tuple | None]], None]) -> None:
        """Call ``callback`` once with the first worker's findings for its own stretch (by
        first line, as :meth:`take` gives them), as soon as the reader has them. They most
        often come while the reader reads its own stretch: the time the callback takes there,
        the first worker's checking back makes up for."""
        self._when_in = callback

    def _arrived(self, worker: _Worker) -> None:
        callback = self._when_in
        if callback is not None and worker is self._workers[0] and worker.results is not None:
            self._when_in = None
            callback(worker.results)

    def take(self, first: int, offset: int) -> tuple | None | Literal[_Missing.MISSING]:
        """A worker's finding for the body starting on line ``first``, at ``offset`` (the fields
        of a :class:`BodyCheck` as the worker sent them, a plain tuple: the reader only unpacks
        them; or None: not plain), or :data:`MISSING` when no worker checked it."""
        k = bisect_left(self._offsets, offset) - 1
        if k < 0:  # the reader's own stretch: the first worker may have checked it from its end
            helper = self._workers[0]
            if first < helper.low:
                self._asked += 1
                if self._asked % POLL_EVERY or helper.fd < 0:
                    return MISSING
                _receive(helper)
                self._arrived(helper)
                if first < helper.low:
                    return MISSING
            found = helper.back.pop(first, MISSING)
        else:
            worker = self._workers[k]
            while worker.results is None:
                _receive(worker, wait=True)
            self._arrived(worker)
            if k == 0 and worker.fd >= 0:
                # past its own stretch, the reader needs no more of the first worker's checking
                # back: it ends at what it sends next (a broken pipe), not when the reading ends
                _close(worker)
            found = worker.results.pop(first, MISSING)
        return found

    def close(self) -> None:
        """End every worker still running (the first may still be checking back), wait for
        each to end, and forget what they found."""
        for worker in self._workers:
            if worker.pid > 0 and (worker.fd >= 0 or worker.results is None):
                try:
                    os.kill(worker.pid, signal.SIGKILL)
                except ProcessLookupError:
                    pass
            worker.results = {}
            worker.back = {}
            _close(worker)
            _reap(worker)


#: workers started by :func:`begin`, with their text and the process that started them, until
#: :func:`start` takes them over or ends them
_early: tuple[str, Prechecked, int] | None = None
#: whether :func:`end` runs at exit (registered once, by the first :func:`begin`)
_ending_registered = False


def start(text: str, processes: int) -> Prechecked | None:
    """Fork up to ``processes - 1`` workers checking the bodies of the later stretches of
    ``text``; None when the text is too small, or forking is not possible.

    Workers :func:`begin` started for this very text (the same object) are taken over instead;
    any others are ended first: only one reading has workers at a time."""
    early = _take_early()
    if early is not None:
        early_text, prechecked = early
        if early_text is text and processes > 1:
            return prechecked
        prechecked.close()
    return _start(text, processes, OWN_SHARE_OF_TWO)


def begin(text: str, processes: int) -> bool:
    """Start the workers for ``text`` before the reading does (the command, while its modules
    load: :mod:`hlo_rewrite.early`); :func:`start` takes them over. They are ended at exit if
    nothing does. Whether any started."""
    global _early, _ending_registered
    end()
    prechecked = _start(text, processes, EARLY_OWN_SHARE_OF_TWO, lines=True)
    if prechecked is None:
        return False
    if not _ending_registered:
        atexit.register(end)
        _ending_registered = True
    _early = (text, prechecked, os.getpid())
    return True


def end() -> None:
    """End the workers :func:`begin` started, if no reading took them over."""
    early = _take_early()
    if early is not None:
        early[1].close()


def _take_early() -> tuple[str, Prechecked] | None:
    """The workers :func:`begin` started, forgotten here; None when there are none, or they
    are another process's (this one was forked after they were)."""
    global _early
    early, _early = _early, None
    if early is None or early[2] != os.getpid():
        return None
    return early[0], early[1]


def _start(text: str, processes: int, own_share_of_two: float, *, lines: bool = False) -> Prechecked | None:
    """Fork the workers (``lines``: the first one sends the text's line starts first)."""
    # each process gets a few MB at least, and a many-core machine does not fork dozens
    processes = min(processes, MAX_PROCESSES, max(1, len(text) // max(1, PARALLEL_MIN_BYTES // 2)))
    if processes < 2 or len(text) < PARALLEL_MIN_BYTES or not single_threaded():
        return None
    own = own_share_of_two * 2 / processes
    # the reader's own stretch, then stretches of about equal size in bytes for the workers,
    # each cut where a header line ends (its body follows)
    cuts: list[int] = []
    for part in range(1, processes):
        at = _head_end_near(text, int(len(text) * (own + (1 - own) * (part - 1) / (processes - 1))))
        if at > (cuts[-1] if cuts else 0):
            cuts.append(at)
    workers: list[_Worker] = []
    try:
        for k, cut in enumerate(cuts):
            end = cuts[k + 1] if k + 1 < len(cuts) else len(text)
            worker = _fork(text, cut, end, back=k == 0, lines=lines and k == 0)
            if worker is None:
                break
            workers.append(worker)
    except BaseException:
        Prechecked(workers).close()
        raise
    return Prechecked(workers) if workers else None


def usable_cpus() -> int:
    """The processors this process may run on."""
    try:
        return len(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        return os.cpu_count() or 1


def single_threaded() -> bool:
    """Whether this process runs one thread only (and so may fork safely)."""
    if not sys.platform.startswith("linux") or not hasattr(os, "fork"):
        return False
    try:
        return len(os.listdir("/proc/self/task")) == 1
    except OSError:
        return False


def _head_end_near(text: str, at: int) -> int:
    """The offset of the header-line end (:data:`_HEAD_END`) nearest to offset ``at``, with
    either line end; 0 when there is none."""
    after = _HEAD_END.search(text, at)
    before = text.rfind(" {", 0, at)
    while before >= 0 and _HEAD_END.match(text, before) is None:
        before = text.rfind(" {", 0, before)
    if after is None:
        return max(before, 0)
    if before < 0 or after.start() - at < at - before:
        return after.start()
    return before


def _fork(text: str, cut: int, end: int, *, back: bool, lines: bool = False) -> _Worker | None:
    """A worker checking the bodies whose headers end between ``cut`` and ``end``, then
    (``back``) those before ``cut`` from the last back; first of all (``lines``) it sends the
    text's line starts."""
    read_fd, write_fd = os.pipe()
    try:
        pid = os.fork()
    except OSError:
        os.close(read_fd)
        os.close(write_fd)
        return None
    if pid == 0:  # the worker: check, send, and leave without running any of the caller's code
        try:
            os.close(read_fd)
            gc.disable()  # it frees nothing before it leaves (the reader disables it too)
            signal.signal(signal.SIGINT, signal.SIG_DFL)
            signal.signal(signal.SIGTERM, signal.SIG_DFL)
            _work(text, cut, end, back, lines, write_fd)
        finally:
            os._exit(0)
    os.close(write_fd)
    return _Worker(pid, read_fd, cut, sends_lines=lines)


def _work(text: str, cut: int, end: int, back: bool, lines: bool, fd: int) -> None:
    """In a worker: check the bodies whose headers end between offsets ``cut`` and ``end`` and
    send the findings, by first line; then (``back``) check those before ``cut``, from the last
    back, sending the findings :data:`BACK_EVERY` bodies at a time with the first line of the
    last one checked. Each message is ``(findings, that line or None)``; before them
    (``lines``), the offsets of all the text's lines: ``(their bytes, the array's typecode)``."""
    pipes.grow(fd)  # a pipe holds 64 KB: let it hold what is sent, so the worker need not wait for it
    line = text.rfind("\n", 0, cut) + 1  # where the line of the first header starts
    if lines:
        starts = newline_starts(text)
        _send(fd, (starts.tobytes(), starts.typecode))
    else:
        starts = newline_starts(text, line)  # the lines before it left at 0, for now
    checker = BodyChecker.of(text, starts)
    heads = _heads(text, cut, end)
    _send(fd, (_check_bodies(checker, heads, range(len(heads) - 1)), None))
    if not back:
        return
    gone = select.poll()  # the reader closes the pipe once it has reached this stretch
    gone.register(fd, select.POLLERR)
    if gone.poll(0):
        return
    if not lines:
        fill_newline_starts(starts, text, line)  # the reader's lines too
    heads = _heads(text, 0, cut)
    for at in range(len(heads) - 1, 0, -BACK_EVERY):
        if gone.poll(0):
            return
        found = _check_bodies(checker, heads, reversed(range(max(at - BACK_EVERY, 0), at)))
        _send(fd, (found, min(found, default=0)))


def _heads(text: str, cut: int, end: int) -> list[tuple[int, int]]:
    """Where each header line that ends between offsets ``cut`` and ``end`` starts and ends,
    and after them the next one's (or the end of the text)."""
    found = [(text.rfind("\n", 0, m.start()) + 1, m.end()) for m in _HEAD_END.finditer(text, cut, end)]
    after = _HEAD_END.search(text, end)
    found.append((len(text), len(text)) if after is None else (text.rfind("\n", 0, after.start()) + 1, after.end()))
    return found


def _check_bodies(checker: BodyChecker, heads: list[tuple[int, int]], which: Iterable[int]) -> dict[int, tuple | None]:
    """The findings for the bodies after the header lines ``heads[k]`` for each ``k`` in
    ``which`` (each ends before the header line ``heads[k + 1]``), by first line."""
    starts = checker.starts
    found: dict[int, tuple | None] = {}
    for k in which:
        first = bisect_left(starts, heads[k][1])
        checked = checker.check(first, frozenset(), heads[k + 1][0])
        found[first] = None if checked is None else tuple(checked)
    return found


def _send(fd: int, message: tuple) -> None:
    """In a worker: write one message to the pipe, its length first, so that the reader knows
    when it has all of it without waiting for the worker to end."""
    # marshal: built in (nothing to import on either side), as fast as pickle for these
    # tuples of strings and numbers, and both ends are the same interpreter
    pipes.send(fd, marshal.dumps(message))


def _receive(worker: _Worker, *, wait: bool = False) -> None:
    """Take in every whole message a worker has sent so far (``wait``: at least one, unless it
    ends first). When its pipe ends (the worker is done, killed or failed), nothing more is
    looked for, and its stretch's findings are none unless they came whole: the reader then
    checks those bodies itself. A message that is not what a worker sends ends it too."""
    pending = worker.pending
    while worker.fd >= 0:
        try:
            chunk = os.read(worker.fd, 1 << 20)
        except BlockingIOError:
            if not wait:
                return
            select.select([worker.fd], [], [])
            continue
        except OSError:
            chunk = b""
        if not chunk:
            _close(worker)
            break
        pending += chunk
        if _take_messages(worker):
            wait = False
    if worker.results is None:
        worker.results = {}
    worker.pending = bytearray()


def _take_messages(worker: _Worker) -> bool:
    """Take in the whole messages at the start of ``worker.pending``; whether there were any."""
    pending = worker.pending
    taken = 0
    while (end := pipes.message_end(pending, taken)) >= 0:
        try:
            found, low = marshal.loads(pending[taken + pipes.LENGTH_BYTES : end])
        except Exception:
            found = low = ()
        if isinstance(found, bytes) and low in ("I", "q") and len(found) % array(low).itemsize == 0:
            worker.lines = array(low)
            worker.lines.frombytes(found)  # (the line starts: _work)
            taken = end
            continue
        if not isinstance(found, dict):
            _close(worker)  # not what a worker sends
            break
        if low is None:
            worker.results = found
        elif isinstance(low, int):
            worker.back.update(found)
            worker.low = low
        taken = end
    del pending[:taken]
    return taken > 0


def _close(worker: _Worker) -> None:
    """Close the read end of a worker's pipe (once)."""
    if worker.fd >= 0:
        try:
            os.close(worker.fd)
        except OSError:
            pass
        worker.fd = -1


def _reap(worker: _Worker) -> None:
    """Wait for a worker to end (once)."""
    if worker.pid > 0:
        try:
            os.waitpid(worker.pid, 0)
        except ChildProcessError:
            pass
        worker.pid = 0
