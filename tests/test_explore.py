"""The exhaustive explorer: shortest traces (checked against a naive enumeration),
bounded proofs, clean stops on budgets, and the saved files."""

from __future__ import annotations

import json
from pathlib import Path

import attrs
import pytest
from deployspec.reference.core import Rejected
from deployspec.spec.core import Step

from deployspec import traces
from deployspec.engines.explore import explore_config, search
from deployspec.explorer import bfs
from deployspec.models import get_model
from deployspec.replay import replay

from .helpers import two_active

MODEL = get_model("capi")
SEEDS = Path(__file__).parent.parent / "counterexamples" / "capi"


def small(variant, **kw):
    return attrs.evolve(explore_config(MODEL, MODEL.variant(variant)), **kw)


def shortest_by_enumeration(variant_name, prop, config, limit):
    """The length of the shortest violating action sequence, by plain
    depth-first enumeration of every sequence up to ``limit`` (no visited set,
    no cleverness): the reference the BFS answer is checked against.
    State and trace properties only."""
    variant = MODEL.variant(variant_name)

    def dfs(state, memory, depth, bound):
        obs = MODEL.observe(state)
        for action in MODEL.candidate_actions(obs, config):
            after = variant.step(state, action)
            rejected = after.reason if isinstance(after, Rejected) else None
            after = state if rejected else after
            step = Step(depth, action.to_json(), action.actor, rejected, obs, MODEL.observe(after))
            new_memory, message = prop.advance(memory, step)
            if message is not None:
                return True
            if depth + 1 < bound and dfs(after, new_memory, depth + 1, bound):
                return True
        return False

    root = MODEL.initial_state(config)
    for bound in range(1, limit + 1):
        if dfs(root, prop.initial, 0, bound):
            return bound
    return None


@pytest.mark.parametrize("prop_name", ["single_active_deployment", "app_stays_available"])
def test_trace_length_is_the_depth_of_the_first_violation(prop_name):
    prop = MODEL.property(prop_name)
    config = small("capi-2022")
    r = search(MODEL, "capi-2022", prop, budget=60, seed=0, out_dir=None, config=config)
    assert r.verdict == "violated"
    assert r.trace_length == r.stats["bfs_depth"] == len(r.trace["steps"])
    assert shortest_by_enumeration("capi-2022", prop, config, r.trace_length) == r.trace_length


def test_bfs_finds_the_shortest_path_to_a_goal():
    variant = MODEL.variant("capi-2022")
    config = small("capi-2022")

    r = bfs(MODEL, variant, config, goal=two_active)
    assert [a.kind for a in r.path] == ["push", "deploy", "cancel", "deploy"]
    assert r.depth == len(r.path) and r.complete
    state = MODEL.initial_state(config)
    for action in r.path:
        state = variant.step(state, action)
    assert state == r.goal_state and two_active(state, MODEL.observe(state))


def test_bfs_exhausts_a_bounded_space_and_counts_every_state():
    variant = MODEL.variant("capi-safe")
    config = small("capi-safe", max_instances=1, max_deployments=1, max_droplets=1)
    r = bfs(MODEL, variant, config, goal=lambda s, o: False)
    assert r.path is None and r.complete and r.stopped is None
    # every state, found again by a plain search that keeps whole states
    seen, todo = {MODEL.initial_state(config)}, [MODEL.initial_state(config)]
    while todo:
        s = todo.pop()
        for a in MODEL.candidate_actions(MODEL.observe(s), config):
            t = variant.step(s, a)
            if not isinstance(t, Rejected) and t not in seen:
                seen.add(t)
                todo.append(t)
    assert r.states == len(seen)


def test_settled_trace_is_the_path_then_the_settle_phase():
    prop = MODEL.property("deployment_converges")
    r = search(MODEL, "capi-2022", prop, budget=60, seed=0, out_dir=None)
    assert r.verdict == "violated"
    t = r.trace
    assert t["settle_from"] == r.stats["bfs_depth"]
    assert r.trace_length == len(t["steps"]) >= t["settle_from"]


def test_explore_is_never_longer_than_the_committed_hypothesis_traces(tmp_path):
    for path in sorted(SEEDS.glob("capi-2022--*.json")):
        found = traces.load(path)
        prop = MODEL.property(found["property"])
        r = search(MODEL, "capi-2022", prop, budget=60, seed=0, out_dir=str(tmp_path))
        assert r.verdict == "violated", prop.name
        assert r.trace_length <= len(found["steps"]), prop.name
        saved = traces.load(r.counterexample)  # an ordinary, valid trace file
        assert saved["engine"] == "explore"
        assert replay(saved).reproduced


