"""What a selection rule reads at a cancel step, and the constants of the encoding."""

from __future__ import annotations

from typing import Any

import attrs
from deployspec.reference.capi import rules
from deployspec.reference.capi.observe import from_observation
from deployspec.reference.capi.state import (
    ACTIVE_STATES,
    CRASHED,
    DEPLOYMENT_STATES,
    RUNNING,
    STARTING,
    STATUS_REASONS,
    CapiState,
    Deployment,
)

#: the canceled deployment's cancel step retries (the rule raised ``Retry``)
RETRY = -1
#: the owner of a web process no deployment created: the one ``push`` created
PUSHED = -1
#: the canceled deployment recorded no web process to roll back to (or it is gone)
NOT_RECORDED = -1

STATE_CODE = {s: i for i, s in enumerate(DEPLOYMENT_STATES)}
REASON_CODE = {r: i for i, r in enumerate(STATUS_REASONS)}

#: families of designs, by what their DeploymentCreate supersedes
TWO_ACTIVE = "two-active"  # before PR #3072: a CANCELING deployment stays active beside a new one
ONE_ACTIVE = "one-active"  # PR #3072 onwards: at most one deployment is active
#: a cancel step that destroys web processes only in the step that completes the cancel
#: (CANCELED/CANCELED) and calls the rule before it has changed anything
DESTROYS_AT_END = "cancel-destroys-at-end"
#: Finalize runs inside the scale step's transaction, so it is whole: every web
#: process but the deployment's goes and the deployment is DEPLOYED, or nothing
#: happens (every design but capi-current, whose Finalize runs after the commit,
#: from a list it may have loaded before, and can stop half-way: docs/findings.md 8-10)
FINALIZE_WHOLE = "finalize-whole"
#: no scale step writes DEPLOYING on a deployment superseded or canceled since the
#: dispatcher's snapshot: a design that checks the state under the lock (PR #3072 on),
#: or one whose configuration does not open that window (capi-2022's does: ``tick(late=…)``)
SNAPSHOT_CLOSED = "snapshot-closed"
#: a design that records, when a deployment is created, a web process with a RUNNING
#: instance as the one its cancel rolls back to (its droplet starts, so it never crashes)
RECORDS_SERVING = "records-serving"
#: the recording rules known to do so (by name, as below)
RECORDING_SERVING = frozenset({"newest_serving_process"})
#: the cancel steps known to do so (by name, so a variant from another module counts)
DESTROYING_AT_END = frozenset({
    "cancel_step_scale_then_destroy",  # before PR #4246
    "cancel_step_destroy_then_scale",  # PR #4246: destroy, then scale, one transaction
})



# ---------------------------------------------------------------------------
# The view a selection rule reads
# ---------------------------------------------------------------------------


