"""Behaviours of the App Service slots reference models (and of their search bounds) that
a mutation pass over ``reference/`` found unpinned; as in ``test_reference_mutants.py``,
each test names in its docstring the mutant it kills."""

from __future__ import annotations

from deployspec.reference.slots import VARIANTS as SLOTS
from deployspec.reference.slots.actions import (
    DeliverWebhook,
    Push,
    ScaleOut,
    SetImage,
    Swap,
    Validate,
)
from deployspec.reference.slots.model import SlotsConfig, candidate_actions, probe_actions
from deployspec.reference.slots.model import initial_state as slots_initial_state
from deployspec.reference.slots.observe import observe
from deployspec.reference.slots.state import PRODUCTION, STAGING, Webhook

from .helpers import run_slots

# --- Terraform's start ------------------------------------------------------------------


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


# --- the platform ----------------------------------------------------------------------


def test_an_aborted_swap_puts_the_source_s_own_slot_settings_back():
    """"What happens during a swap", step 2 (``deploy-staging-slots.md``): when a source
    instance fails to start with the target's slot settings, the source's own settings
    are reverted and the swap aborts. With DOCKER_ENABLE_CI sticky, production's CI
    setting does not stay on staging. (Mutant: ``swap.swap`` keeping the moved settings
    on abort.)"""
    state = run_slots(SLOTS["slots-webhook-tag"], [Push(), SetImage(PRODUCTION), Push(healthy=False),
                                                   SetImage(STAGING), Swap()], SlotsConfig(ci_sticky=True))
    assert state.last_swap == "aborted"
    assert state.site(STAGING).settings == () and state.site(PRODUCTION).setting("DOCKER_ENABLE_CI")


def test_one_webhook_delivery_answers_one_push():
    """A registry webhook fires once per push (cobalt 242e0a9, app-service/main.tf:
    ``az acr webhook create --actions push``); each delivery is one of them, so two pushes
    queue two deliveries and one delivery leaves the other queued. (Mutant: ``platform.deliver_webhook`` draining
    the queue.)"""
    hook = SLOTS["slots-webhook-tag"]
    state = run_slots(hook, [Push(), Push()], SlotsConfig(start="webhook"))
    assert state.registry.pending == 2
    assert hook.step(state, DeliverWebhook()).registry.pending == 1


# --- the search's actions and bounds ---------------------------------------------------


def test_terraform_s_own_build_is_not_one_of_the_pushes_the_bound_counts():
    """``max_pushes`` bounds the pipeline's pushes; the ``release`` start's image was built
    by Terraform before the slots started (``SlotsConfig.STARTS``), so with one push
    allowed the search still offers it. (Mutant: ``model._actions`` counting every digest
    in the registry.)"""
    config = SlotsConfig(start="release", max_pushes=1)
    obs = observe(slots_initial_state(config))
    assert len(obs["registry"]["digests"]) == 1 and Push(True) in candidate_actions(obs, config)


def test_validate_is_offered_only_when_every_staging_instance_runs():
    """The pipeline's validation passes only when every staging instance runs
    (``Validate``); with one crash-looping the search offers it as a probe, which the
    design refuses. (Mutant: ``model._actions`` offering it when any instance runs.)"""
    config = SlotsConfig(start="release")
    state = run_slots(SLOTS["slots-pipeline-tag"], [Push(healthy=False), ScaleOut()], config)
    obs = observe(state)
    assert sorted(i["status"] for i in obs["slots"][STAGING]["instances"]) == ["crash_loop", "running", "running"]
    assert Validate() not in candidate_actions(obs, config) and Validate() in probe_actions(obs, config)


def test_no_scale_out_is_offered_at_max_instances():
    """``max_instances`` bounds the plan's instances: at the bound the search offers no
    scale-out, below it one. (Mutant: ``model._actions`` comparing with ``<=``.)"""
    full = SlotsConfig(instances=2, max_instances=2)
    assert ScaleOut() not in candidate_actions(observe(slots_initial_state(full)), full)
    room = SlotsConfig(instances=1, max_instances=2)
    assert ScaleOut() in candidate_actions(observe(slots_initial_state(room)), room)
