"""The properties judge observations; these sequences pin down their edges.

Each trace is built by hand, one observation per step, so a test says exactly
which branch of a property it exercises; the observations are checked against
``capi.observation.schema.json`` so the traces stay ones an implementation could report.
"""

import jsonschema
import pytest
from deployspec.spec import capi as spec
from deployspec.spec.core import Step

from deployspec.models import get_model

from .helpers import app, dep, feed, proc

SCHEMA = jsonschema.Draft202012Validator(get_model("capi").schema())
NOTHING = {"app": None, "droplets": [], "processes": [], "deployments": []}


def run(prop, observations, actions, before=NOTHING):
    """Feed one property a trace; the first violation, or None.

    ``actions``: ``(kind, args)``, or ``(kind, args, reason)`` for a refused action.
    """
    steps = [({"type": kind, **args}, obs, *refused)
             for obs, (kind, args, *refused) in zip(observations, actions, strict=True)]
    return feed(prop, SCHEMA, before, steps, ("tick", "runtime"))


def check(prop, obs):
    """A state property's verdict on one observation."""
    SCHEMA.validate(obs)
    return prop.advance(None, Step(0, {"type": "tick"}, "platform", None, obs, obs))[1]


def stopped(obs):
    return {**obs, "app": {**obs["app"], "started": False}}


# --- single_active_deployment -------------------------------------------------


def test_single_active_deployment():
    two = app([proc(0, 1)], [dep(0, "CANCELING", "CANCELING", 0, 1), dep(1, "DEPLOYING", "DEPLOYING", 0, 1)])
    one = app([proc(0, 1)], [dep(0, "CANCELED", "SUPERSEDED", 0, 1), dep(1, "DEPLOYING", "DEPLOYING", 0, 1)])
    assert "2 active deployments" in spec.single_active_deployment.advance(None, Step(0, {"type": "deploy"}, "user", None, one, two))[1]
    assert spec.single_active_deployment.advance(None, Step(0, {"type": "deploy"}, "user", None, two, one))[1] is None


@pytest.mark.parametrize("state", ["DEPLOYING", "PREPAUSED", "PAUSED", "CANCELING"])
def test_every_active_state_counts_toward_single_active_deployment(state):
    reason = "PAUSED" if state == "PREPAUSED" else state
    two = app([proc(0, 1)], [dep(0, state, reason, 0, 1), dep(1, "DEPLOYING", "DEPLOYING", 0, 1)])
    assert check(spec.single_active_deployment, two) == f"2 active deployments: d0 {state}, d1 DEPLOYING"


def test_finalized_deployments_do_not_count_toward_single_active_deployment():
    one = app([proc(0, 1)], [dep(0, "DEPLOYED", "DEPLOYED", 0, 1), dep(1, "CANCELED", "CANCELED", 0, 1),
                             dep(2, "DEPLOYING", "DEPLOYING", 0, 1)])
    assert check(spec.single_active_deployment, one) is None


# --- app_stays_available ------------------------------------------------------

SERVING = app([proc(0, 1)], [])
#: a rolling deployment has started a new process (P1) next to the serving one
DEPLOYING = app([proc(0, 1), proc(1, 1, running=0, starting=1)], [dep(0, "DEPLOYING", "DEPLOYING", 1, 1)])
#: ... and its scale step has taken P0's only instance while P1's is still starting
SCALED_AWAY = app([proc(0, 0), proc(1, 1, running=0, starting=1)], [dep(0, "DEPLOYING", "DEPLOYING", 1, 1)])


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
    """The user has asked for nothing yet: the memory starts at "0 instances wanted"."""
    assert run(spec.app_stays_available, [SERVING, DEPLOYING, SCALED_AWAY],
               [("runtime", {"process": 0}), ("deploy", {}), ("tick", {})]) is None


# _loss_cause: how the last routable instance went, named from the step that lost it.