def test_bounded_proof_on_the_fixed_design():
    prop = MODEL.property("single_active_deployment")
    config = small("capi-safe", max_instances=1)
    r = search(MODEL, "capi-safe", prop, budget=60, seed=0, out_dir=None, config=config)
    assert r.verdict == "holds" and r.stats["complete"] is True
    assert r.message.startswith(f"holds for all {r.stats['states']:,} states reachable within bounds")
    assert r.stats["states"] == bfs(MODEL, MODEL.variant("capi-safe"), config, goal=lambda s, o: False).states
    assert r.stats["by_action"]["deploy"] > 0 and r.stats["by_action"]["cancel"] > 0
    assert set(r.stats["never_enabled"]) <= set(MODEL.vocabulary)
    assert r.stats["vacuous"] == [] and "vacuous" not in r.message
    json.dumps(r.to_json())  # the stats are JSON


def test_a_proof_in_which_no_deploy_took_effect_says_it_is_vacuous():
    """capi-2022's API refused a deploy with max_in_flight: with only such deploys
    in the bounds, nothing about deployments was checked, and the proof says so."""
    from deployspec.report import matrix

    prop = MODEL.property("single_active_deployment")
    config = small("capi-2022", max_in_flight=(2,))
    r = search(MODEL, "capi-2022", prop, budget=60, seed=0, out_dir=None, config=config)
    assert r.verdict == "holds" and r.stats["vacuous"] == ["deploy"]
    assert r.stats["rejected_by_action"]["deploy"] > 0
    assert r.message.endswith("; vacuous: no deploy ever took effect within these bounds "
                              "(every one was refused or changed nothing); left out by these bounds, tried by the "
                              "random search: max_instances up to 3; max_deployments up to 3; max_droplets up "
                              "to 3; max_in_flight 1 (--bound widens them); off here: push_rolling, "
                              "rollback (--bound NAME=true turns one on)")
    assert r.stats["untried"]["max_in_flight"] == [1]
    table = matrix([r], declared=False)
    assert "holds ?" in table and "? capi-2022 · single_active_deployment: vacuous" in table


@pytest.mark.parametrize("prop_name", ["app_stays_available", "deployment_converges"])  # trace, settled
@pytest.mark.parametrize("bound", [{"max_states": 200}, {"max_depth": 3}])
def test_a_bound_stops_cleanly_and_says_so(bound, prop_name):
    prop = MODEL.property(prop_name)
    r = search(MODEL, "capi-safe", prop, budget=60, seed=0, out_dir=None, **bound)
    assert r.verdict == "holds" and r.stats["complete"] is False
    assert r.stats["stopped"] == next(iter(bound))
    if "max_states" in bound:
        assert r.stats["states"] == bound["max_states"]
    else:
        assert r.stats["depth"] == bound["max_depth"]
    assert "incomplete" in r.message and "no violation within" in r.message


def test_a_time_budget_stops_cleanly():
    prop = MODEL.property("cancel_restores_last_good")
    r = search(MODEL, "capi-safe", prop, budget=0.05, seed=0, out_dir=None)
    assert r.stats["complete"] is False and r.stats["stopped"] == "time"
    assert "time budget" in r.message


def test_check_command_with_explore_exits_1_on_the_historic_design(capsys, tmp_path):
    from deployspec.cli import main

    status = main(["check", "--model", "capi", "--variant", "capi-2022", "--engine", "explore",
                   "--out", str(tmp_path), "--json"])
    results = json.loads(capsys.readouterr().out)["results"]
    assert status == 1
    # every property capi-2022 declares violated, each saved; the three it keeps proved
    violated = [r for r in results if r["verdict"] == "violated"]
    assert {r["property"] for r in violated} == set(MODEL.variant("capi-2022").declares)
    assert [r["property"] for r in results if r["verdict"] != "violated"] == ["deployment_ships_its_droplet",
                                                                             "canary_pauses_at_every_step",
                                                                             "cancel_accepted_in_flight"]
    assert all(r["stats"]["states"] > 0 and "by_action" in r["stats"] for r in results)
    assert len(list(tmp_path.glob("*.json"))) == len(violated)


def test_a_memory_budget_stops_cleanly():
    prop = MODEL.property("single_active_deployment")
    r = search(MODEL, "capi-safe", prop, budget=60, seed=0, out_dir=None, memory_budget_mb=1)
    assert r.verdict == "holds" and r.stats["complete"] is False and r.stats["stopped"] == "memory"
    assert "memory budget" in r.message


