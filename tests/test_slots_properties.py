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
from deployspec.spec.core import Step

from deployspec.adapter import ReferenceAdapter
from deployspec.engines import explore
from deployspec.models import get_model
from deployspec.session import Session

from .slots_property_traces import DEPLOY_FOO, SCHEMA, run, slot, verdict, world

SLOTS = get_model("slots")


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


def test_a_refused_delivery_that_changed_production_touched_it_all_the_same():
    """The reference never does it (a refusal leaves the state), an implementation might:
    the observations, not the answer, say what happened."""
    v = SLOTS.variant("slots-webhook-tag")
    s = Session(SLOTS, ReferenceAdapter(SLOTS, v), (), SLOTS.default_config(v))
    for a in DEPLOY_FOO + [Push()]:
        s.perform(a)
    before = s.obs
    s.perform(DeliverWebhook())
    prop = SLOTS.property("push_does_not_touch_production")
    step = Step(3, {"type": "deliver_webhook"}, "platform", "no delivery queued", before, s.obs)
    assert before["slots"]["production"]["instances"] != s.obs["slots"]["production"]["instances"]
    _, message = prop.advance(prop.initial, step)
    assert message is not None and message.startswith("deliver_webhook at step 3 changed production")


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
    sources = ("#316", "#299", "Image tag best practices", "What happens during a swap")
    assert any(source in doc for source in sources), doc


# --- hand-built steps: one branch of one property at a time -------------------

def state(prop, obs):
    SCHEMA.validate(obs)
    return SLOTS.property(prop).advance(None, Step(0, {"type": "push"}, "user", None, obs, obs))[1]


PUSH = {"type": "push", "healthy": True}
SET_PRODUCTION = {"type": "set_image", "slot": "production"}
SWAP = {"type": "swap"}
#: production (site A) released on d0, staging (site B) set to d1
RELEASED = world(slot("A", 0), slot("B", 1), tag=1)
#: ... after the swap: production is site B, on d1
SWAPPED = world(slot("B", 1), slot("A", 0), tag=1, last_swap="completed")
#: d2 pushed after the swap; swapping back restarts site A, which pulls it
PUSHED_AFTER_SWAP = {**SWAPPED, "registry": {**SWAPPED["registry"], "tags": {"release": 2}}}
BACK_WRONG = world(slot("A", 2), slot("B", 1), tag=2, last_swap="completed")


def test_unreleased_digest_message_names_the_step_what_was_released_and_what_was_validated():
    v = run("production_runs_only_released_images", world(slot("A", None), slot("B", None), tag=0),
            (SET_PRODUCTION, world(slot("A", 0), slot("B", None), tag=0)),
            (PUSH, world(slot("A", 0), slot("B", None), tag=1, validated=[1])),
            ({"type": "restart", "slot": "production"}, world(slot("A", 1), slot("B", None), tag=1, validated=[1])))
    assert v.message == ("production runs d1 after step 2 (restart), not what the latest release put there "
                         "(released: d0; validated in staging: d1)")


def test_set_image_on_production_releases_what_production_runs_after_it():
    assert run("production_runs_only_released_images", world(slot("A", None), slot("B", None), tag=0),
               (SET_PRODUCTION, world(slot("A", 0), slot("B", None), tag=0)),
               (PUSH, world(slot("A", 0), slot("B", None), tag=1)),
               (SET_PRODUCTION, world(slot("A", 1), slot("B", None), tag=1))) is None


def test_a_set_image_on_staging_that_lands_in_production_is_no_release():
    v = run("production_runs_only_released_images", world(slot("A", None), slot("B", None), tag=0),
            ({"type": "set_image", "slot": "staging"}, world(slot("A", 0), slot("B", 0), tag=0)))
    assert v is not None and "production runs d0 after step 0 (set_image)" in v.message