def loss_cause(before, after, kind="tick", **args):
    """The cause app_stays_available names for a step from a serving app to ``after``."""
    v = run(spec.app_stays_available, [before, after], [("push", {"instances": 1}), (kind, args)],
            before=NOTHING)
    assert v is not None and v.step == 1, "the step should lose the last routable instance"
    return v.cause


def canceling(*processes, owic=1):
    """d0, deploying P1, is CANCELING; its cancel step has not run yet."""
    return app(list(processes), [dep(0, "CANCELING", "CANCELING", 1, owic)])


def canceled(*processes, owic=1):
    return app(list(processes), [dep(0, "CANCELED", "CANCELED", 1, owic)])


def test_loss_on_a_tick_with_no_cancel_pending_is_the_scale_step():
    assert loss_cause(DEPLOYING, SCALED_AWAY) == "scale-step"


def test_loss_on_a_tick_whose_cancel_step_failed_is_not_the_cancel():
    # two active deployments (before PR #3072): d0's cancel step fails, d1's scale step takes P0
    d1 = dep(1, "DEPLOYING", "DEPLOYING", 2, 1)
    before = app([proc(0, 1), proc(1, 1, running=0, starting=1), proc(2, 1, running=0, starting=1)],
                 [dep(0, "CANCELING", "CANCELING", 1, 1), d1])
    after = app([proc(0, 0), proc(1, 1, running=0, starting=1), proc(2, 1, running=0, starting=1)],
                [dep(0, "CANCELING", "CANCELING", 1, 1), d1])
    assert loss_cause(before, after, failed=[0]) == "scale-step"


def test_loss_on_a_tick_where_another_deployment_failed_is_still_the_cancel():
    before = canceling(proc(0, 1), proc(1, 1, running=0, starting=1))
    assert loss_cause(before, canceled(proc(1, 1, running=0, starting=1)), failed=[1]) == "cancel-keeps-unstarted"


def test_cancel_that_keeps_a_process_scaled_to_zero_restarts_it_from_zero():
    """docs-dev-guide #563: a canary canceled after a 100 % step."""
    before = canceling(proc(0, 0), proc(1, 1))
    after = canceled(proc(0, 1, running=0, starting=1))
    assert loss_cause(before, after) == "cancel-restarts-from-zero"


def test_cancel_that_keeps_a_serving_process_scales_it_down():
    # capi-pr3084: the user scaled to 0, deployed, and scaled the canceling deployment's process
    before = canceling(proc(0, 1), proc(1, 1, running=0, starting=1), owic=0)
    after = canceled(proc(0, 0), owic=0)
    assert loss_cause(before, after) == "cancel-scales-down-serving"


def test_cancel_that_keeps_crashed_instances_and_destroys_the_serving_process():
    # capi-2022: the kept process is an earlier deployment's, on an unhealthy droplet
    before = app([proc(0, 1), proc(1, 1, running=0, crashed=1, droplet=1), proc(2, 1, running=0, starting=1)],
                 [dep(0, "CANCELING", "CANCELING", 2, 1, droplet=1)], droplets=(True, False))
    after = app([proc(1, 1, running=0, crashed=1, droplet=1)],
                [dep(0, "CANCELED", "CANCELED", 2, 1, droplet=1)], droplets=(True, False))
    assert loss_cause(before, after) == "cancel-keeps-crashed"


def test_cancel_that_keeps_unstarted_instances_and_destroys_the_serving_and_crashed_ones():
    before = app([proc(0, 1), proc(1, 1, running=0, crashed=1, droplet=1), proc(2, 1, running=0, starting=1)],
                 [dep(0, "CANCELING", "CANCELING", 1, 1, droplet=1)], droplets=(True, False))
    after = app([proc(2, 1, running=0, starting=1)], [dep(0, "CANCELED", "CANCELED", 1, 1, droplet=1)],
                droplets=(True, False))
    assert loss_cause(before, after) == "cancel-keeps-unstarted"


def test_cancel_that_keeps_no_web_process_is_named_so():
    before = canceling(proc(0, 1), proc(1, 1, running=0, starting=1))
    assert loss_cause(before, canceled()) == "cancel-keeps-nothing"


