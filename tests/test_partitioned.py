"""The partitioned search (``--workers``) on graphs whose answers are known by arithmetic.

The binary tree of ``tests/helpers.py`` and a few small graphs: every count
follows from their shape. Failures in a worker (an exception, a killed process)
must reach the parent as an error, with no worker left behind.
``test_partitioned_models.py`` compares it with one process on the models.
"""

from __future__ import annotations

import multiprocessing as mp
import os
import signal
import time

import pytest

from deployspec import partition_worker, partitioned
from deployspec.explorer import Graph
from deployspec.partitioned import Partitioned, WorkerLost

from .helpers import Grid, Tree

pytestmark = [
    pytest.mark.skipif(not partitioned.available(), reason="partitioned searches need Linux (fork)"),
    pytest.mark.usefixtures("no_worker_left_behind"),
]


@pytest.mark.parametrize("workers", [1, 2, 3, 5])
def test_an_exhausted_search_counts_what_one_process_counts(workers):
    search = Partitioned(Tree(1 << 10), workers)
    assert search.run(lambda n, depth, number: False) is None
    assert search.exhausted and search.stopped is None
    assert search.states == (1 << 10) - 1 and search.depth == 9
    assert search.transitions == 2 * ((1 << 10) - 2)  # down to each child, up from each non-root


@pytest.mark.parametrize("workers", [2, 3])
def test_each_node_is_judged_once_at_its_depth(workers):
    judged = mp.get_context("fork").Manager().list()
    Partitioned(Tree(256), workers).run(lambda n, depth, number: judged.append((n, depth)) and False)
    assert sorted(judged) == [(n, n.bit_length() - 1) for n in range(1, 256)]


@pytest.mark.parametrize("workers", [2, 4])
def test_the_path_to_a_goal_is_its_binary_digits(workers):
    search = Partitioned(Tree(1 << 12), workers)
    goal = 0b1011011
    number = search.run(lambda n, depth, number: n == goal)
    assert search.path_to(number) == [int(b) for b in bin(goal)[3:]]
    assert search.depth == goal.bit_length() - 1


def test_the_root_can_be_the_goal():
    search = Partitioned(Tree(64), 3)
    number = search.run(lambda n, depth, number: n == 1)
    assert number is not None and search.path_to(number) == [] and search.states == 1
    assert search.depth == 0  # no layer was expanded


def test_a_move_can_be_the_goal():
    search = Partitioned(Tree(1 << 10), 2)
    number = search.run(lambda n, d, k: False, on_edge=lambda node, child, info: child == 300)
    assert search.path_to(number) == [int(b) for b in bin(300)[3:]]


def test_each_worker_shares_what_it_found():
    seen = []
    search = Partitioned(Tree(1 << 8), 3)
    search.run(lambda n, d, k: False, share=lambda: os.getpid(), absorb=seen.append)
    pids = seen[-1]
    assert len(pids) == 3 and len(set(pids)) == 3 and os.getpid() not in pids


def test_depth_and_state_bounds_stop_cleanly():
    search = Partitioned(Tree(1 << 12), 2, max_depth=4)
    assert search.run(lambda n, d, k: False) is None
    assert search.stopped == "max_depth" and search.depth == 4 and search.states == 31
    search = Partitioned(Tree(1 << 12), 3, max_states=100)
    assert search.run(lambda n, d, k: False) is None
    # checked between phases on the total: at most one layer (depth 7: 128 nodes) more
    assert search.stopped == "max_states" and 100 <= search.states < 256


@pytest.mark.parametrize("workers", [2, 5])
def test_a_state_bound_above_the_total_still_gives_a_proof(workers):
    search = Partitioned(Tree(64), workers, max_states=64)  # 63 nodes
    assert search.run(lambda n, d, k: False) is None
    assert search.exhausted and search.stopped is None and search.states == 63


@pytest.mark.parametrize("workers", [2, 3])
def test_nodes_are_told_apart_by_their_key_alone(workers):
    # the many routes to a point of the grid make one node (its key leaves the route out)
    grid = Grid(4)
    search = Partitioned(grid, workers)
    assert search.run(lambda n, d, k: False) is None
    assert (search.states, search.depth, search.transitions) == (16, 6, grid.moves)


class Line(Graph):
    """0..100, each moving one or two ahead; the owner key of a node is -1 or -2
    (the root's 0), two values Python hashes alike (``hash(-1) == hash(-2)``)."""

    def owner_key(self, node):
        return 0 if node == 0 else -1 - node % 2

    def root(self):
        return 0

    def key(self, node):
        return node

    def expand(self, n):
        for e, m in enumerate((n + 1, n + 2)):
            if m <= 100:
                yield e, m, None, hash(m)


@pytest.mark.parametrize("workers", [2, 3, 5])
def test_owner_keys_with_equal_hashes_keep_one_owner(workers):
    search = Partitioned(Line(), workers)
    search.run(lambda n, d, k: False)
    assert (search.states, search.transitions) == (101, 199)  # none counted by two workers


class Endless(Graph):
    """Node n moves to n + 1, slowly: only a budget ends the search."""

    def root(self):
        return 0

    def key(self, node):
        return node

    def expand(self, n):
        time.sleep(0.001)
        yield 0, n + 1, None, hash(n + 1)


def test_a_time_budget_stops_every_worker():
    t = time.perf_counter()
    search = Partitioned(Endless(), 2, time_budget=0.5)
    assert search.run(lambda n, d, k: False) is None
    assert search.stopped == "time" and time.perf_counter() - t < 10