def test_an_incomplete_proof_is_marked_in_the_matrix(capsys):
    from deployspec.cli import main

    status = main(["check", "--model", "capi", "--variant", "capi-safe", "--engine", "explore",
                   "--budget", "0.02"])
    out = capsys.readouterr().out
    assert status == 0
    assert "holds*" in out and "* incomplete" in out and "(incomplete: time budget spent" in out


def test_the_slots_model_explores_without_code_of_its_own(tmp_path):
    slots = get_model("slots")
    for prop in slots.properties:
        r = search(slots, "slots-pipeline-immutable", prop, budget=60, seed=0, out_dir=None)
        assert r.verdict == "holds" and r.stats["complete"], prop.name
    for path in sorted((SEEDS.parent / "slots").glob("slots-webhook-tag--*.json")):
        found = traces.load(path)
        r = search(slots, "slots-webhook-tag", slots.property(found["property"]), budget=60, seed=0,
                   out_dir=str(tmp_path))
        assert r.verdict == "violated" and r.trace_length <= len(found["steps"]), found["property"]
        assert replay(traces.load(r.counterexample)).reproduced


def test_a_trace_that_does_not_replay_is_an_error_not_a_crash(monkeypatch):
    from deployspec import session

    real = session.Session.perform
    calls = {"n": 0}

    def forgetful(self, action):  # the implementation "forgets" every other action
        calls["n"] += 1
        return None if calls["n"] % 2 else real(self, action)

    monkeypatch.setattr(session.Session, "perform", forgetful)
    r = search(MODEL, "capi-2022", MODEL.property("single_active_deployment"), budget=60, seed=0,
               out_dir=None)
    assert r.verdict == "error" and "does not match the search" in r.message


def test_a_model_canonical_form_collapses_states_before_fingerprinting():
    variant = MODEL.variant("capi-safe")
    config = small("capi-safe", max_instances=1, max_deployments=1)
    plain = bfs(MODEL, variant, config, goal=lambda s, o: False)
    same = bfs(attrs.evolve(MODEL, canonical=lambda s: s), variant, config, goal=lambda s, o: False)
    assert same.states == plain.states
    # forgetting which droplets are healthy merges states (unsound, but shows the hook is used)
    blind = attrs.evolve(MODEL, canonical=lambda s: attrs.evolve(s, droplets=tuple(True for _ in s.droplets)))
    assert bfs(blind, variant, config, goal=lambda s, o: False).states < plain.states


@pytest.mark.parametrize("bound", ["max_widgets=2", "max_instances=\"x\"", "max_deployments", "max_depth=[1"])
def test_bad_bounds_are_usage_errors(capsys, bound):
    from deployspec.cli import main

    status = main(["check", "--model", "capi", "--variant", "capi-safe", "--engine", "explore",
                   "--bound", bound])
    err = capsys.readouterr().err
    assert status == 2 and err.count("\n") == 1 and "bound" in err


def test_bounds_reach_the_search_and_the_trace_file(capsys, tmp_path):
    from deployspec.cli import main

    status = main(["check", "--model", "capi", "--variant", "capi-2022", "--engine", "explore",
                   "--bound", "max_depth=4", "--bound", "max_instances=1", "--json", "--out", str(tmp_path)])
    results = json.loads(capsys.readouterr().out)["results"]
    assert status == 1
    by_prop = {r["property"]: r for r in results}
    assert by_prop["single_active_deployment"]["verdict"] == "violated"  # 4 steps: within the bound
    assert by_prop["cancel_restores_last_good"]["stats"]["complete"] is False  # needs 7
    assert all(r["stats"]["bounds"]["max_instances"] == 1 for r in results)
    saved = traces.load(by_prop["single_active_deployment"]["counterexample"])
    assert saved["config"]["max_depth"] == 4 and replay(saved).reproduced


@pytest.mark.parametrize("settle_steps", [80, 3])
def test_the_settler_settles_every_state_as_the_replaying_session_does(settle_steps):
    """The explorer's settle phase (``Settler``, memoised) and the one a trace file
    replays (``Session.settle``) end after the same steps with the same verdict, from
    every reachable state: nothing to do, an idle tick, the settle bound (at 3) included."""
    from deployspec.adapter import ReferenceAdapter
    from deployspec.engines.product import Settler
    from deployspec.session import Session

    variant = MODEL.variant("capi-2022")
    config = small("capi-2022", max_instances=1, settle_steps=settle_steps)
    prop = MODEL.property("deployment_converges")
    states = []
    bfs(MODEL, variant, config, goal=lambda s, o: states.append(s))
    settler = Settler(MODEL, variant, config, prop)
    ends = set()
    for state in states:
        message, steps = settler.outcome(state)
        session = Session(MODEL, ReferenceAdapter(MODEL, variant), (prop,), config)
        session.adapter.state = state  # the session starts from this state
        session.obs = session.initial = MODEL.observe(state)
        v = session.settle()
        assert (len(session.steps), v is None) == (steps, message is None)
        assert v is None or v.message.startswith(message)  # the session's may say the bound cut it
        ends.add(_how_the_settle_phase_ended(session, v))
    assert ends >= {"nothing to do", "idle tick", "finished"} | ({"bound"} if settle_steps == 3 else set())


