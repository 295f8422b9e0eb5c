"""cancel_restores_last_good: what a completed cancel must leave, and when it is judged."""

from deployspec.spec import capi as spec

from .helpers import app, dep, proc
from .property_traces import run


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


def cancel_story(*kept, owic=1, droplets=(True, True), old=None, web_instances=0):
    """Push P0 (droplet 0, or ``old``), deploy droplet 1 (P1; asking for ``web_instances``
    if not 0), cancel, and a cancel step that leaves the web processes ``kept``:
    observations and actions for ``run``."""
    old = old or proc(0, owic)
    asked = {"web_instances": web_instances} if web_instances else {}
    d0 = dep(0, "DEPLOYING", "DEPLOYING", 1, owic, droplet=1, **asked)
    pushed = app([old], [], droplets)
    deploying = app([old, proc(1, 1, running=0, starting=1, droplet=1)], [d0], droplets)
    cancel = app(deploying["processes"], [{**d0, "state": "CANCELING", "status_reason": "CANCELING"}], droplets)
    done = app(list(kept), [{**d0, "state": "CANCELED", "status_value": "FINALIZED", "status_reason": "CANCELED"}],
               droplets)
    return [pushed, deploying, cancel, done], [("push", {"instances": owic}), ("deploy", asked), ("cancel", {}),
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
    assert cancel_verdict(proc(0, 1), owic=3) == "cancel of d0 left P0 with 1 instance, not the original 3"


def test_cancel_must_restore_the_original_count_not_the_one_the_canceled_deployment_asked_for():
    """The original count is owic, what the app had before the deployment: a deployment
    that asked for more with web_instances gives its count up when it is canceled."""
    assert cancel_verdict(proc(0, 1), web_instances=3) is None
    assert cancel_verdict(proc(0, 3), web_instances=3) == "cancel of d0 left P0 with 3 instances, not the original 1"


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


def test_a_later_deployment_remembers_what_the_app_ran_when_it_was_created_not_before():
    """d0 rolled P0 (droplet 0) over to P1 (droplet 1); d1 was created when the app ran
    only droplet 1, so a cancel of d1 that brings back droplet 0 restores no last good
    (an older release is not the one the canceled deployment replaced)."""
    drops = (True, True, True)
    d0 = dep(0, "DEPLOYING", "DEPLOYING", 1, 1, droplet=1)
    d0_done = {**d0, "state": "DEPLOYED", "status_value": "FINALIZED", "status_reason": "DEPLOYED"}
    d1 = dep(1, "DEPLOYING", "DEPLOYING", 2, 1, droplet=2)
    d1_canceled = {**d1, "state": "CANCELED", "status_value": "FINALIZED", "status_reason": "CANCELED"}
    observations = [
        app([proc(0, 1)], [], drops),
        app([proc(0, 1), proc(1, 1, running=0, starting=1, droplet=1)], [d0], drops),
        app([proc(0, 1), proc(1, 1, droplet=1)], [d0], drops),
        app([proc(1, 1, droplet=1)], [d0_done], drops),
        app([proc(1, 1, droplet=1), proc(2, 1, running=0, starting=1, droplet=2)], [d0_done, d1], drops),
        app([proc(1, 1, droplet=1), proc(2, 1, running=0, starting=1, droplet=2)],
            [d0_done, {**d1, "state": "CANCELING", "status_reason": "CANCELING"}], drops),
        app([proc(3, 1)], [d0_done, d1_canceled], drops),
    ]
    actions = [("push", {"instances": 1}), ("deploy", {}), ("runtime", {"process": 1}), ("tick", {}),
               ("deploy", {}), ("cancel", {}), ("tick", {})]
    v = run(spec.cancel_restores_last_good, observations, actions)
    assert v is not None and v.step == 6 and v.message == (
        "cancel of d1 left P3 running droplet 0, not the healthy droplet 1 the app ran before the deployment")
    restored = [*observations[:-1], app([proc(1, 1, droplet=1)], [d0_done, d1_canceled], drops)]
    assert run(spec.cancel_restores_last_good, restored, actions) is None


def test_a_cancel_is_complete_when_its_state_is_canceled_not_when_its_reason_is_written():
    """An implementation may write the status reason before the state: a deployment
    still CANCELING is no completed cancel to judge, whatever its reason says."""
    observations, actions = cancel_story(proc(0, 1))
    cancel = observations[2]
    started = {**cancel, "processes": [proc(0, 1), proc(1, 1, droplet=1)]}
    reason_first = {**started, "deployments": [{**cancel["deployments"][0], "status_reason": "CANCELED"}]}
    assert run(spec.cancel_restores_last_good, [*observations[:3], started, reason_first, observations[3]],
               [*actions[:3], ("runtime", {"process": 1}), ("tick", {}), ("tick", {})]) is None