def test_a_set_image_the_platform_refused_releases_nothing_even_if_production_changed():
    v = run("production_runs_only_released_images", world(slot("A", None), slot("B", None), tag=0),
            (SET_PRODUCTION, world(slot("A", 0), slot("B", None), tag=0), "refused"))
    assert v is not None and "production runs d0" in v.message


def test_an_empty_container_runs_nothing_unreleased():
    assert run("production_runs_only_released_images", world(slot("A", None), slot("B", None)),
               ({"type": "push"}, world(slot("A", None), slot("B", None), tag=0))) is None


def test_a_completed_swap_releases_what_staging_ran_before_it():
    assert run("production_runs_only_released_images", world(slot("A", None), slot("B", None), tag=0),
               (SET_PRODUCTION, world(slot("A", 0), slot("B", None), tag=0)),
               (PUSH, world(slot("A", 0), slot("B", None), tag=1)),
               ({"type": "set_image", "slot": "staging"}, RELEASED),
               (SWAP, SWAPPED)) is None


def test_an_aborted_swap_releases_nothing():
    """Staging ran d1, but crashed with production's settings, so the swap aborted;
    a later restart that lands d1 in production is still no release."""
    aborted = {**RELEASED, "last_swap": "aborted"}
    restarted = world(slot("A", 1), slot("B", 1), tag=1, last_swap="aborted")
    v = run("production_runs_only_released_images", world(slot("A", None), slot("B", None), tag=0),
            (SET_PRODUCTION, world(slot("A", 0), slot("B", None), tag=0)),
            (PUSH, world(slot("A", 0), slot("B", None), tag=1)),
            ({"type": "set_image", "slot": "staging"}, RELEASED),
            (SWAP, aborted),
            ({"type": "restart", "slot": "production"}, restarted))
    assert v is not None and v.step == 4 and "production runs d1" in v.message


def test_a_swap_back_withdraws_the_release_it_rolls_back():
    """d1 was released by the swap, then rolled back: a restart that brings d1 into
    production again is no release (before, every digest ever released stayed so)."""
    back = world(slot("A", 0), slot("B", 1), tag=1, last_swap="completed")
    again = world(slot("A", 1), slot("B", 1), tag=1, last_swap="completed")
    v = run("production_runs_only_released_images", RELEASED, (SWAP, SWAPPED), (SWAP, back),
            ({"type": "restart", "slot": "production"}, again))
    assert v is not None and v.step == 2
    assert "production runs d1 after step 2 (restart)" in v.message and "released: d0" in v.message


def test_a_swap_back_whose_own_restart_pulls_the_rolled_back_digest_runs_it_unreleased():
    """cobalt #316 scenario 1 as this property sees it: the swap back restarts site A
    (staging, still on d0) with production's settings, and the moved tag pulls d1. The
    swap back released what staging ran (d0) and withdrew d1, so d1 in production right
    after it is unreleased, though production ran d1 (then released) just before."""
    back_on_d1 = world(slot("A", 1), slot("B", 1), tag=1, last_swap="completed")
    v = run("production_runs_only_released_images", RELEASED, (SWAP, SWAPPED), (SWAP, back_on_d1))
    assert v is not None and v.message == ("production runs d1 after step 1 (swap), not what the latest release put there "
                                           "(released: d0; validated in staging: nothing)")


def test_a_new_set_image_on_production_replaces_the_release_before_it():
    """d0 ran from the start, then d1 was released: a restart that brings d0 back is no
    release. The reference's tags only move forward, so this guards implementations
    (whose tag might move back) and the rule: the latest release is the one that counts."""
    v = run("production_runs_only_released_images", world(slot("A", 0), slot("B", None), tag=0),
            (PUSH, world(slot("A", 0), slot("B", None), tag=1)),
            (SET_PRODUCTION, world(slot("A", 1), slot("B", None), tag=1)),
            ({"type": "restart", "slot": "production"}, world(slot("A", 0), slot("B", None), tag=0)))
    assert v is not None and "production runs d0 after step 2 (restart)" in v.message


