"""The partitioned search (``--workers``): the serial search's answers from several processes.

Every expectation is either arithmetic on a graph of known shape (the binary
tree of ``test_layered``) or the serial search's own answer on the same input.
Failures in a worker (an exception, a killed process) must reach the parent as
an error, with no worker left behind.
"""

from __future__ import annotations

import multiprocessing as mp
import os
import pickle
import signal
import time

import attrs
import pytest

from deployspec import partitioned, traces
from deployspec.cli import main
from deployspec.engines.explore import explore_config, search
from deployspec.explorer import Graph, bfs
from deployspec.models import get_model
from deployspec.partitioned import Partitioned, WorkerLost
from deployspec.replay import replay

from .helpers import Tree, two_active

pytestmark = pytest.mark.skipif(not partitioned.available(),
                                reason="partitioned searches need the fork start method (Linux)")

MODEL = get_model("capi")


@pytest.fixture(autouse=True)
def no_worker_left_behind():
    yield
    assert mp.active_children() == []


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


def test_a_move_can_be_the_goal():
    search = Partitioned(Tree(1 << 10), 2)
    number = search.run(lambda n, d, k: False, on_edge=lambda node, child, info: child == 300)
    assert search.path_to(number) == [int(b) for b in bin(300)[3:]]


def test_shares_reach_the_parent_in_worker_order():
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


def test_a_state_bound_of_one_still_judges_the_root():
    variant = MODEL.variant("capi-safe")
    config = small("capi-safe")
    r = bfs(MODEL, variant, config, goal=lambda s, o: True, max_states=1, workers=4)
    assert r.path == [] and r.states == 1


def test_a_state_bound_does_not_hide_a_violation_one_process_finds():
    p = MODEL.property("capacity_within_bound")
    one = search(MODEL, "capi-2022", p, budget=60, seed=0, out_dir=None)
    bound = one.stats["states"] + 2
    for workers in (2, 3, 4):
        many = search(MODEL, "capi-2022", p, budget=60, seed=0, out_dir=None, max_states=bound,
                      workers=workers)
        assert (many.verdict, many.trace_length) == ("violated", one.trace_length), workers


class Line(Graph):
    """0..100, each moving one or two ahead; the owner key of a node is -1 or -2
    (the root's 0), two values Python hashes alike (``hash(-1) == hash(-2)``)."""

    key_is_node = True

    def owner_key(self, node):
        return 0 if node == 0 else -1 - node % 2

    def root(self):
        return 0

    def key(self, node):
        return node

    def expand(self, n):
        for e, m in enumerate((n + 1, n + 2)):
            if m <= 100:
                yield e, m, None


@pytest.mark.parametrize("workers", [2, 3, 5])
def test_owner_keys_with_equal_hashes_keep_one_owner(workers):
    search = Partitioned(Line(), workers)
    search.run(lambda n, d, k: False)
    assert (search.states, search.transitions) == (101, 199)  # none counted by two workers


class Endless(Graph):
    """Node n moves to n + 1, slowly: only a budget ends the search."""

    key_is_node = True

    def root(self):
        return 0

    def key(self, node):
        return node

    def expand(self, n):
        time.sleep(0.001)
        yield 0, n + 1, None


def test_a_time_budget_stops_every_worker():
    t = time.perf_counter()
    search = Partitioned(Endless(), 2, time_budget=0.5)
    assert search.run(lambda n, d, k: False) is None
    assert search.stopped == "time" and time.perf_counter() - t < 10


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


def test_the_initial_state_is_not_judged_whoever_owns_it():
    from deployspec.spec.core import state_property

    @state_property("capi")
    def no_app_yet(obs):
        """Complains about the initial state alone (no app): which the engines never judge."""
        return "no app" if obs["app"] is None else None

    for workers in (1, 2, 3, 4):
        r = search(MODEL, "capi-safe", no_app_yet, budget=60, seed=0, out_dir=None,
                   config=small("capi-safe", max_deployments=0), workers=workers)
        assert r.verdict == "holds", (workers, r.message)


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
    return partitioned.stable_hash(n) % workers


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
    from deployspec.explorer import current_rss_mb

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


# --- the batches between workers -----------------------------------------------


