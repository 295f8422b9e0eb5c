"""Behaviours of the reference models that a mutation pass over ``reference/`` found
unpinned: each test was written against a hand-made mutant that the rest of the suite
let through, and asserts the upstream behaviour (or the model's documented rule) that
the mutant changed. The mutant each one kills is named in its docstring."""

from __future__ import annotations

import pytest
from deployspec.reference.capi import VARIANTS, from_observation, observe
from deployspec.reference.capi.actions import Deploy, Push, Runtime, Tick
from deployspec.reference.capi.state import CapiState
from deployspec.reference.core import Rejected
from deployspec.reference.slots import VARIANTS as SLOTS
from deployspec.reference.slots.model import SlotsConfig
from deployspec.reference.slots.model import initial_state as slots_initial_state
from deployspec.reference.slots.state import PRODUCTION, STAGING, Webhook

from .helpers import app, dep, proc, run_capi, shape, tick

PRE_CANARY = ["capi-2022", "capi-pr3072", "capi-pr3084"]


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


# --- App Service slots -------------------------------------------------------------------


def test_terraform_registers_the_production_webhook_only_if_there_is_none():
    """slots-webhook-tag (cobalt 242e0a9a76, app-service/main.tf): applying production's
    configuration registers a registry-wide webhook at production's CD URL if the registry
    has none, and leaves one already registered alone (here the design proposal's, scoped
    to the release tag and posting to staging). (Mutant: ``SlotsVariant.set_image``
    registering it unconditionally.)"""
    hook = SLOTS["slots-webhook-tag"]
    state = slots_initial_state(SlotsConfig(start="webhook-staging"))
    assert state.registry.webhook == Webhook(STAGING, "app:release")
    assert hook.set_image(state, PRODUCTION).registry.webhook == Webhook(STAGING, "app:release")
    empty = slots_initial_state(SlotsConfig())
    assert hook.set_image(empty, PRODUCTION).registry.webhook == Webhook(PRODUCTION, None)