def test_a_kept_process_left_at_zero_is_not_a_restart_from_zero():
    before = canceling(proc(0, 0), proc(1, 1, running=0, starting=1), proc(2, 1))
    after = canceled(proc(0, 0), proc(1, 1, running=0, starting=1))
    assert loss_cause(before, after) == "cancel-keeps-unstarted"


def test_loss_on_a_user_action_is_named_by_its_verb():
    # a deployment create that scaled the serving process down at once
    assert loss_cause(SERVING, SCALED_AWAY, kind="deploy") == "deploy"
    assert loss_cause(SERVING, app([proc(0, 1, running=0, starting=1)], []), kind="restart") == "restart"


# --- cancel_restores_last_good -----------------------------------------------


def test_cancel_restores_last_good_judged_when_runtime_settles():
    pushed = app([proc(0, 1)], [], droplets=(True, False))
    canceling = app([proc(0, 1), proc(1, 1, running=0, starting=1, droplet=1)],
                    [dep(0, "CANCELING", "CANCELING", 1, 1, droplet=1)], droplets=(True, False))
    canceled_bad = app([proc(1, 1, running=0, crashed=1, droplet=1)],
                       [dep(0, "CANCELED", "CANCELED", 1, 1, droplet=1)], droplets=(True, False))
    canceled_good = app([proc(0, 1)], [dep(0, "CANCELED", "CANCELED", 1, 1, droplet=1)], droplets=(True, False))
    steps = [("push", {"instances": 1}), ("deploy", {}), ("tick", {})]
    v = run(spec.cancel_restores_last_good, [pushed, canceling, canceled_bad], steps)
    assert v is not None and "not the healthy droplet 0 the app ran before" in v.message
    assert run(spec.cancel_restores_last_good, [pushed, canceling, canceled_good], steps) is None


def test_cancel_restores_a_healthy_droplet_the_app_ran():
    """The dead interim (PR #3072): the kept process ran before, but cannot start,
    while the app also ran a healthy droplet."""
    before = app([proc(0, 1, running=0, starting=1), proc(1, 1, running=0, crashed=1, droplet=1)],
                 [dep(0, "DEPLOYED", "SUPERSEDED", 1, 1, droplet=1)], droplets=(True, False))
    canceling = app(before["processes"] + [proc(2, 1, running=0, crashed=1, droplet=1)],
                    [dep(0, "DEPLOYED", "SUPERSEDED", 1, 1, droplet=1), dep(1, "CANCELING", "CANCELING", 2, 1, droplet=1)],
                    droplets=(True, False))
    canceled = app([proc(1, 1, running=0, crashed=1, droplet=1)],
                   [dep(0, "DEPLOYED", "SUPERSEDED", 1, 1, droplet=1), dep(1, "CANCELED", "CANCELED", 2, 1, droplet=1)],
                   droplets=(True, False))
    v = run(spec.cancel_restores_last_good, [before, canceling, canceled],
            [("push", {"instances": 1}), ("deploy", {}), ("tick", {})])
    assert v is not None and "not the healthy droplet 0 the app ran before" in v.message


def test_cancel_restores_owic():
    canceling = app([proc(0, 2), proc(1, 1)], [dep(0, "CANCELING", "CANCELING", 1, 3)])
    canceled = app([proc(0, 2)], [dep(0, "CANCELED", "CANCELED", 1, 3)])
    v = run(spec.cancel_restores_last_good, [canceling, canceled], [("cancel", {}), ("tick", {})])
    assert v is not None and "not the original 3" in v.message


