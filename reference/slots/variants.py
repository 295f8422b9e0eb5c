"""The four slot designs of cobalt #316 (the webhook as coded and as designed, the
pipeline with a tag, the pipeline with immutable references), as variants of one model.

They differ in two rules and a start only: how ``set_image`` writes the image
reference (the mutable ``:release`` tag, or the digest the pipeline just built),
whether applying production's configuration also turns on DOCKER_ENABLE_CI and
registers the registry webhook, and where Terraform leaves the slots (``start``
in ``config``). Swap, restarts, pulls and deliveries are shared, so the diff
between two variants reads like the upstream change.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import attrs
from deployspec.reference.core import (
    Action,
    Beyond,
    Rejected,
    flag,
    frozen,
    not_declared,
    rule_field,
)

from . import platform
from .actions import (
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
from .state import (
    DOCKER_ENABLE_CI,
    PRODUCTION,
    RELEASE,
    RUNNING,
    STAGING,
    Image,
    SlotsState,
    Webhook,
)
from .swap import swap

#: what a mutable tag breaks: every property but ``swap_keeps_production_serving``, which
#: App Service's own swap keeps in every design (it stops a swap whose staging fails to start),
#: and ``pipeline_ships_latest_build`` (a ``set_image`` restarts the slot, which pulls the tag
#: just moved)
MUTABLE_TAG_BREAKS = frozenset(
    {
        "production_runs_only_released_images",
        "rollback_restores_previous",
        "push_does_not_touch_production",
        "slot_runs_one_version",
        "no_latent_drift",
    }
)

#: reference rule: the state after a push -> the reference set_image writes, or a refusal
ReferenceRule = Callable[[SlotsState], "Image | Rejected"]


def mutable_tag(state: SlotsState) -> Image | Rejected:
    """``DOCKER|<registry>/<image>:release``: whatever the tag points to at each pull."""
    return Image(tag=RELEASE)


def immutable_reference(state: SlotsState) -> Image | Rejected:
    """The digest (or never-reused build tag) ``:release`` points to when the pipeline
    sets the image, as "Image tag best practices" recommends for deployments. That is
    the pipeline's own build unless another push came in between. cobalt's one pipeline
    that deploys a container by a never-reused tag (#387, 4c5de79c31, the Maven Function
    App template: ``tasks/acr-push.yml`` pushes ``$(Build.BuildId)-<env>-release``, then
    ``tasks/function-deploy.yml`` sets it with ``az functionapp config container set``)
    targets a Function App without slots or swap: the same pinning, not this design whole. The model resolves the tag at that moment: either
    way the slot is pinned to one digest, which is what is then validated and swapped."""
    digest = state.registry.resolve(Image(tag=RELEASE))
    if digest is None:
        return Rejected("nothing built yet: no digest to deploy")
    return Image(digest=digest)


@attrs.frozen
class SlotsVariant:
    """One design of an App Service app with staging and production slots."""

    name: str
    summary: str
    upstream: str
    #: properties this design is known to violate
    declares: frozenset[str] = attrs.field(converter=frozen)
    #: (state) -> the Image ``set_image`` writes, or Rejected (``mutable_tag``, ``immutable_reference``)
    reference: ReferenceRule = rule_field(Image, Rejected, takes=1)
    #: applying production's configuration sets DOCKER_ENABLE_CI=true and registers
    #: a registry-wide webhook at production's CI/CD URL, if there is none (cobalt
    #: before PR #324: Terraform owned production's image, its ``app_settings`` and the
    #: webhook's ``null_resource``, whose triggers are the image setting's text and
    #: ``uses_acr``, ``main.tf`` at 242e0a9a76: a push moving ``:release`` re-runs nothing;
    #: the model's ``set_image`` restarts production even where Terraform would find no
    #: change: a ``set_image`` on production is a release. The tag designs' verdict of
    #: ``pipeline_ships_latest_build`` rests on it: a Terraform apply that restarted
    #: nothing would leave production on the build before)
    terraform_webhook: bool = attrs.field(validator=flag)
    doc: str = ""
    model: str = "slots"
    #: per-variant configuration for the engines (evolves the model's SlotsConfig)
    config: dict = attrs.field(factory=dict, eq=False)
    #: bounds ``--engine explore`` uses on top of ``config`` and the model's EXPLORE (as
    #: CapiVariant's; no shipped slots design needs its own)
    explore: dict[str, Any] = attrs.field(factory=dict, eq=False)
    #: properties it violates only beyond the default search (none known; see CapiVariant)
    violates_beyond: dict[str, Beyond] = attrs.field(factory=dict, eq=False, validator=not_declared)

    def set_image(self, state: SlotsState, slot: str) -> SlotsState | Rejected:
        """Write the slot's ``linuxFxVersion``; a changed setting restarts the slot."""
        image = self.reference(state)
        if isinstance(image, Rejected):
            return image
        site = attrs.evolve(state.site(slot), image=image)
        if self.terraform_webhook and slot == PRODUCTION:
            site = site.with_setting(DOCKER_ENABLE_CI, True)
            if state.registry.webhook is None:
                state = state.with_registry(webhook=Webhook(target=PRODUCTION, scope=None))
        return platform.restart(state.with_site(slot, site), slot)

    def step(self, state: SlotsState, action: Action) -> SlotsState | Rejected:
        """Apply one action; a refusal leaves the state as it was."""
        apply = _STEPS.get(type(action))
        if apply is None:
            return Rejected(f"{action.kind!r} is not an App Service slots action")
        return apply(self, state, action)