@attrs.frozen
class Plain:
    a: int
    b: tuple = ()


@attrs.frozen
class Odd:
    _private: int
    later: int = attrs.field(init=False, default=7)
    named: int = attrs.field(kw_only=True, default=0)


@pytest.mark.parametrize("value", [
    [Plain(1, (Plain(2),)), Plain(1, (Plain(2),))],
    [Odd(3, named=4)],
    [(Plain(5), frozenset({1, 2}), None, "text")],
])
def test_batches_rebuild_equal_values(value):
    assert pickle.loads(partitioned._dumps(value)) == value


def test_shared_sub_objects_are_sent_once_per_batch():
    inner = Plain(1, tuple(range(50)))
    one = len(partitioned._dumps([Plain(2, (inner,))]))
    many = len(partitioned._dumps([Plain(k, (inner,)) for k in range(20)]))
    assert many < 20 * one / 2


# --- on the models ---------------------------------------------------------------


def small(variant, **kw):
    return attrs.evolve(explore_config(MODEL, MODEL.variant(variant)), **kw)


@pytest.mark.parametrize("workers", [2, 3])
def test_bfs_visits_the_states_one_process_visits(workers):
    variant = MODEL.variant("capi-safe")
    config = small("capi-safe", max_deployments=1)
    one = bfs(MODEL, variant, config, goal=lambda s, o: False)
    many = bfs(MODEL, variant, config, goal=lambda s, o: False, workers=workers)
    assert (many.states, many.transitions, many.depth, many.complete) == \
        (one.states, one.transitions, one.depth, True)
    assert many.by_kind == one.by_kind


def test_bfs_path_is_as_short_and_reaches_the_goal():
    variant = MODEL.variant("capi-2022")
    config = small("capi-2022")

    one = bfs(MODEL, variant, config, goal=two_active)
    many = bfs(MODEL, variant, config, goal=two_active, workers=2)
    assert len(many.path) == len(one.path) == many.depth
    state = MODEL.initial_state(config)
    for action in many.path:
        state = variant.step(state, action)
    assert state == many.goal_state and two_active(state, MODEL.observe(state))


@pytest.mark.parametrize("prop", [p.name for p in MODEL.properties])
def test_each_property_of_the_historic_design_breaks_as_shortly(prop, tmp_path):
    p = MODEL.property(prop)
    one = search(MODEL, "capi-2022", p, budget=60, seed=0, out_dir=None)
    many = search(MODEL, "capi-2022", p, budget=60, seed=0, out_dir=str(tmp_path), workers=2)
    assert many.verdict == one.verdict == "violated"
    assert many.trace_length == one.trace_length  # a tie may be broken another way
    assert many.stats["workers"] == 2 and len(many.stats["worker_added_memory_mb"]) == 2
    assert replay(traces.load(many.counterexample)).reproduced


@pytest.mark.parametrize("prop", ["single_active_deployment", "cancel_restores_last_good",
                                  "deployment_converges"])
def test_a_proof_covers_the_states_one_process_covers(prop):
    p = MODEL.property(prop)
    config = small("capi-safe", max_deployments=1)
    one = search(MODEL, "capi-safe", p, budget=60, seed=0, out_dir=None, config=config)
    many = search(MODEL, "capi-safe", p, budget=60, seed=0, out_dir=None, config=config, workers=3)
    assert many.verdict == one.verdict == "holds" and many.stats["complete"]
    for k in ("states", "transitions", "depth", "by_action", "rejected_by_action"):
        assert many.stats[k] == one.stats[k], k


def test_skipping_a_known_cause_finds_the_next_one_as_one_process_does():
    p = MODEL.property("app_stays_available")
    first = search(MODEL, "capi-2022", p, budget=60, seed=0, out_dir=None)
    skip = frozenset({first.cause})
    one = search(MODEL, "capi-2022", p, budget=60, seed=0, out_dir=None, skip_causes=skip)
    many = search(MODEL, "capi-2022", p, budget=60, seed=0, out_dir=None, skip_causes=skip, workers=2)
    # causes tied in length may come in another order than in one process
    assert many.cause not in skip and many.trace_length == one.trace_length


