"""user_scale_not_lost: the last accepted scale (or push) is the count the app ends with."""

from deployspec.spec import capi as spec
from deployspec.spec.core import Step

from .helpers import app, dep, proc
from .property_traces import NOTHING, SERVING, run


def test_scale_accepted_while_canceling_is_lost_when_cancel_destroys_its_process():
    """Issue 3: since PR #3892 a scale is accepted while a deployment is CANCELING and lands
    on the canceled deployment's own process, which the cancel step destroys."""
    deploying = app([proc(0, 1), proc(1, 1, running=0, starting=1)], [dep(0, "DEPLOYING", "DEPLOYING", 1, 1)])
    cancel = {**deploying, "deployments": [dep(0, "CANCELING", "CANCELING", 1, 1)]}
    scaled = app([proc(0, 1), proc(1, 3, running=0, starting=3)], [dep(0, "CANCELING", "CANCELING", 1, 1)])
    done = app([proc(0, 1)], [dep(0, "CANCELED", "CANCELED", 1, 1)])
    v = run(spec.user_scale_not_lost, [SERVING, deploying, cancel, scaled, done],
            [("push", {"instances": 1}), ("deploy", {}), ("cancel", {}), ("scale", {"instances": 3}),
             ("tick", {"failed": [], "reports_unavailable": []})])
    assert v.step == 4
    assert v.message == "the app has 1 web instance after step 4 (tick()), but the last accepted scale asked for 3"


def test_scale_down_accepted_while_canceling_is_lost_the_same_way():
    deploying = app([proc(0, 3), proc(1, 1, running=0, starting=1)], [dep(0, "DEPLOYING", "DEPLOYING", 1, 3)])
    cancel = {**deploying, "deployments": [dep(0, "CANCELING", "CANCELING", 1, 3)]}
    scaled = {**cancel, "processes": [proc(0, 3), proc(1, 1, running=0, starting=1)]}
    done = app([proc(0, 3)], [dep(0, "CANCELED", "CANCELED", 1, 3)])
    v = run(spec.user_scale_not_lost, [app([proc(0, 3)], []), deploying, cancel, scaled, done],
            [("push", {"instances": 3}), ("deploy", {}), ("cancel", {}), ("scale", {"instances": 1}), ("tick", {})])
    assert v is not None and "has 3 web instances" in v.message and "asked for 1" in v.message


def test_a_scale_to_zero_accepted_while_canceling_is_watched_like_any_other():
    """0 is a count like any other: a scale to 0 that lands on the canceled deployment's
    process, which the cancel step destroys, is lost when P0 comes back with its instance."""
    deploying = app([proc(0, 1), proc(1, 1, running=0, starting=1)], [dep(0, "DEPLOYING", "DEPLOYING", 1, 1)])
    cancel = {**deploying, "deployments": [dep(0, "CANCELING", "CANCELING", 1, 1)]}
    scaled = app([proc(0, 1), proc(1, 0)], [dep(0, "CANCELING", "CANCELING", 1, 1)])
    done = app([proc(0, 1)], [dep(0, "CANCELED", "CANCELED", 1, 1)])
    steps = [("push", {"instances": 1}), ("deploy", {}), ("cancel", {}), ("scale", {"instances": 0}), ("tick", {})]
    v = run(spec.user_scale_not_lost, [SERVING, deploying, cancel, scaled, done], steps)
    assert v is not None and v.step == 4 and "has 1 web instance" in v.message and "asked for 0" in v.message
    honoured = app([proc(0, 0)], [dep(0, "CANCELED", "CANCELED", 1, 1)])
    assert run(spec.user_scale_not_lost, [SERVING, deploying, cancel, scaled, honoured], steps) is None


def test_an_honoured_scale_counts_instances_over_every_web_process():
    two = app([proc(0, 1), proc(1, 2)], [dep(0, "DEPLOYED", "DEPLOYED", 1, 1)])
    assert run(spec.user_scale_not_lost, [SERVING, app([proc(0, 3)], [])],
               [("push", {"instances": 1}), ("scale", {"instances": 3})]) is None
    assert run(spec.user_scale_not_lost, [SERVING, two],
               [("push", {"instances": 1}), ("scale", {"instances": 3})]) is None


