"""The action vocabulary of the Cloud Foundry model.

User actions are the API calls behind ``cf push``, ``cf set-env``/``cf stage``,
``cf restart --strategy rolling`` (and ``cf push --strategy rolling``), ``cf cancel-deployment``, ``cf continue-deployment``
and ``cf scale``. Platform actions are one dispatch of the deployment updater
(``tick``) and one instance changing state in Diego (``runtime``).
"""

from __future__ import annotations

import attrs
from deployspec.reference.core import SENT_IF_SET, Action


def _non_negative(_inst, attribute, value):
    if value < 0:
        raise ValueError(f"{attribute.name} must be >= 0")


def _positive(_inst, attribute, value):
    if value < 1:
        raise ValueError(f"{attribute.name} must be >= 1")


@attrs.frozen
class Push(Action):
    """Create the app with a healthy droplet and ``instances`` web instances."""

    kind = "push"
    instances: int = attrs.field(default=1, validator=_non_negative)


@attrs.frozen
class Stage(Action):
    """A new droplet (or configuration) becomes the app's current droplet."""

    kind = "stage"
    #: a bool, as in JSON (the droplets' observations are kept by value, where ``1 == True``)
    healthy: bool = attrs.field(default=True, validator=attrs.validators.instance_of(bool))


@attrs.frozen
class Deploy(Action):
    """``POST /v3/deployments`` (DeploymentCreate): a rolling or canary deployment."""

    kind = "deploy"
    max_in_flight: int = attrs.field(default=1, validator=_positive)
    strategy: str = attrs.field(default="rolling", validator=attrs.validators.in_(("rolling", "canary")))
    canary_steps: tuple[int, ...] = ()
    web_instances: int = attrs.field(default=0, validator=_non_negative)  # 0 = not given
    #: None: the app's current droplet (a restart); true or false: a droplet staged for
    #: this deployment, healthy or not, which it makes the app's current one (``cf push
    #: --strategy rolling``: the request names the droplet); cancel puts the previous back
    new_droplet: bool | None = attrs.field(default=None, metadata={SENT_IF_SET: True},
                                           validator=attrs.validators.optional(attrs.validators.instance_of(bool)))
    #: None, or ``cf rollback``: the revision of droplet ``revision`` (a droplet stands
    #: for all a revision carries), which a deployment or the push deployed before;
    #: the deployment makes it the app's current droplet again, and a cancel takes it back
    revision: int | None = attrs.field(default=None, metadata={SENT_IF_SET: True})

    def __str__(self) -> str:
        parts = [f"max_in_flight={self.max_in_flight}"]
        if self.new_droplet is not None:
            parts.append(f"new_droplet={self.new_droplet}")  # as stage(healthy=…)
        if self.revision is not None:
            parts.append(f"revision={self.revision}")
        if self.strategy != "rolling":
            parts.append(f"strategy={self.strategy!r}")
        if self.canary_steps:
            parts.append(f"canary_steps={list(self.canary_steps)}")
        if self.web_instances:
            parts.append(f"web_instances={self.web_instances}")
        return f"deploy({', '.join(parts)})"


@attrs.frozen
class Cancel(Action):
    """``POST /v3/deployments/:guid/actions/cancel`` on the app's newest active deployment."""

    kind = "cancel"


@attrs.frozen
class Continue(Action):
    """``POST /v3/deployments/:guid/actions/continue`` (canary) on the newest active deployment."""

    kind = "continue_"


@attrs.frozen
class Scale(Action):
    """``POST /v3/processes/:guid/actions/scale`` on the app's newest web process."""

    kind = "scale"
    instances: int = attrs.field(validator=_non_negative)


@attrs.frozen
class Tick(Action):
    """One dispatch of the deployment updater.

    ``failed``: deployments (by creation index) whose step fails this time (lock
    contention, a rolled-back transaction): nothing of it happens, it is retried.
    ``reports_unavailable``: deployments whose step finds instance reports
    unavailable; each variant handles that as its real design does.
    ``finish_later``: deployments whose step, if it finishes, commits its scale
    transaction but runs the finish (Finalize, or the PAUSED write of a canary
    step) at the start of the next tick, so user actions can come in between: capi-current
    does that after its transaction; other designs finish inside it (a plain tick).
    ``late``: DEPLOYING deployments whose scale step, sent by this dispatch's
    snapshot, starts at the start of the next tick, so user actions can come in between:
    a design that checks the state again under the lock (PR #3072 on) then skips
    it; capi-2022 scales whatever the deployment became.
    """

    kind = "tick"
    actor = "platform"
    failed: tuple[int, ...] = ()
    reports_unavailable: tuple[int, ...] = ()
    finish_later: tuple[int, ...] = ()
    late: tuple[int, ...] = ()

    def __str__(self) -> str:
        parts = []
        if self.failed:
            parts.append("failed=" + ",".join(f"d{d}" for d in self.failed))
        if self.reports_unavailable:
            parts.append("reports_unavailable=" + ",".join(f"d{d}" for d in self.reports_unavailable))
        if self.finish_later:
            parts.append("finish_later=" + ",".join(f"d{d}" for d in self.finish_later))
        if self.late:
            parts.append("late=" + ",".join(f"d{d}" for d in self.late))
        return f"tick({', '.join(parts)})"


@attrs.frozen
class Runtime(Action):
    """The lowest-index STARTING instance of web process ``process`` settles:
    routable if its droplet is healthy, CRASHED otherwise."""

    kind = "runtime"
    actor = "platform"
    process: int = attrs.field(validator=_non_negative)

    def __str__(self) -> str:
        return f"runtime(P{self.process})"


VOCABULARY: dict[str, type[Action]] = {
    cls.kind: cls for cls in (Push, Stage, Deploy, Cancel, Continue, Scale, Tick, Runtime)
}