def test_a_rollback_to_a_production_that_ran_nothing_must_bring_in_nothing():
    """Production failed on a tag not built yet; the swap back must not bring in the
    build pushed meanwhile (a rollback deploys nothing new)."""
    nothing = world(slot("A", None), slot("B", 0), tag=0)
    swapped = world(slot("B", 0), slot("A", None), tag=0, last_swap="completed")
    pushed = {**swapped, "registry": {**swapped["registry"], "tags": {"release": 1}}}
    back = world(slot("A", 1), slot("B", 0), tag=1, last_swap="completed")
    v = run("rollback_restores_previous", nothing, (SWAP, swapped), (PUSH, pushed), (SWAP, back))
    assert v is not None and v.message == ("swap back at step 2 left production on d1, where it ran no image "
                                           "before the previous swap (none configured, or crash-looping on a "
                                           "tag not built yet)")
    still_nothing = world(slot("A", None), slot("B", 0), tag=1, last_swap="completed")
    assert run("rollback_restores_previous", nothing, (SWAP, swapped), (PUSH, pushed), (SWAP, still_nothing)) is None


def test_a_rollback_that_leaves_production_running_nothing_restores_nothing():
    """Production ran d0 before the swap; a swap back whose container pulls nothing
    (crash-looping with no image) did not put d0 back, though it brings in nothing new."""
    failed = world(slot("A", {"digest": None, "status": "crash_loop"}), slot("B", 1), tag=1, last_swap="completed")
    v = run("rollback_restores_previous", RELEASED, (SWAP, SWAPPED), (SWAP, failed))
    assert v is not None and v.message == (
        "swap back at step 1 left production on nothing, not the d0 it ran before the previous swap")


def test_rollback_message_names_the_swap_back_and_what_production_ran_before():
    v = run("rollback_restores_previous", RELEASED, (SWAP, SWAPPED), (PUSH, PUSHED_AFTER_SWAP), (SWAP, BACK_WRONG))
    assert v.message == "swap back at step 2 left production on d2, not the d0 it ran before the previous swap"


def test_rollback_is_judged_at_every_swap_against_the_swap_before_it():
    back = world(slot("A", 0), slot("B", 1), tag=1, last_swap="completed")
    assert run("rollback_restores_previous", RELEASED, (SWAP, SWAPPED), (SWAP, back), (SWAP, SWAPPED)) is None
    # swapping the rollback back must bring d1 back, not d2 pushed since
    pushed = {**back, "registry": {**back["registry"], "tags": {"release": 2}}}
    forward_wrong = world(slot("B", 2), slot("A", 0), tag=2, last_swap="completed")
    v = run("rollback_restores_previous", RELEASED, (SWAP, SWAPPED), (SWAP, back), (PUSH, pushed), (SWAP, forward_wrong))
    assert v is not None and v.message == (
        "swap back at step 3 left production on d2, not the d1 it ran before the previous swap")


def test_an_aborted_swap_is_neither_a_rollback_nor_a_new_previous():
    aborted = {**SWAPPED, "last_swap": "aborted"}
    back = world(slot("A", 0), slot("B", 1), tag=1, last_swap="completed")
    assert run("rollback_restores_previous", RELEASED, (SWAP, SWAPPED), (SWAP, aborted), (SWAP, back)) is None


def test_a_swap_completes_when_production_moves_to_the_other_site_not_when_the_observation_says_so():
    """docs/properties.md: a swap completed when the name production routes to the other
    site. A second swap that left production on site B (last_swap still saying
    "completed") is no swap back, and the real one after it, which restores d0, is."""
    back = world(slot("A", 0), slot("B", 1), tag=1, last_swap="completed")
    assert run("rollback_restores_previous", RELEASED, (SWAP, SWAPPED), (SWAP, SWAPPED), (SWAP, back)) is None


