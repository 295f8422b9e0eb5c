"""capi-current's deployment updater against cloud_controller_ng's own RSpec examples at
3bbba9069894b1b74652c7b88fdfd4171136c8c4 (spec/unit/lib/cloud_controller/deployment_updater/):
cancel, finalize, the Updater and its dispatcher (the scale action and its scalers:
test_capi_upstream_rspec.py, whose docstring says how upstream's stubs map onto the model).

Each test is one upstream ``it`` block (file:line in its docstring), translated to a
model state and a model action.
"""

from __future__ import annotations

from deployspec.reference.capi import VARIANTS, updater
from deployspec.reference.capi.actions import Tick

from .upstream_rspec import D, P, build, counts, statuses, step

CURRENT = VARIANTS["capi-current"]


# ================================================================ cancel_spec.rb
def cancel_state(web=2, deploying=0):
    return build([P(0, web), P(1, deploying)], [D(0, 1, "CANCELING")])


def test_cancel_deletes_the_deploying_process_and_rolls_back_to_the_correct_number_of_instances():
    """cancel_spec.rb:67, :72"""
    after = step(CURRENT, cancel_state(), Tick())
    assert counts(after) == {0: 6}


def test_cancel_sets_the_deployment_to_canceled():
    """cancel_spec.rb:78"""
    after = step(CURRENT, cancel_state(), Tick())
    assert statuses(after, 0) == ("CANCELED", "FINALIZED", "CANCELED")


def test_cancel_interim_deployments_scales_up_the_most_recent_interim_as_the_only_web_process():
    """cancel_spec.rb:103, :109: web 2, interim 1 (DEPLOYED/SUPERSEDED, running), deploying 0."""
    before = build([P(0, 2), P(1, 1), P(2, 0)],
                   [D(0, 1, "DEPLOYED", reason="SUPERSEDED"), D(1, 2, "CANCELING")])
    after = step(CURRENT, before, Tick())
    assert counts(after) == {1: 6}
    assert statuses(after, 1) == ("CANCELED", "FINALIZED", "CANCELED")


def test_cancel_sets_the_most_recent_interim_of_a_superseded_deployed_deployment_as_the_only_web_process():
    """cancel_spec.rb:128: a newer interim of a CANCELED/SUPERSEDED deployment is not chosen."""
    before = build([P(0, 2), P(1, 1), P(2, 1), P(3, 0)],
                   [D(0, 1, "DEPLOYED", reason="SUPERSEDED"), D(1, 2, "CANCELED", reason="SUPERSEDED"),
                    D(2, 3, "CANCELING")])
    after = step(CURRENT, before, Tick())
    assert counts(after) == {1: 6}


def test_cancel_sets_the_most_recent_interim_having_a_running_instance_as_the_only_web_process():
    """cancel_spec.rb:159: the newest interim reports STARTING/CRASHED/DOWN (no RUNNING)."""
    for report in ("S", "C"):
        before = build([P(0, 2), P(1, 1), P(2, report), P(3, 0)],
                       [D(0, 1, "DEPLOYED", reason="SUPERSEDED"), D(1, 2, "DEPLOYED", reason="SUPERSEDED"),
                        D(2, 3, "CANCELING")])
        after = step(CURRENT, before, Tick())
        assert counts(after) == {1: 6}, report


def test_cancel_deployment_got_superseded_skips_execution():
    """cancel_spec.rb:173"""
    before = build([P(0, 2), P(1, 0)], [D(0, 1, "CANCELED", reason="SUPERSEDED")])
    assert updater.cancel_step_destroy_then_scale(CURRENT, before, before.deployments[0], True) == before


def test_cancel_when_the_app_is_at_a_quota_limit_can_still_be_cancelled_succesfully():
    """cancel_spec.rb:184 (the quota is not modelled; web 1, deploying 6 -> web 6)"""
    after = step(CURRENT, cancel_state(web=1, deploying=6), Tick())
    assert counts(after) == {0: 6}


# ================================================================ finalize_spec.rb
def finalize_state():
    # original 3 (3 h ago), interim 1 (1 h ago), deploying 3 (now), owic 3
    return build([P(0, 3), P(1, 1), P(2, 3)], [D(0, 2, owic=3)])


def test_finalize_puts_the_deployment_into_its_finished_deployed_state():
    """finalize_spec.rb:97"""
    s = finalize_state()
    assert statuses(updater.finalize(s, s.deployments[0]), 0) == ("DEPLOYED", "FINALIZED", "DEPLOYED")


