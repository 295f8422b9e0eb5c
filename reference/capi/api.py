"""User actions: what the Cloud Controller's API does when called.

``deploy`` follows ``app/actions/deployment_create.rb``, ``cancel``
``deployment_cancel.rb``, ``scale`` ``process_scale.rb``. Where versions differ,
the variant supplies the rule.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import attrs
from deployspec.reference.core import Rejected

from .actions import Deploy, Push, Scale, Stage
from .state import (
    ACTIVE,
    CANCELING,
    DEPLOYING,
    PAUSED,
    PREPAUSED,
    App,
    CapiState,
    Deployment,
)

if TYPE_CHECKING:
    from .variants import CapiVariant


def push(state: CapiState, action: Push) -> CapiState | Rejected:
    """``cf push`` of a new app: a healthy droplet and one web process."""
    if state.app is not None:
        return Rejected("the app already exists")
    state = CapiState(App(droplet=0), (True,), state.processes, state.deployments, state.next_process_id)
    state, _ = state.with_new_process(droplet=0, instances=action.instances)
    return state


def stage(state: CapiState, action: Stage) -> CapiState | Rejected:
    """A new droplet (``cf stage``+``set-droplet``, or ``cf set-env``) becomes current.

    Running processes keep the droplet they were started with; the next
    deployment ships the new one.
    """
    if state.app is None:
        return Rejected("no app: push first")
    return state.with_staged(action.healthy)


def _deploy_blocked(variant: CapiVariant, state: CapiState) -> str | None:
    """A design that refuses a new deployment while one is in one of its
    ``deploy_blocked_in`` states (no shipped design: upstream's create supersedes the
    deployment in flight), the newest such one named."""
    blocked = variant.deploy_blocked_in
    if not blocked:
        return None
    d = next((d for d in reversed(state.deployments) if d.state in blocked), None)
    return None if d is None else f"Cannot create a deployment while deployment {d.id} is {d.state}"


def deploy(variant: CapiVariant, state: CapiState, action: Deploy) -> CapiState | Rejected:
    """DeploymentCreate, in one transaction under the app lock.

    ``previous_droplet`` is the app's droplet before the target is applied; for a
    restart both are the same droplet, which is why cancel cannot undo a bad
    environment (cloud_controller_ng #3531). A deployment of a droplet the request
    names (``cf push --strategy rolling`` stages one, then creates the deployment
    with it: ``action.new_droplet``) makes that droplet the app's current one
    (``DeploymentTargetState#apply_to_app``, ``lib/cloud_controller/deployments/
    deployment_target_state.rb``, called by ``app/actions/deployment_create.rb`` at
    4528366a and 3bbba90), so a cancel puts the previous one back. ``cf rollback``
    names a revision instead (``action.revision``, :func:`_refuse_rollback`): its
    droplet becomes current the same way.
    """
    if state.app is None or not state.processes:
        return Rejected("no app: push first")
    refusal = variant.refuse_deploy(action) or _refuse_rollback(state, action) or _deploy_blocked(variant, state)
    if refusal:
        return Rejected(refusal)
    previous = variant.previous_deployment(state)
    rolls_back_to = variant.rollback_process(state)
    owic = previous.owic if previous is not None else state.oldest_process.desired
    previous_droplet = state.app.droplet
    if action.new_droplet is not None:  # staged for it, current from now on
        state = stage(state, Stage(action.new_droplet))
    elif action.revision is not None:  # the revision's droplet is current again
        state = state.with_app(App.of(action.revision, state.app.started))
    droplet = state.app.droplet
    web_instances = variant.web_instances_of(action, previous)
    if web_instances != (action.web_instances or None):  # the count the design reads
        action = attrs.evolve(action, web_instances=web_instances or 0)
    start = variant.starting_instances(state, action, owic)
    state, process = state.with_new_process(droplet=droplet, instances=start)
    deployment = Deployment(
        id=len(state.deployments),
        state=DEPLOYING,
        status_value=ACTIVE,
        status_reason=DEPLOYING,
        deploying_process=process.id,
        droplet=droplet,
        previous_droplet=previous_droplet,
        owic=owic,
        max_in_flight=action.max_in_flight,
        strategy=action.strategy,
        canary_steps=action.canary_steps,
        web_instances=web_instances,
        rolls_back_to=rolls_back_to,
    )
    state = state.with_new_deployment(deployment)
    if previous is not None:
        state = state.with_deployment(variant.supersede(previous))
    return variant.after_create(state, deployment)


def revisions(state: CapiState) -> tuple[frozenset[int], int]:
    """The droplets that have a revision, and the latest revision's droplet.

    The push starts the app and so creates the first revision (droplet 0); each
    deployment creates one when its droplet differs from the latest
    (``RevisionResolver.update_app_revision``), a rollback always. So a droplet has
    a revision once a deployment or the push shipped it, and the latest revision is
    the newest deployment's, even when a cancel made another droplet current again
    (a cancel creates none: ``deployment_cancel.rb``). A droplet only staged has none.
    """
    shipped = frozenset(d.droplet for d in state.deployments) | {0}
    return shipped, state.deployments[-1].droplet if state.deployments else 0


def _refuse_rollback(state: CapiState, action: Deploy) -> str | None:
    """What DeploymentCreate refuses of ``cf rollback`` (``revision``), in its order:
    the message names one droplet source (``DeploymentCreateMessage``), the revision
    exists (``DeploymentTargetState#droplet``), and it differs from the latest
    (``RevisionResolver.rollback_app_revision``: no rollback to what is deployed).
    The first is the message's validation, before the transaction (upstream with its
    other checks: at 3bbba90 before the ``options`` ones ``deployment_options`` makes,
    which this model's variants refuse first); the other two roll the transaction back.
    Files at 4528366a and 3bbba90."""
    if action.revision is None:
        return None
    if action.new_droplet is not None:
        return "Cannot set both fields 'droplet' and 'revision'"
    shipped, latest = revisions(state)
    if action.revision not in shipped:
        return "The revision does not exist"
    if action.revision == latest:
        return ("Unable to rollback. The code and configuration you are rolling back to "
                "is the same as the deployed revision.")
    return None


def newest_active(state: CapiState) -> Deployment | None:
    """The deployment ``cf cancel-deployment`` and ``cf continue-deployment`` act on: the
    newest whose *status value* is ACTIVE (cloudfoundry/cli c524df80,
    ``actor/v7action/deployment.go``, ``GetLatestActiveDeploymentForApp``), whatever its
    state. The two differ only for capi-current's canary written PAUSED/FINALIZED after it
    was superseded (docs/findings.md, finding 8): the CLI finds no deployment there, while
    the API would take its guid (``deployments_controller.rb``), which the model leaves out."""
    for d in reversed(state.deployments):
        if d.status_value == ACTIVE:
            return d
    return None


def cancel(variant: CapiVariant, state: CapiState) -> CapiState | Rejected:
    """DeploymentCancel: the previous droplet becomes current again and the
    deployment is CANCELING; the updater's cancel step does the rest."""
    d = newest_active(state)
    if d is None:
        return Rejected("no active deployment to cancel")
    if d.state not in variant.cancelable_states:
        return Rejected(f"cannot cancel a {d.state} deployment")
    state = state.with_app(App.of(d.previous_droplet, state.app.started))
    return state.with_deployment(d.moved_to(CANCELING, ACTIVE, CANCELING))


def no_canary_to_continue(state: CapiState) -> CapiState | Rejected:
    """Before PR #3892 (2024) there is nothing to continue."""
    return Rejected("no canary deployments to continue (canary came with PR #3892 in 2024)")


def continue_canary(state: CapiState) -> CapiState | Rejected:
    """DeploymentContinue (``deployment_continue.rb`` at 3bbba90): a PAUSED
    deployment moves to its next canary step (PREPAUSED), or after the last one
    to DEPLOYING, where the rolling scale takes it to desired_web_instances."""
    d = newest_active(state)
    if d is None:
        return Rejected("no active deployment to continue")
    if d.state != PAUSED:
        return Rejected(
            f"Cannot continue a deployment with status: {d.status_value} and reason: {d.status_reason}"
        )
    if d.canary_steps and d.canary_step < len(d.canary_steps):
        d = attrs.evolve(d, canary_step=d.canary_step + 1)
        return state.with_deployment(d.moved_to(PREPAUSED, ACTIVE, DEPLOYING))
    return state.with_deployment(d.moved_to(DEPLOYING, ACTIVE, DEPLOYING))


_SCALE_BLOCKED = Rejected("Cannot scale this process while a deployment is in flight.")


def scale(variant: CapiVariant, state: CapiState, action: Scale) -> CapiState | Rejected:
    """ProcessScale on the app's newest web process, checked and written in one step
    (upstream checks for a deployment in flight before its transaction takes the app's
    lock, ``app/actions/process_scale.rb`` at 3bbba90: docs/findings.md, Not modelled)."""
    if not state.processes:
        return Rejected("no app: push first")
    blocked = variant.scale_blocked_in
    for d in state.deployments:
        if d.state in blocked:
            return _SCALE_BLOCKED  # a frozen value: one is as good as a new one
    return state.with_process(state.processes[-1].scaled_to(action.instances))
