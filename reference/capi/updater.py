"""The deployment updater (``lib/cloud_controller/deployment_updater/``).

One ``tick`` is one dispatch: the scheduler snapshots the deployments to scale
and to cancel and submits a step for each to a work pool (``dispatcher.rb``,
``WorkPool``), which runs them at once; the model runs them one after another,
scale steps first. The other order is a ``tick(failed=…)`` of the scaled deployment
followed by a later tick, which the candidates offer whenever two deployments are
active (capi-2022's seed state: one CANCELING beside one DEPLOYING). A step is a transaction under the
deployment's and the app's locks; when it raises (lock contention, a missing
process: ``tick(failed=…)``) it rolls back and the deployment is retried on the
next dispatch. Instance reports Diego cannot give (``tick(reports_unavailable=…)``)
end a scale step of 2019-2023 with ``false`` inside its transaction, so what it
wrote before (the clean-up of canceled processes) commits; at 3bbba90 the scale
step reads them before its transaction and writes nothing. A cancel step, in every
era that asks, reads an unavailable report as "no running instance".
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from . import scaling
from .actions import Tick
from .canary import current_step, desired
from .rules import Retry
from .state import (
    ACTIVE,
    CANCELED,
    CANCELING,
    CRASHED,
    DEGENERATE,
    DEPLOYED,
    DEPLOYING,
    FINALIZED,
    PAUSED,
    PREPAUSED,
    RUNNING,
    STARTING,
    CapiState,
    Deployment,
    Process,
)

if TYPE_CHECKING:
    from .variants import CapiVariant


def dispatch(variant: CapiVariant, state: CapiState, tick: Tick) -> CapiState:
    """Scale steps for deployments being rolled out, then cancel steps, as the
    dispatcher submits them to its work pool; each on the snapshot taken first.
    The pool runs them concurrently; this is one serialization of them (another
    order: ``tick(late=…)``, ``tick(failed=…)`` and a later tick)."""
    if state.pending:  # the rest of the previous dispatch comes first
        # (then this one: a tick that does only that could change nothing one can
        # observe, and the settle phase would take it for the platform at rest)
        state = run_pending(variant, state)
    state = variant.before_dispatch(state)
    scaled = variant.scaled_states
    steps, cancels = [], []
    for d in state.deployments:  # (one pass: the explorer's hot path)
        if d.state in scaled:
            steps.append((d.id, variant.scale_step))
        if d.state == CANCELING:
            cancels.append((d.id, variant.cancel_step))
    steps += cancels
    if not steps:
        return state  # nothing to do: most ticks of an explored state
    failed, unavailable = tick.failed, tick.reports_unavailable
    later = tick.finish_later if variant.finish_after_commit else ()
    for did, step in steps:
        if did in failed:
            continue
        deployment = state.deployments[did]
        if did in tick.late and step is variant.scale_step and deployment.state == DEPLOYING:
            state = state.with_pending(state.pending + ((did, DEPLOYING, None),))
            continue
        try:
            if did in later and step is variant.scale_step and deployment.state in scaled:
                state = step(variant, state, deployment, did not in unavailable, finish=False)
            else:
                state = step(variant, state, deployment, did not in unavailable)
        except Retry:
            pass
    return state


def run_pending(variant: CapiVariant, state: CapiState) -> CapiState:
    """What the previous dispatch left (``CapiState.pending``), in order: scale
    steps its snapshot sent, on the deployments as they are now, then finishes."""
    for did, what, _ in state.pending:
        if what == DEPLOYING:
            try:
                state = variant.scale_step(variant, state, state.deployments[did], True)
            except Retry:
                pass
    return finish_deferred(state)


def finish_deferred(state: CapiState) -> CapiState:
    """What ``Updater#scale`` and ``#canary`` (3bbba90, ``updater.rb``) do after the
    scale transaction committed, with no lock and no look at the state again.

    * :func:`finalize`, over the web processes as its ``app`` lists them (see there),
      then the deployment is written DEPLOYED/FINALIZED/DEPLOYED over whatever it
      became (SUPERSEDED, CANCELING).
    * The PAUSED write (``deployment.update``: Sequel saves only the columns that
      differ from the copy the scale step read, PREPAUSED/ACTIVE/DEPLOYING): state
      and reason become PAUSED, the status value stays as it is now, so a canary
      superseded meanwhile is PAUSED again with FINALIZED.
    """
    for did, what, listed in state.pending:
        d = state.deployments[did]
        if what == PAUSED:
            state = state.with_deployment(d.moved_to(PAUSED, d.status_value, PAUSED))
        elif what == DEPLOYED:
            state = finalize(state, d, listed)
    return state.with_pending(())


def finalize_degenerate(state: CapiState) -> CapiState:
    """Until b94a64fbfb (2023-12): a deployment whose status value is ACTIVE and whose
    deploying process row is gone is finalized as DEPLOYED/DEGENERATE before anything
    else (``Dispatcher#finalize_degenerate_deployments``, ``dispatcher.rb`` at 4528366a:
    selected by status value, not by state, since #3073 1a5ecebaed, 2022-11-24; before it,
    any deployment without its process whose reason was not DEGENERATE yet)."""
    for d in state.deployments:
        if d.status_value == ACTIVE and state.process(d.deploying_process) is None:
            state = state.with_deployment(d.moved_to(DEPLOYED, FINALIZED, DEGENERATE))
    return state


def no_degenerate_check(state: CapiState) -> CapiState:
    """Since b94a64fbfb (2023-12, "Remove DEGENERATE"): the dispatcher goes straight to the steps."""
    return state


def finalize(state: CapiState, deployment: Deployment, listed: tuple[int, ...] | None = None) -> CapiState:
    """``Finalize``: the deploying process is the app's web process now, every other
    one goes, in creation order, and the deployment is written DEPLOYED/FINALIZED/
    DEPLOYED (over whatever it became meanwhile, for a Finalize after the commit).

    ``listed``: the processes as capi-current's Finalize sees them when the step
    took an old process to 0 (since #4212, 3bbba90 ``actions/finalize.rb``, it runs
    after the scale transaction, on ``deployment.app``, whose ``web_processes``
    ``ScaleDownOldProcess`` loaded then, asking ``app.oldest_web_process``); None:
    as they are now (inside the transaction; or after it, when nothing loaded them
    before, so a process a deployment created since the commit goes too).
    Destroying a listed process already gone (one the step itself destroyed) raises
    in ``before_destroy``'s ``lock!``: Finalize stops there, and the deployment is
    not written (the next dispatch finishes again and finalizes)."""
    if listed is None:
        listed = tuple(p.id for p in state.processes)
    for pid in listed:
        if pid == deployment.deploying_process:
            continue
        if state.process(pid) is None:
            return state
        state = state.without_processes([pid])
    return state.with_deployment(state.deployments[deployment.id].moved_to(DEPLOYED, FINALIZED, DEPLOYED))


def scale_step_one_at_a_time(
    variant: CapiVariant, state: CapiState, deployment: Deployment, reports: bool
) -> CapiState:
    """The scale step of 2019-2023 (``Updater#scale_deployment``,
    ``lib/cloud_controller/deployment_updater/updater.rb`` at 4528366a and 545fb700).

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
    # written on every ready step; it changes something only where the state was not
    # checked under the lock (capi-2022): a cancel or supersede since the snapshot is undone
    deployment = deployment.moved_to(DEPLOYING, ACTIVE, DEPLOYING)
    state = state.with_deployment(deployment)
    if deploying.desired >= deployment.owic:
        return finalize(state, deployment)
    if donor.id == deploying.id:
        if donor.desired == 1 and donor is not state.oldest_process:
            raise Retry("the deploying process destroyed itself; the update fails")
        # Two Sequel objects for one row, both locked (read) at n: the donor's
        # ``update(instances: n - 1)`` is overwritten by the deploying process's
        # ``update(instances: n + 1)``, computed from its own copy (no identity map).
        return state.with_process(deploying.scaled_to(deploying.desired + 1))
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
    _lock_deploying_process(state, deployment)
    prior = variant.select_prior(state, deployment, reports)
    state = state.with_process(prior.scaled_to(deployment.owic))
    state = state.without_processes(p.id for p in state.processes if p.id != prior.id)
    return state.with_deployment(deployment.moved_to(CANCELED, FINALIZED, CANCELED))