def test_a_refused_set_image_does_not_change_what_the_rollback_must_restore():
    v = run("rollback_restores_previous", RELEASED, (SWAP, SWAPPED), (PUSH, PUSHED_AFTER_SWAP),
            ({"type": "set_image", "slot": "staging"}, PUSHED_AFTER_SWAP, "refused"),
            (SWAP, BACK_WRONG))
    assert v is not None and v.step == 3


def test_an_accepted_set_image_between_the_swaps_changes_what_previous_means():
    staged = world(slot("B", 1), slot("A", 2), tag=2, last_swap="completed")
    assert run("rollback_restores_previous", RELEASED, (SWAP, SWAPPED), (PUSH, PUSHED_AFTER_SWAP),
               ({"type": "set_image", "slot": "staging"}, staged), (SWAP, BACK_WRONG)) is None


def test_a_push_that_restarts_production_is_reported_with_what_it_changed():
    v = run("push_does_not_touch_production", world(slot("A", 0), slot("B", 0), tag=0),
            ({"type": "push", "healthy": True}, world(slot("A", 1), slot("B", 0), tag=1)))
    assert v.message == "push at step 0 changed production (site A) from d0 to d1"


def test_a_delivery_that_takes_down_a_production_container_touches_production():
    """What production runs is its containers, not only the set of digests: a delivery
    that leaves one of two instances crash-looping changed it, though d0 still runs."""
    v = run("push_does_not_touch_production", world(slot("A", 0, 0), slot("B", 0), tag=0),
            ({"type": "deliver_webhook"}, world(slot("A", 0, {"digest": 0, "status": "crash_loop"}), slot("B", 0), tag=0)))
    assert v is not None and v.message == ("deliver_webhook at step 0 changed production (site A) from "
                                           "[d0 running, d0 running] to [d0 running, d0 crash_loop]")
    # an implementation may report thousands of instances: the first eight, then how many more
    many = [0] * 1000
    v = run("push_does_not_touch_production", world(slot("A", *many), slot("B", 0), tag=0),
            ({"type": "deliver_webhook"}, world(slot("A", *many[1:], None), slot("B", 0), tag=0)))
    assert v is not None and v.message.endswith(
        "from [d0 running, d0 running, d0 running, d0 running, d0 running, d0 running, d0 running, d0 running, "
        "… 992 more] to [d0 running, d0 running, d0 running, d0 running, d0 running, d0 running, d0 running, "
        "d0 running, … 992 more]")


def test_a_container_with_nothing_pulled_is_named_by_its_status_alone():
    """An empty container runs no digest: '[d0 running, empty]', not 'nothing empty'."""
    v = run("push_does_not_touch_production", world(slot("A", 0, None), slot("B", 0), tag=0),
            ({"type": "deliver_webhook"}, world(slot("A", 0, 0), slot("B", 0), tag=0)))
    assert v is not None and v.message == ("deliver_webhook at step 0 changed production (site A) from "
                                           "[d0 running, empty] to [d0 running, d0 running]")


def test_a_push_may_change_staging():
    assert run("push_does_not_touch_production", world(slot("A", 0), slot("B", 0), tag=0),
               ({"type": "deliver_webhook"}, world(slot("A", 0), slot("B", 1), tag=1))) is None


def test_only_pushes_and_deliveries_are_held_to_leave_production_alone():
    assert run("push_does_not_touch_production", world(slot("A", 0), slot("B", 0), tag=1),
               ({"type": "restart", "slot": "production"}, world(slot("A", 1), slot("B", 0), tag=1))) is None


def test_slot_runs_one_version_names_the_slot_and_its_digests():
    assert state("slot_runs_one_version", world(slot("A", 0, 1), slot("B", 1, 1), tag=1)) == (
        "production serves d0, d1 on different instances")
    assert state("slot_runs_one_version", world(slot("A", 1, 1), slot("B", 1, 1), tag=1)) is None