def cancel_story(*kept, owic=1, droplets=(True, True), old=None):
    """Push P0 (droplet 0, or ``old``), deploy droplet 1 (P1), cancel, and a cancel step
    that leaves the web processes ``kept``: observations and actions for ``run``."""
    old = old or proc(0, owic)
    d0 = dep(0, "DEPLOYING", "DEPLOYING", 1, owic, droplet=1)
    pushed = app([old], [], droplets)
    deploying = app([old, proc(1, 1, running=0, starting=1, droplet=1)], [d0], droplets)
    cancel = app(deploying["processes"], [{**d0, "state": "CANCELING", "status_reason": "CANCELING"}], droplets)
    done = app(list(kept), [{**d0, "state": "CANCELED", "status_value": "FINALIZED", "status_reason": "CANCELED"}],
               droplets)
    return [pushed, deploying, cancel, done], [("push", {"instances": owic}), ("deploy", {}), ("cancel", {}),
                                              ("tick", {})]


def cancel_verdict(*kept, **kw):
    v = run(spec.cancel_restores_last_good, *cancel_story(*kept, **kw))
    return v and v.message


def test_cancel_that_restores_the_process_the_app_ran_is_fine():
    assert cancel_verdict(proc(0, 1)) is None


def test_cancel_must_leave_exactly_one_web_process():
    assert cancel_verdict(proc(0, 1), proc(1, 1, droplet=1)) == "cancel of d0 left 2 web processes"
    assert cancel_verdict() == "cancel of d0 left 0 web processes"


def test_cancel_must_restore_the_original_instance_count():
    assert cancel_verdict(proc(0, 2)) == "cancel of d0 left P0 with 2 instances, not the original 1"


def test_cancel_must_restore_a_healthy_droplet_the_app_ran_when_the_deployment_was_created():
    """What P0 ran before the deploy counts, not the deployment's own droplet (healthy too)."""
    assert cancel_verdict(proc(1, 1, droplet=1)) == (
        "cancel of d0 left P1 running droplet 1, not the healthy droplet 0 the app ran before the deployment")


def test_cancel_must_leave_every_instance_routable():
    assert cancel_verdict(proc(0, 2, running=1, crashed=1), owic=2) == (
        "cancel of d0 left P0 with 1 of 2 instances not routable")


def test_cancel_back_to_zero_instances_demands_no_droplet():
    assert cancel_verdict(proc(1, 0, droplet=1), owic=0) is None


def test_cancel_of_an_app_that_ran_no_healthy_droplet_has_nothing_to_restore():
    never_started = proc(0, 1, running=0, crashed=1)
    assert cancel_verdict(proc(0, 1, running=0, crashed=1), droplets=(False, True), old=never_started) is None
    assert cancel_verdict(proc(1, 1, droplet=1), droplets=(False, True), old=never_started) is None


def test_cancel_is_judged_once_the_kept_instances_have_started():
    observations, actions = cancel_story(proc(0, 1, running=0, starting=1))
    settles = [("runtime", {"process": 0})]
    started = {**observations[-1], "processes": [proc(0, 1)]}
    assert run(spec.cancel_restores_last_good, observations + [started], actions + settles) is None
    crashed = {**observations[-1], "processes": [proc(0, 1, running=0, crashed=1)]}
    v = run(spec.cancel_restores_last_good, observations + [crashed], actions + settles)
    assert (v.step, v.message) == (4, "cancel of d0 left P0 with 1 of 1 instances not routable")


def test_a_user_action_before_the_instances_start_takes_the_cancel_out_of_judgement():
    observations, actions = cancel_story(proc(0, 1, running=0, starting=1))
    scaled = {**observations[-1], "processes": [proc(0, 2, running=0, starting=2)]}
    crashed = {**observations[-1], "processes": [proc(0, 2, running=0, crashed=2)]}
    steps = [("scale", {"instances": 2}), ("runtime", {"process": 0})]
    assert run(spec.cancel_restores_last_good, observations + [scaled, crashed], actions + steps) is None


def test_a_refused_user_action_does_not_take_the_cancel_out_of_judgement():
    observations, actions = cancel_story(proc(0, 1, running=0, starting=1))
    crashed = {**observations[-1], "processes": [proc(0, 1, running=0, crashed=1)]}
    steps = [("scale", {"instances": 2}, "no such process"), ("runtime", {"process": 0})]
    v = run(spec.cancel_restores_last_good, observations + [observations[-1], crashed], actions + steps)
    assert v is not None and v.step == 5


