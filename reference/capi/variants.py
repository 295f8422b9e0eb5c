"""The Cloud Controller designs worth knowing, as variants of one model.

A variant is a choice of rules (``rules.py``) and updater steps
(``updater.py``); everything else is shared. Each docstring cites the upstream
commit of ``cloudfoundry/cloud_controller_ng`` the variant models.
"""

from __future__ import annotations

from collections.abc import Callable

import attrs
from deployspec.reference.core import Action, Rejected

from . import api, rules, updater
from .actions import Cancel, Continue, Deploy, Push, Runtime, Scale, Stage, Tick
from .runtime import settle_instance
from .state import CANCELING, DEPLOYING, CapiState, Deployment

Step = Callable[["CapiVariant", CapiState, Deployment, bool], CapiState]


@attrs.frozen
class CapiVariant:
    """One design of the Cloud Controller's rolling deployments."""

    name: str
    summary: str
    upstream: str
    #: properties this design is known to violate (historic designs keep their bugs).
    declares: frozenset[str]
    previous_deployment: Callable[[CapiState], Deployment | None]
    select_prior: rules.PriorSelection
    scale_blocked_in: frozenset[str]
    cleanup: Callable[[CapiState, Deployment], CapiState]
    recheck_under_lock: bool
    cancelable_states: frozenset[str] = frozenset({DEPLOYING, CANCELING})
    scaled_states: frozenset[str] = updater.SCALED_BEFORE_CANARY
    scale_step: Step = updater.scale_step_one_at_a_time
    cancel_step: Step = updater.cancel_step_scale_then_destroy
    doc: str = ""
    model: str = "capi"

    # --- hooks with the historic behaviour as default (capi-current overrides) ---
    def refuse_deploy(self, action: Deploy) -> str | None:
        if action.strategy != "rolling" or action.canary_steps or action.web_instances:
            return f"{self.name} supports only rolling deployments without options"
        if action.max_in_flight != 1:
            return f"{self.name} has no max_in_flight (added by PR #3907 in 2024)"
        return None

    def starting_instances(self, action: Deploy, owic: int) -> int:
        return 1

    def supersede(self, previous: Deployment) -> Deployment:
        return rules.superseded(previous)

    def before_dispatch(self, state: CapiState) -> CapiState:
        return updater.finalize_degenerate(state)

    def after_create(self, state: CapiState, deployment: Deployment) -> CapiState:
        return state

    def continue_(self, state: CapiState) -> CapiState | Rejected:
        return Rejected(f"{self.name} has no canary deployments to continue")

    # --- the transition function ------------------------------------------
    def step(self, state: CapiState, action: Action) -> CapiState | Rejected:
        """Apply one action; a refusal leaves the state as it was."""
        match action:
            case Push():
                return api.push(state, action)
            case Stage():
                return api.stage(state, action)
            case Deploy():
                return api.deploy(self, state, action)
            case Cancel():
                return api.cancel(self, state)
            case Continue():
                return self.continue_(state)
            case Scale():
                return api.scale(self, state, action)
            case Tick():
                if state.app is None:
                    return Rejected("no app: push first")
                return updater.dispatch(self, state, action)
            case Runtime():
                return settle_instance(state, action)
        return Rejected(f"{action.kind!r} is not a Cloud Foundry action")


CAPI_2022 = CapiVariant(
    name="capi-2022",
    summary="before PR #3072: two active deployments, newest-other prior process",
    upstream=(
        "cloud_controller_ng 4528366a1bebbe99b64dff60e346bdd198dadd6a (2023-01-16, parent of "
        "PR #3072): app/actions/deployment_create.rb, deployment_cancel.rb, process_scale.rb, "
        "lib/cloud_controller/deployment_updater/{dispatcher,updater}.rb"
    ),
    declares=frozenset(
        {
            "single_active_deployment",
            "cancel_restores_last_good",
            "app_stays_available",
            "deployment_converges",
        }
    ),
    previous_deployment=rules.previous_deploying,
    select_prior=rules.newest_other_process,
    scale_blocked_in=rules.BLOCKED_WHILE_DEPLOYING,
    cleanup=rules.keep_processes,
    recheck_under_lock=False,
    doc=(
        "The seed's version (cloud_controller_ng #3019). DeploymentCreate supersedes only "
        "a DEPLOYING deployment, so a CANCELING one stays active beside the new one; the "
        "cancel step keeps the newest web process that is not its own, which is then the "
        "new deployment's process that never ran, and destroys the healthy original."
    ),
)