def cancel_step_destroy_then_scale(
    variant: CapiVariant, state: CapiState, deployment: Deployment, reports: bool
) -> CapiState:
    """The cancel step since PR #4246 (c23085559c, ``actions/cancel.rb`` at 3bbba90):
    every web process but the prior one is destroyed, *then* the prior one is
    scaled back to owic, so the quota check no longer counts the deploying
    instances. Both happen in one transaction, so the order is not observable
    here (the model has no quota); what is observable is what PR #4246 kept: the
    running new instances go at once while the prior process may have none
    routable yet (docs-dev-guide #563, a canary canceled after a 100 % step)."""
    if deployment.state != CANCELING:
        return state
    _lock_deploying_process(state, deployment)
    return _cancel_at_once(state, deployment, variant.select_prior(state, deployment, reports))


def _lock_deploying_process(state: CapiState, deployment: Deployment) -> None:
    """Every upstream cancel step locks the canceled deployment's own process
    before choosing the prior one (``deploying_web_process.lock!``: ``updater.rb``
    at 4528366a, 545fb700 and 53f45944; ``actions/cancel.rb`` at 3bbba90): when
    another deployment's finalize destroyed it, that raises and the transaction
    rolls back (before b94a64fbfb the next dispatch marks it DEGENERATE)."""
    if state.process(deployment.deploying_process) is None:
        raise Retry("the canceled deployment's web process is gone; locking it fails")


