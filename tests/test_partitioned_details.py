"""Details of the partitioned search (deployspec/partitioned.py) that a bug would get
wrong quietly; the random search's are in test_search_details.py, the exhaustive
engine's graph's in test_product_details.py.

Found missing by the mutation pass that found those of test_search_details.py
(ast-based: comparisons flipped, and/or swapped, conditions negated, constants
changed, statements deleted, returns emptied, tuple elements dropped), run against
the module's targeted tests:

- deployspec/partitioned.py: 65 mutants, 17 survived; 8 equivalent (two in
  annotations; the parent's copy of a worker's pipe end closed at once or in the
  ``finally``, a lost worker being seen by its sentinel either way; how long a finished
  or stopped search waits for its workers to leave, twice; three variants of when a
  round reads a worker's pipe: ``wait`` lists a pipe holding an answer with its
  sentinel, and reading an ended worker's empty pipe reports it lost as the sentinel
  does), 9 killed here (the range of workers, storage, a state bound reached by the
  root, while expanding or exactly, a pipe failing under a read, the memory budget's
  split, which worker's stop reason is the search's).
"""

from __future__ import annotations

import signal
import time

import pytest

from deployspec import interruption, partitioned
from deployspec.contract import last_resort
from deployspec.partition_worker import Report
from deployspec.partitioned import Partitioned, WorkerLost, _Driver

from .helpers import Tree


@pytest.mark.parametrize("workers", [1, 64])
def test_a_search_may_use_from_one_to_64_workers(workers):
    assert Partitioned(Tree(8), workers=workers).workers == workers


@pytest.mark.parametrize("workers", [0, 65])
def test_more_than_64_workers_or_none_are_refused(workers):
    with pytest.raises(ValueError, match=rf"^workers must be between 1 and 64, got {workers}$"):
        Partitioned(Tree(8), workers=workers)


def test_a_search_s_storage_is_what_its_workers_hold():
    search = Partitioned(Tree(64), workers=2)
    assert search.run(lambda n, d, k: False) is None and search.exhausted
    assert len(search.worker_bytes) == 2 and min(search.worker_bytes) > 0
    assert search.storage_bytes() == sum(search.worker_bytes)


@pytest.mark.parametrize("max_states, states, depth", [(1, 1, 0), (5, 5, 2), (10, 13, 3), (20, 24, 4), (40, 47, 5)])
def test_a_state_bound_reached_in_a_phase_stops_the_search_there(max_states, states, depth):
    # reached by the root (no layer is expanded) or while expanding a layer (the sends
    # are not taken in); the same counts in every run for two workers (owners come from
    # a stable hash)
    search = Partitioned(Tree(1 << 12), workers=2, max_states=max_states)
    assert search.run(lambda n, d, k: False) is None
    assert search.stopped == "max_states" and (search.states, search.depth) == (states, depth)


class BrokenPipe:
    """A worker's end of the pipe that fails as the system does when the worker is gone."""

    def recv(self):
        raise ConnectionResetError("Connection reset by peer")


class Ended:
    """A worker process killed by SIGKILL."""

    exitcode = -signal.SIGKILL

    def join(self, timeout=None):
        pass


def test_a_pipe_failing_under_a_read_is_a_worker_stopped_without_answering():
    driver = _Driver(Partitioned(Tree(8), workers=2), [None, BrokenPipe()], [None, Ended()], lambda shares: None)
    with pytest.raises(WorkerLost, match=r"^explore worker 2 of 2 stopped without answering "
                                         r"\(exit code -9\) \(killed: out of memory\?\)$"):
        driver._read(1)


@pytest.mark.parametrize("budget, allowance", [(300.0, 100.0), (50.0, 0.0)])
def test_the_workers_share_what_the_memory_budget_leaves_beyond_the_parent_s(monkeypatch, budget, allowance):
    # the parent holds 100 MiB (which its two workers inherit): what is left of the budget
    # is split between them, nothing when the parent already holds more than the budget
    monkeypatch.setattr(partitioned, "current_rss_mb", lambda: 100.0)
    search = Partitioned(Tree(8), workers=2, memory_budget_mb=budget)
    search.run(lambda n, d, k: False)
    assert search._allowance_mb == allowance


def test_of_workers_stopped_for_different_reasons_the_lowest_s_is_the_search_s():
    # and the round's counts and shares are the workers' sums, handed to absorb in worker order
    absorbed = []
    search = Partitioned(Tree(8), workers=3)
    driver = _Driver(search, [None] * 3, [None] * 3, absorbed.append)
    reports = [Report(None, None, None, 1, 4, 6, "w1"), Report(None, "memory", None, 0, 5, 7, "w2"),
               Report(None, "time", None, 0, 6, 8, "w3")]
    assert driver._settle(reports) is None
    assert search.stopped == "memory" and (search.states, search.transitions) == (15, 21)
    assert absorbed == [["w1", "w2", "w3"]]