_SEARCH_IN_A_FRESH_PROCESS = """
import json
from deployspec.engines.explore import search
from deployspec.models import get_model
m = get_model("capi")
p = m.property("app_stays_available")
out = []
skip = frozenset()
for _ in range(3):
    r = search(m, "capi-2022", p, budget=60, seed=0, out_dir=None, skip_causes=skip, workers=2)
    out.append([r.cause, r.trace["steps"]])
    skip |= {r.cause}
print(json.dumps(out))
"""


def test_the_same_trace_in_every_process():
    """String hashes are salted per process: owners must not depend on them."""
    import subprocess
    import sys

    runs = []
    for seed in ("1", "2", "3"):
        env = {**os.environ, "PYTHONHASHSEED": seed}
        done = subprocess.run([sys.executable, "-c", _SEARCH_IN_A_FRESH_PROCESS], env=env,
                              capture_output=True, text=True, timeout=300, check=True)
        runs.append(done.stdout)
    assert runs[0] == runs[1] == runs[2]


# --- the command line ------------------------------------------------------------


def test_check_with_workers_finds_and_saves_the_shortest_traces(capsys, tmp_path):
    code = main(["check", "--model", "capi", "--variant", "capi-2022", "--engine", "explore",
                 "--workers", "2", "--out", str(tmp_path)])
    out = capsys.readouterr().out
    assert code == 1
    assert "MiB added by 2 workers" in out
    assert sorted(tmp_path.glob("*.json"))


@pytest.mark.parametrize("argv, message", [
    (["--workers", "0"], "--workers: must be >= 1"),
    (["--workers", "two"], "--workers: not an integer"),
    (["--workers", "2", "--jobs", "2"], "--workers and --jobs both start processes"),
    (["--workers", str(partitioned.MAX_WORKERS + 1)], f"at most {partitioned.MAX_WORKERS}"),
])
def test_bad_worker_counts_are_usage_errors(capsys, argv, message):
    code = main(["check", "--model", "capi", "--variant", "capi-2022", "--engine", "explore", *argv])
    err = capsys.readouterr().err
    assert code == 2 and message in err and "Traceback" not in err


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


@pytest.mark.parametrize("variant", ["slots-webhook-tag", "slots-pipeline-immutable"])
def test_the_slots_model_splits_alike(variant):
    slots = get_model("slots")
    for p in slots.properties:
        one = search(slots, variant, p, budget=60, seed=0, out_dir=None)
        many = search(slots, variant, p, budget=60, seed=0, out_dir=None, workers=2)
        assert (many.verdict, many.trace_length) == (one.verdict, one.trace_length)
        if one.verdict == "holds":
            assert (many.stats["states"], many.stats["transitions"]) == \
                (one.stats["states"], one.stats["transitions"])


def test_a_lost_worker_is_an_error_of_the_search_and_check_exits_1(monkeypatch, capsys):
    real = partitioned._Worker._expand

    def dying(self, depth):
        if self.w == 1 and depth == 2:
            os.kill(os.getpid(), signal.SIGKILL)
        return real(self, depth)

    monkeypatch.setattr(partitioned._Worker, "_expand", dying)
    r = search(MODEL, "capi-safe", MODEL.property("single_active_deployment"), budget=60, seed=0,
               out_dir=None, workers=2)
    assert r.verdict == "error" and "exit code -9" in r.message and not r.stats["complete"]
    code = main(["check", "--model", "capi", "--variant", "capi-safe", "--engine", "explore",
                 "--workers", "2", "--bound", "max_deployments=1"])
    out, err = capsys.readouterr()
    assert code == 1
    assert "error: explore worker 2 of 2 stopped without answering (exit code -9)" in out
    assert "Traceback" not in out + err


def test_workers_are_refused_where_searches_cannot_fork(monkeypatch, capsys):
    monkeypatch.setattr(partitioned, "available", lambda: False)
    code = main(["check", "--model", "capi", "--variant", "capi-2022", "--engine", "explore",
                 "--workers", "2"])
    err = capsys.readouterr().err
    assert code == 2 and "--workers needs" in err and err.count("\n") == 1
    with pytest.raises(RuntimeError, match="needs Linux"):
        Partitioned(Tree(8), 2).run(lambda n, d, k: False)
