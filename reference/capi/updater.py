"""The deployment updater (``lib/cloud_controller/deployment_updater/``).

One ``tick`` is one dispatch: the scheduler snapshots the deployments to scale
and to cancel and runs a step for each. A step is a transaction under the app
lock; when it raises (lock contention, instance reports unavailable, a missing
process) it rolls back and the deployment is retried on the next dispatch.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import attrs

from .actions import Tick
from .rules import Retry
from .state import (
    CANCELED,
    CANCELING,
    DEGENERATE,
    DEPLOYED,
    DEPLOYING,
    FINALIZED,
    RUNNING,
    CapiState,
    Deployment,
)

if TYPE_CHECKING:
    from .variants import CapiVariant


def dispatch(variant: CapiVariant, state: CapiState, tick: Tick) -> CapiState:
    """Scale steps for deployments being rolled out, then cancel steps, as the
    dispatcher submits them to its work pool; each on the snapshot taken first."""
    state = variant.before_dispatch(state)
    to_scale = [d.id for d in state.deployments if d.state in variant.scaled_states]
    to_cancel = [d.id for d in state.deployments if d.state == CANCELING]
    steps = [(d, variant.scale_step) for d in to_scale] + [(d, variant.cancel_step) for d in to_cancel]
    for did, step in steps:
        if did in tick.failed:
            continue
        try:
            state = step(variant, state, state.deployments[did], did not in tick.reports_unavailable)
        except Retry:
            pass
    return state


def finalize_degenerate(state: CapiState) -> CapiState:
    """Until b94a64fbfb (2023-12): an active deployment whose deploying process
    row is gone is finalized as DEPLOYED/DEGENERATE before anything else."""
    for d in state.deployments:
        if d.active and state.process(d.deploying_process) is None:
            state = state.with_deployment(d.moved_to(DEPLOYED, FINALIZED, DEGENERATE))
    return state


def finalize(state: CapiState, deployment: Deployment) -> CapiState:
    """The deploying process is the app's web process now: every other one goes."""
    others = [p.id for p in state.processes if p.id != deployment.deploying_process]
    state = state.without_processes(others)
    return state.with_deployment(deployment.moved_to(DEPLOYED, FINALIZED, DEPLOYED))


def scale_step_one_at_a_time(
    variant: CapiVariant, state: CapiState, deployment: Deployment, reports: bool
) -> CapiState:
    """The scale step of 2019-2023 (``Updater#scale_deployment``).

    Once every instance of the deploying process is RUNNING (an unavailable
    report counts as not ready), finish if it has reached owic, else move one
    instance over from the oldest web process that has any; an interim process
    at its last instance is destroyed, the original kept at 0.
    """
    if variant.recheck_under_lock and deployment.state != DEPLOYING:
        return state
    state = variant.cleanup(state, deployment)
    deploying = state.process(deployment.deploying_process)
    if deploying is None:
        raise Retry("the deploying web process is gone")
    # The donor is chosen first, among all web processes: it may be the deploying one.
    donor = next((p for p in state.processes if p.desired > 0), None)
    if donor is None:
        raise Retry("no web process with instances to lock")
    if not reports or any(i != RUNNING for i in deploying.instances):
        return state
    if deploying.desired >= deployment.owic:
        return finalize(state, deployment)
    if donor.id == deploying.id:
        if donor.desired == 1 and donor is not state.oldest_process:
            raise Retry("the deploying process destroyed itself; the update fails")
        return state  # one instance taken and given back in one transaction
    if donor.desired == 1 and donor is not state.oldest_process:
        state = state.without_processes([donor.id])
    else:
        state = state.with_process(donor.scaled_to(donor.desired - 1))
    return state.with_process(deploying.scaled_to(deploying.desired + 1))


def cancel_step_scale_then_destroy(
    variant: CapiVariant, state: CapiState, deployment: Deployment, reports: bool
) -> CapiState:
    """The cancel step before PR #4246: the prior web process is scaled back to
    owic, then every other web process is destroyed."""
    if variant.recheck_under_lock and deployment.state != CANCELING:
        return state
    prior = variant.select_prior(state, deployment, reports)
    state = state.with_process(prior.scaled_to(deployment.owic))
    state = state.without_processes(p.id for p in state.processes if p.id != prior.id)
    return state.with_deployment(deployment.moved_to(CANCELED, FINALIZED, CANCELED))


def cancel_step_graceful(
    variant: CapiVariant, state: CapiState, deployment: Deployment, reports: bool
) -> CapiState:
    """capi-safe's cancel step: choose the prior web process once, scale it to
    owic, and destroy the other web processes only when every one of its
    instances is routable; until then the deployment stays CANCELING and the
    next dispatch looks again. No moment without a routable instance."""
    if deployment.state != CANCELING:
        return state
    prior = state.process(deployment.prior_process) if deployment.prior_process is not None else None
    if prior is None:
        prior = variant.select_prior(state, deployment, reports)
        deployment = attrs.evolve(deployment, prior_process=prior.id)
        state = state.with_deployment(deployment)
    if prior.desired != deployment.owic:
        prior = prior.scaled_to(deployment.owic)
        state = state.with_process(prior)
    if not reports:
        raise Retry("instance reports unavailable")
    if prior.count(RUNNING) < deployment.owic:
        return state
    state = state.without_processes(p.id for p in state.processes if p.id != prior.id)
    return state.with_deployment(deployment.moved_to(CANCELED, FINALIZED, CANCELED))


SCALED_BEFORE_CANARY = frozenset({DEPLOYING})
