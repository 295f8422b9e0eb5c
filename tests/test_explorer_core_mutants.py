"""Behaviours of the exhaustive explorer's core that a mutation pass over ``explorer``,
``partitioned``, ``partition_worker``, ``memory``, ``pool`` and ``engines/explore`` found
unpinned: the counts and the move a trace property's violation is found with, in one
process as over workers; a time budget beside a memory budget in a worker; a stop kept
pending in a partitioned search; which memory a budget reads; what a ``--jobs`` run does
with a search stopped, ended or never begun; and ``bfs``'s own memory budget. Each test
was written against a hand-made mutant the rest of the suite let through; its docstring
names it."""

from __future__ import annotations

import concurrent.futures as cf
import contextlib
import mmap
import os
import resource
import signal

import pytest
from deployspec.spec.core import trace_property

from deployspec import check, interruption, memory, partition_worker, partitioned, pool
from deployspec.engines.explore import search
from deployspec.engines.result import Result
from deployspec.memory import MIB, current_rss_mb, peak_rss_mb
from deployspec.partitioned import Partitioned

from .helpers import Tree, action_labels
from .toy import Move, toy_model

FORKS = pytest.mark.skipif(not partitioned.available(), reason="partitioned searches need Linux (fork)")
PROC = pytest.mark.skipif(not os.path.exists("/proc/self/statm"),
                          reason="resident memory is read from Linux's /proc")

# --- a trace property's violation, in one process and over workers ------------------------


@trace_property("toy", initial=False)
def nothing_after_a_mark(marked, step):
    """After a ``mark``, only another ``mark`` may come."""
    label = step.action.get("label")
    return marked or label == "mark", (f"{label} after a mark" if marked and label != "mark" else None)


@pytest.mark.parametrize("workers", [1, 2, 3])
def test_a_trace_violation_is_the_first_violating_move_counted_as_one_process_counts_it(workers):
    """From `start`: mark (a self-loop of the state), go, leap. Layer 1: three moves, three
    nodes; layer 2: from (start, marked), mark changes nothing, and go, the first of the two
    violating moves, is the goal: 4 transitions, 5 nodes (the goal move is recorded as a
    node), depth 2, whatever the number of workers. (Mutants E16: one process leaving the
    goal move out of its transitions; W07: a worker going on past a violating move to the
    node's last, leap, counting the moves after it.)"""
    model, config = toy_model({"start": [(Move("mark"), "start"), (Move("go"), "end"), (Move("leap"), "far")]})
    r = search(model, "toy", nothing_after_a_mark, budget=60, seed=0, out_dir=None, config=config,
               workers=workers)
    assert r.verdict == "violated" and r.stats["shortest"], r.message
    assert action_labels(r.trace) == ["mark", "go"] and r.message == "go after a mark"
    assert (r.stats["states"], r.stats["transitions"], r.stats["depth"]) == (5, 4, 2)
    assert r.trace["extra"]["explore"] == {"states": 5, "transitions": 4, "bfs_depth": 2}