class EndlessInOneWorker(Endless):
    """:class:`Endless` with every node owned by the second of two workers."""

    def __init__(self):
        self.owned_by_the_second = next(k for k in range(100) if _owner(k, 2) == 1)

    def owner_key(self, node):
        return self.owned_by_the_second


def test_a_budget_spent_in_one_worker_stops_the_whole_search():
    # the second worker owns every node and runs out of time; the first, with nothing to
    # expand, never looks at the clock. Were the second's stop not heard, the frontier it
    # left unexpanded would be lost and the search would look exhausted: a false proof
    search = Partitioned(EndlessInOneWorker(), 2, time_budget=0.2)
    assert search.run(lambda n, d, k: False) is None
    assert search.stopped == "time" and not search.exhausted


class Failing(Tree):
    """Raises (or dies) when it expands ``at``, which only one worker owns."""

    def __init__(self, limit, at, how):
        super().__init__(limit)
        self.at, self.how = at, how

    def expand(self, n):
        if n == self.at:
            if self.how == "raise":
                raise ValueError(f"the model broke at {n}")
            os.kill(os.getpid(), signal.SIGKILL)
        yield from super().expand(n)


def test_an_exception_in_a_worker_is_raised_in_the_parent():
    with pytest.raises(ValueError, match="the model broke at 37") as caught:
        Partitioned(Failing(1 << 10, 37, "raise"), 2).run(lambda n, d, k: False)
    note = "\n".join(caught.value.__notes__)
    assert "(in explore worker" in note and "in expand" in note  # where it broke, from the worker


def test_a_worker_killed_between_rounds_is_reported_as_lost():
    rounds = []

    def absorb(pids):
        rounds.append(pids)
        if len(rounds) == 3:
            os.kill(pids[1], signal.SIGKILL)  # it waits for the next message meanwhile
            time.sleep(0.2)

    with pytest.raises(WorkerLost, match=r"worker 2 of 3 stopped without answering \(exit code -9\)"):
        Partitioned(Tree(1 << 16), 3).run(lambda n, d, k: False, share=os.getpid, absorb=absorb)


def _owner(n: int, workers: int) -> int:
    return partition_worker.stable_hash(n) % workers


class SlowAndDying(Tree):
    """Expanding ``slow`` takes long; expanding ``dying`` kills its worker."""

    def __init__(self, limit, slow, dying):
        super().__init__(limit)
        self.slow, self.dying = slow, dying

    def expand(self, n):
        if n == self.slow:
            time.sleep(8)
        elif n == self.dying:
            os.kill(os.getpid(), signal.SIGKILL)
        yield from super().expand(n)


def test_a_lost_worker_is_reported_before_the_others_finish_their_layer():
    layer = next(range(1 << d, 2 << d) for d in range(1, 6)  # nodes expanded together,
                 if {_owner(n, 2) for n in range(1 << d, 2 << d)} == {0, 1})  # in both workers
    slow = next(n for n in layer if _owner(n, 2) == 0)
    dying = next(n for n in layer if _owner(n, 2) == 1)
    t = time.perf_counter()
    with pytest.raises(WorkerLost, match="worker 2 of 2"):
        Partitioned(SlowAndDying(1 << 8, slow, dying), 2).run(lambda n, d, k: False)
    assert time.perf_counter() - t < 6


def test_the_memory_budget_counts_what_workers_add_not_what_they_inherit():
    from deployspec.memory import current_rss_mb

    ballast = bytearray(200 * 2**20)  # the parent holds 200 MiB, shared with every worker
    ballast[:: 4096] = b"x" * len(ballast[:: 4096])
    budget = current_rss_mb() + 100  # the workers may add 25 MiB each
    search = Partitioned(Tree(1 << 12), 4, memory_budget_mb=budget)
    assert search.run(lambda n, d, k: False) is None
    assert search.exhausted and search.stopped is None
    assert len(search.worker_added_mb) == 4 and max(search.worker_added_mb) < 25
    del ballast


def test_a_killed_worker_is_reported_not_waited_for():
    t = time.perf_counter()
    with pytest.raises(WorkerLost, match=r"stopped without answering \(exit code -9\)"):
        Partitioned(Failing(1 << 10, 37, "kill"), 3).run(lambda n, d, k: False)
    assert time.perf_counter() - t < 10


@pytest.mark.parametrize("workers", [0, partitioned.MAX_WORKERS + 1])
def test_a_worker_count_out_of_range_is_refused(workers):
    with pytest.raises(ValueError, match="workers must be between"):
        Partitioned(Tree(8), workers)


class Unpicklable(Exception):
    def __init__(self, message):
        super().__init__(message)
        self.callback = lambda: None  # a lambda does not pickle


class Unloadable(Exception):
    def __init__(self, message, *, detail):  # pickled without ``detail``: cannot be rebuilt
        super().__init__(message)
        self.detail = detail


class RaisesThis(Tree):
    def __init__(self, exc):
        super().__init__(1 << 8)
        self.exc = exc

    def expand(self, n):
        if n == 37:
            raise self.exc
        yield from super().expand(n)


def test_an_exception_that_does_not_pickle_arrives_as_its_text():
    with pytest.raises(RuntimeError, match="Unpicklable: no lambda here"):
        Partitioned(RaisesThis(Unpicklable("no lambda here")), 2).run(lambda n, d, k: False)


def test_an_answer_the_parent_cannot_read_is_a_lost_worker():
    with pytest.raises(WorkerLost, match="sent an unreadable answer"):
        Partitioned(RaisesThis(Unloadable("odd", detail=1)), 2).run(lambda n, d, k: False)
