"""capi-2022, capi-pr3072 and capi-pr3084 against cloud_controller_ng's own RSpec examples
at the commits they model:

* ``capi-2022``   4528366a1bebbe99b64dff60e346bdd198dadd6a (parent of PR #3072)
* ``capi-pr3072`` 545fb700005795ea664213bea233ae1c10cde0e7 (PR #3072)
* ``capi-pr3084`` 53f45944b7f6d13e9b60d210a0033e7957f69e98 (PR #3084)

Each test is one upstream ``it`` block (or a few that share a setup), run on every variant
whose commit has it; the docstring gives the spec file and line at each commit
("2022", "3072", "3084"). Lines that are the same at every commit are given once.

Instance reports. In these eras the updater reads only each instance's ``state``
(``Updater#ready_to_scale?``: ``all? { state == LRP_RUNNING }``; PR #3084's
``running_instance?``: ``any? { state == LRP_RUNNING }``), never routability, over the
hash ``all_instances_for_app`` returns. So a stubbed RUNNING instance is the model's
RUNNING, STARTING is STARTING, FAILING/CRASHED/DOWN are CRASHED. The specs' default stub
reports three RUNNING instances for *every* process whatever its instance count;
``all?`` over it is true, so a deploying process with that stub is modelled as all its
instances RUNNING (0 instances: vacuously ready, which is what the model computes too).

Processes are listed in the spec's ``created_at`` order (then id): the model's creation order.
Updater examples on a DEPLOYING deployment go through ``Tick`` (the dispatcher sends DEPLOYING
deployments to ``Updater#scale``), and, where the example is about one call, also through the
variant's scale step called directly; ``#cancel`` examples at 4528366a run on a DEPLOYING
deployment (the spec never sets CANCELING), so they call the variant's cancel step directly.
"""

from __future__ import annotations

import pytest
from deployspec.reference.capi import VARIANTS
from deployspec.reference.capi.actions import Cancel, Deploy, Scale, Tick
from deployspec.reference.core import Rejected

from .upstream_rspec import D, P, build, counts, statuses, step

V2022, V3072, V3084 = VARIANTS["capi-2022"], VARIANTS["capi-pr3072"], VARIANTS["capi-pr3084"]
ALL = (V2022, V3072, V3084)
SINCE_3072 = (V3072, V3084)

all_variants = pytest.mark.parametrize("v", ALL, ids=lambda v: v.name)
since_3072 = pytest.mark.parametrize("v", SINCE_3072, ids=lambda v: v.name)


def scale_call(v, state, did: int = 0, reports: bool = True):
    """``Updater.new(deployment, logger).scale``: the variant's scale step, directly."""
    return v.scale_step(v, state, state.deployments[did], reports)


def cancel_call(v, state, did: int = 0, reports: bool = True):
    """``Updater.new(deployment, logger).cancel``: the variant's cancel step, directly."""
    return v.cancel_step(v, state, state.deployments[did], reports)


# updater_spec.rb's default: web_process 2 (a day ago), deploying_web_process 0 (now), owic 6
def updater_state(web=2, deploying=0, state="DEPLOYING"):
    return build([P(0, web), P(1, deploying)], [D(0, 1, state)])


# ================================================================ updater_spec.rb #scale
@all_variants
def test_scale_scales_the_old_web_process_down_by_one_and_the_new_one_up_by_one(v):
    """updater_spec.rb:69 (old web process -1) and :77 (new web process +1), all three commits"""
    for after in (step(v, updater_state(), Tick()), scale_call(v, updater_state())):
        assert counts(after) == {0: 1, 1: 1}


def reached_owic_state():
    # web 2 (a day ago), interim 1 (an hour ago), deploying 6 (now, all RUNNING), owic 6
    return build([P(0, 2), P(1, 1), P(2, 6)], [D(0, 2)])


@all_variants
def test_scale_reached_owic_replaces_the_web_process_and_cleans_up_the_interim(v):
    """updater_spec.rb:125 (the deploying process is the only web process, at owic 6; the
    worker/clock processes are not modelled) and :144 (the interim is destroyed)"""
    after = step(v, reached_owic_state(), Tick())
    assert counts(after) == {2: 6}