def test_a_cancel_is_judged_once_not_again_when_the_app_crashes_later():
    observations, actions = cancel_story(proc(0, 1))
    crashed = {**observations[-1], "processes": [proc(0, 1, running=0, crashed=1)]}
    assert run(spec.cancel_restores_last_good, observations + [crashed],
               actions + [("runtime", {"process": 0})]) is None


def test_a_canceling_deployment_superseded_by_a_new_one_is_not_a_completed_cancel():
    observations, actions = cancel_story()
    canceling = observations[2]
    superseded = app([proc(0, 1), proc(1, 1, droplet=1), proc(2, 1)],
                     [{**canceling["deployments"][0], "state": "CANCELED", "status_value": "FINALIZED",
                       "status_reason": "SUPERSEDED"}, dep(1, "DEPLOYING", "DEPLOYING", 2, 1)], (True, True))
    assert run(spec.cancel_restores_last_good, observations[:3] + [superseded],
               actions[:3] + [("deploy", {})]) is None


def test_a_cancel_is_judged_against_what_the_app_ran_when_its_own_deployment_was_created():
    """Two active deployments (before PR #3072): d1 was created while d0 was CANCELING,
    when the app also ran d0's droplet 1; d0's cancel keeps P1, d0's own process."""
    observations, actions = cancel_story(proc(1, 1, droplet=1))
    pushed, deploying, cancel, _ = observations
    d0_canceling = cancel["deployments"][0]
    started = {**cancel, "processes": [proc(0, 1), proc(1, 1, droplet=1)]}
    second = app(started["processes"] + [proc(2, 1, running=0, starting=1)],
                 [d0_canceling, dep(1, "DEPLOYING", "DEPLOYING", 2, 1)], (True, True))
    done = app([proc(1, 1, droplet=1)], [{**d0_canceling, "state": "CANCELED", "status_value": "FINALIZED",
                                          "status_reason": "CANCELED"}, dep(1, "DEPLOYING", "DEPLOYING", 2, 1)],
               (True, True))
    v = run(spec.cancel_restores_last_good, [pushed, deploying, cancel, started, second, done],
            actions[:3] + [("runtime", {"process": 1}), ("deploy", {}), ("tick", {})])
    assert v.message == (
        "cancel of d0 left P1 running droplet 1, not the healthy droplet 0 the app ran before the deployment")


def test_deployments_seen_created_together_each_remember_what_the_app_ran():
    """An implementation observed between requests may show two deployments at once."""
    pushed = app([proc(0, 1)], [], (True, True, True))
    d1 = dep(1, "DEPLOYING", "DEPLOYING", 2, 1, droplet=2)
    two = app([proc(0, 1), proc(2, 1, running=0, starting=1, droplet=2)],
              [dep(0, "DEPLOYED", "SUPERSEDED", 1, 1, droplet=1), d1], (True, True, True))
    cancel = {**two, "deployments": [two["deployments"][0], {**d1, "state": "CANCELING", "status_reason": "CANCELING"}]}
    done = app([proc(2, 1, droplet=2)], [two["deployments"][0], {**d1, "state": "CANCELED", "status_value": "FINALIZED",
                                                                 "status_reason": "CANCELED"}], (True, True, True))
    v = run(spec.cancel_restores_last_good, [pushed, two, cancel, done],
            [("push", {"instances": 1}), ("deploy", {}), ("cancel", {}), ("tick", {})])
    assert v.message == (
        "cancel of d1 left P2 running droplet 2, not the healthy droplet 0 the app ran before the deployment")


# --- deployment_converges ----------------------------------------------------


