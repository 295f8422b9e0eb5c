"""``user_scale_not_lost``'s causes: the verb whose count was lost and the step that left
another. Without them the close look showed only the shortest way the property broke (a
scale accepted while CANCELING), and a canary deployment of an app scaled to 0 keeping its
canary (docs/findings.md, finding 14) went unseen."""

from __future__ import annotations

import pytest
from deployspec.spec import capi as spec

from deployspec.engines.explore import explore_config, search
from deployspec.models import get_model

from .helpers import app, dep, proc
from .property_traces import NOTHING, run

MODEL = get_model("capi")
PUSHED = app([proc(0, 1)], [])
AT_ZERO = app([proc(0, 0)], [])


def deployed_from(owic, *, ended, kept):
    """An app scaled to ``owic`` deployed, then the step that ends the deployment ``ended``
    (DEPLOYED or CANCELED), keeping ``kept`` instances."""
    start = app([proc(0, owic), proc(1, 1)], [dep(0, "DEPLOYING", "DEPLOYING", 1, owic)])
    reason = "DEPLOYED" if ended == "DEPLOYED" else "CANCELED"
    end = app([proc(1, kept)], [dep(0, ended, reason, 1, owic)])
    return start, end


@pytest.mark.parametrize("ended, cause", [("DEPLOYED", "scale-lost-at-finish"), ("CANCELED", "scale-lost-at-cancel")])
def test_the_step_that_ends_the_deployment_names_where_the_count_went(ended, cause):
    start, end = deployed_from(0, ended=ended, kept=1)
    v = run(spec.user_scale_not_lost, [PUSHED, AT_ZERO, start, end],
            [("push", {"instances": 1}), ("scale", {"instances": 0}), ("deploy", {}), ("tick", {})])
    assert v is not None and v.cause == cause and v.step == 3, v


def test_a_push_or_a_deploy_s_count_is_named_by_its_verb():
    start, end = deployed_from(2, ended="DEPLOYED", kept=1)
    v = run(spec.user_scale_not_lost, [app([proc(0, 2)], []), start, end],
            [("push", {"instances": 2}), ("deploy", {}), ("tick", {})])
    assert v is not None and v.cause == "push-lost-at-finish", v
    start = app([proc(0, 2), proc(1, 1)], [dep(0, "DEPLOYING", "DEPLOYING", 1, 2, web_instances=3)])
    end = app([proc(1, 2)], [dep(0, "DEPLOYED", "DEPLOYED", 1, 2, web_instances=3)])
    v = run(spec.user_scale_not_lost, [app([proc(0, 2)], []), start, end],
            [("push", {"instances": 2}), ("deploy", {"web_instances": 3}), ("tick", {})])
    assert v is not None and v.cause == "deploy-lost-at-finish", v


def test_a_count_lost_with_no_deployment_ending_is_named_by_the_step_s_kind():
    """An implementation that scales to another count than asked, no deployment about."""
    v = run(spec.user_scale_not_lost, [PUSHED, app([proc(0, 2)], [])],
            [("push", {"instances": 1}), ("scale", {"instances": 3})], before=NOTHING)
    assert v is not None and v.cause == "scale-lost-at-scale", v


@pytest.mark.parametrize("variant, length, deploy", [
    ("capi-current", 7, "canary"),  # finding 14: a rolling one ends at 0
    ("capi-pr3072", 5, "rolling"),  # the historic designs: any deployment from 0 ends at 1
])
def test_the_explorer_finds_a_deployment_from_zero_once_the_cancel_form_is_skipped(variant, length, deploy):
    r = search(MODEL, variant, spec.user_scale_not_lost, budget=120, seed=0, out_dir=None,
               config=explore_config(MODEL, MODEL.variant(variant)),
               skip_causes=frozenset({"scale-lost-at-cancel"}))
    assert r.verdict == "violated" and r.cause == "scale-lost-at-finish", r.message
    actions = [s["action"] for s in r.trace["steps"]]
    assert len(actions) == length and actions[:2] == [{"type": "push", "instances": 1},
                                                      {"type": "scale", "instances": 0}]
    assert [a["strategy"] for a in actions if a["type"] == "deploy"] == [deploy]


def test_capi_safe_keeps_a_scale_to_zero_through_a_canary():
    r = search(MODEL, "capi-safe", spec.user_scale_not_lost, budget=120, seed=0, out_dir=None)
    assert r.verdict == "holds" and r.stats["complete"] is True and r.stats["by_action"]["continue_"] > 0
