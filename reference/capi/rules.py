"""The design decisions in which the Cloud Controller's versions differ.

Each function is one rule, named for what it decides; a variant is a choice of
rules (see ``variants.py``). Keeping them here, side by side, makes the diff
between two variants read like the upstream commit that changed the rule.
"""

from __future__ import annotations

from collections.abc import Callable

import attrs

from .actions import Deploy
from .canary import PlanRule, step_plan, step_plan_without_extra
from .state import (
    ACTIVE,
    ACTIVE_STATES,
    CANARY,
    CANCELED,
    CANCELING,
    CRASHED,
    DEPLOYED,
    DEPLOYING,
    FINALIZED,
    PREPAUSED,
    PROGRESSING_STATES,
    RUNNING,
    SUPERSEDED,
    CapiState,
    Deployment,
    Process,
)


class Retry(Exception):
    """The updater step raises: its transaction rolls back and the next dispatch retries."""


# ---------------------------------------------------------------------------
# DeploymentCreate: which options a deployment accepts, and how it starts
# ---------------------------------------------------------------------------


def rolling_only(action: Deploy) -> str | None:
    """Before 2024: rolling deployments, one instance at a time, no options."""
    if action.strategy != "rolling" or action.canary_steps or action.web_instances:
        return "only rolling deployments without options (canary came with PR #3892 in 2024)"
    if action.max_in_flight != 1:
        return "no max_in_flight (added by PR #3907 in 2024)"
    return None


def deployment_options(action: Deploy) -> str | None:
    """``DeploymentCreateMessage`` today (3bbba90): canary steps only for the
    canary strategy, instance weights 1..100 in ascending order. (max_in_flight
    >= 1 and web_instances >= 0 are checked by the action itself; upstream also
    accepts ``web_instances: 0``, which the model's vocabulary reads as "not given".)"""
    if action.canary_steps and action.strategy != CANARY:
        return "options.canary are only valid for Canary deployments"
    if any(not 1 <= w <= 100 for w in action.canary_steps):
        return "options.canary.steps.instance_weight must be an Integer between 1-100 (inclusive)"
    if list(action.canary_steps) != sorted(action.canary_steps):
        return "options.canary.steps.instance_weight must be sorted in ascending order"
    return None


def one_starting_instance(state: CapiState, action: Deploy, owic: int) -> int:
    """Before PR #3907: the new web process starts with one instance."""
    return 1


def starting_instances(
    state: CapiState, action: Deploy, owic: int, plan: PlanRule = step_plan
) -> int:
    """``DeploymentCreate#starting_process_instances`` (PR #3907, #4219, #4247):
    ``min(max_in_flight, start)``, start being the first canary step's canary
    count, else web_instances, else owic."""
    web_instances = action.web_instances or None
    if action.strategy == CANARY:
        start = plan(owic, web_instances, action.canary_steps)[0][0]
    elif web_instances is not None:
        start = web_instances
    else:
        start = owic
    return min(action.max_in_flight, start)


def starting_instances_within_bound(state: CapiState, action: Deploy, owic: int) -> int:
    """capi-safe: as today (with capi-safe's canary plan), but no more than the
    room left under ``max(owic, web_instances) + max_in_flight`` by the web
    processes that already exist: a deployment that supersedes one in flight
    starts smaller, and the up-scaler brings it up as the older ones go."""
    start = starting_instances(state, action, owic, step_plan_without_extra)
    bound = max(owic, action.web_instances) + action.max_in_flight
    room = bound - sum(p.desired for p in state.processes)
    return max(0, min(start, room))


def created_as_is(state: CapiState, deployment: Deployment) -> CapiState:
    """Before canary support every deployment starts DEPLOYING."""
    return state


def canary_starts_prepaused(state: CapiState, deployment: Deployment) -> CapiState:
    """A canary deployment starts PREPAUSED (PR #3892, d66f46a60d) at step 1
    (``before_create``, since PR #4219, 78d93d458d)."""
    if deployment.strategy != CANARY:
        return state
    return state.with_deployment(attrs.evolve(deployment, state=PREPAUSED, canary_step=1))


# ---------------------------------------------------------------------------
# DeploymentCreate: which earlier deployment is superseded (and lends its owic)
# ---------------------------------------------------------------------------


def previous_deploying(state: CapiState) -> Deployment | None:
    """Before PR #3072: only a DEPLOYING deployment is found and superseded;
    a CANCELING one stays active beside the new one (``DeploymentModel.find(app:,
    state: DEPLOYING)``, ``app/actions/deployment_create.rb`` at 4528366a). With two
    DEPLOYING rows (only through the dispatcher's snapshot window) "find" takes the
    database's first, with no ORDER BY: the oldest here, as in :func:`previous_active`
    (MySQL, cf-deployment's default, returns rows of such a query in primary-key order)."""
    for d in state.deployments:
        if d.state == DEPLOYING:
            return d
    return None


def previous_active(state: CapiState) -> Deployment | None:
    """PR #3072 onwards: the first deployment whose *status value* is ACTIVE, whatever
    its state (``DeploymentModel.find(app:, status_value: ACTIVE)``,
    ``app/actions/deployment_create.rb``, 545fb70000 and still at 3bbba90), so a canary
    that its late PAUSED write left PAUSED/FINALIZED is never found again: it stays
    PAUSED beside later deployments. "First" is the oldest: #5039 (306831c857,
    2026-04) gave every model query a default ``ORDER BY id``; before it the order
    was the database's, taken as the same here: capi-pr3072 and capi-pr3084 never
    have two ACTIVE rows, nor one whose state and status value disagree (none in the
    10,559 and 10,703 states of their exploration bounds)."""
    for d in state.deployments:
        if d.status_value == ACTIVE:
            return d
    return None