def test_a_refused_scale_is_not_watched():
    deploying = app([proc(0, 1), proc(1, 1, running=0, starting=1)], [dep(0, "DEPLOYING", "DEPLOYING", 1, 1)])
    deployed = app([proc(1, 1)], [dep(0, "DEPLOYED", "DEPLOYED", 1, 1)])
    assert run(spec.user_scale_not_lost, [SERVING, deploying, deploying, deployed],
               [("push", {"instances": 1}), ("deploy", {}), ("scale", {"instances": 3}, "deployment in progress"),
                ("tick", {})]) is None


def test_the_scale_is_judged_only_once_no_deployment_is_active():
    rolling = app([proc(0, 2), proc(1, 1, running=0, starting=1)], [dep(0, "DEPLOYING", "DEPLOYING", 1, 2)])
    short = app([proc(1, 1)], [dep(0, "DEPLOYED", "DEPLOYED", 1, 2)])
    steps = [("push", {"instances": 2}), ("deploy", {}), ("tick", {})]
    v = run(spec.user_scale_not_lost, [app([proc(0, 2)], []), rolling, short], steps)
    assert v is not None and v.step == 2 and "asked for 2" in v.message


def test_a_deploy_with_web_instances_asks_for_a_new_count_the_app_must_end_with():
    deploying = app([proc(0, 1), proc(1, 3, running=0, starting=3)],
                    [dep(0, "DEPLOYING", "DEPLOYING", 1, 1, web_instances=3)])
    deployed = app([proc(1, 3)], [dep(0, "DEPLOYED", "DEPLOYED", 1, 1, web_instances=3)])
    steps = [("push", {"instances": 1}), ("deploy", {"web_instances": 3}), ("tick", {})]
    assert run(spec.user_scale_not_lost, [SERVING, deploying, deployed], steps) is None
    short = app([proc(1, 1)], [dep(0, "DEPLOYED", "DEPLOYED", 1, 1, web_instances=3)])
    v = run(spec.user_scale_not_lost, [SERVING, deploying, short], steps)
    assert v is not None and v.message.endswith("the app has 1 web instance after step 2 (tick()), "
                                                "but the last accepted deploy asked for 3")


def test_a_deploy_with_web_instances_that_is_canceled_leaves_the_count_before_it():
    """A cancel takes the app back to its original instances, and takes back the count
    the canceled deployment asked for: the app must end with the 1 asked before it."""
    d0 = dep(0, "DEPLOYING", "DEPLOYING", 1, 1, web_instances=3)
    deploying = app([proc(0, 1), proc(1, 3, running=0, starting=3)], [d0])
    cancel = {**deploying, "deployments": [dep(0, "CANCELING", "CANCELING", 1, 1, web_instances=3)]}
    done = app([proc(0, 1)], [dep(0, "CANCELED", "CANCELED", 1, 1, web_instances=3)])
    steps = [("push", {"instances": 1}), ("deploy", {"web_instances": 3}), ("cancel", {}), ("tick", {})]
    assert run(spec.user_scale_not_lost, [SERVING, deploying, cancel, done], steps) is None
    kept = app([proc(1, 3)], [dep(0, "CANCELED", "CANCELED", 1, 1, web_instances=3)])
    v = run(spec.user_scale_not_lost, [SERVING, deploying, cancel, kept], steps)
    assert v is not None and v.message.endswith("but the last accepted push asked for 1")


def test_a_scale_accepted_while_a_deploy_asks_for_a_count_is_not_taken_back_by_a_cancel():
    """A design that accepts a scale while a deployment is in flight (one of one's own):
    the scale is the user's own count, and a later cancel does not give back the count
    before the deploy in its place (review of session 46)."""
    deploying = app([proc(0, 2), proc(1, 1, running=0, starting=1)],
                    [dep(0, "DEPLOYING", "DEPLOYING", 1, 2, web_instances=3)])
    scaled = app([proc(0, 2), proc(1, 5, running=0, starting=5)],
                 [dep(0, "DEPLOYING", "DEPLOYING", 1, 2, web_instances=3)])
    cancel = {**scaled, "deployments": [dep(0, "CANCELING", "CANCELING", 1, 2, web_instances=3)]}
    steps = [("push", {"instances": 2}), ("deploy", {"web_instances": 3}), ("scale", {"instances": 5}),
             ("cancel", {}), ("tick", {})]
    honoured = app([proc(0, 5)], [dep(0, "CANCELED", "CANCELED", 1, 2, web_instances=3)])
    dropped = app([proc(0, 2)], [dep(0, "CANCELED", "CANCELED", 1, 2, web_instances=3)])
    two = app([proc(0, 2)], [])
    assert run(spec.user_scale_not_lost, [two, deploying, scaled, cancel, honoured], steps) is None
    v = run(spec.user_scale_not_lost, [two, deploying, scaled, cancel, dropped], steps)
    assert v is not None and v.message.endswith("but the last accepted scale asked for 5")


