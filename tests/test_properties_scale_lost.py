"""``user_scale_not_lost``'s causes: who asked for the count that was lost, the verb and
the state of the deployment in flight when it was accepted. Without them the close look
showed only the shortest way the property broke (a scale accepted while CANCELING), and a
canary deployment of an app scaled to 0 keeping its canary (docs/findings.md, finding 14)
went unseen. Judged by when the count was asked, not by the step that shows it lost: a
scale accepted while CANCELING and lost when a later deployment finishes is finding 4's."""

from __future__ import annotations

import pytest
from deployspec.spec import capi as spec

from deployspec.engines.explore import explore_config, search
from deployspec.models import get_model

from .helpers import app, dep, proc
from .property_traces import run

MODEL = get_model("capi")
PUSHED = app([proc(0, 1)], [])
AT_ZERO = app([proc(0, 0)], [])


def deploying(owic, state="DEPLOYING", **extra):
    return app([proc(0, owic), proc(1, 1)], [dep(0, state, state, 1, owic, **extra)])


def finished(kept, owic, state="DEPLOYED", **extra):
    return app([proc(1, kept)], [dep(0, state, state, 1, owic, **extra)])


@pytest.mark.parametrize("ended", ["DEPLOYED", "CANCELED"])
def test_a_scale_with_nothing_in_flight_lost_by_the_deployment_after_it_is_scale_while_idle(ended):
    v = run(spec.user_scale_not_lost, [PUSHED, AT_ZERO, deploying(0), finished(1, 0, ended)],
            [("push", {"instances": 1}), ("scale", {"instances": 0}), ("deploy", {}), ("tick", {})])
    assert v is not None and (v.cause, v.step) == ("scale-while-idle", 3), v


def test_a_scale_accepted_while_canceling_is_scale_while_canceling_wherever_it_shows_lost():
    """Shown at the cancel step, or at the finish of a deployment that superseded the
    canceled one (the reviewer's 8-step trace took the finish slot finding 14 needed)."""
    canceling = deploying(1, "CANCELING")
    scaled = app([proc(0, 1), proc(1, 0)], [dep(0, "CANCELING", "CANCELING", 1, 1)])
    at_cancel = run(spec.user_scale_not_lost, [PUSHED, deploying(1), canceling, scaled, finished(1, 1, "CANCELED")],
                    [("push", {"instances": 1}), ("deploy", {}), ("cancel", {}), ("scale", {"instances": 0}),
                     ("tick", {})])
    superseding = app([proc(0, 1), proc(1, 0), proc(2, 1)],
                      [dep(0, "CANCELED", "SUPERSEDED", 1, 1), dep(1, "DEPLOYING", "DEPLOYING", 2, 1)])
    later = app([proc(2, 1)], [dep(0, "CANCELED", "SUPERSEDED", 1, 1), dep(1, "DEPLOYED", "DEPLOYED", 2, 1)])
    at_finish = run(spec.user_scale_not_lost, [PUSHED, deploying(1), canceling, scaled, superseding, later],
                    [("push", {"instances": 1}), ("deploy", {}), ("cancel", {}), ("scale", {"instances": 0}),
                     ("deploy", {}), ("tick", {})])
    assert (at_cancel.cause, at_cancel.step) == ("scale-while-canceling", 4)
    assert (at_finish.cause, at_finish.step) == ("scale-while-canceling", 5)


def test_a_push_or_a_deploy_s_count_is_named_by_its_verb():
    v = run(spec.user_scale_not_lost, [app([proc(0, 2)], []), deploying(2), finished(1, 2)],
            [("push", {"instances": 2}), ("deploy", {}), ("tick", {})])
    assert v is not None and v.cause == "push-while-idle", v
    v = run(spec.user_scale_not_lost, [app([proc(0, 2)], []), deploying(2, web_instances=3),
                                       finished(2, 2, web_instances=3)],
            [("push", {"instances": 2}), ("deploy", {"web_instances": 3}), ("tick", {})])
    assert v is not None and v.cause == "deploy-while-idle", v


def test_a_count_a_cancel_gives_back_keeps_who_asked_for_it():
    """deploy(web_instances=3) while idle, canceled: the count given back is the push's."""
    v = run(spec.user_scale_not_lost,
            [app([proc(0, 2)], []), deploying(2, web_instances=3), deploying(2, "CANCELING", web_instances=3),
             finished(1, 2, "CANCELED", web_instances=3)],
            [("push", {"instances": 2}), ("deploy", {"web_instances": 3}), ("cancel", {}), ("tick", {})])
    assert v is not None and v.cause == "push-while-idle" and "the last accepted push asked for 2" in v.message, v


def test_a_count_lost_with_no_deployment_at_all_is_while_idle():
    """An implementation that scales to another count than asked, nothing in flight."""
    v = run(spec.user_scale_not_lost, [PUSHED, app([proc(0, 2)], [])],
            [("push", {"instances": 1}), ("scale", {"instances": 3})])
    assert v is not None and v.cause == "scale-while-idle", v


@pytest.mark.parametrize("variant, length, deploy", [
    ("capi-current", 7, "canary"),  # finding 14: a rolling one ends at 0
    ("capi-pr3072", 5, "rolling"),  # the historic designs: any deployment from 0 ends at 1
])
def test_the_explorer_finds_a_deployment_from_zero_once_the_cancel_form_is_skipped(variant, length, deploy):
    r = search(MODEL, variant, spec.user_scale_not_lost, budget=120, seed=0, out_dir=None,
               config=explore_config(MODEL, MODEL.variant(variant)),
               skip_causes=frozenset({"scale-while-canceling"}))
    assert r.verdict == "violated" and r.cause == "scale-while-idle", r.message
    actions = [s["action"] for s in r.trace["steps"]]
    assert len(actions) == length and actions[:2] == [{"type": "push", "instances": 1},
                                                      {"type": "scale", "instances": 0}]
    assert [a["strategy"] for a in actions if a["type"] == "deploy"] == [deploy]


def test_capi_safe_keeps_a_scale_to_zero_through_a_canary():
    r = search(MODEL, "capi-safe", spec.user_scale_not_lost, budget=120, seed=0, out_dir=None)
    assert r.verdict == "holds" and r.stats["complete"] is True and r.stats["by_action"]["continue_"] > 0