def test_deployment_converges():
    stuck = app([proc(0, 1), proc(1, 1)], [dep(0, "DEPLOYING", "DEPLOYING", 1, 1)])
    stuck_bad = app([proc(0, 1), proc(1, 1, running=0, crashed=1, droplet=1)],
                    [dep(0, "DEPLOYING", "DEPLOYING", 1, 1, droplet=1)], droplets=(True, False))
    leftover = app([proc(0, 1), proc(1, 1)], [dep(0, "DEPLOYED", "DEPLOYED", 1, 1)])
    done = app([proc(1, 1)], [dep(0, "DEPLOYED", "DEPLOYED", 1, 1)])
    assert "still DEPLOYING" in spec.deployment_converges.at_settled(stuck)
    assert spec.deployment_converges.at_settled(stuck_bad) is None  # an unhealthy droplet never finishes
    assert "2 web processes remain" in spec.deployment_converges.at_settled(leftover)
    assert spec.deployment_converges.at_settled(done) is None


def test_deployment_converges_message_names_the_stuck_deployment():
    stuck = app([proc(0, 1), proc(1, 1, droplet=1)], [dep(0, "DEPLOYING", "DEPLOYING", 1, 1, droplet=1)],
                droplets=(True, True))
    assert spec.deployment_converges.at_settled(stuck) == (
        "d0 (healthy droplet 1) is still DEPLOYING after settling")


def test_a_paused_canary_waits_for_the_user_and_is_not_stuck():
    paused = app([proc(0, 1), proc(1, 1)], [dep(0, "PAUSED", "PAUSED", 1, 1)])
    assert spec.deployment_converges.at_settled(paused) is None


def test_a_prepaused_deployment_of_a_healthy_droplet_is_stuck():
    obs = app([proc(0, 1), proc(1, 1)], [dep(0, "PREPAUSED", "PAUSED", 1, 1)])
    assert spec.deployment_converges.at_settled(obs) == "d0 (healthy droplet 0) is still PREPAUSED after settling"


@pytest.mark.parametrize("healthy", [True, False])
def test_a_cancel_must_complete_whatever_the_health_of_the_canceled_droplet(healthy):
    """Upstream keeps a deployment of a droplet that cannot start DEPLOYING, but
    canceling it restores the previous process: nothing excuses a cancel that never ends
    (capi-safe's graceful roll-back once waited forever for a prior process whose
    instances crash)."""
    obs = app([proc(0, 1, running=0, crashed=1, droplet=1), proc(1, 1, running=0, crashed=1, droplet=1)],
              [dep(0, "CANCELING", "CANCELING", 1, 1, droplet=1)], droplets=(True, healthy))
    assert spec.deployment_converges.at_settled(obs) == "d0 is still CANCELING after settling"


def test_with_no_deployment_active_exactly_one_web_process_remains():
    assert spec.deployment_converges.at_settled(app([], [])) == "0 web processes remain with no deployment active"
    assert spec.deployment_converges.at_settled(app([proc(0, 1)], [])) is None


def test_an_app_not_pushed_yet_has_nothing_to_converge():
    assert spec.deployment_converges.at_settled(NOTHING) is None


def test_a_settle_phase_cut_by_its_bound_says_so():
    """deployment_converges is bounded liveness: when the bound, not the platform,
    ends the settle phase, the complaint says which bound to raise."""
    import attrs
    from deployspec.reference.capi.actions import Deploy, Push, Runtime, Stage

    from deployspec.adapter import ReferenceAdapter
    from deployspec.models import get_model
    from deployspec.session import Session

    model = get_model("capi")
    prop = model.property("deployment_converges")

    def settled_after(settle_steps):
        config = attrs.evolve(model.default_config(), settle_steps=settle_steps)
        session = Session(model, ReferenceAdapter(model, model.variant("capi-safe")), (prop,), config)
        for action in (Push(2), Runtime(0), Runtime(0), Stage(True), Deploy()):
            assert session.perform(action) is None
        return session.settle(), len(session.steps) - session.settle_from

    v, steps = settled_after(3)
    assert steps == 3 and v is not None
    assert v.message.endswith("(the settle phase was cut at settle_steps=3: the platform was still busy)")
    assert settled_after(80)[0] is None  # given room, it converges
    _, needed = settled_after(80)
    v, steps = settled_after(needed)  # exactly enough: finished, not cut
    assert v is None and steps == needed


