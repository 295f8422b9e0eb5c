"""The partitioned search (``--workers``) on the models, against one process.

Verdicts, trace lengths, states, transitions and per-action counts are the
one-process search's own answers on the same input; traces replay; the same
command gives the same trace in every process; the command line's options.
"""

from __future__ import annotations

import os
import signal

import attrs
import pytest

from deployspec import partition_worker, partitioned, traces
from deployspec.cli import main
from deployspec.engines.explore import explore_config, search
from deployspec.explorer import bfs
from deployspec.models import get_model
from deployspec.partitioned import Partitioned
from deployspec.replay import replay

from .helpers import Tree, two_active

pytestmark = [
    pytest.mark.skipif(not partitioned.available(), reason="partitioned searches need Linux (fork)"),
    pytest.mark.usefixtures("no_worker_left_behind"),
]

MODEL = get_model("capi")


def small(variant, **kw):
    return attrs.evolve(explore_config(MODEL, MODEL.variant(variant)), **kw)


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


@pytest.mark.parametrize("prop", sorted(MODEL.variant("capi-2022").declares))
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
    if p.kind == "settled":  # the workers' settle memos overlap: their sum covers one process's
        assert many.stats["settle_memo"] >= one.stats["settle_memo"] > 0


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


@pytest.mark.parametrize("variant", ["slots-webhook-tag", "slots-pipeline-immutable"])
def test_the_slots_model_splits_alike(variant):
    slots = get_model("slots")
    # two pushes: the same verdicts as three, a fifth to a tenth of the states (a partition's
    # agreement does not depend on the bounds)
    config = attrs.evolve(explore_config(slots, slots.variant(variant)), max_pushes=2)
    for p in slots.properties:
        one = search(slots, variant, p, budget=60, seed=0, out_dir=None, config=config)
        many = search(slots, variant, p, budget=60, seed=0, out_dir=None, workers=2, config=config)
        assert (many.verdict, many.trace_length) == (one.verdict, one.trace_length)
        if one.verdict == "holds":
            assert (many.stats["states"], many.stats["transitions"]) == \
                (one.stats["states"], one.stats["transitions"])


def test_a_lost_worker_is_an_error_of_the_search_and_check_exits_1(monkeypatch, capsys):
    real = partition_worker.Worker._expand

    def dying(self, depth):
        if self.w == 1 and depth == 2:
            os.kill(os.getpid(), signal.SIGKILL)
        return real(self, depth)

    monkeypatch.setattr(partition_worker.Worker, "_expand", dying)
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