@all_variants
def test_scale_reached_owic_puts_the_deployment_into_deployed(v):
    """updater_spec.rb:149 (and the state part of :157)"""
    after = step(v, reached_owic_state(), Tick())
    assert statuses(after, 0) == ("DEPLOYED", "FINALIZED", "DEPLOYED")


@all_variants
def test_scale_oldest_web_process_at_zero_and_type_web_is_scaled_to_zero_not_destroyed(v):
    """updater_spec.rb:208: web 1, deploying 3 RUNNING -> web kept at 0"""
    after = step(v, updater_state(web=1, deploying=3), Tick())
    assert counts(after) == {0: 0, 1: 4}


@all_variants
def test_scale_destroys_the_oldest_web_process_with_instances_and_ignores_the_original(v):
    """updater_spec.rb:249: original 0 (a day ago - 11 s), oldest with instances 1
    (a day ago - 10 s), deploying 3 RUNNING -> the original untouched, the other destroyed"""
    before = build([P(0, 0), P(1, 1), P(2, 3)], [D(0, 2)])
    after = step(v, before, Tick())
    assert counts(after) == {0: 0, 2: 4}


@all_variants
def test_scale_does_not_scale_when_an_instance_is_starting_or_failing(v):
    """updater_spec.rb:268 (RUNNING, STARTING, STARTING) and :293 (RUNNING, FAILING, FAILING);
    the spec scales twice"""
    for report in ("RSS", "RCC"):
        before = updater_state(deploying=report)
        once = step(v, before, Tick())
        assert step(v, once, Tick()) == before, report


@all_variants
def test_scale_when_all_instances_run_the_deployment_stays_deploying(v):
    """updater_spec.rb:316 (the state/status part; last_healthy_at is not modelled)"""
    after = step(v, updater_state(), Tick())
    assert statuses(after, 0) == ("DEPLOYING", "ACTIVE", "DEPLOYING")


@all_variants
def test_scale_when_some_instances_are_crashing_changes_nothing(v):
    """updater_spec.rb:336 (deploying 0 with the RUNNING, FAILING, FAILING stub: modelled as
    a deploying process of 3, RCC; last_healthy_at is not modelled)"""
    before = updater_state(deploying="RCC")
    after = step(v, before, Tick())
    assert after == before
    assert statuses(after, 0) == ("DEPLOYING", "ACTIVE", "DEPLOYING")


@all_variants
def test_scale_when_diego_is_unavailable_does_not_scale(v):
    """updater_spec.rb:381 (deploying 3; InstancesUnavailable -> ready_to_scale? false)"""
    before = updater_state(deploying=3)
    assert scale_call(v, scale_call(v, before, reports=False), reports=False) == before
    assert step(v, before, Tick(reports_unavailable=(0,))) == before


@all_variants
def test_scale_legacy_webish_process_scales_up_by_one(v):
    """updater_spec.rb:438 (the legacy type is not modelled: a web process)"""
    assert counts(step(v, updater_state(), Tick()))[1] == 1


@since_3072
def test_scale_scales_the_canceled_superseded_interim_web_process_to_zero(v):
    """updater_spec.rb:465 at 3072 and 3084: web 2, an interim 1 (an hour ago) of a
    CANCELED/SUPERSEDED deployment (the factory leaves its status_value ACTIVE), deploying 0"""
    before = build([P(0, 2), P(1, 1), P(2, 0)],
                   [D(0, 1, "CANCELED", value="ACTIVE", reason="SUPERSEDED"), D(1, 2)])
    after = step(v, before, Tick())
    assert counts(after)[1] == 0
    assert counts(after) == {0: 1, 1: 0, 2: 1}


@since_3072
def test_scale_deployment_got_superseded_skips_execution(v):
    """updater_spec.rb:478 at 3072 and 3084: deployment DEPLOYED/SUPERSEDED (status_value
    left ACTIVE) -> no update of anything"""
    before = build([P(0, 2), P(1, 0)], [D(0, 1, "DEPLOYED", value="ACTIVE", reason="SUPERSEDED")])
    assert scale_call(v, before) == before


# ================================================================ updater_spec.rb #cancel
def cancel_state(v, web=2, deploying=0):
    # 2022: the spec's deployment stays DEPLOYING; 3072/3084: before { update(state: 'CANCELING') }
    # (status_value/reason stay ACTIVE/DEPLOYING)
    state = "DEPLOYING" if v is V2022 else "CANCELING"
    return build([P(0, web), P(1, deploying)], [D(0, 1, state, value="ACTIVE", reason="DEPLOYING")])