def test_no_latent_drift_against_a_pinned_digest():
    pinned = world(slot("A", 0, image={"digest": 1}), slot("B", 1, image={"digest": 1}), tag=1)
    assert state("no_latent_drift", pinned) == (
        "production instance 0 runs d0 but its reference now resolves to d1: a restart would change it")


def test_no_latent_drift_in_an_empty_staging_instance():
    obs = world(slot("A", 1), slot("B", 1, None), tag=1)
    assert state("no_latent_drift", obs) == (
        "staging instance 1 runs nothing but release now resolves to d1: a restart would change it")


def test_no_latent_drift_when_the_reference_is_reset_to_no_image():
    obs = world(slot("A", 0, image=None), slot("B", 0), tag=0)
    assert state("no_latent_drift", obs) == (
        "production instance 0 runs d0 but its reference now resolves to nothing: a restart would change it")


def test_no_latent_drift_resolves_each_slot_s_own_tag():
    """Staging follows :canary (d0), production :release (d1): each is judged by its own tag."""
    obs = world(slot("A", 1), slot("B", 0, image={"tag": "canary"}), tag=1)
    obs["registry"]["tags"]["canary"] = 0
    assert state("no_latent_drift", obs) is None
    obs["registry"]["tags"]["canary"] = 2
    assert state("no_latent_drift", obs) == (
        "staging instance 0 runs d0 but canary now resolves to d2: a restart would change it")


def test_an_empty_container_on_a_tag_not_pushed_yet_or_no_image_does_not_drift():
    assert state("no_latent_drift", world(slot("A", None), slot("B", None, image=None))) is None


def test_a_released_digest_may_come_back_after_production_ran_nothing_for_a_while():
    """The release, not the previous observation, says what production may run: d0 was
    released, its tag vanished (a pull found nothing), then came back on d0. The
    reference's tags never vanish, so this guards implementations and the rule."""
    failing = {"digest": None, "status": "crash_loop"}
    retry = {"type": "crash_retry", "slot": "production", "instance": 0}
    assert run("production_runs_only_released_images", world(slot("A", None), slot("B", None), tag=0),
               (SET_PRODUCTION, world(slot("A", 0), slot("B", None), tag=0)),
               ({"type": "recycle", "slot": "production", "instance": 0}, world(slot("A", failing), slot("B", None))),
               (retry, world(slot("A", 0), slot("B", None), tag=0))) is None
    v = run("production_runs_only_released_images", world(slot("A", None), slot("B", None), tag=0),
            (SET_PRODUCTION, world(slot("A", 0), slot("B", None), tag=0)),
            ({"type": "recycle", "slot": "production", "instance": 0}, world(slot("A", failing), slot("B", None))),
            (retry, world(slot("A", 1), slot("B", None), tag=1)))
    assert v is not None and v.step == 2 and "production runs d1" in v.message


def test_only_a_swap_releases_what_staging_ran():
    """App Service's auto swap (staging swapped into production when a deployment to it
    completes) is no release: a webhook delivery that moves production to the site
    staging ran d1 on puts d1 in production unreviewed."""
    v = run("production_runs_only_released_images", RELEASED, ({"type": "deliver_webhook"}, SWAPPED))
    assert v is not None and v.step == 0 and "production runs d1 after step 0 (deliver_webhook)" in v.message
    assert run("production_runs_only_released_images", RELEASED, (SWAP, SWAPPED)) is None


def test_a_site_change_that_is_no_swap_is_not_judged_as_a_rollback():
    """A rollback is the user's swap back; production moved by anything else (an auto
    swap on a webhook delivery) is production_runs_only_released_images's to judge."""
    assert run("rollback_restores_previous", RELEASED, (SWAP, SWAPPED), (PUSH, PUSHED_AFTER_SWAP),
               ({"type": "deliver_webhook"}, BACK_WRONG)) is None
    assert run("rollback_restores_previous", RELEASED, (SWAP, SWAPPED), (PUSH, PUSHED_AFTER_SWAP),
               (SWAP, BACK_WRONG)) is not None


