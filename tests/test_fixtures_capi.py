"""Fidelity: the "upstream test scenarios" of shared/domain/capi.md, as state fixtures.

Each builds a state from its observation, applies one updater dispatch, and
compares with the outcome the upstream unit spec asserts (spec paths and example
names in docs/upstream/cloud-controller.md section 5, cited per test).
"""

import pytest
from deployspec.reference.capi import VARIANTS, Deploy, from_observation, observe

from .helpers import app, dep, proc, tick

PRE_CANARY = ["capi-2022", "capi-pr3072", "capi-pr3084"]
WITH_SAFE = ["capi-safe"]
SINGLE_ACTIVE = ["capi-pr3072", "capi-pr3084"]


def shape(obs):
    return {p["id"]: len(p["instances"]) for p in obs["processes"]}


def roll_back(variant, obs, ticks=20):
    """capi-safe's graceful cancel: instances start between dispatches until the
    cancel step finishes; the app keeps a routable instance all along."""
    for _ in range(ticks):
        if obs["deployments"][-1]["state"] == "CANCELED":
            return obs
        obs["processes"] = [p | {"instances": ["RUNNING"] * len(p["instances"])} for p in obs["processes"]]
        obs = tick(variant, obs)
        assert any("RUNNING" in p["instances"] for p in obs["processes"])
    raise AssertionError(f"the cancel did not finish in {ticks} dispatches: {shape(obs)}")


@pytest.mark.parametrize("variant", PRE_CANARY + WITH_SAFE)
def test_cancel_simple(variant):
    """cancel_spec.rb 'rolls back to the correct number of instances': P0 2, Pd 0,
    CANCELING with owic 6 -> Pd gone, P0 at 6, CANCELED/FINALIZED/CANCELED."""
    obs = app([proc(0, 2), proc(1, 0)], [dep(0, "CANCELING", "CANCELING", 1, 6)])
    after = tick(variant, obs)
    if variant == "capi-safe":  # graceful: P0 grows one in flight, Pd stays until P0 is back
        assert shape(after) == {0: 3, 1: 0}
        assert after["deployments"][0]["state"] == "CANCELING"
        after = roll_back(variant, after)
    assert shape(after) == {0: 6}
    d = after["deployments"][0]
    assert (d["state"], d["status_value"], d["status_reason"]) == ("CANCELED", "FINALIZED", "CANCELED")


@pytest.mark.parametrize("variant", SINGLE_ACTIVE + WITH_SAFE)
def test_create_create_cancel_keeps_interim(variant):
    """cancel_spec.rb 'when there are interim deployments' / 'sets the most recent
    interim web process as the only web process'."""
    obs = app(
        [proc(0, 2), proc(1, 1), proc(2, 0)],
        [dep(0, "DEPLOYED", "SUPERSEDED", 1, 6), dep(1, "CANCELING", "CANCELING", 2, 6)],
    )
    after = tick(variant, obs)
    if variant == "capi-safe":
        after = roll_back(variant, after)
    assert shape(after) == {1: 6}


@pytest.mark.parametrize("variant", SINGLE_ACTIVE + WITH_SAFE)
def test_create_create_cancel_create_cancel_skips_canceled_interim(variant):
    """cancel_spec.rb 'when there is an interim deployment that has been SUPERSEDED
    (CANCELED)': P2 (newer than P1, its deployment CANCELED/SUPERSEDED) is skipped."""
    obs = app(
        [proc(0, 2), proc(1, 1), proc(2, 1), proc(3, 0)],
        [
            dep(0, "DEPLOYED", "SUPERSEDED", 1, 6),
            dep(1, "CANCELED", "SUPERSEDED", 2, 6),
            dep(2, "CANCELING", "CANCELING", 3, 6),
        ],
    )
    after = tick(variant, obs)
    if variant == "capi-safe":
        after = roll_back(variant, after)
    assert shape(after) == {1: 6}


def test_2022_cancel_keeps_newest_other_process():
    """Design 1 (4528366a, updater.rb cancel_deployment): the newest web process
    other than the canceled deployment's own survives: with a second deployment
    created meanwhile, that is its never-started process (the seed)."""
    obs = app(
        [proc(0, 1), proc(1, 1, running=0, crashed=1, droplet=1), proc(2, 1, running=0, starting=1, droplet=1)],
        [dep(0, "CANCELING", "CANCELING", 1, 1, droplet=1), dep(1, "DEPLOYING", "DEPLOYING", 2, 1, droplet=1)],
        droplets=(True, False),
    )
    after = tick("capi-2022", obs, failed=(1,))
    assert shape(after) == {2: 1}


