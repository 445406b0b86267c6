"""The processes of ``--jobs``: forked once, each takes the next input when it is free.

On Linux, in a process that runs one thread, the workers are forked straight from the command
(``os.fork``): they inherit the inputs and the work to do, are handed inputs by index, two
ahead, on a pipe each, and send back each result, pickled, on a pipe each. Nothing of
``multiprocessing`` is imported: with ``concurrent.futures`` it was 15-23 ms of a run's serial
start (docs/decisions.md, "The processes of -j"). Elsewhere :func:`ordered` falls back to
``concurrent.futures.ProcessPoolExecutor``, which does the same by other means.

Results come in input order. A worker that dies (a signal, a crash of the interpreter) costs the
input it was working on, which comes back as the exception :class:`WorkerDied`; another worker
is forked in its place for the inputs left. Closing the iterator early ends the workers at once.
"""

from __future__ import annotations

import contextlib
import os
import pickle
import select
import signal
from collections import deque
from collections.abc import Callable, Generator, Iterator, Sequence
from typing import Any, Protocol

from . import pipes
from .reader.parallel import single_threaded

#: a task is an input's index, in this many bytes (little-endian)
_TASK_BYTES = 8
#: the inputs a worker is given ahead: the next is there when it is done with one
_IN_HAND = 2


class WorkerDied(Exception):
    """A worker process ended while it worked on an input."""


class Results(Protocol):
    """The results of :func:`ordered`, in order; ``close()`` ends the workers (at once when
    results are still to come)."""

    def __iter__(self) -> Iterator[Any]: ...

    def __next__(self) -> Any: ...

    def close(self) -> None: ...


def ordered(function: Callable[[Any], Any], items: Sequence[Any], processes: int,
            initializer: Callable[[], None]) -> Results:
    """``function(item)`` for each item, in order, computed in ``processes`` worker processes
    (each first runs ``initializer``); an item whose work raised, or whose worker died, gives
    the exception instead of a result. ``function`` must not raise for an item it can report
    on; its results must pickle. The caller closes the results (``contextlib.closing``)."""
    if hasattr(os, "fork") and os.name == "posix" and single_threaded():
        return _Forked(function, items, processes, initializer)
    return _executor(function, items, processes, initializer)


def _executor(function: Callable[[Any], Any], items: Sequence[Any], processes: int,
              initializer: Callable[[], None]) -> Generator[Any, None, None]:
    from concurrent.futures import ProcessPoolExecutor

    pool = ProcessPoolExecutor(max_workers=processes, initializer=initializer)
    finished = False
    try:
        futures = [pool.submit(function, item) for item in items]
        for fut in futures:
            try:
                yield fut.result()
            except Exception as exc:  # noqa: BLE001 - handed to the caller, in its place
                yield exc
        finished = True
    finally:
        if finished:
            pool.shutdown()
        else:  # stopped early: the workers' results are not wanted, do not wait for them
            workers = list((getattr(pool, "_processes", None) or {}).values())
            manager = getattr(pool, "_executor_manager_thread", None)
            pool.shutdown(wait=False, cancel_futures=True)
            for proc in workers:
                with contextlib.suppress(Exception):
                    proc.terminate()
            # the pool's manager thread ends once it sees its workers gone: wait for it here, or
            # it may close its wake-up pipe while the interpreter's exit writes to it (CPython
            # then prints an ignored OSError with a traceback after the command's last message)
            if manager is not None:
                manager.join(timeout=2)


class _Worker:
    __slots__ = ("pid", "fd", "tasks", "pending", "taken")

    def __init__(self, pid: int, fd: int, tasks: int) -> None:
        self.pid = pid
        self.fd = fd  # the read end of its result pipe
        self.tasks = tasks  # the write end of its task pipe
        self.pending = bytearray()
        self.taken: deque[int] = deque()  # the inputs handed to it, in the order it takes them


