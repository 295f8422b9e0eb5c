"""The properties judged on one step alone, with no memory: single_active_deployment, capacity_within_bound."""

import pytest
from deployspec.spec import capi as spec
from deployspec.spec.core import Step

from .helpers import app, dep, proc
from .property_traces import SCHEMA, check

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


def test_a_deployment_is_active_by_its_state_whatever_its_status_says():
    """An implementation may write the status before the state: d0, still CANCELING,
    already says FINALIZED/CANCELED, and is active all the same (as in
    cancel_restores_last_good, the state says when a cancel has completed)."""
    d0 = {**dep(0, "CANCELING", "CANCELING", 0, 1), "status_value": "FINALIZED", "status_reason": "CANCELED"}
    two = app([proc(0, 1)], [d0, dep(1, "DEPLOYING", "DEPLOYING", 0, 1)])
    assert check(spec.single_active_deployment, two) == "2 active deployments: d0 CANCELING, d1 DEPLOYING"


def test_finalized_deployments_do_not_count_toward_single_active_deployment():
    one = app([proc(0, 1)], [dep(0, "DEPLOYED", "DEPLOYED", 0, 1), dep(1, "CANCELED", "CANCELED", 0, 1),
                             dep(2, "DEPLOYING", "DEPLOYING", 0, 1)])
    assert check(spec.single_active_deployment, one) is None


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
    assert v.cause == "deploy" and v.startswith("step 5 (deploy()) raised the app to 4 ")


def test_paused_and_prepaused_deployments_are_in_progress_and_bounded():
    for state in ("PREPAUSED", "PAUSED"):
        d = dep(0, state, "PAUSED", 1, 1)
        assert capacity(rolling(1, 1, d), rolling(1, 2, d)).cause == "tick"


def test_a_canceling_deployment_bounds_its_roll_back_but_not_a_user_s_scale():
    """The roll-back scales the prior process up as the deployment scaled its own: a step
    of the updater's (or a cancel's own) over the bound while CANCELING breaks the quota
    too (it was not judged: a roll-back by max_in_flight + 1 held). A scale some designs
    accept then (or a push) is the user's own count (user_scale_not_lost judges it)."""
    d = dep(0, "CANCELING", "CANCELING", 1, 2)
    assert capacity(rolling(1, 1, d), rolling(1, 3, d), kind="scale", instances=3) is None
    assert capacity(rolling(1, 1, d), rolling(1, 3, d), kind="push", instances=3) is None  # the user's count too
    assert capacity(rolling(1, 1, d), rolling(2, 1, d)) is None  # at the bound: 3
    v = capacity(rolling(2, 1, d), rolling(3, 1, d))
    assert v == ("step 5 (tick()) raised the app to 4 desired web instances while d0 is CANCELING, "
                 "above its bound 3 (original 2 + max_in_flight 1)") and v.cause == "tick"
    # a cancel that scales the prior process up at once breaks the bound as the updater would
    deploying = dep(0, "DEPLOYING", "DEPLOYING", 1, 2)
    assert capacity(rolling(1, 2, deploying), rolling(2, 2, d), kind="cancel").cause == "cancel"
    # a scale while an older deployment is in progress is judged by that one, as before
    older = dep(0, "DEPLOYING", "DEPLOYING", 1, 1)
    newer = dep(1, "CANCELING", "CANCELING", 1, 1)
    assert capacity(rolling(1, 1, older, newer), rolling(1, 3, older, newer), kind="scale", instances=3) \
        .startswith("step 5 (scale(instances=3)) raised the app to 4 desired web instances while d0 is DEPLOYING")


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


# --- deployment_ships_its_droplet -------------------------------------------------


def ships(before, after, kind="tick", **args):
    """deployment_ships_its_droplet's verdict on one step (it keeps no memory)."""
    SCHEMA.validate(before)
    SCHEMA.validate(after)
    actor = "platform" if kind == "tick" else "user"
    return spec.deployment_ships_its_droplet.advance(None, Step(5, {"type": kind, **args}, actor, None, before,
                                                                after))[1]


TWO_DROPLETS = (True, True)


def test_a_finalized_deployment_leaves_only_processes_on_its_droplet():
    """The deploying process of droplet 1 becomes the web process: shipped. One whose process
    ran the old droplet, or that left another process on it, shipped nothing."""
    deploying = dep(0, "DEPLOYING", "DEPLOYING", 1, 1, droplet=1)
    done = dep(0, "DEPLOYED", "DEPLOYED", 1, 1, droplet=1)
    before = app([proc(0, 1), proc(1, 1, droplet=1)], [deploying], TWO_DROPLETS)
    assert ships(before, app([proc(1, 1, droplet=1)], [done], TWO_DROPLETS)) is None
    v = ships(before, app([proc(1, 1, droplet=0)], [done], TWO_DROPLETS))
    assert v == "d0 was finalized at step 5 (tick()) with P1 on droplet 0, not its droplet 1"
    v = ships(before, app([proc(0, 1), proc(1, 1, droplet=1)], [done], TWO_DROPLETS))
    assert v is not None and "with P0 on droplet 0" in v


def test_only_the_step_that_finalizes_is_judged_and_a_superseded_deployment_is_not_finalized():
    """DEPLOYED for reason SUPERSEDED ships nothing (a newer deployment took over); a deployment
    finalized before the step is not judged again, when a newer one's process runs another droplet."""
    deploying = dep(0, "DEPLOYING", "DEPLOYING", 1, 1, droplet=1)
    before = app([proc(0, 1), proc(1, 1, droplet=1)], [deploying], TWO_DROPLETS)
    superseded = dep(0, "DEPLOYED", "SUPERSEDED", 1, 1, droplet=1)
    newer = dep(1, "DEPLOYING", "DEPLOYING", 2, 1)
    after = app([proc(0, 1), proc(1, 1, droplet=1), proc(2, 1, running=0, starting=1)], [superseded, newer],
                TWO_DROPLETS)
    assert ships(before, after, kind="deploy") is None
    done = dep(0, "DEPLOYED", "DEPLOYED", 1, 1, droplet=1)
    later = app([proc(1, 1, droplet=1), proc(2, 1, running=0, starting=1)], [done, newer], TWO_DROPLETS)
    assert ships(later, later) is None
    # the late Finalize of capi-current: DEPLOYED written over SUPERSEDED is a finalizing
    v = ships(after, later)
    assert v == "d0, superseded before, was finalized at step 5 (tick()) with P2 on droplet 0, not its droplet 1"