# --- user_scale_not_lost ------------------------------------------------------


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
    assert v.message == "the app has 1 web instance(s) after step 4 (tick()), but the last accepted scale asked for 3"


def test_scale_down_accepted_while_canceling_is_lost_the_same_way():
    deploying = app([proc(0, 3), proc(1, 1, running=0, starting=1)], [dep(0, "DEPLOYING", "DEPLOYING", 1, 3)])
    cancel = {**deploying, "deployments": [dep(0, "CANCELING", "CANCELING", 1, 3)]}
    scaled = {**cancel, "processes": [proc(0, 3), proc(1, 1, running=0, starting=1)]}
    done = app([proc(0, 3)], [dep(0, "CANCELED", "CANCELED", 1, 3)])
    v = run(spec.user_scale_not_lost, [app([proc(0, 3)], []), deploying, cancel, scaled, done],
            [("push", {"instances": 3}), ("deploy", {}), ("cancel", {}), ("scale", {"instances": 1}), ("tick", {})])
    assert v is not None and "has 3 web instance(s)" in v.message and "asked for 1" in v.message


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


def test_a_deploy_with_web_instances_asks_for_a_new_count_and_stops_the_watch():
    deploying = app([proc(0, 1), proc(1, 3, running=0, starting=3)],
                    [dep(0, "DEPLOYING", "DEPLOYING", 1, 1, web_instances=3)])
    deployed = app([proc(1, 3)], [dep(0, "DEPLOYED", "DEPLOYED", 1, 1, web_instances=3)])
    assert run(spec.user_scale_not_lost, [SERVING, deploying, deployed],
               [("push", {"instances": 1}), ("deploy", {"web_instances": 3}), ("tick", {})]) is None


def test_a_deploy_without_web_instances_keeps_the_watch():
    deploying = app([proc(0, 2), proc(1, 1, running=0, starting=1)], [dep(0, "DEPLOYING", "DEPLOYING", 1, 2)])
    deployed = app([proc(1, 1)], [dep(0, "DEPLOYED", "DEPLOYED", 1, 2)])
    v = run(spec.user_scale_not_lost, [app([proc(0, 2)], []), deploying, deployed],
            [("push", {"instances": 2}), ("deploy", {"web_instances": 0, "max_in_flight": 1}), ("tick", {})])
    assert v is not None and "asked for 2" in v.message


def test_the_watch_starts_at_the_first_accepted_push_or_scale():
    """A trace may start on an app that exists already: nothing was asked yet."""
    assert run(spec.user_scale_not_lost, [SERVING, app([proc(0, 2)], [])],
               [("runtime", {"process": 0}), ("stage", {"healthy": True})]) is None


def test_a_deleted_app_loses_no_scale():
    assert run(spec.user_scale_not_lost, [SERVING, NOTHING],
               [("push", {"instances": 1}), ("delete", {})]) is None


def test_once_a_lost_scale_is_reported_the_watch_stops_until_the_next_request():
    lost = Step(3, {"type": "tick"}, "platform", None, app([proc(0, 3)], []), SERVING)
    memory, message = spec.user_scale_not_lost.advance(3, lost)
    assert message is not None and memory is None
    assert spec.user_scale_not_lost.advance(memory, Step(4, {"type": "tick"}, "platform", None, SERVING,
                                                         SERVING)) == (None, None)


# --- capacity_within_bound ----------------------------------------------------


def test_capacity_bound_is_the_original_count_plus_max_in_flight_defaulting_to_one():
    assert spec.capacity_bound(dep(0, "DEPLOYING", "DEPLOYING", 1, 2)) == 3
    assert spec.capacity_bound(dep(0, "DEPLOYING", "DEPLOYING", 1, 2, max_in_flight=3)) == 5


def test_capacity_bound_takes_web_instances_when_larger():
    assert spec.capacity_bound(dep(0, "DEPLOYING", "DEPLOYING", 1, 2, web_instances=4)) == 5
    assert spec.capacity_bound(dep(0, "DEPLOYING", "DEPLOYING", 1, 4, web_instances=1)) == 5
    assert spec.capacity_bound(dep(0, "DEPLOYING", "DEPLOYING", 1, 2, web_instances=None)) == 3