class _Forked:
    def __init__(self, function: Callable[[Any], Any], items: Sequence[Any], processes: int,
                 initializer: Callable[[], None]) -> None:
        self.function = function
        self.items = items
        self.initializer = initializer
        self.processes = max(1, min(processes, len(items)))
        self.workers: dict[int, _Worker] = {}  # by result fd
        self.done: dict[int, Any] = {}
        self.left: deque[int] = deque(range(len(items)))  # the inputs not handed out yet
        self.given = 0  # the results given back so far
        try:  # forked now, before the caller may start a thread (a progress display's)
            for _ in range(self.processes):
                self._fork()
        except BaseException:
            self._end(stop=True)
            raise

    def __iter__(self) -> _Forked:
        return self

    def __next__(self) -> Any:
        index = self.given
        if index >= len(self.items):
            self.close()
            raise StopIteration
        while index not in self.done:
            self._wait()
        self.given += 1
        return self.done.pop(index)

    def close(self) -> None:
        """End the workers: at once if results are still to come (they are not wanted)."""
        self._end(stop=self.given < len(self.items))

    # ------------------------------------------------------------------ the command's side
    def _fork(self) -> None:
        result_read, result_write = os.pipe()
        task_read, task_write = os.pipe()
        pid = os.fork()
        if pid == 0:  # pragma: no cover - the worker (its coverage is not collected)
            try:
                os.close(result_read)
                os.close(task_write)
                for other in self.workers.values():  # (the others' pipes are not this one's)
                    for fd in (other.fd, other.tasks):
                        if fd >= 0:
                            os.close(fd)
                self._serve(task_read, result_write)
            finally:
                os._exit(0)
        os.close(result_write)
        os.close(task_read)
        worker = _Worker(pid, result_read, task_write)
        self.workers[result_read] = worker
        pipes.grow(result_read)  # a result of a few hundred KB: its worker goes on at once
        for _ in range(_IN_HAND):
            self._hand(worker)

    def _hand(self, worker: _Worker) -> None:
        """Give a worker the next input left, if any (all are handed out: the end mark)."""
        if worker.tasks < 0:
            return
        if not self.left:
            os.close(worker.tasks)  # nothing more: once done, it reads the end of its pipe
            worker.tasks = -1
            return
        index = self.left.popleft()
        worker.taken.append(index)
        try:
            os.write(worker.tasks, index.to_bytes(_TASK_BYTES, "little"))
        except OSError:  # (it is gone: its pipe's end tells, and the input is handed again)
            pass

    def _wait(self) -> None:
        """Take in what the workers have sent; a worker gone is replaced."""
        ready = select.poll()
        for fd in self.workers:
            ready.register(fd, select.POLLIN)
        for fd, _event in ready.poll():
            worker = self.workers[fd]
            try:
                chunk = os.read(fd, 1 << 20)
            except OSError:
                chunk = b""
            if chunk:
                worker.pending += chunk
                self._take(worker)
            else:
                self._gone(worker)

    def _take(self, worker: _Worker) -> None:
        pending = worker.pending
        taken = 0
        while (end := pipes.message_end(pending, taken)) >= 0:
            with memoryview(pending) as view:  # (a large result is not copied to be read)
                failed, value = pickle.loads(view[taken + pipes.LENGTH_BYTES : end])
            self.done[worker.taken.popleft()] = RuntimeError(value) if failed else value
            taken = end
            self._hand(worker)
        del pending[:taken]

    def _gone(self, worker: _Worker) -> None:
        """A worker's pipe ended before all it was given came back: the input it worked on
        fails, the others it had are handed out again, to a worker forked in its place."""
        del self.workers[worker.fd]
        os.close(worker.fd)
        if worker.tasks >= 0:
            os.close(worker.tasks)
        status = _reap(worker.pid)
        if not worker.taken:
            return
        how = f"killed by signal {-status}" if status < 0 else f"exit status {status}"
        self.done[worker.taken.popleft()] = WorkerDied(
            f"a worker process ended ({how}) while it worked on this input")
        self.left.extendleft(reversed(worker.taken))
        if self.left:
            self._fork()

    def _end(self, *, stop: bool) -> None:
        for worker in list(self.workers.values()):
            if stop:  # their results are not wanted: they only compute and write nothing
                with contextlib.suppress(OSError):
                    os.kill(worker.pid, signal.SIGTERM)
            os.close(worker.fd)
            if worker.tasks >= 0:
                os.close(worker.tasks)
            _reap(worker.pid)
        self.workers.clear()

    # ------------------------------------------------------------------ a worker's side
    def _serve(self, tasks: int, fd: int) -> None:  # pragma: no cover - runs in the worker
        self.initializer()
        while True:
            try:
                data = os.read(tasks, _TASK_BYTES)
            except InterruptedError:
                continue
            if len(data) < _TASK_BYTES:
                return  # every input is taken
            item = self.items[int.from_bytes(data, "little")]
            try:
                payload = pickle.dumps((False, self.function(item)), pickle.HIGHEST_PROTOCOL)
            except Exception as exc:  # noqa: BLE001 - the command reports it for that input
                payload = pickle.dumps((True, f"{type(exc).__name__}: {exc}"))
            pipes.send(fd, payload)


def _reap(pid: int) -> int:
    """Wait for a worker to end; its exit status, or minus the signal that ended it."""
    try:
        _, status = os.waitpid(pid, 0)
    except ChildProcessError:
        return 0
    return -os.WTERMSIG(status) if os.WIFSIGNALED(status) else os.WEXITSTATUS(status)