def test_a_deploy_without_web_instances_keeps_the_watch():
    deploying = app([proc(0, 2), proc(1, 1, running=0, starting=1)], [dep(0, "DEPLOYING", "DEPLOYING", 1, 2)])
    deployed = app([proc(1, 1)], [dep(0, "DEPLOYED", "DEPLOYED", 1, 2)])
    v = run(spec.user_scale_not_lost, [app([proc(0, 2)], []), deploying, deployed],
            [("push", {"instances": 2}), ("deploy", {"web_instances": 0, "max_in_flight": 1}), ("tick", {})])
    assert v is not None and "asked for 2" in v.message


def test_a_complaint_names_a_scale_to_zero_with_its_zero():
    """A step's description leaves out only empty arguments: scale(instances=0) asks for
    0 instances, and the complaint about it must say so, not "scale()"."""
    v = run(spec.user_scale_not_lost, [SERVING, SERVING], [("push", {"instances": 1}), ("scale", {"instances": 0})])
    assert v is not None and v.message == (
        "the app has 1 web instance after step 1 (scale(instances=0)), but the last accepted scale asked for 0")


def test_the_watch_starts_at_the_first_accepted_push_or_scale():
    """A trace may start on an app that exists already: nothing was asked yet."""
    assert run(spec.user_scale_not_lost, [SERVING, app([proc(0, 2)], [])],
               [("runtime", {"process": 0}), ("stage", {"healthy": True})]) is None


def test_a_deleted_app_loses_no_scale():
    assert run(spec.user_scale_not_lost, [SERVING, NOTHING],
               [("push", {"instances": 1}), ("delete", {})]) is None


def test_once_a_lost_scale_is_reported_the_watch_stops_until_the_next_request():
    lost = Step(3, {"type": "tick"}, "platform", None, app([proc(0, 3)], []), SERVING)
    memory, message = spec.user_scale_not_lost.advance((3, None, ("scale", "idle")), lost)
    assert message is not None and memory == spec.NOT_ASKED
    assert spec.user_scale_not_lost.advance(memory, Step(4, {"type": "tick"}, "platform", None, SERVING,
                                                         SERVING)) == (spec.NOT_ASKED, None)


def test_a_count_asked_by_a_deploy_is_watched_and_a_cancel_takes_it_back():
    """``deploy(web_instances=3)``: the count the app must have once no deployment is
    active, as after a scale; superseded by ``deploy()`` and ending at the original 2, it
    is lost (capi-current, docs/explore-findings 3). Canceled, the original 2 is wanted."""
    two = app([proc(0, 2)], [])
    rolling = app([proc(0, 2), proc(1, 1, running=0, starting=1)],
                  [dep(0, "DEPLOYING", "DEPLOYING", 1, 2, web_instances=3)])
    superseding = app([proc(0, 2), proc(1, 1), proc(2, 1, running=0, starting=1)],
                      [dep(0, "DEPLOYED", "SUPERSEDED", 1, 2, web_instances=3), dep(1, "DEPLOYING", "DEPLOYING", 1, 2)])
    at_two = app([proc(2, 2)], [dep(0, "DEPLOYED", "SUPERSEDED", 1, 2, web_instances=3),
                                dep(1, "DEPLOYED", "DEPLOYED", 1, 2)])
    steps = [("push", {"instances": 2}), ("deploy", {"web_instances": 3}), ("deploy", {}), ("tick", {})]
    v = run(spec.user_scale_not_lost, [two, rolling, superseding, at_two], steps)
    assert v is not None and v.step == 3
    assert v.message == "the app has 2 web instances after step 3 (tick()), but the last accepted deploy asked for 3"
    canceled = app([proc(0, 2)], [dep(0, "CANCELED", "CANCELED", 1, 2, web_instances=3)])
    canceling = {**rolling, "deployments": [dep(0, "CANCELING", "CANCELING", 1, 2, web_instances=3)]}
    assert run(spec.user_scale_not_lost, [two, rolling, canceling, canceled],
               [("push", {"instances": 2}), ("deploy", {"web_instances": 3}), ("cancel", {}), ("tick", {})]) is None
