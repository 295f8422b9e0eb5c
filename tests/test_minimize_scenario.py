"""Replay-based shrinking and hand-recorded scenarios, the tools behind docs/findings.md."""

from pathlib import Path
from types import SimpleNamespace

import pytest
from deployspec.reference.capi.actions import Stage
from deployspec.spec.core import Violation

from deployspec import traces
from deployspec.minimize import minimize
from deployspec.models import get_model
from deployspec.replay import ReplayOutcome, replay
from deployspec.scenario import record

from .helpers import SEED_STORY

CAPI = get_model("capi")
SEED = Path(__file__).parent.parent / "counterexamples" / "capi" / "capi-2022--app_stays_available--a940739cf1.json"


def test_minimize_drops_steps_that_do_not_matter():
    trace = traces.load(SEED)
    padded = dict(trace, settle_from=None,
                  steps=trace["steps"][:2] + [{"action": Stage(True).to_json()}] + trace["steps"][2:])
    assert replay(padded).reproduced
    smaller = minimize(padded)
    assert len(smaller["steps"]) < len(padded["steps"])
    assert "stage" not in [s["action"]["type"] for s in smaller["steps"][: smaller["settle_from"]]]
    assert replay(smaller).reproduced and smaller["extra"]["minimized_by_replay"] is True


def test_minimize_keeps_a_trace_that_does_not_reproduce():
    trace = traces.load(SEED)
    safe = dict(trace, variant="capi-safe")
    assert minimize(safe) is safe


def test_a_scenario_must_show_what_it_claims():
    prop = CAPI.property("app_stays_available")
    config = CAPI.default_config(CAPI.variant("capi-2022"))
    story = SEED_STORY
    trace = record(CAPI, "capi-2022", config, prop, story, title="the seed")
    assert trace["engine"] == "scenario" and trace["title"] == "the seed"
    assert replay(trace).reproduced
    with pytest.raises(ValueError, match="app_stays_available holds on capi-safe"):
        record(CAPI, "capi-safe", CAPI.default_config(CAPI.variant("capi-safe")), prop, story, title="x")


def test_a_shorter_trace_violating_for_another_cause_is_not_kept():
    """M1: every shorter candidate violates the property, but for another cause than the
    recorded one: the trace is not shortened (a different bug is not the same finding)."""
    actions = [{"type": "push", "n": i} for i in range(3)]
    trace = {"model": "capi", "variant": "v", "config": {}, "property": "p", "engine": "hypothesis",
             "seed": 1, "steps": [{"action": a} for a in actions], "settle_from": None,
             "violation": {"step": 2, "message": "m", "cause": "recorded"}}

    def replay_on(candidate):
        n = len(candidate["steps"])
        cause = "recorded" if n == 3 else "another"
        v = Violation("p", max(n - 1, 0), "m", cause)
        session = SimpleNamespace(violation=v, settle_from=n, initial={},
                                  steps=[dict(s, rejected=None, observation={}) for s in candidate["steps"]])
        return ReplayOutcome("v", "p", v, session)

    result = minimize(trace, replay_on=replay_on)
    assert [s["action"] for s in result["steps"]] == actions
    assert result["violation"]["cause"] == "recorded"