@attrs.frozen
class SelectionView:
    """An app as the cancel step of deployment ``canceled`` sees it.

    ``owners[i]`` is the deployment whose deploying process the i-th web process
    (creation order) is, or ``PUSHED``; ``deployments`` are (state, status_reason)
    in creation order. ``status_value`` is left out: no selection rule reads it
    (every design derives it from the state but capi-current, whose late PAUSED
    write leaves a deployment PAUSED/FINALIZED). Instances are
    ``running`` RUNNING, ``crashed`` CRASHED (all zero when not given) and the
    rest STARTING. ``recorded`` is the slot of the web process the canceled
    deployment recorded when it was created (``Deployment.rolls_back_to``, capi-safe),
    or ``NOT_RECORDED``.
    """

    owners: tuple[int, ...]
    desired: tuple[int, ...]
    running: tuple[int, ...]
    deployments: tuple[tuple[str, str], ...]
    canceled: int
    reports: bool
    crashed: tuple[int, ...] = attrs.field(
        default=attrs.Factory(lambda self: (0,) * len(self.owners), takes_self=True))
    recorded: int = NOT_RECORDED

    @property
    def n(self) -> int:
        return len(self.owners)

    @property
    def m(self) -> int:
        return len(self.deployments)

    def key(self) -> tuple:
        """What makes two views equivalent for every rule and property here:
        exact instance counts do not matter, whether a process runs or crashes does."""
        return (self.owners, tuple(r > 0 for r in self.running), tuple(c > 0 for c in self.crashed),
                self.deployments, self.canceled, self.reports, self.recorded)

    @classmethod
    def of(cls, state: CapiState, deployment: Deployment, reports: bool) -> SelectionView:
        """The view of a concrete state at the cancel step of ``deployment``."""
        index = {d.deploying_process: d.id for d in state.deployments}  # later ids win, as deployment_of
        slots = [p.id for p in state.processes]
        recorded = deployment.rolls_back_to
        return cls(
            owners=tuple(index.get(p.id, PUSHED) for p in state.processes),
            desired=tuple(p.desired for p in state.processes),
            running=tuple(p.count(RUNNING) for p in state.processes),
            deployments=tuple((d.state, d.status_reason) for d in state.deployments),
            canceled=deployment.id,
            reports=reports,
            crashed=tuple(p.count(CRASHED) for p in state.processes),
            recorded=slots.index(recorded) if recorded in slots else NOT_RECORDED,
        )

    def to_observation(self) -> dict[str, Any]:
        """An observation with this view (``reports`` aside): web process i has id
        i; a deployment whose process is gone points at an id no process has."""
        slot = {o: i for i, o in enumerate(self.owners) if o != PUSHED}
        return {
            "app": {"droplet": 0, "started": True},
            "droplets": [{"id": 0, "healthy": True}],
            "processes": [
                {"id": i, "droplet": 0,
                 "instances": [RUNNING] * self.running[i] + [CRASHED] * self.crashed[i]
                              + [STARTING] * (self.desired[i] - self.running[i] - self.crashed[i])}
                for i in range(self.n)
            ],
            "deployments": [
                {"id": j, "state": s, "status_value": "ACTIVE" if s in ACTIVE_STATES else "FINALIZED",
                 "status_reason": r, "deploying_process": slot.get(j, self.n + j), "droplet": 0,
                 "previous_droplet": 0, "owic": 1}
                for j, (s, r) in enumerate(self.deployments)
            ],
        }

    def to_state(self) -> CapiState:
        """The state: the observation's, with what the canceled deployment recorded
        (no observation shows it: no upstream column holds it)."""
        state = from_observation(self.to_observation())
        if self.recorded == NOT_RECORDED:
            return state
        canceled = state.deployments[self.canceled]
        return state.with_deployment(attrs.evolve(canceled, rolls_back_to=self.recorded))

    def select(self, rule: rules.PriorSelection) -> int:
        """Run a Python rule on this view: the survivor's slot, or ``RETRY``."""
        state = self.to_state()
        try:
            prior = rule(state, state.deployments[self.canceled], self.reports)
        except rules.Retry:
            return RETRY
        return [p.id for p in state.processes].index(prior.id)

    def to_json(self) -> dict[str, Any]:
        return {
            "processes": [
                {"slot": i, "created_by": None if o == PUSHED else f"d{o}",
                 "desired": self.desired[i], "running": self.running[i], "crashed": self.crashed[i]}
                for i, o in enumerate(self.owners)
            ],
            "deployments": [{"id": j, "state": s, "status_reason": r}
                            for j, (s, r) in enumerate(self.deployments)],
            "canceled": self.canceled,
            "reports_available": self.reports,
            "rolls_back_to": None if self.recorded == NOT_RECORDED else self.recorded,
        }

    def describe(self) -> str:
        """``P0 pushed running, P1 of d0, P2 of d1 | d0 DEPLOYED/SUPERSEDED, d1 CANCELING (canceled)``."""
        procs = []
        for i, o in enumerate(self.owners):
            who = "pushed" if o == PUSHED else f"of d{o}"
            procs.append(f"P{i} {who}{' running' if self.running[i] else ''}"
                         f"{' crashing' if self.crashed[i] else ''}")
        deps = []
        for j, (s, r) in enumerate(self.deployments):
            deps.append(f"d{j} {s}" + (f"/{r}" if r != s else "") + (" (canceled)" if j == self.canceled else ""))
        reports = "" if self.reports else "; instance reports unavailable"
        recorded = "" if self.recorded == NOT_RECORDED else f"; d{self.canceled} rolls back to P{self.recorded}"
        return ", ".join(procs) + " | " + ", ".join(deps) + recorded + reports
