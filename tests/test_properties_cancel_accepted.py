"""cancel_accepted_in_flight: the user can always back out of a deployment in flight
(docs/properties.md)."""

from __future__ import annotations

import attrs
import pytest
from deployspec.reference.capi.state import CANCELING, DEPLOYING, PREPAUSED
from deployspec.spec import capi as spec

from deployspec.engines.explore import search
from deployspec.models import get_model

from .helpers import app, dep, proc
from .property_traces import SERVING, run

MODEL = get_model("capi")
PROP = spec.cancel_accepted_in_flight
PUSH = ("push", {"instances": 1})


def in_flight(state, reason="DEPLOYING", value=None, *more):
    return app([proc(0, 1), proc(1, 1, running=0, starting=1)],
               [*more, dep(len(more), state, reason, 1, 1, value, strategy="canary")])


@pytest.mark.parametrize("state, reason", [("DEPLOYING", "DEPLOYING"), ("PREPAUSED", "DEPLOYING"),
                                           ("PAUSED", "PAUSED")])
def test_a_cancel_refused_in_flight_is_a_violation(state, reason):
    obs = in_flight(state, reason)
    v = run(PROP, [SERVING, obs, obs], [PUSH, ("deploy", {"strategy": "canary"}),
                                        ("cancel", {}, "cannot cancel now")])
    assert v is not None and v.step == 2
    assert v.message == f"cancel refused at step 2 (cancel()) while d0 was {state}: cannot cancel now"


def test_an_accepted_cancel_and_a_refusal_with_nothing_in_flight_hold():
    canceling = in_flight("CANCELING", "CANCELING")
    done = app([proc(0, 1)], [dep(0, "CANCELED", "CANCELED", 1, 1, strategy="canary")])
    assert run(PROP, [SERVING, in_flight("PAUSED", "PAUSED"), canceling, canceling, done, done],
               [PUSH, ("deploy", {"strategy": "canary"}), ("cancel", {}), ("cancel", {}, "again"), ("tick", {}),
                ("cancel", {}, "no active deployment to cancel")]) is None


def test_the_deployment_judged_is_the_newest_with_status_value_active():
    """As the CLI picks it: a canary written PAUSED/FINALIZED after it was superseded
    (capi-current, finding 8) is not the one a cancel acts on, so a refusal there is not
    judged; the newest ACTIVE one is, whatever is older."""
    finalized = app([proc(0, 1), proc(1, 1)], [dep(0, "PAUSED", "PAUSED", 1, 1, "FINALIZED", strategy="canary")])
    assert run(PROP, [SERVING, finalized, finalized],
               [PUSH, ("deploy", {"strategy": "canary"}), ("cancel", {}, "no active deployment to cancel")]) is None
    both = in_flight("DEPLOYING", "DEPLOYING", None, dep(0, "CANCELING", "CANCELING", 1, 1))
    v = run(PROP, [SERVING, both, both], [PUSH, ("deploy", {}), ("cancel", {}, "busy")])
    assert v is not None and "d1 was DEPLOYING" in v.message


def test_the_state_judged_is_the_one_the_cancel_was_asked_in():
    """An implementation that refuses and yet moves the deployment on: what the user
    asked to cancel was PAUSED."""
    v = run(PROP, [SERVING, in_flight("PAUSED", "PAUSED"), in_flight("CANCELING", "CANCELING")],
            [PUSH, ("deploy", {"strategy": "canary"}), ("cancel", {}, "try again")])
    assert v is not None and v.message.endswith("while d0 was PAUSED: try again")


@pytest.mark.parametrize("states, at, length", [({DEPLOYING, PREPAUSED, CANCELING}, "PAUSED", 5),
                                                ({DEPLOYING, CANCELING}, "PREPAUSED", 3)])
def test_the_explorer_finds_a_design_that_will_not_cancel_a_canary(monkeypatch, states, at, length):
    """capi-safe cancelling only some states. Every other property holds for both designs
    at capi-safe's exploration bounds (the explorer, once, session 47: 40,090 and 47,892 states): a
    refusal changes nothing, so only this property tells them from capi-safe."""
    variant = attrs.evolve(MODEL.variant("capi-safe"), name=f"safe-cancels-{len(states)}", declares=frozenset(),
                           cancelable_states=frozenset(states))
    monkeypatch.setitem(MODEL.variants, variant.name, variant)
    r = search(MODEL, variant.name, PROP, budget=120, seed=0, out_dir=None)
    assert r.verdict == "violated" and len(r.trace["steps"]) == length, r.message
    assert r.message.endswith(f"while d0 was {at}: cannot cancel a {at} deployment")