def _cancel_at_once(state: CapiState, deployment: Deployment, prior: Process) -> CapiState:
    """Every web process but ``prior`` destroyed, ``prior`` scaled to owic, CANCELED."""
    state = state.without_processes(p.id for p in state.processes if p.id != prior.id)
    state = state.with_process(prior.scaled_to(deployment.owic))
    return state.with_deployment(deployment.moved_to(CANCELED, FINALIZED, CANCELED))


def cancel_step_roll_back(
    variant: CapiVariant, state: CapiState, deployment: Deployment, reports: bool
) -> CapiState:
    """capi-safe: cancel rolls back the way a deployment rolls forward.

    The prior web process plays the deploying process's part: it is scaled up
    towards owic by at most max_in_flight instances in flight, and the other web
    processes (the canceled deployment's, still serving) are scaled down as the
    prior one's instances become routable, idle ones first. Once the prior process
    is back at owic, all routable, the others are destroyed and the deployment is
    CANCELED. Until then it stays CANCELING and the next dispatch goes on.

    A roll-back onto a prior whose instances crash can never finish (a crashed
    instance is never routable, and it blocks up-scaling); the selection rule
    then picks a process that serves, if any. When the prior it picks has a crashed
    instance and nothing anywhere runs or starts, there is no service to keep: the
    cancel ends at once, as upstream's does. A prior that is only short of instances
    (none crashed) is rolled back as usual, even with nothing running."""
    if deployment.state != CANCELING:
        return state
    prior = variant.select_prior(state, deployment, reports)
    if prior.count(CRASHED) and not any(
        RUNNING in p.instances or STARTING in p.instances for p in state.processes
    ):
        return _cancel_at_once(state, deployment, prior)
    state, finished = scaling.scale_process(
        state,
        prior.id,
        deployment.max_in_flight,
        target=deployment.owic,
        interim=deployment.owic,
        scale_down=variant.scale_down,
    )
    if not finished:
        return state
    state = state.without_processes(p.id for p in state.processes if p.id != prior.id)
    state = state.with_process(state.process(prior.id).scaled_to(deployment.owic))
    return state.with_deployment(deployment.moved_to(CANCELED, FINALIZED, CANCELED))


# ---------------------------------------------------------------------------
# Today's updater (cloud_controller_ng 3bbba90, deployment_updater/updater.rb)
# ---------------------------------------------------------------------------


def desired_web_instances(deployment: Deployment) -> int:
    """``DeploymentModel#desired_web_instances`` of a deployment (``canary.desired``)."""
    return desired(deployment.owic, deployment.web_instances)


def scale_or_canary_step(
    variant: CapiVariant, state: CapiState, deployment: Deployment, reports: bool, finish: bool = True
) -> CapiState:
    """The dispatcher sends DEPLOYING deployments to ``Updater#scale`` and
    PREPAUSED ones to ``Updater#canary``; PAUSED ones wait for the user.
    ``finish=False``: a finished step leaves its finish to the next tick
    (:func:`finish_deferred`)."""
    if deployment.state == PREPAUSED:
        return canary_step(variant, state, deployment, reports, finish)
    return scale_step(variant, state, deployment, reports, finish)


def scale_step(
    variant: CapiVariant, state: CapiState, deployment: Deployment, reports: bool, finish: bool = True
) -> CapiState:
    """``Updater#scale``: scale towards ``desired_web_instances``; once finished,
    ``Finalize``: since #4212 (cfd3d29904) after the scale transaction has
    committed, so ``finish=False`` defers it to the next tick."""
    listed: list[int] | None = [] if variant.finish_after_commit else None
    state, finished = scaling.scale(
        state,
        deployment,
        reports,
        target=desired_web_instances(deployment),
        interim=desired_web_instances(deployment),
        scale_down=variant.scale_down,
        cleanup=variant.cleanup,
        stale_counts=variant.down_counts_stale,
        listed=listed,
    )
    if finished:
        seen = tuple(listed) if listed else None  # None: Finalize lists the processes itself
        if not finish:
            return state.with_pending(state.pending + ((deployment.id, DEPLOYED, seen),))
        return finalize(state, state.deployments[deployment.id], seen)
    return state


def canary_step(
    variant: CapiVariant, state: CapiState, deployment: Deployment, reports: bool, finish: bool = True
) -> CapiState:
    """``Updater#canary``: scale to the current step's canary + original
    instances, the deploying process to the canary count; once there, PAUSED."""
    canary, original = current_step(variant.canary_plan, deployment)
    state, finished = scaling.scale(
        state,
        deployment,
        reports,
        target=canary + original,
        interim=canary,
        scale_down=variant.scale_down,
        cleanup=variant.cleanup,
        stale_counts=variant.down_counts_stale,
    )
    if finished:
        if not finish:
            return state.with_pending(state.pending + ((deployment.id, PAUSED, None),))
        d = state.deployments[deployment.id]
        return state.with_deployment(d.moved_to(PAUSED, ACTIVE, PAUSED))
    return state


SCALED_BEFORE_CANARY = frozenset({DEPLOYING})
SCALED_WITH_CANARY = frozenset({DEPLOYING, PREPAUSED})
