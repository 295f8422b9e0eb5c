"""Behaviours of the Cloud Controller reference models that a mutation pass over
``reference/`` found unpinned: each test was written against a hand-made mutant that the
rest of the suite let through, and asserts the upstream behaviour (or the model's
documented rule) that the mutant changed. The mutant each one kills is named in its
docstring (the App Service ones: ``test_reference_mutants_slots.py``)."""

from __future__ import annotations

import attrs
import pytest
from deployspec.reference.capi import VARIANTS, from_observation, observe, updater
from deployspec.reference.capi.actions import Cancel, Continue, Deploy, Push, Runtime, Scale, Tick
from deployspec.reference.capi.model import CapiConfig, candidate_actions, probe_actions
from deployspec.reference.capi.state import CapiState
from deployspec.reference.capi.variants import CAPI_CURRENT
from deployspec.reference.core import Rejected

from .helpers import app, dep, proc, run_capi, shape, tick

PRE_CANARY = ["capi-2022", "capi-pr3072", "capi-pr3084"]
READY3 = [Push(3), Runtime(0), Runtime(0), Runtime(0)]  # P0 with three running instances


# --- DeploymentCreate ---------------------------------------------------------


@pytest.mark.parametrize("variant", PRE_CANARY)
def test_before_pr_4247_a_deployment_takes_no_web_instances(variant):
    """web_instances came with PR #4247 (9d4dee352b): the designs before it refuse a
    rolling deployment that asks for it, as they refuse max_in_flight and canary steps, so
    a historic design never records a target other than owic. (Mutant: ``rules.rolling_only``
    without ``or action.web_instances``.)"""
    state = run_capi(variant, [Push(2), Runtime(0), Runtime(0)])
    refused = VARIANTS[variant].step(state, Deploy(web_instances=3))
    assert isinstance(refused, Rejected) and "without options" in refused.reason
    assert VARIANTS["capi-current"].step(state, Deploy(web_instances=3)).deployments[0].web_instances == 3


@pytest.mark.parametrize("variant", PRE_CANARY)
def test_before_pr_3892_a_canary_deployment_is_refused_even_without_steps(variant):
    """The canary strategy came with PR #3892 (2024): the designs before it refuse it, with
    or without instance weights. (Mutant: ``rules.rolling_only`` checking only the options,
    not the strategy.)"""
    state = run_capi(variant, [Push(2), Runtime(0), Runtime(0)])
    refused = VARIANTS[variant].step(state, Deploy(strategy="canary"))
    assert isinstance(refused, Rejected) and "canary came with PR #3892" in refused.reason
    assert VARIANTS["capi-current"].step(state, Deploy(strategy="canary")).deployments[0].strategy == "canary"


def test_a_search_bound_of_max_in_flight_0_is_refused():
    """``max_in_flight`` is at least 1 upstream (DeploymentCreateMessage); a search bound of 0
    would offer deploys every design refuses. (Mutant: the configuration accepting 0.)"""
    from deployspec.models import UsageError, get_model

    model = get_model("capi")
    with pytest.raises(UsageError, match=r"max_in_flight must be a non-empty list of integers >= 1, got \[0\]"):
        model.with_bounds(model.default_config(), {"max_in_flight": [0]})
    assert model.with_bounds(model.default_config(), {"max_in_flight": [1, 2]}).max_in_flight == (1, 2)


def test_canary_weights_may_repeat_but_not_go_down():
    """``DeploymentCreateMessage`` (3bbba90) asks that the instance weights be sorted in
    ascending order: equal neighbours ([50, 50]) are sorted and accepted, a weight below
    the one before refused. (Mutant: ``rules.deployment_options`` comparing with
    ``sorted(set(...))``, refusing repeats.)"""
    state = run_capi("capi-current", [Push(2), Runtime(0), Runtime(0)])
    current = VARIANTS["capi-current"]
    accepted = current.step(state, Deploy(strategy="canary", canary_steps=(50, 50)))
    assert accepted.__class__ is CapiState and accepted.deployments[0].canary_steps == (50, 50)
    refused = current.step(state, Deploy(strategy="canary", canary_steps=(50, 20)))
    assert isinstance(refused, Rejected) and "ascending" in refused.reason


# --- the scale steps ----------------------------------------------------------------


