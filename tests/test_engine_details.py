"""Details of the engines' results and of trace files that a bug would get wrong quietly.

Each test pins something a user sees, found missing by mutation testing of the
engines (``deployspec/engines``), ``minimize``, ``traces`` and the Z3 encoding
(``spec/selection``): the cause a trace file records, what a saved file holds
and which file a save keeps, how far shortening by replay goes, a search's
verdict, trace length and stats.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from types import SimpleNamespace

import attrs
import pytest
import z3
from deployspec.reference.capi.actions import Cancel, Deploy, Push, Runtime, Tick
from deployspec.spec import selection as sel
from deployspec.spec.core import Breach, Violation, settled_property, state_property
from deployspec.stateful_tests.machine import PropertyViolated

from deployspec import traces
from deployspec.adapter import ReferenceAdapter
from deployspec.engines import explore, hypothesis_engine, z3_engine
from deployspec.minimize import minimize
from deployspec.models import UsageError, get_model
from deployspec.replay import ReplayOutcome, replay
from deployspec.scenario import record
from deployspec.session import Session

from .toy import Move, Run, ToyConfig, toy_model

CAPI = get_model("capi")
SEED = Path(__file__).parent.parent / "counterexamples" / "capi" / "capi-2022--app_stays_available--a940739cf1.json"
SEED_STORY = [Push(1), Runtime(0), Deploy(), Cancel(), Deploy(), Tick()]


def seed_trace() -> dict:
    prop = CAPI.property("app_stays_available")
    config = CAPI.default_config(CAPI.variant("capi-2022"))
    return record(CAPI, "capi-2022", config, prop, SEED_STORY, title="the seed")


# --- trace files ------------------------------------------------------------------------


def test_a_saved_trace_records_how_the_property_broke(tmp_path):
    # replay and shortening hold a file to its cause: a trace built without it would be
    # judged by property alone, and a shorter trace breaking it another way would pass
    trace = seed_trace()
    assert trace["violation"] == {"step": 5, "message": "no routable web instance left after step 5 (tick())",
                                  "cause": "cancel-keeps-unstarted"}
    assert traces.load(traces.save(trace, tmp_path))["violation"]["cause"] == "cancel-keeps-unstarted"


def test_a_settled_trace_records_where_the_platform_was_left_to_settle(tmp_path):
    # capi-2022's second cancel keeps the canceled deployment's process: 6 user actions,
    # then 2 steps of the platform settling; replay --variant settles the target from step 6
    prop = CAPI.property("deployment_converges")
    config = CAPI.default_config(CAPI.variant("capi-2022"))
    story = [Push(1), Deploy(), Cancel(), Deploy(), Cancel(), Tick()]
    trace = record(CAPI, "capi-2022", config, prop, story, title="two cancels")
    assert trace["settle_from"] == 6 and len(trace["steps"]) > 6
    assert traces.load(traces.save(trace, tmp_path))["settle_from"] == 6


@pytest.mark.parametrize("same", [True, False], ids=["same-finding", "another-trace"])
def test_a_name_taken_while_saving_keeps_a_same_finding_and_refuses_another(tmp_path, monkeypatch, same):
    # between the check and the hard link another process saved a file under that name:
    # the same finding is kept as the result; another trace there is an error, never
    # reported as this finding's file
    trace = seed_trace()
    there = trace if same else dict(trace, steps=trace["steps"][:-1])
    link = os.link

    def racing(src, dst):
        Path(dst).write_text(json.dumps(there))
        return link(src, dst)

    monkeypatch.setattr(os, "link", racing)
    final = tmp_path / f"capi-2022--app_stays_available--{traces.fingerprint(trace)}.json"
    if same:
        assert traces.save(trace, tmp_path) == final
    else:
        with pytest.raises(UsageError, match="the name was taken meanwhile"):
            traces.save(trace, tmp_path)
    assert json.loads(final.read_text()) == there
    assert [p.name for p in tmp_path.iterdir()] == [final.name]


def test_keep_without_a_folder_saves_nothing(tmp_path, monkeypatch):
    # an empty --out is no folder: nothing is written (not into the current folder)
    monkeypatch.chdir(tmp_path)
    assert traces.keep(seed_trace(), "") == (None, None)
    assert traces.keep(seed_trace(), None) == (None, None)
    assert list(tmp_path.iterdir()) == []


def test_settle_from_may_be_the_trace_s_length_not_beyond(tmp_path):
    # settle_from == len(steps): the platform had nothing left to do after the last action
    trace = seed_trace()
    n = len(trace["steps"])
    ok = tmp_path / "ok.json"
    ok.write_text(json.dumps(dict(trace, settle_from=n)))
    assert traces.load(ok)["settle_from"] == n
    beyond = tmp_path / "beyond.json"
    beyond.write_text(json.dumps(dict(trace, settle_from=n + 1)))
    with pytest.raises(UsageError, match=f"settle_from {n + 1} is beyond the trace's {n} step"):
        traces.load(beyond)


@pytest.mark.parametrize("occupant", ["{}", "[1, 2]", '{"model": "capi", "variant": "v", "property": "p", "steps": [1]}'])
def test_json_that_is_no_trace_under_the_name_is_replaced(tmp_path, occupant):
    # readable JSON but not a trace (no fingerprint): like a truncated file, it is replaced
    trace = seed_trace()
    final = tmp_path / f"capi-2022--app_stays_available--{traces.fingerprint(trace)}.json"
    final.write_text(occupant)
    assert traces.save(trace, tmp_path) == final
    assert traces.load(final)["steps"] == json.loads(json.dumps(trace["steps"]))


# --- shortening by replay -----------------------------------------------------------------


def test_shortening_keeps_the_cause_when_a_shorter_trace_breaks_the_property_another_way():
    # dropping the 4th action of this trace still breaks app_stays_available, but as the seed
    # does (cancel-keeps-unstarted): not the finding this file records
    trace = traces.load(SEED.parent / "capi-current--app_stays_available--310652b449.json")
    smaller = minimize(trace)
    assert smaller["violation"]["cause"] == "cancel-restarts-from-zero"
    assert replay(smaller).violation.cause == "cancel-restarts-from-zero"
    assert len(smaller["steps"]) == len(trace["steps"])


def _by_rule(reproduces, cause="it"):
    """A stand-in for replay: a candidate reproduces when ``reproduces(labels)`` says so;
    the candidates it was given are in its ``.seen``."""
    def replay_on(candidate):
        labels = [s["action"]["label"] for s in candidate["steps"]]
        replay_on.seen.append((labels, candidate["settle_from"]))
        steps = [{"action": s["action"], "rejected": None, "observation": {}} for s in candidate["steps"]]
        ok = reproduces(labels)
        v = Violation("p", len(steps) - 1, "broken", cause) if ok else None
        session = SimpleNamespace(violation=v, settle_from=len(steps), initial={}, steps=steps)
        return ReplayOutcome("toy", "p", v, session)

    replay_on.seen = []
    return replay_on


def _toy_trace(*labels, settle_from=None, extra=None):
    trace = {"model": "toy", "variant": "toy", "config": {}, "property": "p", "engine": "hypothesis",
             "seed": 0, "violation": {"step": len(labels) - 1, "message": "broken", "cause": "it"},
             "settle_from": settle_from, "initial": {},
             "steps": [{"action": {"type": "move", "label": x}, "rejected": None, "observation": {}}
                       for x in labels]}
    return trace | ({"extra": extra} if extra else {})


def _labels(trace):
    return [s["action"]["label"] for s in trace["steps"]]


def _labels_or_kind(trace):
    return [s["action"].get("label", s["action"]["type"]) for s in trace["steps"]]


def test_shortening_removes_a_pair_that_only_goes_together():
    # the x's must come in pairs: no single step can go, the pair can
    smaller = minimize(_toy_trace("k", "x", "x"), _by_rule(lambda ls: "k" in ls and ls.count("x") % 2 == 0))
    assert _labels(smaller) == ["k"] and smaller["extra"]["minimized_by_replay"] is True


def test_shortening_tries_the_last_step_too():
    smaller = minimize(_toy_trace("k", "z"), _by_rule(lambda ls: "k" in ls))
    assert _labels(smaller) == ["k"]


def test_shortening_goes_round_again_after_a_pair_went():
    # y can go only once the x's are gone, which takes the pass over pairs: a second round
    rule = lambda ls: "k" in ls and ls.count("x") % 2 == 0 and ("y" in ls or "x" not in ls)
    smaller = minimize(_toy_trace("k", "y", "x", "x"), _by_rule(rule))
    assert _labels(smaller) == ["k"]


def test_shortening_replays_only_the_user_actions_and_settles_after_them():
    # steps from settle_from on are the platform settling: never replayed as user actions
    replay_on = _by_rule(lambda ls: "k" in ls)
    smaller = minimize(_toy_trace("k", "z", "tick1", "tick2", settle_from=2), replay_on)
    assert _labels(smaller) == ["k"]
    assert replay_on.seen[0] == (["k", "z"], 2)
    assert all("tick1" not in labels and settle == len(labels) for labels, settle in replay_on.seen)


def test_shortening_keeps_what_the_trace_carried_under_extra():
    # a contract trace names its implementation there; shortening adds to it, drops nothing
    implementation = {"exec": "./impl", "name": "mine"}
    smaller = minimize(_toy_trace("k", "z", extra={"implementation": implementation}), _by_rule(lambda ls: "k" in ls))
    assert smaller["extra"] == {"implementation": implementation, "minimized_by_replay": True}


# --- the exhaustive engine ------------------------------------------------------------------


@settled_property("toy")
def rests_well(obs):
    """Stuck nodes break it; the part of the name after ``stuck-`` is the cause."""
    at = obs["at"]
    return Breach(at.split("-")[1], f"settled at {at}") if at.startswith("stuck-") else None


def _explore(moves, settle, prop, **kw):
    model, config = toy_model(moves, settle)
    return explore.search(model, "toy", prop, budget=60, seed=0, out_dir=None, config=config, **kw)


def test_of_equally_short_settled_traces_the_first_found_is_kept():
    # a and b each lead to a node the platform takes to a stuck one in 1 step: 2 in all
    # either way; the search keeps the first (a), as a partitioned one does on a tie
    r = _explore({"start": [(Move("a"), "x"), (Move("b"), "y")]},
                 {"x": (Run(), "stuck-one"), "y": (Run(), "stuck-two")}, rests_well)
    assert r.verdict == "violated" and r.trace_length == 2
    assert _labels_or_kind(r.trace) == ["a", "run"] and r.cause == "one"


def test_a_settled_search_passes_over_a_cause_already_found():
    # the shortest settled trace breaks it the `one` way (2 steps); with `one` skipped,
    # the trace reported is the 3-step one breaking it the `two` way
    moves = {"start": [(Move("a"), "x"), (Move("b"), "y")], "y": [(Move("c"), "z")]}
    settle = {"x": (Run(), "stuck-one"), "z": (Run(), "stuck-two")}
    assert _explore(moves, settle, rests_well).cause == "one"
    r = _explore(moves, settle, rests_well, skip_causes=frozenset({"one"}))
    assert r.verdict == "violated" and r.cause == "two" and r.trace["violation"]["cause"] == "two"
    assert _labels_or_kind(r.trace) == ["b", "c", "run"]


@pytest.mark.parametrize("workers", [1, 2])
def test_a_settled_trace_found_deeper_but_no_shorter_does_not_replace_the_first(workers):
    # a's node settles in 2 steps (3 in all, found in layer 1); c's, in layer 2, in 1 step
    # (3 in all too): the search looks at layer 2 for a shorter one, and keeps a's on the tie,
    # in one process as over two (whichever worker owns which node: several names)
    for k in range(4):
        moves = {"start": [(Move("a"), f"x{k}"), (Move("b"), "y")], "y": [(Move("c"), f"w{k}")]}
        settle = {f"x{k}": (Run(), "mid"), "mid": (Run(), "stuck-one"), f"w{k}": (Run(), "stuck-two")}
        r = _explore(moves, settle, rests_well, workers=workers)
        assert r.verdict == "violated" and r.cause == "one", k
        assert _labels_or_kind(r.trace) == ["a", "run", "run"]


def test_a_replay_that_settles_in_more_steps_than_the_search_saw_is_an_error(monkeypatch):
    # a non-deterministic platform: the search saw x settle at once, the replay takes a detour.
    # The file would not be the shortest trace the search vouches for: an error, not a finding
    model, config = toy_model({"start": [(Move("a"), "x")]}, {"x": (Run(), "stuck-one"), "mid": (Run(), "stuck-one")})
    variant = model.variant("toy")
    real, calls = type(variant).step, []

    def step(self, state, action):
        if state == "x":
            calls.append(state)
            return "stuck-one" if len(calls) == 1 else "mid"
        return real(self, state, action)

    monkeypatch.setattr(type(variant), "step", step)
    r = explore.search(model, "toy", rests_well, budget=60, seed=0, out_dir=None, config=config)
    assert r.verdict == "error" and r.trace is None
    assert "does not match the search" in r.message and "3 steps, expected 2" in r.message


# --- the Z3 engine's confirming search --------------------------------------------------------


def test_the_cancel_dispatch_fails_only_steps_of_other_active_deployments():
    # capi-pr3072's dead interim: d0 (DEPLOYED/SUPERSEDED) has no step left to fail, so the
    # dispatch that runs d1's cancel step is a plain tick in the trace
    r = z3_engine.search(CAPI, "capi-pr3072", CAPI.property("app_stays_available"), budget=10, seed=0,
                         out_dir=None)
    assert r.verdict == "violated"
    cancel = r.trace["extra"]["selection"]["cancel_step"]
    action = r.trace["steps"][cancel]["action"]
    assert action["type"] == "tick" and action["failed"] == [] and action["reports_unavailable"] == []


def test_the_confirming_search_allows_as_many_deployments_as_the_view_has():
    # the view fixes the number of deployments: the search (and the trace's config) allow no more
    r = z3_engine.search(CAPI, "capi-2022", CAPI.property("app_stays_available"), budget=10, seed=0,
                         out_dir=None)
    assert r.verdict == "violated" and r.stats["counterexample"]["deployments"] == 2
    assert r.trace["config"]["max_deployments"] == 2 and r.trace["config"]["max_instances"] == 1
    assert r.trace["extra"]["selection"]["search"]["config"] == r.trace["config"]


def test_the_confirming_trace_reaches_a_view_equivalent_to_the_symbolic_one():
    # the trace confirms the symbolic counterexample only if its cancel step saw the same
    # owners, deployment states, canceled deployment, reports and running processes
    def shape(view):
        return ([(p["created_by"], p["running"] > 0, p["crashed"] > 0) for p in view["processes"]],
                view["deployments"], view["canceled"], view["reports_available"])

    for variant, prop in (("capi-2022", "deployment_converges"), ("capi-pr3072", "app_stays_available")):
        r = z3_engine.search(CAPI, variant, CAPI.property(prop), budget=10, seed=0, out_dir=None)
        assert r.verdict == "violated", variant
        selection = r.trace["extra"]["selection"]
        assert shape(selection["reached"]) == shape(selection["view"]), variant


@state_property("capi")
def no_app_at_all(obs):
    """Breaks as soon as an app exists: at the push, long before any cancel step."""
    return "there is an app" if obs["app"] is not None else None


def test_a_trace_that_breaks_the_property_before_the_cancel_step_confirms_nothing():
    # every state showing the seed's view breaks no_app_at_all from its start, but each
    # trace reaching one broke it at the push already: the cancel step is not the cause
    variant, encoding = CAPI.variant("capi-2022"), sel.VARIANTS["capi-2022"]
    rule = z3_engine.problem(encoding, 8, 7, sel.traits(variant, encoding))
    view = rule.minimal(sel.selection_property("survivor_not_newer"))
    outcome = z3_engine.confirm(CAPI, variant, view, no_app_at_all, budget=30, max_depth=5)
    assert outcome.session is None
    assert "did not break no_app_at_all given their history" in outcome.why


@pytest.mark.parametrize("own, explore_bounds, expected", [
    ({}, {}, 3),                                    # the model's exploration bound
    ({"settle_steps": 7}, {}, 7),                   # a variant's own setting wins over it
    ({"settle_steps": 7}, {"settle_steps": 5}, 5),  # and its own exploration bound over both
])
def test_explore_config_layers_the_model_s_bounds_the_variant_s_config_and_its_explore(
        monkeypatch, own, explore_bounds, expected):
    monkeypatch.setattr(ToyConfig, "EXPLORE", {"settle_steps": 3}, raising=False)
    model, _ = toy_model({"start": []})
    variant = attrs.evolve(model.variant("toy"), config=own, explore=explore_bounds)
    assert explore.explore_config(model, variant).settle_steps == expected


# --- the Hypothesis engine ----------------------------------------------------------------------


def test_a_random_search_runs_and_records_the_variant_s_own_configuration():
    # capi-2022's configuration opens the dispatcher's snapshot window: the search uses it,
    # and the trace says so (replay runs under the trace's config)
    r = hypothesis_engine.check_property(CAPI, "capi-2022", CAPI.property("single_active_deployment"),
                                         max_examples=100, seed=0)
    assert r.verdict == "violated"
    assert r.trace["config"] == CAPI.default_config(CAPI.variant("capi-2022")).to_json()
    assert r.trace["config"]["snapshot_window"] is True
    assert r.trace_length == len(r.trace["steps"]) and replay(r.trace).reproduced
    assert r.trace["extra"]["minimized_by_replay"] is True  # shortened by replay on the reference


@state_property("toy")
def never_bad(obs):
    """Nodes named bad... break it."""
    return f"at {obs['at']}" if obs["at"].startswith("bad") else None


def test_a_state_property_s_search_stops_at_the_first_violation():
    # a and b both lead to a bad node: the trace is a's, the first found, and b's node is
    # never judged (the search stops there)
    r = _explore({"start": [(Move("a"), "bad1"), (Move("b"), "bad2")]}, {}, never_bad)
    assert r.verdict == "violated" and r.trace_length == 1 and r.stats["bfs_depth"] == 1
    assert _labels_or_kind(r.trace) == ["a"] and r.message == "at bad1"


def test_of_the_violations_seen_the_shortest_is_remembered():
    # what a search that cannot finish (an implementation's fault, non-determinism) keeps
    prop = CAPI.property("app_stays_available")
    config = CAPI.default_config(CAPI.variant("capi-2022"))

    def violated(story):
        session = Session(CAPI, ReferenceAdapter(CAPI, CAPI.variant("capi-2022")), (prop,), config)
        for action in story:
            session.perform(action)
        return PropertyViolated(session.violation, session)

    longer, shortest = violated([Push(1), Tick(), *SEED_STORY[1:]]), violated(SEED_STORY)
    seen = {}
    for exc in (longer, shortest, longer):
        with pytest.raises(PropertyViolated), hypothesis_engine._remembered(seen):
            raise exc
    assert seen["violation"] is shortest and len(shortest.session.steps) == 6


def test_a_search_on_an_implementation_shortens_with_what_it_is_given():
    # on an implementation (an adapter factory) the caller's shrink replaces minimize
    variant = CAPI.variant("capi-2022")
    shrunk = []

    def shrink(trace):
        shrunk.append(trace)
        return dict(trace, title="shrunk by the caller")

    r = hypothesis_engine.check_property(CAPI, "capi-2022", CAPI.property("single_active_deployment"),
                                         config=CAPI.default_config(variant), max_examples=100, seed=0,
                                         adapter_factory=lambda: ReferenceAdapter(CAPI, variant), shrink=shrink)
    assert r.verdict == "violated" and len(shrunk) == 1
    assert r.trace["title"] == "shrunk by the caller" and "minimized_by_replay" not in r.trace.get("extra", {})


def test_capi_safe_s_proof_covers_states_with_crashed_instances_and_the_others_do_not_need_to():
    # only capi-safe's rule reads CRASHED counts, so only its proof ranges over them
    for name, crashes in (("capi-safe", z3.sat), ("capi-pr3084", z3.unsat)):
        variant, encoding = CAPI.variant(name), sel.VARIANTS[name]
        rule = z3_engine.problem(encoding, 8, 7, sel.traits(variant, encoding))
        solver = z3.Solver()
        solver.add(rule.base + [rule.s.crashed[0] > 0])
        assert solver.check() == crashes, name


def test_a_random_search_saves_its_counterexample_under_out(tmp_path):
    r = hypothesis_engine.check_property(CAPI, "capi-2022", CAPI.property("single_active_deployment"),
                                         max_examples=100, seed=0, out_dir=str(tmp_path))
    assert r.verdict == "violated" and r.unsaved is None
    assert r.counterexample is not None and Path(r.counterexample).parent == tmp_path
    assert traces.load(r.counterexample)["steps"] == json.loads(json.dumps(r.trace["steps"]))


def test_keeping_the_canceled_deployment_s_own_process_while_another_serves_is_newer():
    # P0 pushed and running, P1 of d0 (canceled) running: keeping P1 breaks survivor_not_newer
    view = sel.SelectionView(owners=(-1, 0), desired=(1, 1), running=(1, 1),
                             deployments=(("CANCELING", "CANCELING"),), canceled=0, reports=True)
    s = sel.Symbolic(2, 1)
    assert s.evaluate(sel._survivor_not_newer(s, z3.IntVal(1)), view) is False
    assert s.evaluate(sel._survivor_not_newer(s, z3.IntVal(0)), view) is True


def test_the_canceled_deployment_s_own_process_is_no_candidate_and_no_exception_without_a_crash():
    # P0 pushed, still starting (no crash); P1 of d0 (canceled) running
    view = sel.SelectionView(owners=(-1, 0), desired=(1, 1), running=(0, 1),
                             deployments=(("CANCELING", "CANCELING"),), canceled=0, reports=True)
    s = sel.Symbolic(2, 1)
    # nothing that may rightly survive runs, so keeping the oldest is what survivor_runs asks
    assert s.evaluate(sel._survivor_runs(s, z3.IntVal(0)), view) is True
    # the oldest does not crash: keeping the canceled deployment's own process is not allowed
    assert s.evaluate(sel._survivor_not_newer(s, z3.IntVal(1)), view) is False


def test_once_a_newer_deployment_replaced_the_canceled_process_keeping_it_is_not_newer():
    # d0 (canceled) lost its process to d1's scale step earlier in the dispatch: nothing to undo
    view = sel.SelectionView(owners=(-1, 1), desired=(0, 1), running=(0, 1),
                             deployments=(("CANCELING", "CANCELING"), ("DEPLOYING", "DEPLOYING")),
                             canceled=0, reports=True)
    s = sel.Symbolic(2, 2)
    assert s.evaluate(sel._survivor_not_newer(s, z3.IntVal(1)), view) is True


def test_views_that_differ_in_which_process_runs_are_not_the_same_class():
    # the Z3 engine excludes a refuted view's class: one that differs in what runs is another try
    one = sel.SelectionView(owners=(-1, 0), desired=(1, 1), running=(1, 0),
                            deployments=(("CANCELING", "CANCELING"),), canceled=0, reports=True)
    other = attrs.evolve(one, running=(0, 1))
    s = sel.Symbolic(2, 1)
    assert s.evaluate(s.same_class(one), one) is True and s.evaluate(s.same_class(one), other) is False


def test_no_view_in_a_z3_problem_runs_more_instances_than_it_wants():
    variant, encoding = CAPI.variant("capi-safe"), sel.VARIANTS["capi-safe"]
    rule = z3_engine.problem(encoding, 8, 7, sel.traits(variant, encoding))
    solver = z3.Solver()
    solver.add(rule.base + [rule.s.running[0] + rule.s.crashed[0] > rule.s.desired[0]])
    assert solver.check() == z3.unsat


def _wellformed_at(view, family, N=None, M=None):
    """Each well-formedness constraint of a design of ``family`` (every other trait
    present) on ``view``, with bounds as tight as the view (unless given)."""
    s = sel.Symbolic(N or view.n, M or view.m)
    traits = frozenset({family, sel.DESTROYS_AT_END, sel.FINALIZE_WHOLE, sel.SNAPSHOT_CLOSED})
    return {c.name: s.evaluate(c.build(s), view) for c in sel.WELLFORMED if c.needs <= traits}


def test_a_cancel_step_runs_for_a_canceling_canceling_deployment_only():
    view = sel.SelectionView(owners=(-1, 0), desired=(1, 1), running=(1, 0),
                             deployments=(("CANCELING", "CANCELING"),), canceled=0, reports=True)
    assert all(_wellformed_at(view, sel.ONE_ACTIVE).values())
    other = attrs.evolve(view, deployments=(("CANCELING", "SUPERSEDED"),))
    assert _wellformed_at(other, sel.ONE_ACTIVE)["canceled_is_canceling"] is False


def test_a_finalize_by_the_last_deployment_slot_wipes_the_pushed_process():
    # capi-2022: d0 canceled, then d1 deployed and finalized, destroying P0 and d0's process
    view = sel.SelectionView(owners=(1,), desired=(1,), running=(1,),
                             deployments=(("CANCELING", "CANCELING"), ("DEPLOYED", "DEPLOYED")),
                             canceled=0, reports=True)
    assert all(_wellformed_at(view, sel.TWO_ACTIVE).values())


def test_canceled_superseded_is_written_from_pr_3072_on_only():
    # d0 was canceled and then superseded by d1, now canceled itself
    view = sel.SelectionView(owners=(-1, 1), desired=(1, 1), running=(1, 0),
                             deployments=(("CANCELED", "SUPERSEDED"), ("CANCELING", "CANCELING")),
                             canceled=1, reports=True)
    assert all(_wellformed_at(view, sel.ONE_ACTIVE).values())
    assert _wellformed_at(view, sel.TWO_ACTIVE)["statuses_before_3072"] is False


def test_the_canceled_process_is_gone_only_after_a_running_replacement_took_the_last_instance():
    # capi-2022: d1's scale step, earlier in the dispatch, took the last instance of d0's process
    replaced = sel.SelectionView(owners=(-1, 1), desired=(0, 1), running=(0, 1),
                                 deployments=(("CANCELING", "CANCELING"), ("DEPLOYING", "DEPLOYING")),
                                 canceled=0, reports=True)
    assert all(_wellformed_at(replaced, sel.TWO_ACTIVE).values())
    # the step moves an instance only when the deploying process's instances all run
    not_running = attrs.evolve(replaced, running=(0, 0))
    assert _wellformed_at(not_running, sel.TWO_ACTIVE)["canceled_process_gone_only_if_replaced"] is False
    # and the canceled process was then the oldest with instances: P0 wants none
    older_wants_one = attrs.evolve(replaced, desired=(1, 1))
    assert _wellformed_at(older_wants_one, sel.TWO_ACTIVE)["canceled_process_gone_only_if_replaced"] is False


def test_from_pr_3072_on_no_other_deployment_is_still_deploying():
    view = sel.SelectionView(owners=(-1, 0, 1), desired=(1, 1, 1), running=(1, 0, 0),
                             deployments=(("DEPLOYED", "SUPERSEDED"), ("CANCELING", "CANCELING")),
                             canceled=1, reports=True)
    assert all(_wellformed_at(view, sel.ONE_ACTIVE).values())
    deploying = attrs.evolve(view, deployments=(("DEPLOYING", "DEPLOYING"), ("CANCELING", "CANCELING")))
    assert _wellformed_at(deploying, sel.ONE_ACTIVE)["single_active_deployment"] is False


def test_views_that_differ_in_reports_or_the_canceled_deployment_are_not_equivalent():
    one = sel.SelectionView(owners=(-1, 0, 1), desired=(1, 1, 1), running=(1, 0, 0),
                            deployments=(("CANCELING", "CANCELING"), ("CANCELING", "CANCELING")),
                            canceled=0, reports=True)
    assert one.key() == attrs.evolve(one, desired=(2, 1, 1), running=(2, 0, 0)).key()
    assert one.key() != attrs.evolve(one, reports=False).key()
    assert one.key() != attrs.evolve(one, canceled=1).key()


def test_views_that_differ_in_a_deployment_or_a_crash_are_not_the_same_class():
    one = sel.SelectionView(owners=(-1, 0), desired=(1, 1), running=(1, 0),
                            deployments=(("CANCELING", "CANCELING"),), canceled=0, reports=True)
    s = sel.Symbolic(3, 2)
    assert s.evaluate(s.same_class(one), attrs.evolve(one, desired=(2, 1), running=(2, 0))) is True
    others = [
        attrs.evolve(one, deployments=(("CANCELING", "CANCELING"), ("CANCELING", "CANCELING"))),
        attrs.evolve(one, deployments=(("CANCELING", "SUPERSEDED"),)),
        attrs.evolve(one, crashed=(0, 1)),
    ]
    for other in others:
        assert one.key() != other.key()
        assert s.evaluate(s.same_class(one), other) is False, other


def test_the_canceled_deployment_s_process_counts_as_live_in_the_first_slot_too():
    # capi-2022: another cancel kept only d0's process (deployment_converges' counterexample)
    view = sel.SelectionView(owners=(0,), desired=(1,), running=(1,),
                             deployments=(("CANCELING", "CANCELING"), ("CANCELED", "CANCELED")),
                             canceled=0, reports=True)
    s = sel.Symbolic(2, 2)
    assert s.evaluate(s.canceled_process_live(), view) is True
    assert all(_wellformed_at(view, sel.TWO_ACTIVE).values())


def test_capi_pr3072_s_dead_interim_breaks_cancel_restores_last_good_by_survivor_runs():
    r = z3_engine.search(CAPI, "capi-pr3072", CAPI.property("cancel_restores_last_good"), budget=10, seed=0,
                         out_dir=None)
    assert r.verdict == "violated" and r.stats["counterexample"]["selection_property"] == "survivor_runs"


def test_an_implementation_fault_after_a_violation_carries_the_violation_seen():
    # the implementation stops answering at its 31st step, once the search has seen a
    # violation (seed 0) and while Hypothesis shortens it: the fault carries that trace
    # as it was, so the finding is not lost with the implementation
    from deployspec.contract.guard import ImplementationFault

    variant, steps = CAPI.variant("capi-2022"), []

    class FailsLater(ReferenceAdapter):
        def perform(self, action):
            steps.append(action)
            if len(steps) > 30:
                raise ImplementationFault("the program stopped answering", where=f"step {len(steps)}")
            return super().perform(action)

    with pytest.raises(ImplementationFault) as fault:
        hypothesis_engine.check_property(CAPI, "capi-2022", CAPI.property("single_active_deployment"),
                                         config=CAPI.default_config(variant), max_examples=100, seed=0,
                                         adapter_factory=lambda: FailsLater(CAPI, variant), shrink=lambda t: t)
    found = fault.value.found
    assert found is not None and found.verdict == "violated" and found.stats["shrunk"] is False
    assert found.trace["property"] == "single_active_deployment" and found.trace_length == len(found.trace["steps"])
