"""app_stays_available: when the app must serve, and when a scale to zero, a stop or a delete excuses it."""

from deployspec.spec import capi as spec

from .helpers import app, dep, proc
from .property_traces import DEPLOYING, NOTHING, SCALED_AWAY, SERVING, run


def stopped(obs):
    return {**obs, "app": {**obs["app"], "started": False}}


def test_availability_lost_after_serving():
    serving = app([proc(0, 1)], [])
    down = app([proc(0, 1, running=0, starting=1)], [])
    v = run(spec.app_stays_available, [serving, down], [("push", {"instances": 1}), ("tick", {})])
    assert v is not None and "no routable web instance" in v.message


def test_availability_not_required_before_serving_or_after_scale_to_zero():
    starting = app([proc(0, 1, running=0, starting=1)], [])
    serving = app([proc(0, 1)], [])
    zero = app([proc(0, 0)], [])
    assert run(spec.app_stays_available, [starting, starting], [("push", {"instances": 1}), ("tick", {})]) is None
    assert run(spec.app_stays_available, [serving, zero], [("push", {"instances": 1}), ("scale", {"instances": 0})]) is None


def test_availability_loss_names_the_step_without_its_empty_arguments():
    v = run(spec.app_stays_available, [SERVING, DEPLOYING, SCALED_AWAY],
            [("push", {"instances": 1}), ("deploy", {}), ("tick", {"failed": [], "reports_unavailable": []})])
    assert (v.step, v.message) == (2, "no routable web instance left after step 2 (tick())")


def test_a_refused_scale_to_zero_does_not_excuse_a_loss():
    v = run(spec.app_stays_available, [SERVING, SERVING, DEPLOYING, SCALED_AWAY],
            [("push", {"instances": 1}), ("scale", {"instances": 0}, "a deployment is in progress"),
             ("deploy", {}), ("tick", {})])
    assert v is not None and v.step == 3


def test_after_a_scale_to_zero_the_app_is_judged_again_only_once_it_serves_again():
    zero = app([proc(0, 0)], [])
    back = app([proc(0, 1, running=0, starting=1)], [])
    steps = [("push", {"instances": 1}), ("scale", {"instances": 0}), ("scale", {"instances": 1}),
             ("runtime", {"process": 0}), ("deploy", {}), ("tick", {})]
    v = run(spec.app_stays_available, [SERVING, zero, back, SERVING, DEPLOYING, SCALED_AWAY], steps)
    assert v is not None and v.step == 5


def test_a_deploy_with_web_instances_after_a_scale_to_zero_makes_the_app_judged_again():
    """web_instances is a request for a count like push and scale: after scale(0), a
    deployment asking for 2 instances makes the app's availability matter again."""
    zero = app([proc(0, 0)], [])
    rolling = app([proc(0, 0), proc(1, 2)], [dep(0, "DEPLOYING", "DEPLOYING", 1, 0, web_instances=2)])
    deployed = app([proc(1, 2)], [dep(0, "DEPLOYED", "DEPLOYED", 1, 0, web_instances=2)])
    crashed = app([proc(1, 2, running=0, crashed=2)], [dep(0, "DEPLOYED", "DEPLOYED", 1, 0, web_instances=2)])
    steps = [("push", {"instances": 1}), ("scale", {"instances": 0}), ("deploy", {"web_instances": 2}),
             ("tick", {}), ("tick", {})]
    v = run(spec.app_stays_available, [SERVING, zero, rolling, deployed, crashed], steps)
    assert v is not None and v.step == 4
    # a refused deploy asks for nothing: the scale to 0 still excuses the app
    refused = [*steps[:2], ("deploy", {"web_instances": 2}, "a deployment is in progress"), *steps[3:]]
    down = app([proc(0, 1, running=0, crashed=1)], [])
    assert run(spec.app_stays_available, [SERVING, zero, zero, SERVING, down], refused) is None


