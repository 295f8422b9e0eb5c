"""Details of the exhaustive engine's graph (deployspec/engines/product.py) that a bug
would get wrong quietly, on the toy model of tests/toy.py.

Found missing by the mutation pass described in test_search_details.py: 88 mutants,
18 survived; 10 equivalent (seven in annotations; the observation of a state property's
node taken from the cache or afresh; ``after is state or after == state`` without the
``is``, a fast path twice), 8 killed here (the observation cache, a dead end for a cause
already found, moves shared between searches, the settle phase's step count and memo).
"""

from __future__ import annotations

import pytest
from deployspec.spec.core import Breach, settled_property, state_property, trace_property

from deployspec.engines import explore, product
from deployspec.engines.product import ProductGraph, Settler

from .helpers import action_labels
from .toy import Move, Run, toy_model


@state_property("toy")
def never_bad(obs):
    """Nodes named bad-<cause> break it."""
    at = obs["at"]
    return Breach(at.split("-")[1], f"at {at}") if at.startswith("bad") else None


@trace_property("toy", initial=None)
def never_into_bad(memory, step):
    """A move into a node named bad-<cause> breaks it."""
    at = step.after["at"]
    return memory, (Breach(at.split("-")[1], f"into {at}") if at.startswith("bad") else None)


def _toy_graph(moves, prop, **kw):
    model, config = toy_model(moves)
    return ProductGraph(model, model.variant("toy"), config, prop, **kw)


def test_observations_are_kept_for_re_use_until_the_cache_is_full(monkeypatch):
    g = _toy_graph({"start": []}, never_bad)
    a, b = g.observe("a"), g.observe("b")
    assert g.observe("a") is a and g.observe("b") is b and a == {"at": "a"}
    monkeypatch.setattr(product, "CACHE_CAP", 2)
    c = g.observe("c")  # full: it starts afresh
    assert g.observe("c") is c and g.observe("a") is not a and g.observe("a") == a


#: a bad-one node one move away, a bad-two node beyond it, and another two moves away
TWO_WAYS = {"start": [(Move("a"), "bad-one"), (Move("b"), "x")],
            "bad-one": [(Move("c"), "bad-two")], "x": [(Move("d"), "y")], "y": [(Move("e"), "bad-two")]}


@pytest.mark.parametrize("prop", [never_bad, never_into_bad], ids=["state", "trace"])
def test_a_node_broken_a_way_already_found_is_a_dead_end(prop):
    # with `one` found, the search does not go on through bad-one: bad-two, the other
    # way, is reported by the long route
    model, config = toy_model(TWO_WAYS)
    r = explore.search(model, "toy", prop, budget=60, seed=0, out_dir=None, config=config)
    assert r.cause == "one" and action_labels(r.trace) == ["a"]
    r = explore.search(model, "toy", prop, budget=60, seed=0, out_dir=None, config=config,
                       skip_causes=frozenset({"one"}))
    assert r.verdict == "violated" and r.cause == "two" and action_labels(r.trace) == ["b", "d", "e"]


@state_property("toy")
def anywhere(obs):
    """Holds everywhere."""


@trace_property("toy", initial=None)
def any_move(memory, step):
    """Holds for every move."""
    return memory, None


def test_a_second_property_s_search_replays_the_first_one_s_moves(monkeypatch):
    model, config = toy_model(TWO_WAYS)
    variant = model.variant("toy")
    real, steps = type(variant).step, []

    def step(self, state, action):
        steps.append((state, action.label))
        return real(self, state, action)

    monkeypatch.setattr(type(variant), "step", step)
    assert explore.search(model, "toy", anywhere, budget=60, seed=0, out_dir=None, config=config).verdict == "holds"
    assert sorted(steps) == [("bad-one", "c"), ("start", "a"), ("start", "b"), ("x", "d"), ("y", "e")]
    r = explore.search(model, "toy", any_move, budget=60, seed=0, out_dir=None, config=config)
    assert r.verdict == "holds" and r.stats["states"] == 5
    assert len(steps) == 5  # none computed again


@settled_property("toy")
def rests_well(obs):
    """Stuck nodes break it."""
    return f"settled at {obs['at']}" if obs["at"].startswith("stuck") else None


def test_the_settle_phase_counts_the_steps_it_ran_not_those_it_remembered():
    model, config = toy_model({"start": []}, {"x": (Run(), "mid"), "mid": (Run(), "stuck")})
    settler = Settler(model, model.variant("toy"), config, rests_well)
    assert settler.outcome("x") == ("settled at stuck", 2) and settler.steps_taken == 2
    assert settler.outcome("mid") == ("settled at stuck", 1) and settler.outcome("x") == ("settled at stuck", 2)
    assert settler.steps_taken == 2


def test_a_remembered_settle_phase_that_ends_exactly_at_the_bound_is_not_run_again():
    model, config = toy_model({"start": []}, {"x": (Run(), "mid"), "mid": (Run(), "stuck")}, settle_steps=2)
    settler = Settler(model, model.variant("toy"), config, rests_well)
    assert settler.outcome("x") == settler.outcome("x") == ("settled at stuck", 2)
    assert settler.steps_taken == 2