def capacity(before, after, kind="tick", **args):
    """capacity_within_bound's verdict on one step (it keeps no memory)."""
    SCHEMA.validate(before)
    SCHEMA.validate(after)
    actor = "platform" if kind == "tick" else "user"
    return spec.capacity_within_bound.advance(None, Step(5, {"type": kind, **args}, actor, None, before, after))[1]


def rolling(old, new, *deployments):
    """P0 with ``old`` instances, the deployment's P1 with ``new`` (starting)."""
    return app([proc(0, old), proc(1, new, running=0, starting=new)], list(deployments))


def test_an_updater_step_may_fill_the_bound_but_not_exceed_it():
    d = dep(0, "DEPLOYING", "DEPLOYING", 1, 2)
    assert capacity(rolling(2, 0, d), rolling(2, 1, d)) is None
    v = capacity(rolling(2, 1, d), rolling(2, 2, d), failed=[])
    assert v == ("step 5 (tick()) raised the app to 4 desired web instances while d0 is DEPLOYING, "
                 "above its bound 3 (original 2 + max_in_flight 1)")
    assert v.cause == "tick"


def test_capacity_message_names_web_instances_and_max_in_flight():
    d = dep(0, "DEPLOYING", "DEPLOYING", 1, 2, web_instances=4, max_in_flight=2)
    assert capacity(rolling(2, 3, d), rolling(2, 4, d)) is None
    assert capacity(rolling(2, 4, d), rolling(2, 5, d)) == (
        "step 5 (tick()) raised the app to 7 desired web instances while d0 is DEPLOYING, "
        "above its bound 6 (original 2, web_instances 4 + max_in_flight 2)")


def test_a_deployment_create_above_the_bound_is_named_by_its_verb():
    d = dep(0, "DEPLOYING", "DEPLOYING", 1, 2)
    v = capacity(app([proc(0, 2)], []), rolling(2, 2, d), kind="deploy", max_in_flight=1, canary_steps=[])
    assert v.cause == "deploy" and v.startswith("step 5 (deploy(max_in_flight=1)) raised the app to 4 ")


def test_paused_and_prepaused_deployments_are_in_progress_and_bounded():
    for state in ("PREPAUSED", "PAUSED"):
        d = dep(0, state, "PAUSED", 1, 1)
        assert capacity(rolling(1, 1, d), rolling(1, 2, d)).cause == "tick"


def test_a_canceling_deployment_is_not_in_progress_and_not_bounded():
    d = dep(0, "CANCELING", "CANCELING", 1, 1)
    assert capacity(rolling(1, 1, d), rolling(1, 3, d), kind="scale", instances=3) is None


def test_with_no_deployment_in_progress_the_app_may_scale_freely():
    assert capacity(app([proc(0, 1)], []), app([proc(0, 5)], []), kind="scale", instances=5) is None


def test_the_count_may_stay_above_a_bound_lowered_by_a_newer_deployment_while_nothing_adds_to_it():
    d = dep(1, "DEPLOYING", "DEPLOYING", 1, 1)
    older = dep(0, "DEPLOYED", "SUPERSEDED", 0, 4)
    assert capacity(rolling(4, 1, older, d), rolling(4, 1, older, d)) is None  # 5 > 2, unchanged
    assert capacity(rolling(4, 1, older, d), rolling(3, 1, older, d)) is None  # going down


def test_the_newest_deployment_in_progress_sets_the_bound():
    """Two in progress (before PR #3072): the newer one's lower bound is the one judged."""
    older, newer = dep(0, "DEPLOYING", "DEPLOYING", 1, 5), dep(1, "DEPLOYING", "DEPLOYING", 1, 1)
    v = capacity(rolling(1, 1, older, newer), rolling(1, 2, older, newer))
    assert v is not None and "while d1 is DEPLOYING, above its bound 2" in v