@pytest.mark.skipif(not hasattr(signal, "pthread_sigmask"), reason="POSIX signal masks only")
def test_ctrl_c_is_held_while_workers_are_forked_and_ignored_once_they_run(tmp_path, monkeypatch):
    """A Ctrl-C before a worker ignored it printed a KeyboardInterrupt traceback from there
    (the parent stops the workers): each worker starts with it held, and is left taking none."""
    real = partitioned.serve

    def serve(search, w, *args):  # (forked: the worker runs this, and says what it found)
        held = signal.SIGINT in signal.pthread_sigmask(signal.SIG_BLOCK, [])
        (tmp_path / f"worker-{w}").write_text("held" if held else "not held")
        return real(search, w, *args)

    def wrong(node, depth, n):  # a goal "found" in a worker whose Ctrl-C is not as it must be
        return n > 0 and (signal.getsignal(signal.SIGINT) is not signal.SIG_IGN
                          or signal.SIGINT in signal.pthread_sigmask(signal.SIG_BLOCK, []))

    monkeypatch.setattr(partitioned, "serve", serve)
    before = signal.pthread_sigmask(signal.SIG_BLOCK, [])
    search = Partitioned(Tree(64), workers=2)
    assert search.run(wrong) is None and search.exhausted and search.states > 2
    assert [(tmp_path / f"worker-{w}").read_text() for w in range(2)] == ["held", "held"]
    assert signal.pthread_sigmask(signal.SIG_BLOCK, []) == before  # the parent's mask as it was


def test_a_worker_out_of_memory_that_cannot_say_so_exits_saying_that(monkeypatch):
    """Out of memory again while sending its failure, a worker left with exit code 0, and
    the parent said "stopped without answering (exit code 0)": nothing to go on."""
    from deployspec import partition_worker

    def tell(*args):
        raise MemoryError

    def runs_out(node, depth, n):
        if n > 0:
            raise MemoryError
        return False

    monkeypatch.setattr(partition_worker, "_tell", tell)  # (the workers are forked: they have it)
    with pytest.raises(WorkerLost, match=r"stopped without answering \(exit code 3\) \(out of memory\)$"):
        Partitioned(Tree(64), workers=2).run(runs_out)


@pytest.mark.skipif(not hasattr(signal, "SIGSTOP"), reason="POSIX job control signals only")
def test_a_stopped_worker_does_not_outlive_an_interrupted_search(tmp_path):
    """SIGTERM waits while a process is stopped: a worker stopped (SIGSTOP) was still
    there after the run, orphaned, holding its states."""
    import os

    pids = tmp_path / "stopped"

    def stops(node, depth, n):
        if n > 0 and not pids.exists():
            pids.write_text(str(os.getpid()))
            os.kill(os.getpid(), signal.SIGSTOP)
        return False

    def interrupt(*args):
        raise KeyboardInterrupt

    previous = signal.signal(signal.SIGALRM, interrupt)
    signal.setitimer(signal.ITIMER_REAL, 1.0)
    started = time.monotonic()
    try:
        with pytest.raises(KeyboardInterrupt):
            Partitioned(Tree(1 << 20), workers=2).run(stops)
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)
    pid = int(pids.read_text())
    with pytest.raises(ProcessLookupError):  # ended and reaped
        os.kill(pid, 0)
    # killed at once, not after SIGTERM and 5 s of waiting: the deployspec program's last
    # resort ends it 5 s after a signal, before the kill came, and the worker stayed behind
    # with no report written (the interrupt came 1 s in)
    assert time.monotonic() - started < 1 + last_resort.GRACE / 2


@pytest.mark.skipif(not hasattr(signal, "SIGTERM") or not partitioned.available(), reason="POSIX, fork")
def test_a_sigterm_to_one_worker_ends_that_search_not_the_run():
    """A worker inherited the program's SIGTERM handler (sigterm_interrupts), which raised
    KeyboardInterrupt there and handed it to the parent: the whole run was interrupted, its
    report blaming Ctrl-C. It is that search's loss, said with the signal (earlyoom, a kill)."""
    import os

    def terminated(node, depth, n):
        if n > 0:
            os.kill(os.getpid(), signal.SIGTERM)
        return False

    with interruption.sigterm_interrupts(), pytest.raises(
            WorkerLost, match=r"stopped without answering \(exit code -15\) \(stopped by SIGTERM\)$"):
        Partitioned(Tree(64), workers=2).run(terminated)
