"""Findings kept open in docs/explore-findings (they contradict a design's declaration and
wait for a decision): each still reproduces as its entry says. When one stops, its entry
is out of date, and this test says so."""

from __future__ import annotations

from pathlib import Path

from deployspec import traces
from deployspec.replay import replay

FINDINGS = Path(__file__).parent.parent / "docs" / "explore-findings"


def test_a_superseding_deploy_loses_web_instances_on_capi_safe_and_capi_current():
    """Finding 3: ``deploy(web_instances=1)`` superseded by ``deploy()`` scales an app that
    served one instance to none, on the fixed design as on today's (no search offers
    ``web_instances``, so the matrix cannot see it)."""
    trace = traces.load(FINDINGS / "capi-safe--app_stays_available--c466ef369e.json")
    assert [s["action"].get("web_instances") for s in trace["steps"]][:3] == [None, None, 1]
    for variant in ("capi-safe", "capi-current"):
        outcome = replay(trace, variant=variant)
        assert outcome.reproduced and outcome.violation.step == 5, (variant, outcome)
        assert outcome.violation.message == "no routable web instance left after step 5 (tick())"