@all_variants
def test_cancel_deletes_the_deploying_process_and_rolls_back_to_owic(v):
    """updater_spec.rb #cancel: 2022 :453, :458; 3072/3084 :491, :496 (web 2 -> 6, deploying gone)"""
    after = cancel_call(v, cancel_state(v))
    assert counts(after) == {0: 6}


@all_variants
def test_cancel_sets_the_deployment_to_canceled(v):
    """updater_spec.rb #cancel: 2022 :464; 3072/3084 :502"""
    after = cancel_call(v, cancel_state(v))
    assert statuses(after, 0) == ("CANCELED", "FINALIZED", "CANCELED")


@since_3072
def test_cancel_through_the_dispatcher(v):
    """updater_spec.rb :491, :496, :502 at 3072/3084 through Tick (the deployment is CANCELING)"""
    after = step(v, cancel_state(v), Tick())
    assert counts(after) == {0: 6}
    assert statuses(after, 0) == ("CANCELED", "FINALIZED", "CANCELED")


def interim_cancel_state(v):
    # web 2 (a day ago), interim 1 (an hour ago), deploying 0 (now). At 2022 the interim has
    # no deployment row and the canceled deployment stays DEPLOYING; since 3072 the interim is
    # a DEPLOYED/SUPERSEDED deployment's (status_value left ACTIVE by the factory) and the
    # canceled deployment is CANCELING
    if v is V2022:
        ds = [D(0, 2, "DEPLOYING")]
    else:
        ds = [D(0, 1, "DEPLOYED", value="ACTIVE", reason="SUPERSEDED"),
              D(1, 2, "CANCELING", value="ACTIVE", reason="DEPLOYING")]
    return build([P(0, 2), P(1, 1), P(2, 0)], ds)


@all_variants
def test_cancel_scales_up_the_most_recent_interim_as_the_only_web_process(v):
    """updater_spec.rb #cancel 'when there are interim deployments': 2022 :489, :495;
    3072/3084 :533, :539 (at 2022 the interim has no deployment row; since 3072 it is a
    DEPLOYED/SUPERSEDED deployment's; at 3084 the stub reports it RUNNING)"""
    before = interim_cancel_state(v)
    after = cancel_call(v, before, len(before.deployments) - 1)
    assert counts(after) == {1: 6}


@since_3072
def test_cancel_prefers_the_deployed_superseded_interim_over_a_newer_canceled_superseded_one(v):
    """updater_spec.rb:562 at 3072/3084: web 2, interim 1 (an hour ago, DEPLOYED/SUPERSEDED),
    interim 1 (an hour ago + 1 s, CANCELED/SUPERSEDED), deploying 0 -> only the first interim"""
    before = build([P(0, 2), P(1, 1), P(2, 1), P(3, 0)],
                   [D(0, 1, "DEPLOYED", value="ACTIVE", reason="SUPERSEDED"),
                    D(1, 2, "CANCELED", value="ACTIVE", reason="SUPERSEDED"),
                    D(2, 3, "CANCELING", value="ACTIVE", reason="DEPLOYING")])
    for after in (cancel_call(v, before, 2), step(v, before, Tick())):
        assert counts(after) == {1: 6}


def test_cancel_skips_an_interim_without_a_running_instance_pr3084():
    """updater_spec.rb:597 at 3084: a newer DEPLOYED/SUPERSEDED interim (an hour ago + 1 s)
    reports STARTING, CRASHED, DOWN (no RUNNING) -> the older interim (RUNNING) is kept.
    Modelled as a 1-instance interim that is STARTING, or CRASHED, or a 3-instance SCC one."""
    for report in ("S", "C", "SCC"):
        before = build([P(0, 2), P(1, 1), P(2, report), P(3, 0)],
                       [D(0, 1, "DEPLOYED", value="ACTIVE", reason="SUPERSEDED"),
                        D(1, 2, "DEPLOYED", value="ACTIVE", reason="SUPERSEDED"),
                        D(2, 3, "CANCELING", value="ACTIVE", reason="DEPLOYING")])
        assert counts(cancel_call(V3084, before, 2)) == {1: 6}, report
        assert counts(step(V3084, before, Tick())) == {1: 6}, report


