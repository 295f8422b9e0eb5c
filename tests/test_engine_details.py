"""Details of the engines' results that a bug would get wrong quietly.

Found missing by mutation testing of ``deployspec/engines`` (the exhaustive and the
random search): which of equally short traces is kept, causes already found passed
over, a replay that does not match the search, how the exploration bounds layer,
what a random search records, remembers, shortens and saves, and what an
implementation fault carries.
"""

from __future__ import annotations

import json
from pathlib import Path

import attrs
import pytest
from deployspec.reference.capi.actions import Push, Tick
from deployspec.spec.core import Breach, settled_property, state_property
from deployspec.stateful_tests.machine import PropertyViolated

from deployspec import traces
from deployspec.adapter import ReferenceAdapter
from deployspec.engines import explore, hypothesis_engine
from deployspec.models import get_model
from deployspec.replay import replay
from deployspec.session import Session

from .helpers import SEED_STORY, action_labels
from .toy import Move, Run, ToyConfig, toy_model

CAPI = get_model("capi")


# --- the exhaustive engine ---------------------------------------------------------------


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
    assert action_labels(r.trace) == ["a", "run"] and r.cause == "one"


def test_a_settled_search_passes_over_a_cause_already_found():
    # the shortest settled trace breaks it the `one` way (2 steps); with `one` skipped,
    # the trace reported is the 3-step one breaking it the `two` way
    moves = {"start": [(Move("a"), "x"), (Move("b"), "y")], "y": [(Move("c"), "z")]}
    settle = {"x": (Run(), "stuck-one"), "z": (Run(), "stuck-two")}
    assert _explore(moves, settle, rests_well).cause == "one"
    r = _explore(moves, settle, rests_well, skip_causes=frozenset({"one"}))
    assert r.verdict == "violated" and r.cause == "two" and r.trace["violation"]["cause"] == "two"
    assert action_labels(r.trace) == ["b", "c", "run"]


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
        assert action_labels(r.trace) == ["a", "run", "run"]


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
    assert "does not match the search" in r.message and "in 3 steps, expected one in 2" in r.message
    assert "not a function of the state alone" in r.message


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


# --- the Hypothesis engine ---------------------------------------------------------------


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
    assert action_labels(r.trace) == ["a"] and r.message == "at bad1"


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
    for example, exc in enumerate((longer, shortest, longer), start=4):
        with pytest.raises(PropertyViolated), hypothesis_engine._remembered(seen, example):
            raise exc
    assert seen["violation"] is shortest and len(shortest.session.steps) == 6
    assert seen["found_in_example"] == 4  # the first seen, not the shortest


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


def test_a_random_search_saves_its_counterexample_under_out(tmp_path):
    r = hypothesis_engine.check_property(CAPI, "capi-2022", CAPI.property("single_active_deployment"),
                                         max_examples=100, seed=0, out_dir=str(tmp_path))
    assert r.verdict == "violated" and r.unsaved is None
    assert r.counterexample is not None and Path(r.counterexample).parent == tmp_path
    assert traces.load(r.counterexample)["steps"] == json.loads(json.dumps(r.trace["steps"]))


def test_an_implementation_fault_after_a_violation_carries_the_violation_seen():
    # the implementation stops answering at its 12th step, once the search has seen a
    # violation (seed 0, in its first example) and while Hypothesis shortens it (its
    # third example): the fault carries that trace
    # as it was, so the finding is not lost with the implementation
    from deployspec.contract.guard import ImplementationFault

    variant, steps = CAPI.variant("capi-2022"), []

    class FailsLater(ReferenceAdapter):
        def perform(self, action):
            steps.append(action)
            if len(steps) > 11:
                raise ImplementationFault("the program stopped answering", where=f"step {len(steps)}")
            return super().perform(action)

    with pytest.raises(ImplementationFault) as fault:
        hypothesis_engine.check_property(CAPI, "capi-2022", CAPI.property("single_active_deployment"),
                                         config=CAPI.default_config(variant), max_examples=100, seed=0,
                                         adapter_factory=lambda: FailsLater(CAPI, variant), shrink=lambda t: t)
    found = fault.value.found
    assert found is not None and found.verdict == "violated" and found.stats["shrunk"] is False
    assert found.trace["property"] == "single_active_deployment" and found.trace_length == len(found.trace["steps"])
