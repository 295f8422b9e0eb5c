"""The design decisions in which the Cloud Controller's versions differ.

Each function is one rule, named for what it decides; a variant is a choice of
rules (see ``variants.py``). Keeping them here, side by side, makes the diff
between two variants read like the upstream commit that changed the rule.
"""

from __future__ import annotations

from collections.abc import Callable

from .state import (
    ACTIVE_STATES,
    CANCELED,
    DEPLOYED,
    DEPLOYING,
    FINALIZED,
    RUNNING,
    SUPERSEDED,
    CapiState,
    Deployment,
    Process,
)


class Retry(Exception):
    """The updater step raises: its transaction rolls back and the next dispatch retries."""


# ---------------------------------------------------------------------------
# DeploymentCreate: which earlier deployment is superseded (and lends its owic)
# ---------------------------------------------------------------------------


def previous_deploying(state: CapiState) -> Deployment | None:
    """Before PR #3072: only a DEPLOYING deployment is found and superseded;
    a CANCELING one stays active beside the new one."""
    for d in reversed(state.deployments):
        if d.state == DEPLOYING:
            return d
    return None


def previous_active(state: CapiState) -> Deployment | None:
    """PR #3072 onwards: the newest deployment in any active state."""
    for d in reversed(state.deployments):
        if d.state in ACTIVE_STATES:
            return d
    return None


def superseded(previous: Deployment) -> Deployment:
    """A DEPLOYING deployment counts as deployed; any other active one as canceled."""
    if previous.state == DEPLOYING:
        return previous.moved_to(DEPLOYED, FINALIZED, SUPERSEDED)
    return previous.moved_to(CANCELED, FINALIZED, SUPERSEDED)


# ---------------------------------------------------------------------------
# The cancel step: which web process survives ("prior web process")
# ---------------------------------------------------------------------------

#: select(state, canceled deployment, instance reports available?) -> process
PriorSelection = Callable[[CapiState, Deployment, bool], Process]


def newest_other_process(state: CapiState, canceling: Deployment, reports: bool) -> Process:
    """Before PR #3072: the newest web process that is not the canceled
    deployment's own, whoever created it and whatever its health. With two
    active deployments that is the *other* deployment's new process (the seed)."""
    others = [p for p in state.processes if p.id != canceling.deploying_process]
    if not others:
        raise Retry("no web process other than the deploying one")
    return others[-1]


def _interims(state: CapiState) -> list[Process]:
    """Deploying processes of DEPLOYED/SUPERSEDED deployments, newest first."""
    out = []
    for p in reversed(state.processes):
        d = state.deployment_of(p.id)
        if d is not None and d.state == DEPLOYED and d.status_reason == SUPERSEDED:
            out.append(p)
    return out


def interim_or_oldest(state: CapiState, canceling: Deployment, reports: bool) -> Process:
    """PR #3072: the newest interim process (left by a superseded deployment),
    else the app's oldest web process. No health check: a dead interim wins."""
    interims = _interims(state)
    if interims:
        return interims[0]
    if state.oldest_process is None:
        raise Retry("the app has no web process")
    return state.oldest_process


def running_interim_or_oldest(state: CapiState, canceling: Deployment, reports: bool) -> Process:
    """PR #3084: the newest interim process with at least one RUNNING instance,
    else the oldest web process. An unavailable instance report counts as
    "not running", so the fallback may be an original process at 0 instances."""
    for p in _interims(state):
        if reports and p.count(RUNNING) > 0:
            return p
    if state.oldest_process is None:
        raise Retry("the app has no web process")
    return state.oldest_process


def running_interim_or_oldest_strict(
    state: CapiState, canceling: Deployment, reports: bool
) -> Process:
    """capi-safe: as PR #3084, but an unavailable instance report makes the
    cancel step retry rather than guess that no interim is running."""
    if not reports:
        raise Retry("instance reports unavailable")
    return running_interim_or_oldest(state, canceling, True)


# ---------------------------------------------------------------------------
# What the user's scale request is refused during
# ---------------------------------------------------------------------------

BLOCKED_WHILE_DEPLOYING = frozenset({DEPLOYING})
BLOCKED_WHILE_ACTIVE = frozenset(ACTIVE_STATES)


def zero_canceled_superseded(state: CapiState, deployment: Deployment) -> CapiState:
    """PR #3072: a scale step first scales to 0 the processes of deployments
    that were CANCELED by being superseded (their cancel step will never run)."""
    for d in state.deployments:
        if d.state == CANCELED and d.status_reason == SUPERSEDED and d.id != deployment.id:
            p = state.process(d.deploying_process)
            if p is not None and p.desired:
                state = state.with_process(p.scaled_to(0))
    return state


def zero_canceled_superseded_if_covered(state: CapiState, deployment: Deployment) -> CapiState:
    """capi-safe: as PR #3072, but only while some other web process keeps a
    routable instance; otherwise they stay until the rollout moves their
    instances over (the canceled version may be all that serves)."""
    zeroed = zero_canceled_superseded(state, deployment)
    if zeroed is state or any(p.count(RUNNING) for p in zeroed.processes):
        return zeroed
    return state


def keep_processes(state: CapiState, deployment: Deployment) -> CapiState:
    """Before PR #3072: nothing to clean up (a CANCELING deployment stays active)."""
    return state