def test_a_webhook_delivery_to_staging_is_a_deploy_as_set_image_is():
    """cobalt's design proposal (#212): a release tag pushed to ACR triggers the deployment
    to staging. Two ordinary releases of slots-webhook-staging-tag (push, the webhook
    delivers to staging, validate, swap) were judged a failed rollback at the second swap;
    a delivery that changes what staging runs now changes what previous means, as a
    set_image on staging does. A swap back with no deploy between is still judged."""
    release = [Push(), DeliverWebhook(), Validate(), Swap()]
    first = [Push(), SetImage("production"), DeliverWebhook()] + release
    assert verdict("slots-webhook-staging-tag", "rollback_restores_previous", first + release) is None
    v = verdict("slots-webhook-staging-tag", "rollback_restores_previous", first + [Push(), Swap()])
    assert v is not None and v.message.startswith("swap back at step 8 left production on d")
    staged = world(slot("B", 1), slot("A", 2), tag=2, last_swap="completed")
    assert run("rollback_restores_previous", RELEASED, (SWAP, SWAPPED), (PUSH, PUSHED_AFTER_SWAP),
               ({"type": "deliver_webhook"}, staged), (SWAP, BACK_WRONG)) is None
    assert run("rollback_restores_previous", RELEASED, (SWAP, SWAPPED), (PUSH, PUSHED_AFTER_SWAP),
               ({"type": "deliver_webhook"}, PUSHED_AFTER_SWAP), (SWAP, BACK_WRONG)) is not None
    # scenario 1's pick-up by a delivery: staging (A) now runs what production runs, then the
    # swap back puts it in production; a restart doing the same was always judged
    picked = world(slot("B", 1), slot("A", 1), tag=1, last_swap="completed")
    back = world(slot("A", 1), slot("B", 1), tag=1, last_swap="completed")
    for how in ({"type": "deliver_webhook"}, {"type": "restart", "slot": "staging"}):
        v = run("rollback_restores_previous", RELEASED, (SWAP, SWAPPED), (how, picked), (SWAP, back))
        assert v is not None and v.message.startswith("swap back at step 2 left production on d1, not the d0"), how


def test_an_empty_container_beside_a_running_one_is_one_version():
    """A container that pulled nothing runs no version (the slot is not two versions)."""
    assert state("slot_runs_one_version", world(slot("A", 1), slot("B", 1, None), tag=1)) is None


def test_a_failed_rollback_names_what_made_the_site_moved_to_staging_pull_the_build():
    """The swap's own restart (cobalt #316 scenario 1), or a step between the swaps that
    restarted the site moved to staging: each is a cause the close look shows on its own."""
    slots = get_model("slots")
    found = {}
    for cause in ("swap", "restart", "crash_retry", "scale_out", "recycle"):
        r = explore.search(slots, "slots-pipeline-tag", slots.property("rollback_restores_previous"), budget=60,
                           seed=0, out_dir=None, skip_causes=frozenset(found))
        assert r.verdict == "violated", r.message
        found[r.cause] = [s["action"]["type"] for s in r.trace["steps"]]
    assert set(found) == {"swap", "restart", "crash_retry", "scale_out", "recycle"}
    for cause, kinds in found.items():
        swaps = [i for i, k in enumerate(kinds) if k == "swap"]
        assert len(swaps) == 2 and swaps[-1] == len(kinds) - 1  # ... then the swap back
        if cause != "swap":
            assert cause in kinds[swaps[0]:]  # the step between the swaps that pulled
    last = explore.search(slots, "slots-pipeline-tag", slots.property("rollback_restores_previous"), budget=60,
                          seed=0, out_dir=None, skip_causes=frozenset(found))
    assert last.verdict == "holds" and last.stats["complete"]