def _how_the_settle_phase_ended(session, violation) -> str:
    if not session.steps:
        return "nothing to do"
    if violation is not None and "the settle phase was cut" in violation.message:
        return "bound"
    observations = [session.initial] + [s["observation"] for s in session.steps]
    if session.steps[-1]["action"]["type"] == "tick" and observations[-1] == observations[-2]:
        return "idle tick"
    return "finished"


def test_of_equally_short_settled_violations_the_first_found_is_kept():
    """A settled violation's length is its depth plus the settle phase's steps, and many
    tie: the first state found keeps it (a later one must be strictly shorter), so the
    explorer gives today the committed trace it gave then, step for step."""
    committed = traces.load(Path(__file__).parent.parent / "counterexamples" / "capi"
                            / "capi-current--deployment_converges--0b0551e922.json")
    assert committed["engine"] == "explore"
    r = search(MODEL, "capi-current", MODEL.property("deployment_converges"), budget=120, seed=0, out_dir=None)
    assert [s["action"] for s in r.trace["steps"]] == [s["action"] for s in committed["steps"]]


def test_a_proof_says_what_the_random_search_tries_that_its_bounds_leave_out():
    """A soundness review's capi-safe whose ``continue`` skipped a multi-step canary's
    remaining steps was proved by the explorer (its plans: [] and [100]) and found by the
    random search: the proof now names the plans, counts and limits it did not try."""
    prop = MODEL.property("canary_pauses_at_every_step")
    r = search(MODEL, "capi-safe", prop, budget=120, seed=0, out_dir=None)
    assert r.verdict == "holds"
    assert r.stats["untried"] == {"max_instances": 3, "max_deployments": 3, "max_droplets": 3, "max_in_flight": [2],
                                  "web_instances": [1, 3], "canary_plans": [[50], [50, 100]]}
    assert r.message.endswith("; left out by these bounds, tried by the random search: max_instances up to 3; "
                              "max_deployments up to 3; max_droplets up to 3; max_in_flight 2; web_instances 1, 3; "
                              "canary_plans [50], [50, 100] (--bound widens them); off here: "
                              "snapshot_window, push_rolling, rollback (--bound NAME=true turns one on)")
    # (finish_window opens nothing on a design that finishes inside the commit, capi-safe: left unsaid)
    assert r.stats["off"] == ["snapshot_window", "push_rolling", "rollback"]
    widened = attrs.evolve(explore_config(MODEL, MODEL.variant("capi-safe")), max_in_flight=(1, 2))
    r = search(MODEL, "capi-safe", prop, budget=120, seed=0, out_dir=None, config=widened, max_states=10)
    assert "max_in_flight" not in r.stats["untried"] and "web_instances 1, 3" in r.message
    on = attrs.evolve(widened, push_rolling=True, rollback=True)
    r = search(MODEL, "capi-safe", prop, budget=120, seed=0, out_dir=None, config=on, max_states=10)
    assert r.stats["off"] == ["snapshot_window"]
    r = search(MODEL, "capi-current", prop, budget=120, seed=0, out_dir=None, config=on, max_states=10)
    # (it finishes after the commit: the window is named, among what its own random search tries)
    assert r.stats["off"] == ["snapshot_window"] and r.stats["untried"]["finish_window"] is True


def test_a_proof_names_only_switches_that_open_behaviour_and_each_once():
    """slots' ci_sticky is a choice of configuration, not behaviour a search leaves out; a
    switch the random search turns on is said among the untried, not again as off."""
    slots = get_model("slots")
    r = search(slots, "slots-pipeline-immutable", slots.property("slot_runs_one_version"), budget=60, seed=0,
               out_dir=None, max_states=10)
    assert r.stats["off"] == [] and "off here" not in r.message
    r = search(MODEL, "capi-2022", MODEL.property("single_active_deployment"), budget=60, seed=0, out_dir=None,
               config=small("capi-2022", snapshot_window=False), max_states=10)
    assert r.stats["untried"]["snapshot_window"] is True and "snapshot_window" not in r.stats["off"]