def test_a_finish_left_for_later_still_needs_instance_reports():
    """3bbba90 ``updater.rb``: ``Updater#scale`` reads the instance summary before its
    transaction; when Diego cannot answer, nothing is written and nothing is left to
    finish, whether or not the finish would have run after the commit. (Mutant: the
    dispatcher's ``finish_later`` branch passing ``reports=True``.)"""
    state = run_capi("capi-current", [Push(1), Runtime(0), Deploy(), Runtime(1)])
    current = VARIANTS["capi-current"]
    assert current.step(state, Tick(finish_later=(0,), reports_unavailable=(0,))) == state
    assert current.step(state, Tick(finish_later=(0,))).pending  # with reports: the finish waits


def test_capi_2022_grows_a_deploying_process_that_is_the_app_s_oldest():
    """``scale_deployment`` at 4528366a: the donor is the oldest web process with instances,
    here the deploying process itself. At its last instance it is destroyed only if it is
    not the app's oldest web process (``ScaleDownOldProcess`` keeps the original); the
    oldest is kept, and its two Sequel copies leave it at n + 1 (a hand-made state: the
    deploying process is the app's only web process, as after capi-2022's cancel step kept
    the newer deployment's process and destroyed the others). (Mutant: the
    ``donor is not state.oldest_process`` test dropped, so the step raises and retries.)"""
    obs = app([proc(2, 1)], [dep(0, "CANCELED", "CANCELED", 1, 2), dep(1, "DEPLOYING", "DEPLOYING", 2, 2)])
    assert shape(tick("capi-2022", obs)) == {2: 2}


def test_a_prepaused_canary_with_no_step_recorded_is_at_step_one():
    """``canary_current_step`` is 1-based and defaults to 1 (``canary.current_step``, after
    ``DeploymentModel#canary_step_plan``'s reader at 3bbba90): an observation of a PREPAUSED canary without ``canary_step`` (the schema allows 0) is
    scaled to the first step's canary count, not the last one's. Here owic 4, weights 25
    and 50: step 1 asks for one canary instance (step 2 for two), with max_in_flight 2.
    (Mutant: ``canary.current_step`` indexing ``canary_step - 1`` without the ``max``.)"""
    obs = app([proc(0, 4), proc(1, 0)],
              [dep(0, "PREPAUSED", "DEPLOYING", 1, 4, strategy="canary", canary_steps=[25, 50], max_in_flight=2)])
    assert shape(tick("capi-current", obs)) == {0: 4, 1: 1}


# --- observations ------------------------------------------------------------


def test_an_observed_deployment_without_its_optional_fields_is_a_plain_rolling_one():
    """The observation schema makes a deployment's max_in_flight, strategy, canary steps and
    web_instances optional; a state built from one without them is the plain rolling
    deployment of the designs before 2024 (canary step 0, as the model's own rolling
    deployments show), and observes as such. (Mutants: ``observe.from_observation``
    defaulting the strategy to canary, or the canary step to 1.)"""
    obs = app([proc(0, 1), proc(1, 0)], [dep(0, "DEPLOYING", "DEPLOYING", 1, 1)])
    d = observe(from_observation(obs))["deployments"][0]
    assert (d["strategy"], d["max_in_flight"], d["canary_steps"], d["canary_step"], d["web_instances"]) == (
        "rolling", 1, [], 0, None)


# --- canary plans ------------------------------------------------------------------


def test_a_canary_without_steps_keeps_every_original_whatever_web_instances():
    """``DeploymentModel#canary_step_plan`` (3bbba90) returns ``canary: 1, original: owic``
    when there are no steps, before it looks at web_instances: a canary with
    web_instances 1 over three running originals pauses with all three kept. (Mutant:
    ``canary._plan`` sizing the no-steps plan with ``plan_size(owic, web_instances)``.)"""
    state = run_capi("capi-current", READY3 + [Deploy(strategy="canary", web_instances=1), Runtime(1), Tick()])
    assert shape(observe(state)) == {0: 3, 1: 1} and state.deployments[0].state == "PAUSED"


def test_a_canary_with_web_instances_starts_at_its_first_step():
    """``DeploymentCreate#starting_process_instances`` (3bbba90) starts a canary with its
    first step's canary count and looks at web_instances only for rolling deployments:
    owic 3, web_instances 2, a 10% step is one canary instance, not two, even with
    max_in_flight 3. (Mutant: ``rules.starting_instances`` taking web_instances first.)"""
    deploy = Deploy(strategy="canary", canary_steps=(10,), web_instances=2, max_in_flight=3)
    assert run_capi("capi-current", READY3 + [deploy]).processes[-1].desired == 1
    assert run_capi("capi-current", READY3 + [Deploy(web_instances=2, max_in_flight=3)]).processes[-1].desired == 2


# --- DeploymentCancel and DeploymentContinue ---------------------------------------


