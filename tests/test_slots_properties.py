"""The slots properties judge observations; short runs pin down their edges."""

import pytest
from deployspec.reference.slots.actions import (
    CrashRetry,
    DeliverWebhook,
    Push,
    Recycle,
    Restart,
    ScaleOut,
    SetImage,
    Swap,
    Validate,
)

from deployspec.adapter import ReferenceAdapter
from deployspec.models import get_model
from deployspec.session import Session

SLOTS = get_model("slots")


def verdict(variant, prop, actions, settle=False):
    v = SLOTS.variant(variant)
    s = Session(SLOTS, ReferenceAdapter(SLOTS, v), (SLOTS.property(prop),), SLOTS.default_config(v))
    for a in actions:
        if s.perform(a) is not None:
            break
    else:
        if settle:
            s.settle()
    return s.violation


DEPLOY_FOO = [Push(), SetImage("production")]


def test_released_by_set_image_on_production_or_by_swap():
    ok = DEPLOY_FOO + [Push(), SetImage("staging"), Validate(), Swap()]
    assert verdict("slots-pipeline-tag", "production_runs_only_released_images", ok) is None
    v = verdict("slots-pipeline-tag", "production_runs_only_released_images", DEPLOY_FOO + [Push(), Restart("production")])
    assert v is not None and "production runs d1" in v.message and v.step == 3


def test_swap_releases_what_staging_ran_not_what_it_pulls_in_phase_one():
    steps = DEPLOY_FOO + [Push(), SetImage("staging"), Push(), Swap()]
    v = verdict("slots-pipeline-tag", "production_runs_only_released_images", steps)
    assert v is not None and v.step == 5 and "d2" in v.message
    assert verdict("slots-pipeline-immutable", "production_runs_only_released_images", steps) is None


def test_rollback_armed_by_a_swap_and_judged_at_the_swap_back():
    steps = DEPLOY_FOO + [Push(), SetImage("staging"), Swap(), Swap()]
    v = verdict("slots-pipeline-tag", "rollback_restores_previous", steps)
    assert v is not None and v.step == 5 and "d1" in v.message and "d0" in v.message
    assert verdict("slots-pipeline-immutable", "rollback_restores_previous", steps) is None


def test_rollback_survives_pushes_and_restarts_but_not_a_new_deployment():
    between = DEPLOY_FOO + [Push(), SetImage("staging"), Swap(), Push(), Restart("staging"), ScaleOut(), Swap()]
    assert verdict("slots-pipeline-immutable", "rollback_restores_previous", between) is None
    assert verdict("slots-pipeline-tag", "rollback_restores_previous", between) is not None
    redeployed = DEPLOY_FOO + [Push(), SetImage("staging"), Swap(), Push(), SetImage("staging"), Swap()]
    assert verdict("slots-pipeline-tag", "rollback_restores_previous", redeployed) is None


def test_an_aborted_swap_is_not_a_rollback():
    steps = [Push(healthy=False), SetImage("production"), Push(), SetImage("staging"), Swap(), Swap()]
    assert verdict("slots-pipeline-immutable", "rollback_restores_previous", steps) is None


def test_push_does_not_touch_production_breaks_only_with_the_webhook():
    steps = DEPLOY_FOO + [Push(), DeliverWebhook()]
    v = verdict("slots-webhook-tag", "push_does_not_touch_production", steps)
    assert v is not None and v.step == 3 and "deliver_webhook" in v.message
    assert verdict("slots-pipeline-tag", "push_does_not_touch_production", steps) is None


def test_slot_runs_one_version_counts_serving_containers():
    mixed = [Push(), SetImage("staging"), Push(), Recycle("staging", 0)]
    v = verdict("slots-pipeline-tag", "slot_runs_one_version", mixed)
    assert v is not None and "staging serves d0, d1" in v.message
    failing = [Push(), SetImage("staging"), Push(healthy=False), Recycle("staging", 0)]
    assert verdict("slots-pipeline-tag", "slot_runs_one_version", failing) is None


def test_no_latent_drift_is_the_push_not_the_restart():
    v = verdict("slots-pipeline-tag", "no_latent_drift", DEPLOY_FOO + [Push()])
    assert v is not None and v.step == 2 and "a restart would change it" in v.message
    assert verdict("slots-pipeline-immutable", "no_latent_drift", DEPLOY_FOO + [Push(), Push()]) is None


def test_first_deployment_on_a_tag_that_does_not_exist_yet():
    steps = [SetImage("production"), Push(), CrashRetry("production", 1)]
    v = verdict("slots-pipeline-tag", "production_runs_only_released_images", steps)
    assert v is not None and "released: nothing" in v.message


@pytest.mark.parametrize("prop", [p.name for p in SLOTS.properties])
def test_every_property_has_a_summary_citing_its_source(prop):
    doc = SLOTS.property(prop).doc
    assert "#316" in doc or "#299" in doc or "Image tag best practices" in doc