#: what each action of the vocabulary does (looked up by class, as capi's step does)
_STEPS = {
    Push: lambda variant, state, a: platform.push(state, a.healthy),
    DeliverWebhook: lambda variant, state, a: platform.deliver_webhook(state),
    SetImage: lambda variant, state, a: variant.set_image(state, a.slot),
    Validate: lambda variant, state, a: validate(state),
    Swap: lambda variant, state, a: swap(state),
    Restart: lambda variant, state, a: platform.restart(state, a.slot),
    ScaleOut: lambda variant, state, a: platform.scale_out(state),
    Recycle: lambda variant, state, a: platform.restart_instance(state, a.slot, a.instance),
    CrashRetry: lambda variant, state, a: platform.crash_retry(state, a.slot, a.instance),
}


def validate(state: SlotsState) -> SlotsState | Rejected:
    """The pipeline's check of staging passes only if every instance runs an image."""
    instances = state.site(STAGING).instances
    if not instances or any(i.status != RUNNING for i in instances):
        return Rejected("validation fails: staging is not running an image on every instance")
    digests = tuple(sorted({i.digest for i in instances}))
    return attrs.evolve(state, validated=state.validated + tuple(d for d in digests if d not in state.validated))


SLOTS_WEBHOOK_TAG = SlotsVariant(
    name="slots-webhook-tag",
    summary="cobalt before PR #324: registry-wide webhook to production's CD URL, :release tag",
    upstream=(
        "microsoft/cobalt 242e0a9a76d172eee1403983a9d7641a92086306 (parent of PR #324): "
        "infra/modules/providers/azure/app-service/main.tf (DOCKER_ENABLE_CI on the site, "
        "null_resource.acr_webhook_creation: az acr webhook create without --scope, --uri "
        "from show-cd-url without --slot)"
    ),
    declares=MUTABLE_TAG_BREAKS,
    reference=mutable_tag,
    terraform_webhook=True,
    doc=(
        "As coded, not as the design doc described: Terraform set DOCKER_ENABLE_CI=true and "
        "the :release tag on the production site only (the staging slot had no app_settings "
        "or site_config), and the ACR webhook had no scope and posted to the production "
        "site's CD URL. It starts there (start=webhook: the isolated-service template built "
        "nothing, so production fails to start until the first push). Every push restarts "
        "whatever content holds the name production (if it carries DOCKER_ENABLE_CI), which "
        "pulls the moved tag. Both slots sit on one mutable tag once the pipeline or portal "
        "sets staging's image."
    ),
    config={"start": "webhook"},
)