def test_before_pr_3892_an_observed_paused_deployment_is_not_cancelable():
    """``DeploymentCancel`` refuses a deployment that is not ``cancelable?``: DEPLOYING or
    CANCELING (``deployment_model.rb`` at 9c9c5d3fb2, 2019), then ``ACTIVE_STATES.include?(state)``
    with PREPAUSED and PAUSED from the canary's PR #3892 (d66f46a60d). Given an observation
    of a paused canary (from a newer implementation), the designs before it refuse to cancel
    it and today's accepts. (Mutant: ``api.cancel`` without the
    ``cancelable_states`` check.)"""
    obs = app([proc(0, 2), proc(1, 1)],
              [dep(0, "PAUSED", "PAUSED", 1, 2, strategy="canary", canary_steps=[50], canary_step=1)])
    state = from_observation(obs)
    for variant in PRE_CANARY:
        refused = VARIANTS[variant].step(state, Cancel())
        assert isinstance(refused, Rejected) and refused.reason == "cannot cancel a PAUSED deployment"
    assert VARIANTS["capi-current"].step(state, Cancel()).deployments[0].state == "CANCELING"


def test_continue_is_offered_only_when_the_newest_active_deployment_is_paused():
    """``cf continue-deployment`` continues the app's newest active deployment
    (``api.newest_active``); a canary left PAUSED (finding 8) beside a newer DEPLOYING
    one is not it, so the search offers ``continue`` only as a probe, which the design
    refuses. (Mutant: ``model._actions`` offering it when any deployment is PAUSED.)"""
    state = run_capi("capi-current", [Push(1), Deploy(strategy="canary"), Runtime(1), Tick(finish_later=(0,)),
                                      Deploy(), Tick()])
    obs = observe(state)
    assert [(d["state"], d["status_value"]) for d in obs["deployments"]] == [
        ("PAUSED", "FINALIZED"), ("DEPLOYING", "ACTIVE")]
    config = CapiConfig(canary_plans=((), (100,)), finish_window=True)
    assert Continue() not in candidate_actions(obs, config) and Continue() in probe_actions(obs, config)
    assert isinstance(VARIANTS["capi-current"].step(state, Continue()), Rejected)


# --- the dispatcher ------------------------------------------------------------------

#: capi-2022: d0 CANCELING on P1, d1 DEPLOYING on P2, which is at owic with every instance running
TWO_ACTIVE = app([proc(0, 2), proc(1, 1), proc(2, 2)],
                 [dep(0, "CANCELING", "CANCELING", 1, 2), dep(1, "DEPLOYING", "DEPLOYING", 2, 2)])


def test_a_dispatch_runs_its_scale_steps_before_its_cancel_steps():
    """``Dispatcher.dispatch`` (4528366a) submits the DEPLOYING deployments' scale steps to
    its pool before the CANCELING ones' cancel steps, the serialization a plain tick
    takes: d1's step finalizes it and destroys P0 and P1, so d0's cancel step cannot lock
    its own process and d0 stays CANCELING. (Mutant: ``updater.dispatch`` running the
    cancel steps first; that order is ``tick(failed=d1)`` then a tick.)"""
    after = tick("capi-2022", TWO_ACTIVE)
    assert [(d["state"], d["status_reason"]) for d in after["deployments"]] == [
        ("CANCELING", "CANCELING"), ("DEPLOYED", "DEPLOYED")]
    assert shape(after) == {2: 2}


def test_a_late_step_runs_before_the_next_dispatch_s_degenerate_check():
    """A late step belongs to the dispatch that submitted it, which drains its pool
    (``workpool.drain``, ``dispatcher.rb`` at 4528366a) before the next dispatch begins
    with ``finalize_degenerate_deployments``: d1's late step destroys d0's process P1,
    and the next dispatch finalizes d0 as DEGENERATE. (Mutant: ``updater.dispatch``
    running ``before_dispatch`` before the pending steps.)"""
    v = VARIANTS["capi-2022"]
    state = v.step(v.step(from_observation(TWO_ACTIVE), Tick(late=(1,), failed=(0,))), Tick(failed=(0, 1)))
    assert [(d.state, d.status_reason) for d in state.deployments] == [
        ("DEPLOYED", "DEGENERATE"), ("DEPLOYED", "DEPLOYED")]


