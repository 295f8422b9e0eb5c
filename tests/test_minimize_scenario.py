"""Replay-based shrinking and hand-recorded scenarios, the tools behind docs/findings.md."""

from pathlib import Path

import pytest
from deployspec.reference.capi.actions import Stage

from deployspec import traces
from deployspec.minimize import minimize
from deployspec.models import get_model
from deployspec.replay import replay
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