def test_pr3084_skips_interim_without_running_instance():
    """cancel_spec.rb 'when there is an interim deployment that has no running web
    process instance' (PR #3084): Pn has no RUNNING instance, Pi has; Pi survives."""
    obs = app(
        [proc(0, 2), proc(1, 1), proc(2, 1, running=0, crashed=1), proc(3, 0)],
        [
            dep(0, "DEPLOYED", "SUPERSEDED", 1, 6),
            dep(1, "DEPLOYED", "SUPERSEDED", 2, 6),
            dep(2, "CANCELING", "CANCELING", 3, 6),
        ],
    )
    assert shape(tick("capi-pr3084", obs)) == {1: 6}
    assert shape(tick("capi-pr3072", obs)) == {2: 6}  # before #3084: the dead interim wins


@pytest.mark.parametrize("variant", PRE_CANARY)
def test_supersede_on_create_lends_owic(variant):
    """deployment_create_spec.rb 'when the existing deployment is DEPLOYING': the new
    deployment is DEPLOYING/ACTIVE/DEPLOYING with the old one's owic (10, while P0
    is at 5); the old one is DEPLOYED/FINALIZED/SUPERSEDED."""
    obs = app([proc(0, 5), proc(1, 1)], [dep(0, "DEPLOYING", "DEPLOYING", 1, 10)])
    after = observe(VARIANTS[variant].step(from_observation(obs), Deploy()))
    old, new = after["deployments"]
    assert (new["state"], new["status_value"], new["status_reason"], new["owic"]) == (
        "DEPLOYING", "ACTIVE", "DEPLOYING", 10)
    assert (old["state"], old["status_value"], old["status_reason"]) == ("DEPLOYED", "FINALIZED", "SUPERSEDED")


@pytest.mark.parametrize("variant", PRE_CANARY)
def test_supersede_of_canceling(variant):
    """deployment_create_spec.rb 'when the existing deployment is CANCELING': it
    becomes CANCELED/FINALIZED/SUPERSEDED (PR #3072); before, it stayed active."""
    obs = app([proc(0, 5), proc(1, 1)], [dep(0, "CANCELING", "CANCELING", 1, 10)])
    after = observe(VARIANTS[variant].step(from_observation(obs), Deploy()))
    old = after["deployments"][0]
    if variant == "capi-2022":
        assert old["state"] == "CANCELING"
        assert after["deployments"][1]["owic"] == 5  # from the oldest process's current count
    else:
        assert (old["state"], old["status_value"], old["status_reason"]) == ("CANCELED", "FINALIZED", "SUPERSEDED")


@pytest.mark.parametrize("variant", PRE_CANARY)
def test_rolling_step_moves_one_instance(variant):
    """scale_spec.rb 'after a new instance has been brought up' / 'scales the old web
    process down by one' (and design 1's updater_spec): P0 6, Pd 1 routable, max_in_flight 1
    -> P0 5, Pd 2."""
    obs = app([proc(0, 6), proc(1, 1)], [dep(0, "DEPLOYING", "DEPLOYING", 1, 6)])
    assert shape(tick(variant, obs)) == {0: 5, 1: 2}


@pytest.mark.parametrize("variant", PRE_CANARY)
def test_rolling_step_waits_for_starting(variant):
    """Design 1 updater_spec 'when one of the deploying_web_process instances is
    starting': nothing moves."""
    obs = app([proc(0, 6), proc(1, 3, running=1, starting=2)], [dep(0, "DEPLOYING", "DEPLOYING", 1, 6)])
    assert shape(tick(variant, obs)) == {0: 6, 1: 3}


@pytest.mark.parametrize("variant", PRE_CANARY)
def test_original_kept_at_zero(variant):
    """Design 1 updater_spec 'when the (oldest) web process will be at zero instances
    and is type web': P0 1, Pd 3 -> P0 0 (kept), Pd 4."""
    obs = app([proc(0, 1), proc(1, 3)], [dep(0, "DEPLOYING", "DEPLOYING", 1, 6)])
    assert shape(tick(variant, obs)) == {0: 0, 1: 4}


@pytest.mark.parametrize("variant", PRE_CANARY)
def test_finalize_when_owic_reached(variant):
    """updater_spec.rb 'when the deployment process has reached
    original_web_process_instance_count' / 'finalizes the deployment'."""
    obs = app([proc(0, 2), proc(1, 6)], [dep(0, "DEPLOYING", "DEPLOYING", 1, 6)])
    after = tick(variant, obs)
    assert shape(after) == {1: 6}
    assert after["deployments"][0]["status_reason"] == "DEPLOYED"


@pytest.mark.parametrize("variant", PRE_CANARY)
def test_failed_step_changes_nothing(variant):
    """Any step may fail (lock contention): its transaction rolls back."""
    obs = app([proc(0, 6), proc(1, 1)], [dep(0, "DEPLOYING", "DEPLOYING", 1, 6)])
    assert tick(variant, obs, failed=(0,)) == observe(from_observation(obs))
    assert tick(variant, obs) != observe(from_observation(obs))


