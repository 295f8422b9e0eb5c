"""The slots model as the engines see it: bounds, actions to try, settling."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, ClassVar

import attrs
from deployspec.reference.core import config_fields, shown
from deployspec.spec.slots import resolve

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
    CRASH_LOOP,
    DOCKER_ENABLE_CI,
    EMPTY,
    PRODUCTION,
    RELEASE,
    RUNNING,
    STAGING,
    Image,
    Instance,
    Registry,
    Site,
    SlotsState,
    Webhook,
)


@attrs.frozen
class SlotsConfig:
    """Bounds of the explored behaviour, and the one configuration question of the issue."""

    #: instances of the App Service plan at the start (each slot runs one container per instance)
    instances: int = 2
    #: the plan scales out to at most this many instances
    max_instances: int = 3
    #: builds pushed at most (generous: a moving tag is what the tag designs break on,
    #: and random search finds their violations reliably only if pushes keep coming)
    max_pushes: int = 8
    #: DOCKER_ENABLE_CI marked "deployment slot setting": it stays with the slot name
    #: instead of travelling with the content in a swap (an ordinary app setting travels)
    ci_sticky: bool = False
    #: platform steps allowed for the settle phase
    settle_steps: int = 20
    #: how Terraform leaves the app before the pipeline's first step (``STARTS``)
    start: str = "empty"

    #: the bounds ``--engine explore`` uses unless a variant sets them: every state
    #: within them is visited in seconds (3,108 states for slots-pipeline-immutable),
    #: and each tag design still shows every violation it declares
    EXPLORE: ClassVar[dict[str, Any]] = {"instances": 1, "max_instances": 2, "max_pushes": 3}
    #: what a replay of recorded actions uses (``replay --bound``): the start and how a swap
    #: treats DOCKER_ENABLE_CI; the rest bound a search
    REPLAYED: ClassVar[tuple[str, ...]] = ("start", "instances", "max_instances", "ci_sticky", "settle_steps")

    @classmethod
    def sized(cls, data: dict[str, Any], given: Mapping[str, Any]) -> dict[str, Any]:
        """``data`` with ``max_instances`` raised to an ``instances`` given without it (an
        App Service user's ``--bound instances=3`` was refused: max_instances was 2)."""
        n, most = data.get("instances"), data.get("max_instances")
        if "instances" not in given or "max_instances" in given or type(n) is not int or type(most) is not int:
            return data
        return data | {"max_instances": max(most, n)}

    def to_json(self) -> dict[str, Any]:
        out = attrs.asdict(self)
        if self.start == "empty":  # as in every trace saved before there was a choice
            del out["start"]
        return out

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> SlotsConfig:
        config = cls(**config_fields(cls, data, least={"instances": 1, "max_instances": 1},
                                     special={"start": _start}))
        if config.instances > config.max_instances:
            raise ValueError(f"need 1 <= instances <= max_instances, got instances={config.instances}, "
                             f"max_instances={config.max_instances}")
        return config


def _start(name: str, value: Any) -> str:
    if value not in STARTS:
        raise ValueError(f"{name} must be one of {', '.join(STARTS)}, got {shown(value)}")
    return value


#: the starts Terraform leaves (``SlotsConfig.start``), read from cobalt's templates:
#: ``empty``: both slots created with no content (``linux_fx_version = "DOCKER"``),
#: nothing in the registry: the isolated-service template since PR #324
#: (c4127bad73 ``ase.tf``: ``image = ""``);
#: ``release``: both slots on ``:release``, which the template's own ``az acr build``
#: pushed before they started (a healthy d0, running everywhere): the single-region
#: template since PR #324 (c4127bad73 ``appdev.tf``);
#: ``release-unbuilt``: the same template when the slots start before that build
#: lands (nothing orders them: ``null_resource.acr_image_deploy`` depends only on the
#: registry): both slots on a tag that does not exist yet, failing to start; the
#: build is then the first push (#316 scenario 4);
#: ``webhook``: before PR #324 (242e0a9a76, isolated-service template and the
#: app-service module's ``main.tf``): production on ``:release`` with
#: DOCKER_ENABLE_CI=true and the registry-wide webhook at its CD URL, the tag not
#: built yet, so production fails to start; the staging slot with no content
#: (no ``site_config``). slots-webhook-tag's start;
#: ``webhook-staging``: the design proposal before that code (#212, 35e73daea4,
#: ``devops/providers/azure-devops/templates/container-deployment/README.md``): the
#: webhook deploys the release tag to the staging slot; both slots on ``:release``
#: with DOCKER_ENABLE_CI, the tag not built yet, so both fail to start (#316
#: scenario 4: "webhook for 'B' fires"). slots-webhook-staging-tag's start.
STARTS = ("empty", "release", "release-unbuilt", "webhook", "webhook-staging")


def initial_state(config: SlotsConfig) -> SlotsState:
    """The app as Terraform leaves it (``config.start``, see ``STARTS``)."""

    def site(name: str, image: Image | None, digest: int | None, status: str, settings=()) -> Site:
        return Site(name, image, settings, (Instance(digest, status),) * config.instances)

    registry, release = Registry(), Image(tag=RELEASE)
    if config.start == "release":
        registry = Registry(digests=(True,), tags=((RELEASE, 0),))
        a, b = site("A", release, 0, RUNNING), site("B", release, 0, RUNNING)
    elif config.start == "release-unbuilt":  # nothing to pull yet: retried for ever
        a, b = site("A", release, None, CRASH_LOOP), site("B", release, None, CRASH_LOOP)
    elif config.start == "webhook":
        registry = Registry(webhook=Webhook(target=PRODUCTION, scope=None))
        a = site("A", release, None, CRASH_LOOP, ((DOCKER_ENABLE_CI, True),))
        b = site("B", None, None, EMPTY)
    elif config.start == "webhook-staging":  # scoped to the release tag, as the proposal's
        # webhooks deploy "images tagged with release-<environment>"
        registry = Registry(webhook=Webhook(target=STAGING, scope=f"app:{RELEASE}"))
        ci = ((DOCKER_ENABLE_CI, True),)
        a, b = site("A", release, None, CRASH_LOOP, ci), site("B", release, None, CRASH_LOOP, ci)
    else:
        a, b = site("A", None, None, EMPTY), site("B", None, None, EMPTY)
    sticky = (DOCKER_ENABLE_CI,) if config.ci_sticky else ()
    return SlotsState(registry=registry, sites=(a, b), slot_setting_names=sticky)


def partition(state: SlotsState) -> tuple:
    """What decides the worker that owns a state in a partitioned search: the
    registry, which site is production and what the pipeline validated. Pulling
    images, restarting, recycling and crashing instances change none of them, so
    those moves stay inside one worker: at the default exploration bounds, 11 %
    of slots-webhook-tag's moves cross between 2 workers (50 % when the whole
    state decides) and 15 % of slots-pipeline-immutable's (52 %); between 8
    workers 20 % and 37 % (88 %, 84 %), with each worker's share of states
    within 35 % of the mean."""
    return (state.registry, state.production, state.validated)


def candidate_actions(obs: dict, config: SlotsConfig) -> list:
    """Every action worth trying from an observation, simplest first (for shrinking).

    A pull that would land what an instance already has changes nothing, so
    restarts, recycles and retries are offered only where they would change it;
    ``validate`` only when it would pass. Refusals and no-ops waste search steps
    (``probe_actions`` lists them).
    """
    return _actions(obs, config, None)


def probe_actions(obs: dict, config: SlotsConfig) -> list:
    """The actions ``candidate_actions`` leaves out of this observation because
    every design refuses them here or they change nothing, simplest first.

    A contract run tries them too: an implementation that accepts what the
    reference refuses (or refuses, or acts on, what it ignores) does not conform.
    They are ``validate`` while a staging instance is not running, a webhook
    delivery with none queued, and the restart, recycles and crash retries that
    would pull what an instance already has (or retry one that is not failing).
    What the bounds leave out (a push past ``max_pushes``, a scale-out past
    ``max_instances``) is no probe: the reference accepts it."""
    probes: list = []
    _actions(obs, config, probes)
    return probes


def _actions(obs: dict, config: SlotsConfig, probes: list | None) -> list:
    """The candidate actions; with ``probes`` a list, the probes are appended to it,
    each where the candidates leave it out (one decision for both)."""
    out: list = []
    reg = obs["registry"]
    built = 1 if config.start == "release" else 0  # Terraform's own build is no push
    if len(reg["digests"]) - built < config.max_pushes:
        out += [Push(True), Push(False)]
    out += [SetImage(STAGING), SetImage(PRODUCTION), Swap()]
    staging = obs["slots"][STAGING]["instances"]
    if all(i["status"] == "running" for i in staging):
        out.append(Validate())
    elif probes is not None:  # refused: validation fails
        probes.append(Validate())
    if reg["pending_deliveries"]:
        out.append(DeliverWebhook())
    elif probes is not None:  # refused: nothing queued
        probes.append(DeliverWebhook())
    for slot in (PRODUCTION, STAGING):
        stale = _stale(reg, obs["slots"][slot])
        if stale:
            out.append(Restart(slot))
        elif probes is not None:  # every pull lands what its instance has: changes nothing
            probes.append(Restart(slot))
        for i in stale:
            out.append(Recycle(slot, i))
            if obs["slots"][slot]["instances"][i]["status"] == "crash_loop":
                out.append(CrashRetry(slot, i))
            elif probes is not None:  # not failing to start: refused
                probes.append(CrashRetry(slot, i))
        if probes is not None:
            for i in range(len(obs["slots"][slot]["instances"])):
                if i not in stale:  # the pull lands what it has: changes nothing
                    probes += (Recycle(slot, i), CrashRetry(slot, i))  # (a retry: or refused)
    if len(obs["slots"][PRODUCTION]["instances"]) < config.max_instances:
        out.append(ScaleOut())
    return out


def _stale(registry: dict, slot: dict) -> list[int]:
    """Instances a pull would change: their digest is not what the reference resolves to."""
    now = resolve(registry, slot["image"])
    return [i for i, inst in enumerate(slot["instances"]) if inst["digest"] != now]


def failed_call(action, obs: dict) -> str | None:
    """``"aborted"`` after a swap that aborted (:func:`swap.swap`'s step 2: a container of
    the slot it moves failed to start, so production was not touched): accepted, and
    nothing moved, which a user asking why a rollback did not roll back needs told."""
    return "aborted" if action.kind == "swap" and obs["last_swap"] == "aborted" else None


def settle_action(obs: dict) -> Any:
    """What the platform does when users stay away: deliver queued pushes, and retry
    failing containers whose reference now resolves to something else (a retry
    that would pull the same thing changes nothing, so settling stops there)."""
    reg = obs["registry"]
    if reg["pending_deliveries"]:
        return DeliverWebhook()
    for slot in (PRODUCTION, STAGING):
        s = obs["slots"][slot]
        for i in _stale(reg, s):
            if s["instances"][i]["status"] == "crash_loop":
                return CrashRetry(slot, i)
    return None
