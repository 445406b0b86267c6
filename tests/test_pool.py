"""The processes of ``--jobs`` (:mod:`hlo_rewrite.pool`): results in input order, whatever the
order the work ends in; an input whose work fails, or whose worker dies, fails alone; the
others are still done; no worker outlives the results or an early end. The forked workers and
the ``concurrent.futures`` fallback are held to the same."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
import time

import pytest
from conftest import ALLREDUCE_MODULE

from hlo_rewrite import pool

pytestmark = [
    pytest.mark.skipif(os.name != "posix" or not hasattr(os, "fork"), reason="workers are forked on POSIX"),
    pytest.mark.filterwarnings("ignore:os.fork:RuntimeWarning"),
    pytest.mark.filterwarnings("ignore:This process .* is multi-threaded:DeprecationWarning"),
]

MODULE = ALLREDUCE_MODULE  # one all-reduce in ENTRY: the default pipeline rewrites it


@pytest.fixture(params=["forked", "executor"])
def way(request, monkeypatch):
    """Each test runs with the forked workers and with the fallback. The test process may run
    threads (jaxlib's, after an oracle test): these workers only run the functions below, so
    forking anyway is safe here."""
    monkeypatch.setattr(pool, "single_threaded", lambda: request.param == "forked")
    return request.param


@pytest.fixture(autouse=True)
def _no_hang():
    """A pool that waits for a result that never comes fails the test instead of hanging it."""
    def stop(_signum, _frame):
        raise TimeoutError("the pool never gave all its results")

    old = signal.signal(signal.SIGALRM, stop)
    signal.alarm(60)
    yield
    signal.alarm(0)
    signal.signal(signal.SIGALRM, old)


def _ignore_signals() -> None:
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    signal.signal(signal.SIGTERM, signal.SIG_DFL)
    signal.signal(signal.SIGALRM, signal.SIG_DFL)


def slow_first(item: int) -> tuple[int, int]:
    """The first items take longest: their results are ready last."""
    time.sleep(max(0.0, 0.05 - 0.01 * item))
    return item * item, os.getpid()


def big(item: int) -> str:
    """A result several times what a result pipe holds."""
    return f"{item}:" + "x" * (3_000_000 + item)


def fails_on_three(item: int) -> int:
    if item == 3:
        raise ValueError("three is refused")
    return item


def dies_on(item: tuple[int, bool]) -> int:
    number, die = item
    if die:
        os.kill(os.getpid(), signal.SIGKILL)
    return number


def _gone(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return True
    # a zombie still answers: it is gone only once reaped, which the pool does
    return False


def test_results_come_in_input_order(way):
    results = list(pool.ordered(slow_first, range(8), 2, _ignore_signals))
    assert [r[0] for r in results] == [i * i for i in range(8)]
    pids = {r[1] for r in results}
    assert os.getpid() not in pids
    assert len(pids) == 2  # both workers took inputs
    if way == "forked":
        assert all(_gone(pid) for pid in pids)


def test_results_larger_than_a_pipe_come_whole(way):
    assert list(pool.ordered(big, range(5), 2, _ignore_signals)) == [big(k) for k in range(5)]


def test_more_processes_than_inputs(way):
    assert [r[0] for r in pool.ordered(slow_first, [4], 8, _ignore_signals)] == [16]


def test_an_input_whose_work_raises_fails_alone(way):
    results = list(pool.ordered(fails_on_three, range(6), 2, _ignore_signals))
    assert [r for k, r in enumerate(results) if k != 3] == [0, 1, 2, 4, 5]
    assert isinstance(results[3], Exception)
    assert "ValueError" in f"{type(results[3]).__name__}: {results[3]}"
    assert "three is refused" in str(results[3])


@pytest.mark.parametrize("processes", [1, 2, 3])
@pytest.mark.parametrize("dying", [[0], [2], [5], [1, 2], [0, 3, 5], [0, 1, 2, 3, 4, 5]])
def test_an_input_whose_worker_dies_fails_alone_and_the_rest_are_done(processes, dying, monkeypatch):
    monkeypatch.setattr(pool, "single_threaded", lambda: True)
    items = [(k, k in dying) for k in range(6)]
    results = list(pool.ordered(dies_on, items, processes, _ignore_signals))
    for k, res in enumerate(results):
        if k in dying:
            assert isinstance(res, pool.WorkerDied)
            assert "killed by signal 9" in str(res)
        else:
            assert res == k


def test_closing_early_ends_the_workers(monkeypatch):
    monkeypatch.setattr(pool, "single_threaded", lambda: True)
    results = pool.ordered(slow_first, range(40), 2, _ignore_signals)
    first = next(results)
    workers = {first[1]}
    results.close()
    assert all(_gone(pid) for pid in workers)
    with pytest.raises(ChildProcessError):  # every worker was reaped
        os.waitpid(-1, os.WNOHANG)


KILLS_B = """
import os, signal, sys
from hlo_rewrite import runner
real = runner.process_path
def process_path(path, *args, **kwargs):
    if path.endswith("b.hlo"):
        os.kill(os.getpid(), signal.SIGKILL)
    return real(path, *args, **kwargs)
runner.process_path = process_path
from hlo_rewrite.cli import console_main
sys.argv[0] = "hlo-rewrite"
console_main()
"""


def test_a_file_whose_worker_dies_is_an_internal_error_and_the_others_are_written(tmp_path):
    names = ["a.hlo", "b.hlo", "c.hlo", "d.hlo"]
    for name in names:
        (tmp_path / name).write_text(MODULE)
    out = tmp_path / "out"
    done = subprocess.run([sys.executable, "-c", textwrap.dedent(KILLS_B), "-j", "2", *names, "-o", "out/"],
                          capture_output=True, text=True, cwd=tmp_path, timeout=120)
    assert done.returncode == 5, done.stderr
    assert "b.hlo: internal error: WorkerDied: a worker process ended (killed by signal 9)" in done.stderr
    assert "Traceback" not in done.stderr
    assert sorted(p.name for p in out.iterdir()) == ["a.hlo", "c.hlo", "d.hlo"]  # no temporaries
    for name in ("a.hlo", "c.hlo", "d.hlo"):
        assert "AwsNeuronAllReduceAdd_f32" in (out / name).read_text()


@pytest.mark.skipif(not os.path.exists(f"/proc/self/task/{os.getpid()}/children"), reason="needs /proc")
def test_the_command_forks_its_workers_when_it_asks_for_the_results(tmp_path, monkeypatch):
    """Before it iterates them (a progress display starts a thread in between: forking beside
    a running thread is not safe), and they give what one process gives."""
    import contextlib
    import threading

    from hlo_rewrite import runner
    from hlo_rewrite.passes import DEFAULT_PIPELINE, PassOptions

    monkeypatch.setattr(pool, "single_threaded", lambda: True)
    paths = []
    for k in range(3):
        paths.append(tmp_path / f"m{k}.hlo")
        paths[-1].write_text(MODULE.replace("%ar", f"%ar{k}"))
    inputs = [runner.Input(str(p)) for p in paths]
    job = runner.Job(names=tuple(DEFAULT_PIPELINE), options=PassOptions())
    children = f"/proc/self/task/{threading.get_native_id()}/children"
    before = open(children).read().split()
    results = runner.iter_results(inputs, job, 2, None)
    with contextlib.closing(results):
        assert len(open(children).read().split()) == len(before) + 2
        got = [str(r.output_text) for r in results]
    assert open(children).read().split() == before
    with contextlib.closing(runner.iter_results(inputs, job, 1, None)) as alone:
        assert got == [str(r.output_text) for r in alone]
    assert all(f"%ar{k} = f32[8]{{0}} custom-call" in got[k] for k in range(3))