def test_late_steps_run_in_the_order_the_dispatcher_submitted_them():
    """``Tick.late`` moves steps past the user's actions, not past each other: two steps
    made late and then run end where the same tick's steps run at once end, oldest
    deployment first (d0's step finalizes it and destroys P0; d1 then grows). (Mutant:
    ``updater.dispatch`` queueing each late step before the ones queued already.)"""
    obs = app([proc(0, 1), proc(1, 2), proc(2, 1)],
              [dep(0, "DEPLOYING", "DEPLOYING", 1, 3), dep(1, "DEPLOYING", "DEPLOYING", 2, 3)])
    v = VARIANTS["capi-2022"]
    later = v.step(v.step(from_observation(obs), Tick(late=(0, 1))), Tick(failed=(0, 1)))
    assert shape(observe(later)) == shape(tick("capi-2022", obs)) == {0: 0, 1: 2, 2: 2}


# --- the scale steps' clean-up and down-scaling ------------------------------------


def test_a_count_written_over_a_zeroed_process_starts_new_instances():
    """3bbba90: the clean-up (``ScaleDownCanceledProcesses``) zeroes the superseded canary's
    process P1, then ``DownScaler#scale_down``, over copies read before the clean-up,
    writes 1 over it. Diego starts a new instance: the ones the clean-up stopped are gone,
    so P1 has one STARTING instance, not one of the RUNNING ones its stale copy had.
    (Mutant: ``scaling.scale_down_with_stale_counts`` writing the count onto the copy.)"""
    state = run_capi("capi-current", READY3 + [Deploy(strategy="canary", canary_steps=(50,), max_in_flight=2),
                                               Runtime(1), Runtime(1), Tick(), Deploy(max_in_flight=2),
                                               Runtime(2), Runtime(2), Tick()])
    assert {p.id: p.instances for p in state.processes} == {
        0: (), 1: ("STARTING",), 2: ("RUNNING", "RUNNING", "STARTING")}


def test_the_clean_up_leaves_a_deployment_canceled_by_its_own_cancel_alone():
    """``ScaleDownCanceledProcesses`` (3bbba90) zeroes the processes of deployments
    CANCELED *and* SUPERSEDED only. Here d1's own cancel kept its process P2 (the app's
    oldest once d1's step destroyed the others), so d1 is CANCELED/CANCELED with P2 the
    app's one web process; a later deployment's step scales P2 down as an old process,
    one instance at a time, and the app keeps serving. (Mutant:
    ``rules.zero_canceled_superseded`` zeroing every CANCELED deployment's process.)"""
    state = run_capi("capi-current", [Push(1), Deploy(), Deploy(), Runtime(2), Tick(), Cancel(), Tick()])
    assert [(d.state, d.status_reason, d.deploying_process) for d in state.deployments][1] == (
        "CANCELED", "CANCELED", 2)
    state = run_capi("capi-current", [Scale(2), Runtime(2), Deploy(), Runtime(3), Tick()], state)
    assert {p.id: p.instances for p in state.processes} == {2: ("RUNNING",), 3: ("RUNNING", "STARTING")}


def test_capi_safe_s_roll_back_leaves_the_prior_process_at_owic():
    """capi-safe's cancel ends as upstream's ``Actions::Cancel`` does (3bbba90): the prior
    web process is set to the deployment's original_web_process_instance_count. Here the
    prior P1 grew to 3 for a deployment with web_instances 3 that the canceled one
    superseded; the roll-back leaves it at owic 2. (Mutant:
    ``updater.cancel_step_roll_back`` without the final ``scaled_to(owic)``.)"""
    state = run_capi("capi-safe", [Push(2), Runtime(0), Runtime(0), Deploy(web_instances=3), Runtime(1), Tick(),
                                   Runtime(1), Tick(), Deploy(), Cancel(), Tick()])
    assert {p.id: p.instances for p in state.processes} == {1: ("RUNNING", "RUNNING")}
    assert (state.deployments[1].state, state.deployments[1].owic) == ("CANCELED", 2)


# --- variants ------------------------------------------------------------------------


def test_finish_after_commit_takes_a_scale_step_with_keyword_arguments():
    """A design's scale step may take ``finish`` through ``**kwargs`` (a wrapper around
    ``updater.scale_or_canary_step``): the variant's check accepts it, as the dispatcher's
    ``finish=False`` call would. (Mutant: ``variants._finish_taken`` asking for a
    parameter named ``finish``.)"""
    def step(variant, state, deployment, reports, **kw):
        return updater.scale_or_canary_step(variant, state, deployment, reports, **kw)

    assert attrs.evolve(CAPI_CURRENT, name="wrapped", scale_step=step).finish_after_commit
    state = run_capi("capi-current", [Push(1), Runtime(0), Deploy(), Runtime(1)])
    wrapped = attrs.evolve(CAPI_CURRENT, name="wrapped", scale_step=step)
    assert wrapped.step(state, Tick(finish_later=(0,))) == CAPI_CURRENT.step(state, Tick(finish_later=(0,)))