@since_3072
def test_cancel_deployment_got_superseded_skips_execution(v):
    """updater_spec.rb #cancel 'deployment got superseded': 3072 :576, 3084 :611"""
    before = build([P(0, 2), P(1, 0)], [D(0, 1, "CANCELED", value="ACTIVE", reason="SUPERSEDED")])
    assert cancel_call(v, before) == before


# ================================================================ dispatcher_spec.rb (same at all three)
@all_variants
def test_dispatcher_when_there_are_no_deployments_does_nothing(v):
    """dispatcher_spec.rb:57"""
    before = build([P(0, 3)], [])
    assert step(v, before, Tick()) == before


@all_variants
def test_dispatcher_scales_a_deploying_and_cancels_a_canceling_deployment(v):
    """dispatcher_spec.rb:68 (scales) and :78 (cancels)"""
    assert counts(step(v, build([P(0, 2), P(1, 0)], [D(0, 1)]), Tick())) == {0: 1, 1: 1}
    after = step(v, build([P(0, 2), P(1, 0)], [D(0, 1, "CANCELING")]), Tick())
    assert statuses(after, 0) == ("CANCELED", "FINALIZED", "CANCELED") and counts(after) == {0: 6}


@all_variants
def test_dispatcher_degenerate_deployment_is_finalized_once_and_not_scaled(v):
    """dispatcher_spec.rb:12, :25, :30 (shared 'a degenerated deployment', for :87 nil
    deploying_web_process_guid and :117 a destroyed one: both are a deploying process id
    with no process); logging is not modelled"""
    before = build([P(0, 2)], [D(0, 5)])
    once = step(v, before, Tick())
    assert statuses(once, 0) == ("DEPLOYED", "FINALIZED", "DEGENERATE")
    assert counts(once) == {0: 2}
    assert step(v, once, Tick()) == once


@all_variants
def test_dispatcher_deployed_without_a_deploying_process_is_not_degenerate(v):
    """dispatcher_spec.rb:102"""
    before = build([P(0, 2)], [D(0, 5, "DEPLOYED")])
    assert statuses(step(v, before, Tick()), 0) == ("DEPLOYED", "FINALIZED", "DEPLOYED")


# ================================================================ deployment_create_spec.rb
def create_state(*instances):
    return build([P(i, n) for i, n in enumerate(instances)], [])


@all_variants
def test_deployment_create_creates_a_deployment_with_the_provided_droplet(v):
    """deployment_create_spec.rb:61 (and :154: the app's current droplet is the provided one),
    same lines at all three commits (last_healthy_at is not modelled)"""
    after = step(v, create_state(3), Deploy(new_droplet=True))
    d = after.deployments[0]
    assert statuses(after, 0) == ("DEPLOYING", "ACTIVE", "DEPLOYING")
    assert (d.droplet, d.previous_droplet, d.owic) == (1, 0, 3)
    assert after.app.droplet == 1


@all_variants
def test_deployment_create_creates_a_web_process_with_one_instance_saved_on_the_deployment(v):
    """deployment_create_spec.rb:160 (instances 1), :262 (two web processes, the newest deploys)"""
    after = step(v, create_state(3), Deploy(new_droplet=True))
    assert counts(after) == {0: 3, 1: 1}
    assert after.deployments[0].deploying_process == after.newest_process.id


@all_variants
def test_deployment_create_multiple_web_processes_creates_a_web_process_with_one_instance(v):
    """deployment_create_spec.rb:238 (restart; instances 1; owic from the oldest: 3)"""
    after = step(v, create_state(3, 4), Deploy())
    assert counts(after) == {0: 3, 1: 4, 2: 1}
    assert after.deployments[0].owic == 3


@all_variants
def test_deployment_create_existing_deploying_deployment_is_superseded_and_lends_its_owic(v):
    """deployment_create_spec.rb:394, :410 (same lines at all three commits): web 5, an
    existing DEPLOYING deployment with owic 10 -> new DEPLOYING deployment with owic 10,
    previous droplet the original; the existing one DEPLOYED/FINALIZED/SUPERSEDED"""
    before = build([P(0, 5), P(1, 1)], [D(0, 1, owic=10)])
    after = step(v, before, Deploy(new_droplet=True))
    d = after.deployments[1]
    assert statuses(after, 1) == ("DEPLOYING", "ACTIVE", "DEPLOYING")
    assert (d.owic, d.previous_droplet, d.droplet) == (10, 0, 1)
    assert statuses(after, 0) == ("DEPLOYED", "FINALIZED", "SUPERSEDED")