SLOTS_WEBHOOK_STAGING_TAG = attrs.evolve(
    SLOTS_WEBHOOK_TAG,
    name="slots-webhook-staging-tag",
    summary="cobalt's design proposal: the release tag's webhook deploys to the staging slot, then a swap",
    upstream=(
        "microsoft/cobalt 35e73daea4231bd8ded378fc3d386ac06f7e39d7 (#212, Container CI/CD Technical Design Proposal, 2019-07-16): "
        "devops/providers/azure-devops/templates/container-deployment/README.md, stages Staging "
        "and Production: creating the release tag in ACR 'triggers the webhook deployment to the "
        "staging app service slot', tests, a gate, then a swap; rollback by swapping back"
    ),
    declares=MUTABLE_TAG_BREAKS - {"push_does_not_touch_production"},
    terraform_webhook=False,
    doc=(
        "As designed, not as coded (slots-webhook-tag): the webhook posts to the staging slot's "
        "CD URL and fires on the release tag only, and both slots carry DOCKER_ENABLE_CI and the "
        "tag. A push then restarts staging alone, but production still sits on the same mutable "
        "tag: its own restarts, retries and scale-outs, and the swap's restarts, pull whatever "
        "the tag points to now. It starts as the first deployment of #316 scenario 4 "
        "(start=webhook-staging: both slots on :release, nothing built yet); the design "
        "document says nothing of production's image or CI, and a start with production "
        "empty gives the same verdicts (a fidelity review's explore run)."
    ),
    config={"start": "webhook-staging"},
)

SLOTS_PIPELINE_TAG = attrs.evolve(
    SLOTS_WEBHOOK_TAG,
    name="slots-pipeline-tag",
    summary="PR #324: no webhook, no DOCKER_ENABLE_CI; the pipeline sets the :release tag",
    upstream=(
        "microsoft/cobalt c4127bad73b3fcf31b2de6e22d45d8c304238c3a (PR #324): main.tf drops "
        "DOCKER_ENABLE_CI and the webhook, adds ignore_changes on linux_fx_version; the SR "
        "template (appdev.tf) still passes image = <name>:release to both slots"
    ),
    declares=MUTABLE_TAG_BREAKS - {"push_does_not_touch_production"},
    terraform_webhook=False,
    config={},
    doc=(
        "A push no longer restarts anything, but every pull still re-resolves the mutable "
        "tag: a restart, host move, scale-out, crash retry or the swap's own restarts can "
        "bring an unreviewed image into production, and swapping back does not restore "
        "the previous digest. PR #324 added no unique-tag or digest policy."
    ),
)

SLOTS_PIPELINE_IMMUTABLE = attrs.evolve(
    SLOTS_PIPELINE_TAG,
    name="slots-pipeline-immutable",
    summary="PR #324 + Microsoft's guidance: a digest (never-reused tag) on staging, validate, swap",
    upstream=(
        "cobalt c4127bad73 (PR #324) plus ACR \"Image tag best practices\" (unique tags for "
        "deployments) and App Service \"deployment slots\" (deploy to staging, swap)"
    ),
    declares=frozenset(),
    reference=immutable_reference,
    doc=(
        "The pipeline writes the digest of the build it just pushed. A reference that "
        "cannot move makes every pull land the same image, so restarts, retries, "
        "scale-outs and the swap's restarts cannot change what a slot runs. It needs "
        "Terraform to create the slots without a mutable reference (the isolated-service "
        "template's image = \"\", start=empty): from the single-region template's start "
        "(start=release, both slots on :release) production keeps the moving tag until "
        "the first release, and a push then reaches it through any restart, scale-out or "
        "swap, which breaks four properties (docs/findings.md)."
    ),
)

VARIANTS: dict[str, SlotsVariant] = {
    v.name: v for v in (SLOTS_WEBHOOK_TAG, SLOTS_WEBHOOK_STAGING_TAG, SLOTS_PIPELINE_TAG, SLOTS_PIPELINE_IMMUTABLE)
}