CAPI_PR3072 = attrs.evolve(
    CAPI_2022,
    name="capi-pr3072",
    summary="PR #3072: one active deployment; interim-or-oldest prior, no health check",
    upstream=(
        "cloud_controller_ng 545fb700005795ea664213bea233ae1c10cde0e7 (PR #3072, 2023-01-16): "
        "deployment_create.rb supersedes any ACTIVE deployment; updater.rb selects the "
        "interim-or-oldest prior process and zeroes CANCELED/SUPERSEDED processes"
    ),
    doc=(
        "At most one active deployment: creating one supersedes a CANCELING deployment as "
        "CANCELED/SUPERSEDED. The cancel step keeps the newest process of a DEPLOYED/SUPERSEDED "
        "deployment, else the oldest, without asking whether it runs: a superseded deployment "
        "that never started (a dead interim) survives the cancel and the app goes down."
    ),
    declares=frozenset({"cancel_restores_last_good", "app_stays_available"}),
    previous_deployment=rules.previous_active,
    select_prior=rules.interim_or_oldest,
    cleanup=rules.zero_canceled_superseded,
    recheck_under_lock=True,
)

CAPI_PR3084 = attrs.evolve(
    CAPI_PR3072,
    name="capi-pr3084",
    summary="PR #3084: the interim must have a RUNNING instance",
    upstream=(
        "cloud_controller_ng 53f45944b7f6d13e9b60d210a0033e7957f69e98 (PR #3084, merged "
        "2023-02-27 by 5614bf7bc9): updater.rb skips interim processes without a RUNNING instance"
    ),
    doc=(
        "The interim candidate must report a RUNNING instance (newest first). A failed "
        "instance report is rescued as 'not running', so when Diego is unavailable the "
        "fallback is the oldest process, which a rolling deployment may have scaled to 0."
    ),
    declares=frozenset({"app_stays_available"}),
    select_prior=rules.running_interim_or_oldest,
)

CAPI_SAFE = attrs.evolve(
    CAPI_PR3084,
    name="capi-safe",
    summary="ours: PR #3084 + graceful cancel + retry on unknown health + no scale while canceling",
    upstream="proposal on top of cloud_controller_ng 53f45944b7 (PR #3084)",
    doc=(
        "Four changes to PR #3084, each where a property broke. (1) Graceful cancel: the "
        "prior process is chosen once (remembered on the deployment) and scaled to owic; the "
        "other web processes are destroyed only when all of its instances are routable, so a "
        "cancel never leaves the app without a routable instance (upstream destroys them at "
        "once: a cancel while the original is still starting, or after a 100% canary step, "
        "goes down; docs-dev-guide #563). (2) When instance reports are unavailable, the "
        "cancel step is retried on the next dispatch instead of treating every interim as "
        "dead. (3) A web process cannot be scaled while any deployment is active, CANCELING "
        "included: the newest process then is the one cancel destroys, so the scale is lost. (4) Processes of CANCELED/SUPERSEDED deployments are "
        "scaled to 0 only while another process keeps a routable instance."
    ),
    declares=frozenset(),
    select_prior=rules.running_interim_or_oldest_strict,
    scale_blocked_in=rules.BLOCKED_WHILE_ACTIVE,
    cancel_step=updater.cancel_step_graceful,
    cleanup=rules.zero_canceled_superseded_if_covered,
)

VARIANTS: dict[str, CapiVariant] = {
    v.name: v for v in (CAPI_2022, CAPI_PR3072, CAPI_PR3084, CAPI_SAFE)
}