# ---------------------------------------------------------------------------
# DeploymentCreate: which web process a cancel of the new deployment rolls back to
# ---------------------------------------------------------------------------


def no_rollback_recorded(state: CapiState) -> int | None:
    """Upstream (every version): a deployment records nothing of the processes it
    finds; its cancel step chooses the prior process from what is left then."""
    return None


def newest_serving_process(state: CapiState) -> int | None:
    """capi-safe: the newest web process with a RUNNING instance when the deployment
    is created, leaving out a CANCELING deployment's own (its cancel is taking it
    away), or None when none serves. What the app served then is what a cancel of
    the new deployment puts back; the deployment keeps that process (at 0 if its
    steps take every instance) while it rolls out, so a later step cannot destroy it
    (a cancel that rolls back onto another process, one that serves, may).
    The oldest process is not recorded: the down-scaler keeps it at 0 anyway, and
    the cancel step falls back to it (states that differ only there are one)."""
    canceling = {d.deploying_process for d in state.deployments if d.state == CANCELING}
    for p in reversed(state.processes):
        if RUNNING in p.instances and p.id not in canceling:
            return None if p is state.oldest_process else p.id
    return None


def web_instances_as_asked(action: Deploy, previous: Deployment | None) -> int | None:
    """Today's DeploymentCreate: a deployment's ``web_instances`` is its message's, or
    none; then its target is the original count, which it takes from the deployment it
    supersedes, whose own ``web_instances`` is ignored (``app/actions/deployment_create.rb``
    at 3bbba90, docs/upstream/cloud-controller.md §4.9). A count asked by a deployment
    still in flight is lost when another supersedes it (docs/explore-findings 3)."""
    return action.web_instances or None


def web_instances_kept(action: Deploy, previous: Deployment | None) -> int | None:
    """capi-safe: a deploy that names no count keeps the count the deployment it
    supersedes was taking the app to: the user asked for it, and nothing since asked for
    another. Not a CANCELING one's: its cancel took that count back."""
    if action.web_instances:
        return action.web_instances
    if previous is None or previous.state == CANCELING:
        return None
    return previous.web_instances


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
    active deployments that is the *other* deployment's new process (the seed).

    Upstream (4528366a, ``updater.rb#cancel_deployment``) takes ``max_by(&:created_at)``
    over ``app.processes`` ordered ``created_at, id``: of processes created within the
    same second (MySQL's ``created_at`` resolution; upstream's 0ea23f1976 says so) it
    keeps the *first*, the lowest id. The model's states have no clock, so every
    process is newer than the one before it: the model keeps the last. Ties change
    which interim survives, not whether one that never ran can (the seed's shape
    needs no tie)."""
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


def running_interim_or_oldest_that_can_serve(
    state: CapiState, canceling: Deployment, reports: bool
) -> Process:
    """The strict rule above, except that a prior process whose instances crash
    and none runs (its droplet cannot start: the original was already broken)
    gives way to the newest web process with a routable instance, which may be
    the canceled deployment's own. A cancel then never trades serving instances
    for ones that cannot serve, and does not wait forever for them (capi-safe's
    roll-back waits for the prior to be routable). capi-safe's rule before its
    deployments recorded the process a cancel rolls back to."""
    return _gives_way_if_crashing(state, running_interim_or_oldest_strict(state, canceling, reports))


def running_interim_or_recorded_that_can_serve(
    state: CapiState, canceling: Deployment, reports: bool
) -> Process:
    """capi-safe: the rule above, except that when neither a running interim nor
    the oldest process serves, the process the deployment recorded when it was
    created (:func:`newest_serving_process`) is kept instead of the oldest. A
    canary's 100 % step scales every older process to 0; the oldest then is the
    original, which may not be what served when the canceled deployment came
    (a canary before it, superseded, served every instance), and PR #3084's
    rule would roll the app back past it (docs/properties.md)."""
    prior = running_interim_or_oldest_strict(state, canceling, reports)
    recorded = canceling.rolls_back_to
    if recorded is not None and not prior.count(RUNNING):
        prior = state.process(recorded) or prior
    return _gives_way_if_crashing(state, prior)


def _gives_way_if_crashing(state: CapiState, prior: Process) -> Process:
    """``prior``, unless its instances crash and none runs: then the newest web
    process with a routable instance, if any."""
    if prior.count(CRASHED) and not prior.count(RUNNING):
        serving = [p for p in reversed(state.processes) if p.count(RUNNING)]
        if serving:
            return serving[0]
    return prior


# ---------------------------------------------------------------------------
# What the user's scale request is refused during
# ---------------------------------------------------------------------------

BLOCKED_WHILE_DEPLOYING = frozenset({DEPLOYING})
#: PR #3892 onwards (``AppModel#deploying?``): DEPLOYING, PREPAUSED, PAUSED; not CANCELING.
BLOCKED_WHILE_PROGRESSING = frozenset(PROGRESSING_STATES)
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


def keep_processes(state: CapiState, deployment: Deployment) -> CapiState:
    """Before PR #3072: nothing to clean up (a CANCELING deployment stays active)."""
    return state