def test_finalize_cleans_up_extra_processes_and_replaces_the_web_process_with_the_deploying_one():
    """finalize_spec.rb:125, :143 (web processes only: the worker/nonweb ones are not modelled)"""
    s = finalize_state()
    assert counts(updater.finalize(s, s.deployments[0])) == {2: 3}


# ================================================================ updater_spec.rb
def test_updater_scale_reached_owic_finalizes_the_deployment():
    """updater_spec.rb:93"""
    after = step(CURRENT, build([P(0, 2), P(1, 6)], [D(0, 1)]), Tick())
    assert statuses(after, 0) == ("DEPLOYED", "FINALIZED", "DEPLOYED")
    assert counts(after) == {1: 6}


def test_updater_scale_with_web_instances_scales_to_web_instances_instead_of_owic():
    """updater_spec.rb:130 (web_instances 10, max_in_flight 100)"""
    after = step(CURRENT, build([P(0, 2), P(1, 0)], [D(0, 1, max_in_flight=100, web_instances=10)]), Tick())
    assert counts(after)[1] == 10


def test_updater_scale_without_web_instances_scales_to_owic():
    """updater_spec.rb:142"""
    after = step(CURRENT, build([P(0, 2), P(1, 0)], [D(0, 1, max_in_flight=100)]), Tick())
    assert counts(after)[1] == 6


def canary_state(web, report, steps=(50, 80), owic=10):
    return build([P(0, web), P(1, report)],
                 [D(0, 1, "PREPAUSED", owic=owic, strategy="canary", canary_steps=list(steps), canary_step=1)])


def test_updater_canary_steps_current_step_reached_transitions_state_to_paused():
    """updater_spec.rb:224: owic 10, steps 50/80 -> step 1 is 5 canary + 6 original"""
    after = step(CURRENT, canary_state(8, 5), Tick())
    assert statuses(after, 0)[0] == "PAUSED"
    assert counts(after) == {0: 6, 1: 5}


def test_updater_canary_steps_not_paused_when_the_step_is_not_reached_or_an_instance_is_not_routable():
    """updater_spec.rb:243 (4 routable), :261 (one RUNNING not routable: RRRSR),
    :278 (5 instances, 4 reported: the fifth mapped to C)"""
    for report in ("RRRR", "RRRSR", "RRRRC"):
        after = step(CURRENT, canary_state(2, report), Tick())
        assert statuses(after, 0)[0] != "PAUSED", report


def test_updater_canary_instance_starts_succesfully_transitions_state_to_paused():
    """updater_spec.rb:292 (no steps: 1 canary beside owic 6 originals)"""
    after = step(CURRENT, build([P(0, 2), P(1, 1)], [D(0, 1, "PREPAUSED", strategy="canary")]), Tick())
    assert statuses(after, 0) == ("PAUSED", "ACTIVE", "PAUSED")


def test_updater_canary_not_routable_starting_or_failing_skips_the_deployment_update():
    """updater_spec.rb:319 (RUNNING not routable -> S), :334 (STARTING -> S), :357 (FAILING -> C)"""
    for report in ("S", "C"):
        before = build([P(0, 2), P(1, report)], [D(0, 1, "PREPAUSED", strategy="canary")])
        after = step(CURRENT, before, Tick())
        assert statuses(after, 0) == ("PREPAUSED", "ACTIVE", "DEPLOYING"), report
        assert counts(after) == {0: 2, 1: 1}


# ================================================================ dispatcher_spec.rb
def test_dispatcher_when_there_are_no_deployments_does_nothing():
    """dispatcher_spec.rb:26"""
    before = build([P(0, 3)], [])
    assert step(CURRENT, before, Tick()) == before


def test_dispatcher_scales_a_deploying_deployment_canaries_a_prepaused_one_and_cancels_a_canceling_one():
    """dispatcher_spec.rb:39, :50, :61"""
    assert counts(step(CURRENT, build([P(0, 6), P(1, 0)], [D(0, 1)]), Tick()))[1] == 1
    prepaused = build([P(0, 2), P(1, 1)], [D(0, 1, "PREPAUSED", strategy="canary")])
    assert statuses(step(CURRENT, prepaused, Tick()), 0)[0] == "PAUSED"
    assert statuses(step(CURRENT, cancel_state(), Tick()), 0)[0] == "CANCELED"
