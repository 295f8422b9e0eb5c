"""The action vocabulary of the App Service slots model.

User actions: a build ``push``-ed to the registry, the CD pipeline's (or
Terraform's) ``set_image``, the pipeline's ``validate`` of staging, a ``swap``,
a portal ``restart`` and a plan ``scale_out``. Platform actions: a webhook
delivery, an instance recycled by a host move, a crashing container retried.
"""

from __future__ import annotations

import attrs
from deployspec.reference.core import Action, shown

from .state import SLOT_NAMES


def _slot(_inst, attribute, value):
    if value not in SLOT_NAMES:
        raise ValueError(f"{attribute.name} must be production or staging, got {shown(value)}")


def _non_negative(_inst, attribute, value):
    if value < 0:
        raise ValueError(f"{attribute.name} must be >= 0")


@attrs.frozen
class Push(Action):
    """A build pushed as ``:release``: the tag moves to a new digest, healthy or not.

    A registry webhook, if any, queues one delivery when its scope matches ``:release``
    (cobalt's has no scope: registry-wide, so every push).
    """

    kind = "push"
    healthy: bool = True


@attrs.frozen
class DeliverWebhook(Action):
    """The oldest queued push notification reaches the webhook's CI/CD URL: that
    slot restarts and pulls its *configured* reference (if DOCKER_ENABLE_CI is on)."""

    kind = "deliver_webhook"
    actor = "platform"


@attrs.frozen
class SetImage(Action):
    """The CD pipeline (or a Terraform apply) points ``slot`` at the build just
    pushed and restarts it; the variant decides how the reference is written."""

    kind = "set_image"
    slot: str = attrs.field(validator=_slot)


@attrs.frozen
class Validate(Action):
    """The pipeline checks staging: every instance must be running; its digests are recorded."""

    kind = "validate"


@attrs.frozen
class Swap(Action):
    """Swap staging (source) into production (target), with the documented phases."""

    kind = "swap"


@attrs.frozen
class Restart(Action):
    """A portal restart of ``slot``: every instance pulls again ("Configure a custom
    container": "Each time the app restarts, App Service does a docker pull"; the Linux
    FAQ calls it a Docker restart, docs/findings.md). Scale-out, host moves and crash
    retries pull by every account, so no verdict rests on this one."""

    kind = "restart"
    slot: str = attrs.field(validator=_slot)


@attrs.frozen
class ScaleOut(Action):
    """The App Service plan gains an instance: every slot gets a new container, which pulls."""

    kind = "scale_out"


@attrs.frozen
class Recycle(Action):
    """The platform moves one instance of ``slot`` to another host: it pulls again."""

    kind = "recycle"
    actor = "platform"
    slot: str = attrs.field(validator=_slot)
    instance: int = attrs.field(validator=_non_negative)


@attrs.frozen
class CrashRetry(Action):
    """App Service retries a container that failed to start, pulling again (cobalt #316)."""

    kind = "crash_retry"
    actor = "platform"
    slot: str = attrs.field(validator=_slot)
    instance: int = attrs.field(validator=_non_negative)


VOCABULARY: dict[str, type[Action]] = {
    cls.kind: cls
    for cls in (Push, DeliverWebhook, SetImage, Validate, Swap, Restart, ScaleOut, Recycle, CrashRetry)
}
