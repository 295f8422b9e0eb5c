"""capi-current's API actions (deployment create, cancel, continue; process scale) against
cloud_controller_ng's own RSpec examples at 3bbba9069894b1b74652c7b88fdfd4171136c8c4
(spec/unit/actions/). Each test is one upstream ``it`` block, file:line in its docstring,
translated as in test_capi_upstream_rspec.py (the updater's examples)."""

from __future__ import annotations

from deployspec.reference.capi import VARIANTS
from deployspec.reference.capi.actions import Cancel, Continue, Deploy, Scale
from deployspec.reference.core import Rejected

from .upstream_rspec import D, P, build, counts, statuses, step

CURRENT = VARIANTS["capi-current"]


# ================================================================ deployment_cancel_spec.rb
def deployment_cancel_state(state):
    # the deployment ships droplet 1; the previous droplet 0; the app's droplet is 1
    return build([P(0, 1), P(1, 6, droplet=1)], [D(0, 1, state, droplet=1, previous=0)],
                 droplets=(True, True), app_droplet=1)


def test_deployment_cancel_deploying_sets_the_deployments_status_to_canceling():
    """deployment_cancel_spec.rb:38"""
    after = step(CURRENT, deployment_cancel_state("DEPLOYING"), Cancel())
    assert statuses(after, 0) == ("CANCELING", "ACTIVE", "CANCELING")


def test_deployment_cancel_resets_the_apps_current_droplet_to_the_previous_droplet():
    """deployment_cancel_spec.rb:49"""
    assert step(CURRENT, deployment_cancel_state("DEPLOYING"), Cancel()).app.droplet == 0


def test_deployment_cancel_canceling_does_not_fail_idempotent_canceling():
    """deployment_cancel_spec.rb:114"""
    after = step(CURRENT, deployment_cancel_state("CANCELING"), Cancel())
    assert statuses(after, 0) == ("CANCELING", "ACTIVE", "CANCELING")


def test_deployment_cancel_deployed_or_canceled_raises_an_error():
    """deployment_cancel_spec.rb:129, :141 (refused; the model's message differs)"""
    for state in ("DEPLOYED", "CANCELED"):
        assert isinstance(CURRENT.step(deployment_cancel_state(state), Cancel()), Rejected), state


# ================================================================ deployment_continue_spec.rb
def continue_state(state, reason="DEPLOYING", **extra):
    value = "FINALIZED" if state in ("DEPLOYED", "CANCELED") else "ACTIVE"
    return build([P(0, 1), P(1, 6)], [D(0, 1, state, value=value, reason=reason, strategy="canary", **extra)])


def test_deployment_continue_paused_no_steps_sets_the_deployments_status_to_deploying():
    """deployment_continue_spec.rb:33 (no steps) and :78 (canary_current_step 2, no steps)"""
    for extra in ({}, {"canary_step": 2}):
        after = step(CURRENT, continue_state("PAUSED", **extra), Continue())
        assert statuses(after, 0) == ("DEPLOYING", "ACTIVE", "DEPLOYING")


def test_deployment_continue_remaining_steps_sets_prepaused_and_increments_the_current_canary_step():
    """deployment_continue_spec.rb:124, :135"""
    after = step(CURRENT, continue_state("PAUSED", canary_steps=[10, 40], canary_step=1), Continue())
    assert statuses(after, 0) == ("PREPAUSED", "ACTIVE", "DEPLOYING")
    assert after.deployments[0].canary_step == 2


def test_deployment_continue_prepaused_or_deploying_raises_an_error():
    """deployment_continue_spec.rb:172, :184 (the model's message is upstream's)"""
    for state in ("PREPAUSED", "DEPLOYING"):
        out = CURRENT.step(continue_state(state), Continue())
        assert isinstance(out, Rejected)
        assert out.reason == "Cannot continue a deployment with status: ACTIVE and reason: DEPLOYING"


def test_deployment_continue_deployed_or_canceled_raises_an_error():
    """deployment_continue_spec.rb:196, :208 (refused; the model's message differs)"""
    for state, reason in (("DEPLOYED", "DEPLOYED"), ("CANCELED", "CANCELED")):
        assert isinstance(CURRENT.step(continue_state(state, reason), Continue()), Rejected), state


# ================================================================ deployment_create_spec.rb
def create_state(*instances):
    return build([P(i, n) for i, n in enumerate(instances)], [])


def test_deployment_create_creates_a_deployment_with_the_provided_droplet():
    """deployment_create_spec.rb:73 (and :167: the app's current droplet is the provided one)"""
    after = step(CURRENT, create_state(3), Deploy(new_droplet=True))
    d = after.deployments[0]
    assert statuses(after, 0) == ("DEPLOYING", "ACTIVE", "DEPLOYING")
    assert (d.droplet, d.previous_droplet, d.owic) == (1, 0, 3)
    assert after.app.droplet == 1


def test_deployment_create_creates_a_web_process_with_one_instance_saved_on_the_deployment():
    """deployment_create_spec.rb:173 (instances 1), :294 (two web processes, the newest deploys)"""
    after = step(CURRENT, create_state(3), Deploy(new_droplet=True))
    assert counts(after) == {0: 3, 1: 1}
    assert after.deployments[0].deploying_process == after.newest_process.id


def test_deployment_create_multiple_web_processes_creates_one_like_the_newer_web_process():
    """deployment_create_spec.rb:265 (restart; instances 1)"""
    after = step(CURRENT, create_state(3, 4), Deploy())
    assert counts(after) == {0: 3, 1: 4, 2: 1}