def test_pr3072_zeroes_canceled_superseded_even_when_not_ready():
    """545fb70000 scale step: processes of CANCELED/SUPERSEDED deployments go to 0
    before the readiness check, so it is committed even when nothing else moves."""
    obs = app(
        [proc(0, 6), proc(1, 1), proc(2, 1, running=0, starting=1)],
        [dep(0, "CANCELED", "SUPERSEDED", 1, 6), dep(1, "DEPLOYING", "DEPLOYING", 2, 6)],
    )
    assert shape(tick("capi-pr3072", obs)) == {0: 6, 1: 0, 2: 1}
    assert shape(tick("capi-2022", obs)) == {0: 6, 1: 1, 2: 1}


def test_pr3084_report_failure_falls_back_to_empty_original():
    """53f45944b7: a failed instance report is rescued as 'not running', so the
    running interim is skipped and the original, scaled to 0 by the rollout, is
    kept: nothing is routable. capi-safe retries the step instead."""
    obs = app(
        [proc(0, 0), proc(1, 2), proc(2, 2, running=1, starting=1)],
        [dep(0, "DEPLOYED", "SUPERSEDED", 1, 2), dep(1, "CANCELING", "CANCELING", 2, 2)],
    )
    after = tick("capi-pr3084", obs, reports_unavailable=(1,))
    assert shape(after) == {0: 2}
    assert "RUNNING" not in after["processes"][0]["instances"]
    assert shape(tick("capi-pr3084", obs)) == {1: 2}  # with reports: the interim is kept
    safe = tick("capi-safe", obs, reports_unavailable=(1,))
    assert safe["deployments"][1]["state"] == "CANCELING"
    assert any("RUNNING" in p["instances"] for p in safe["processes"])


@pytest.mark.parametrize("variant", PRE_CANARY)
def test_a_deploying_process_that_is_its_own_donor_grows_by_one(variant):
    """[reading] updater.rb (4528366a, 545fb700) ``scale_deployment``: when only the
    deploying process has instances, the donor is a second Sequel object for the
    same row; both read n, the donor writes n - 1, the deploying one n + 1 last.
    So Pd grows one per dispatch until owic, then the deployment is finalized."""
    obs = app([proc(0, 0), proc(1, 0), proc(2, 2)],
              [dep(0, "DEPLOYED", "SUPERSEDED", 1, 3), dep(1, "DEPLOYING", "DEPLOYING", 2, 3)])
    after = tick(variant, obs)
    assert shape(after) == {0: 0, 1: 0, 2: 3}
    after["processes"][-1]["instances"] = ["RUNNING"] * 3
    after = tick(variant, after)
    assert shape(after) == {2: 3} and after["deployments"][1]["state"] == "DEPLOYED"


@pytest.mark.parametrize("variant", PRE_CANARY + ["capi-current"])
def test_a_cancel_whose_own_process_is_gone_fails(variant):
    """Every upstream cancel step locks the canceled deployment's process first
    (``deploying_web_process.lock!``); with that row gone it raises and nothing
    changes (before b94a64fbfb the next dispatch marks the deployment DEGENERATE)."""
    from deployspec.reference.capi import Tick, from_observation
    from deployspec.reference.capi.rules import Retry
    from deployspec.reference.capi.updater import (
        cancel_step_destroy_then_scale,
        cancel_step_scale_then_destroy,
    )

    obs = app([proc(0, 2), proc(3, 1)], [dep(0, "CANCELING", "CANCELING", 1, 2)])
    state = from_observation(obs)
    v = VARIANTS[variant]
    step = cancel_step_destroy_then_scale if variant == "capi-current" else cancel_step_scale_then_destroy
    assert v.cancel_step is step
    with pytest.raises(Retry, match="web process is gone"):
        step(v, state, state.deployments[0], True)
    after = observe(v.step(state, Tick()))
    if variant == "capi-current":
        assert after == observe(state)
    else:  # finalize_degenerate before the steps
        assert after["deployments"][0]["status_reason"] == "DEGENERATE"


@pytest.mark.parametrize("variant", PRE_CANARY)
def test_a_cancel_after_the_dispatchers_snapshot(variant):
    """[code] updater.rb at 4528366a: ``scale_deployment`` locks the deployment and
    scales it whatever its state, so a cancel committed between the dispatcher's
    snapshot and the step is undone (DEPLOYING again). PR #3072 (545fb700) checks
    the state under the lock and skips it."""
    from deployspec.reference.capi import Cancel, Tick, from_observation

    v = VARIANTS[variant]
    state = from_observation(app([proc(0, 2), proc(1, 1)], [dep(0, "DEPLOYING", "DEPLOYING", 1, 2)]))
    state = v.step(state, Tick(late=(0,)))
    assert state.pending == ((0, "DEPLOYING", None),) and observe(state)["processes"] == [proc(0, 2), proc(1, 1)]
    state = v.step(state, Cancel())
    assert state.deployments[0].state == "CANCELING"
    after = v.step(state, Tick())
    assert after.pending == ()
    if variant == "capi-2022":  # the late scale step ran first and undid the cancel
        assert after.deployments[0].state == "DEPLOYING"
        assert shape(observe(after)) == {0: 1, 1: 2}
    else:  # skipped; this tick's own dispatch then ran the cancel step
        assert after.deployments[0].state == "CANCELED"