def test_a_cancel_takes_back_the_count_its_deploy_asked_for():
    """After scale(0), ``deploy(web_instances=1)`` is canceled: the cancel restores the
    original count, 0, which is what stands once the deploy's request is taken back, so
    the loss is excused. A second cancel (already CANCELING) gives back nothing more, and
    a cancel after the deployment finished has nothing of it to give back."""
    zero = app([proc(0, 0)], [])
    rolling = app([proc(0, 0), proc(1, 1)], [dep(0, "DEPLOYING", "DEPLOYING", 1, 0, web_instances=1)])
    canceling = app([proc(0, 0), proc(1, 1)], [dep(0, "CANCELING", "CANCELING", 1, 0, web_instances=1)])
    canceled = app([proc(0, 0)], [dep(0, "CANCELED", "CANCELED", 1, 0, web_instances=1)])
    steps = [("push", {"instances": 1}), ("scale", {"instances": 0}), ("deploy", {"web_instances": 1}),
             ("cancel", {}), ("tick", {})]
    assert run(spec.app_stays_available, [SERVING, zero, rolling, canceling, canceled], steps) is None
    refused = [*steps[:3], ("cancel", {}, "cannot cancel"), ("tick", {})]
    v = run(spec.app_stays_available, [SERVING, zero, rolling, rolling, canceled], refused)
    assert v is not None and v.step == 4  # a refused cancel takes nothing back
    deployed = app([proc(1, 1)], [dep(0, "DEPLOYED", "DEPLOYED", 1, 0, web_instances=1)])
    again = app([proc(1, 1), proc(2, 1, running=0, starting=1)],
                [dep(0, "DEPLOYED", "DEPLOYED", 1, 0, web_instances=1), dep(1, "DEPLOYING", "DEPLOYING", 2, 1)])
    back = app([proc(1, 1, running=0, crashed=1)],
               [dep(0, "DEPLOYED", "DEPLOYED", 1, 0, web_instances=1), dep(1, "CANCELED", "CANCELED", 2, 1)])
    later = [*steps[:3], ("tick", {}), ("deploy", {}), ("cancel", {}), ("tick", {})]
    canceling_again = {**again, "deployments": [again["deployments"][0], dep(1, "CANCELING", "CANCELING", 2, 1)]}
    v = run(spec.app_stays_available, [SERVING, zero, rolling, deployed, again, canceling_again, back], later)
    assert v is not None and v.step == 6  # the count asked stands: 1, not the 0 before it


def test_a_stopped_app_need_not_serve_and_must_serve_again_before_it_is_judged():
    down = stopped(app([proc(0, 1, running=0, crashed=1)], []))
    restarting = app([proc(0, 1, running=0, starting=1)], [])
    steps = [("push", {"instances": 1}), ("stop", {}), ("start", {})]
    assert run(spec.app_stays_available, [SERVING, down, restarting], steps) is None
    v = run(spec.app_stays_available, [SERVING, down, restarting, SERVING, DEPLOYING, SCALED_AWAY],
            steps + [("runtime", {"process": 0}), ("deploy", {}), ("tick", {})])
    assert v is not None and v.step == 5


def test_a_deleted_app_need_not_serve_and_its_new_push_starts_unjudged():
    starting = app([proc(0, 1, running=0, starting=1)], [])
    steps = [("push", {"instances": 1}), ("delete", {}), ("push", {"instances": 1})]
    assert run(spec.app_stays_available, [SERVING, NOTHING, starting], steps) is None


def test_nothing_is_judged_before_the_first_accepted_push():
    """The user has asked for nothing yet: the memory starts at "nothing asked"."""
    assert run(spec.app_stays_available, [SERVING, DEPLOYING, SCALED_AWAY],
               [("runtime", {"process": 0}), ("deploy", {}), ("tick", {})]) is None


def test_once_a_loss_is_reported_the_app_must_serve_again_before_it_is_judged_again():
    """After a loss the app is not serving: a next step still without a routable
    instance is the same outage, not a second one (the memory forgets "was serving")."""
    from deployspec.spec.core import Step

    down = app([proc(0, 1, running=0, crashed=1)], [])
    one = (1, None, ("scale", None))  # (who asked: the verb; the state it was asked in is not kept here)
    memory, message = spec.app_stays_available.advance(
        (True, one), Step(3, {"type": "tick"}, "platform", None, SERVING, down))
    assert message is not None and memory == (False, one)
    assert spec.app_stays_available.advance(
        memory, Step(4, {"type": "tick"}, "platform", None, down, down)) == ((False, one), None)