def _own_children(workers: int) -> tuple[set[int], int]:
    """Nodes of a layer of ``Tree(1 << 12)`` owned by the worker that owns their parent
    (found while it expands that layer), in a layer where more than one worker has such."""
    def owner(n: int) -> int:
        return partition_worker.stable_hash(n) % workers

    for d in range(2, 10):
        own = {c for c in range(1 << d, 2 << d) if owner(c) == owner(c // 2)}
        if len({owner(c) for c in own}) > 1:
            return own, min(owner(c) for c in own)
    raise AssertionError("no such layer")


@FORKS
@pytest.mark.usefixtures("no_worker_left_behind")
@pytest.mark.parametrize("workers", [2, 3])
def test_of_goals_found_in_one_phase_by_several_workers_the_lowest_worker_s_wins(workers):
    """partitioned's docstring: among goals of the same layer the lowest worker's first wins
    (the same trace every time, whichever worker answers first). As coded this holds per
    phase: goals found while the workers expand a layer (here, children each owns with their
    parent) beat one found while a worker takes the layer in. (Mutant P06: the highest
    worker's goal taken.)"""
    goals, lowest = _own_children(workers)
    search_ = Partitioned(Tree(1 << 12), workers)
    number = search_.run(lambda n, depth, k: n in goals)
    assert number is not None and number % workers == lowest


# --- budgets and stops of a partitioned search ---------------------------------------------


@FORKS
@pytest.mark.usefixtures("no_worker_left_behind")
def test_a_time_budget_stops_the_workers_when_a_memory_budget_is_set_too():
    """The engine always gives a memory budget (3072 MiB): a worker's time check must not be
    undone by its memory check finding the memory within bounds, or ``--workers N --budget S``
    searches to the end. (Mutant W08: ``elif`` -> ``if`` in ``Worker._over_budget``.)"""
    search_ = Partitioned(Tree(1 << 14), 2, time_budget=0.0, memory_budget_mb=current_rss_mb() + 4096)
    assert search_.run(lambda n, d, k: False) is None
    assert search_.stopped == "time" and not search_.exhausted and search_.states < (1 << 14) - 1


@FORKS
@pytest.mark.usefixtures("no_worker_left_behind")
def test_a_stop_python_dropped_in_the_parent_ends_a_partitioned_search_at_the_next_layer(monkeypatch):
    """A Ctrl-C or SIGTERM that Python dropped where it could not raise it (a gc callback) is
    kept pending; the driver asks before each layer, as one process asks every few hundred
    nodes. (Mutant P10: the driver's ``raise_if_pending`` left out: the search ran on.)"""
    monkeypatch.setattr(interruption, "pending", None)
    rounds = []

    def absorb(shares):  # after the root's round: as if a signal's raise were swallowed here
        rounds.append(shares)
        interruption.pending = signal.SIGTERM

    search_ = Partitioned(Tree(1 << 10), 2)
    with pytest.raises(KeyboardInterrupt):
        search_.run(lambda n, d, k: False, absorb=absorb)
    assert len(rounds) == 1 and not search_.exhausted


# --- which memory is read ------------------------------------------------------------------


def _status_mb(field: str) -> float:
    with open("/proc/self/status") as f:
        return next(int(line.split()[1]) for line in f if line.startswith(field + ":")) / 1024


@PROC
def test_the_memory_budget_reads_resident_memory_and_the_limit_the_address_space(monkeypatch):
    """Address space reserved and never touched is not resident: the budget is judged on the
    resident memory (VmRSS), the reserve under ``ulimit -v`` on the address space (VmSize).
    (Mutant M04: the two fields of ``/proc/self/statm`` read the other way round.)"""
    reserved = mmap.mmap(-1, 512 << 20)  # address space only
    try:
        rss, size = _status_mb("VmRSS"), _status_mb("VmSize")
        assert size - rss > 400
        assert memory.memory_stop(rss + 100) is None
        assert current_rss_mb() == pytest.approx(rss, abs=16)
        limit = int(size * MIB) + (8 << 20)  # 8 MiB of address space left
        monkeypatch.setattr(resource, "getrlimit", lambda which: (limit, resource.RLIM_INFINITY))
        assert memory.address_space_short() and memory.memory_stop(rss + 100) == "address_space"
    finally:
        reserved.close()


@FORKS
@PROC
@pytest.mark.usefixtures("no_worker_left_behind")
def test_the_workers_allowance_leaves_out_memory_the_parent_has_given_back():
    """The memory budget, less what the parent holds now (not its peak: an earlier search's
    states, freed), is split over the workers. (Mutant M03: ``current_rss_mb`` giving the peak:
    the workers of a later search had no allowance, and stopped at once.)"""
    ballast = bytearray(200 << 20)
    ballast[:: 4096] = b"x" * len(ballast[:: 4096])
    del ballast  # a peak this process no longer holds
    now = _status_mb("VmRSS")
    assert peak_rss_mb() > now + 150
    search_ = Partitioned(Tree(64), 2, memory_budget_mb=now + 100)
    assert search_.run(lambda n, d, k: False) is None and search_.exhausted
    assert search_._allowance_mb == pytest.approx(50, abs=5)


# --- check --jobs: searches stopped, ended, not begun ---------------------------------------

HOLDS = Result("capi", "capi-current", "b", "explore", "holds")
VIOLATION = Result("capi", "capi-current", "a", "explore", "violated")
TASKS = [("capi", "capi-current", "explore", p) for p in ("a", "b", "c")]


class _Inline:
    """A --jobs pool whose processes answer at once with ``answers`` (by property)."""

    def __init__(self, answers: dict):
        self.answers = answers

    def submit(self, fn, i, *task, **options):
        f = cf.Future()
        f.set_result(self.answers[task[3]])
        return f

    def shutdown(self, *args, **kwargs):
        pass


def test_a_search_stopped_in_its_process_alone_is_judged_not_run_again(monkeypatch):
    """A SIGTERM to one --jobs process (an operator, earlyoom) stops its search, which answers
    with what it found: its violations, or an error saying it was stopped. It is judged
    there, not begun again in a new pool (as a search whose process ended before it began
    is). (Mutant O07: every stopped answer passed over, so each such search ran again.)"""
    answers = {"a": pool._Stopped([VIOLATION, HOLDS]), "b": pool._Stopped([HOLDS]), "c": [HOLDS]}
    monkeypatch.setattr(pool.cf, "ProcessPoolExecutor", lambda *args, **kwargs: _Inline(answers))
    done, heard = [[] for _ in TASKS], []
    assert pool._round([0, 1, 2], TASKS, {}, 2, done, heard.append, lambda task, found: None, last=False) == []
    assert done[0] == [VIOLATION] and done[2] == [HOLDS]
    assert (done[1][0].verdict, done[1][0].message) == \
        ("error", "its search process was stopped (SIGTERM) before it ended")


def test_a_search_whose_process_died_before_it_began_is_run_again_even_when_it_is_the_only_one(monkeypatch):
    """``pool.run``: those not yet judged run again in a new pool; only after as many rounds as
    there are searches are they given up. (Mutant O04: the round of a lone search was its
    last, so a death before it began made it an error at once.)"""
    rounds = []

    def round_(todo, tasks, options, jobs, done, on_result, on_found, *, last):
        rounds.append((list(todo), last))
        if len(rounds) == 1:
            return list(todo)  # its process died before the search began
        pool._judged(tasks, done, 0, [HOLDS], on_result, on_found)
        return []

    monkeypatch.setattr(pool, "_round", round_)
    found = pool.run(TASKS[1:2], {}, 1, on_start=lambda line: None, on_result=lambda r: None,
                     on_found=lambda task, found: None)
    assert found == [HOLDS] and rounds == [([0], False), ([0], True)]


@pytest.fixture
def in_pool(monkeypatch):
    """This process as a --jobs process, not yet stopped."""
    monkeypatch.setattr(pool, "_stopping", False)
    monkeypatch.setattr(pool, "_ending", False)


def test_a_search_that_ended_as_the_stop_came_answers_with_all_it_judged(monkeypatch, in_pool):
    """``_judge_in_pool``: a search that ended is complete, whenever the stop came; a stop
    arriving as it returns must not turn its proof into "stopped before it ended".
    (Mutant O05: such a search answered as stopped, with none of its verdicts.)"""
    @contextlib.contextmanager
    def kept(*args, **kwargs):
        yield
        raise KeyboardInterrupt  # the parent's SIGUSR1, just as the search returned

    monkeypatch.setattr(pool.interruption, "kept", kept)
    monkeypatch.setattr(check, "judge", lambda *task, **options: [HOLDS])
    assert pool._judge_in_pool("capi", "capi-current", "hypothesis", "b") == [HOLDS]


@PROC
def test_bfs_stops_at_its_memory_budget():
    """``bfs(memory_budget_mb=…)`` hands the budget to the search (no caller in deployspec
    passes it; the benchmarks and a user's script may): over it, the search stops, says why,
    and is no proof. (Mutant E30: the budget not passed on, the search ran to the end.)"""
    from deployspec.engines.explore import explore_config
    from deployspec.explorer import bfs
    from deployspec.models import get_model

    capi = get_model("capi")
    variant = capi.variant("capi-safe")
    r = bfs(capi, variant, explore_config(capi, variant), goal=lambda s, o: False, memory_budget_mb=1)
    assert (r.stopped, r.complete) == ("memory", False) and r.states < 47_892