@since_3072
def test_deployment_create_existing_canceling_deployment_is_canceled_superseded(v):
    """deployment_create_spec.rb:423 at 3072/3084"""
    before = build([P(0, 5), P(1, 1)], [D(0, 1, "CANCELING", owic=10)])
    after = step(v, before, Deploy(new_droplet=True))
    assert statuses(after, 0) == ("CANCELED", "FINALIZED", "SUPERSEDED")


def rollback_state():
    # droplet 0: the rollback revision's; 1: the latest revision's (deployed by d0);
    # 2: the app's current droplet (the spec's original_droplet), staged, no revision
    return build([P(0, 3, droplet=1)], [D(0, 0, "DEPLOYED", owic=3, droplet=1, previous=0)],
                 droplets=(True, True, True), app_droplet=2)


@all_variants
def test_deployment_create_rollback_creates_a_deployment_with_the_revisions_droplet(v):
    """deployment_create_spec.rb: 2022 :747 (and :773: the app's current droplet is the
    revision's); 3072/3084 :760, :786"""
    after = step(v, rollback_state(), Deploy(revision=0))
    d = after.deployments[1]
    assert statuses(after, 1) == ("DEPLOYING", "ACTIVE", "DEPLOYING")
    assert (d.droplet, d.previous_droplet, d.owic) == (0, 2, 3)
    assert after.app.droplet == 0


@all_variants
def test_deployment_create_rollback_to_the_same_code_and_configuration_raises(v):
    """deployment_create_spec.rb: 2022 :872; 3072/3084 :885 (the model's message is upstream's)"""
    out = v.step(rollback_state(), Deploy(revision=1))
    assert isinstance(out, Rejected)
    assert out.reason == ("Unable to rollback. The code and configuration you are rolling back to "
                          "is the same as the deployed revision.")


# ================================================================ deployment_cancel_spec.rb (same at all three)
def deployment_cancel_state(state):
    # original 1, deploying 6 (droplet 1); the deployment ships 1, previous 0; app droplet 1
    return build([P(0, 1), P(1, 6, droplet=1)], [D(0, 1, state, droplet=1, previous=0)],
                 droplets=(True, True), app_droplet=1)


@all_variants
def test_deployment_cancel_deploying_sets_canceling_and_resets_the_droplet(v):
    """deployment_cancel_spec.rb:39 (CANCELING/ACTIVE/CANCELING) and :50 (previous droplet)"""
    after = step(v, deployment_cancel_state("DEPLOYING"), Cancel())
    assert statuses(after, 0) == ("CANCELING", "ACTIVE", "CANCELING")
    assert after.app.droplet == 0


@all_variants
def test_deployment_cancel_canceling_is_idempotent(v):
    """deployment_cancel_spec.rb:115"""
    after = step(v, deployment_cancel_state("CANCELING"), Cancel())
    assert statuses(after, 0) == ("CANCELING", "ACTIVE", "CANCELING")


@all_variants
def test_deployment_cancel_deployed_or_canceled_raises(v):
    """deployment_cancel_spec.rb:130, :142 (refused; the model's message differs)"""
    for state in ("DEPLOYED", "CANCELED"):
        before = deployment_cancel_state(state)
        out = v.step(before, Cancel())
        assert isinstance(out, Rejected), state


# ================================================================ process_scale_spec.rb (same at all three)
@all_variants
def test_process_scale_scales_the_process_record(v):
    """process_scale_spec.rb:21 (instances 1 -> 2; memory/disk/log rate are not modelled)"""
    assert counts(step(v, create_state(1), Scale(2))) == {0: 2}


@all_variants
def test_process_scale_fails_for_a_web_process_while_the_app_is_being_deployed(v):
    """process_scale_spec.rb:151 (message is upstream's; instances unchanged)"""
    before = build([P(0, 1), P(1, 1)], [D(0, 1)])
    out = v.step(before, Scale(2))
    assert isinstance(out, Rejected)
    assert out.reason == "Cannot scale this process while a deployment is in flight."