def test_deployment_create_existing_deploying_deployment_is_superseded_and_lends_its_owic():
    """deployment_create_spec.rb:429, :445"""
    before = build([P(0, 5), P(1, 1)], [D(0, 1, owic=10)])
    after = step(CURRENT, before, Deploy(new_droplet=True))
    assert statuses(after, 1) == ("DEPLOYING", "ACTIVE", "DEPLOYING")
    assert after.deployments[1].owic == 10 and after.deployments[1].previous_droplet == 0
    assert statuses(after, 0) == ("DEPLOYED", "FINALIZED", "SUPERSEDED")


def test_deployment_create_existing_canceling_deployment_is_set_to_canceled_superseded():
    """deployment_create_spec.rb:458"""
    before = build([P(0, 5), P(1, 1)], [D(0, 1, "CANCELING", owic=10)])
    after = step(CURRENT, before, Deploy(new_droplet=True))
    assert statuses(after, 0) == ("CANCELED", "FINALIZED", "SUPERSEDED")


def test_deployment_create_saves_max_in_flight_and_web_instances():
    """deployment_create_spec.rb:817 (10), :828 (default 1), :837 (web_instances 12), :845 (nil)"""
    d = step(CURRENT, create_state(3), Deploy(max_in_flight=10)).deployments[0]
    assert d.max_in_flight == 10 and d.web_instances is None
    assert step(CURRENT, create_state(3), Deploy()).deployments[0].max_in_flight == 1
    assert step(CURRENT, create_state(3), Deploy(web_instances=12)).deployments[0].web_instances == 12


def test_deployment_create_web_instances_creates_a_web_process_with_web_instances():
    """deployment_create_spec.rb:856 (mif 200, web_instances 10, original 5 -> 10),
    :867 (web_instances 5, original 10 -> 5)"""
    assert counts(step(CURRENT, create_state(5), Deploy(max_in_flight=200, web_instances=10)))[1] == 10
    assert counts(step(CURRENT, create_state(10), Deploy(max_in_flight=200, web_instances=5)))[1] == 5


def rollback_state():
    # droplet 0: the rollback revision's (pushed); 1: the latest revision's (deployed, d0);
    # 2: the app's current droplet, staged, no revision (the spec's original_droplet)
    return build([P(0, 3, droplet=1)], [D(0, 0, "DEPLOYED", owic=3, droplet=1, previous=0)],
                 droplets=(True, True, True), app_droplet=2)


def test_deployment_create_rollback_creates_a_deployment_with_the_revisions_droplet():
    """deployment_create_spec.rb:1173 (and :1199: the app's current droplet is the revision's)"""
    after = step(CURRENT, rollback_state(), Deploy(revision=0))
    d = after.deployments[1]
    assert d.state == "DEPLOYING" and (d.droplet, d.previous_droplet, d.owic) == (0, 2, 3)
    assert after.app.droplet == 0


def test_deployment_create_rollback_to_the_same_code_and_configuration_raises():
    """deployment_create_spec.rb:1298 (the model's message is upstream's)"""
    out = CURRENT.step(rollback_state(), Deploy(revision=1))
    assert isinstance(out, Rejected) and out.reason.startswith("Unable to rollback.")


def test_deployment_create_rolling_strategy():
    """deployment_create_spec.rb:1402 (rolling), :1412 (mif 2 -> 2 instances), :1419 (DEPLOYING),
    :1432 (mif 100 -> 3), :1519 (no strategy: rolling)"""
    after = step(CURRENT, create_state(3), Deploy(max_in_flight=2, new_droplet=True))
    assert after.deployments[0].strategy == "rolling" and statuses(after, 0)[0] == "DEPLOYING"
    assert counts(after)[1] == 2
    assert counts(step(CURRENT, create_state(3), Deploy(max_in_flight=100, new_droplet=True)))[1] == 3


def test_deployment_create_canary_strategy():
    """deployment_create_spec.rb:1444 (canary), :1454 (1 instance), :1461 (PREPAUSED),
    :1484 (steps saved), :1496 (steps 33/99, mif 1 -> 1), :1506 (mif 100 -> first step: 1)"""
    after = step(CURRENT, create_state(3), Deploy(strategy="canary", new_droplet=True))
    assert after.deployments[0].strategy == "canary" and statuses(after, 0)[0] == "PREPAUSED"
    assert counts(after)[1] == 1
    for mif in (1, 100):
        after = step(CURRENT, create_state(3), Deploy(max_in_flight=mif, strategy="canary", canary_steps=(33, 99),
                                             new_droplet=True))
        assert after.deployments[0].canary_steps == (33, 99) and counts(after)[1] == 1


# ================================================================ process_scale_spec.rb
def test_process_scale_scales_the_process_record():
    """process_scale_spec.rb:21 (instances 1 -> 2; memory/disk/log are not modelled)"""
    assert counts(step(CURRENT, create_state(1), Scale(2))) == {0: 2}


def test_process_scale_fails_if_the_process_is_web_while_the_app_is_being_deployed():
    """process_scale_spec.rb:151"""
    before = build([P(0, 1), P(1, 1)], [D(0, 1)])
    out = CURRENT.step(before, Scale(2))
    assert isinstance(out, Rejected)
    assert out.reason == "Cannot scale this process while a deployment is in flight."
