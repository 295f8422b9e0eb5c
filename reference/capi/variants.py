"""The Cloud Controller designs worth knowing, as variants of one model.

A variant is a choice of rules and steps (``rules.py``, ``updater.py``,
``scaling.py``, ``canary.py``, ``api.py``) and of a few switches; everything else
is shared. Each docstring cites the upstream
commit of ``cloudfoundry/cloud_controller_ng`` the variant models.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import attrs
from deployspec.reference.core import (
    Action,
    Beyond,
    Rejected,
    flag,
    frozen,
    not_declared,
    rule_field,
    states,
)

from . import api, canary, rules, scaling, tick_memo, updater
from .actions import Cancel, Continue, Deploy, Push, Runtime, Scale, Stage, Tick
from .model import SHIPPED_FINISH_IN, CapiConfig, Refusals
from .runtime import settle_instance
from .state import (
    ACTIVE_STATES,
    CANCELING,
    DEPLOYING,
    DEPLOYMENT_STATES,
    PROGRESSING_STATES,
    CapiState,
    Deployment,
    Process,
)
from .variant_fields import ScaleStep, Step, finish_taken, stale_counts_oldest_first


@attrs.frozen
class CapiVariant:
    """One design of the Cloud Controller's rolling deployments."""

    name: str
    summary: str
    upstream: str
    #: properties this design is known to violate (historic designs keep their bugs).
    declares: frozenset[str] = attrs.field(converter=frozen)
    # (each rule, switch and set of states is of its kind when the variant is made:
    # a design of one's own is refused where it was written, not run as another).
    # Each rule's comment gives its arguments and result; the docstrings of the shipped
    # functions (rules.py, updater.py, scaling.py, canary.py, api.py) cite the upstream code.
    #: (state) -> the deployment a new one supersedes, or None (``rules.previous_*``)
    previous_deployment: Callable[[CapiState], Deployment | None] = rule_field(Deployment, None, takes=1)
    #: (state, the canceling deployment, Diego answered) -> the web process a cancel keeps
    #: (``rules.*_or_oldest``: the prior web process rule, which ``--engine z3`` checks)
    select_prior: rules.PriorSelection = rule_field(Process, takes=3)
    #: deployment states in which ``ProcessScale`` of the web process is refused
    scale_blocked_in: frozenset[str] = attrs.field(converter=frozen, validator=states(DEPLOYMENT_STATES))
    #: (state, the deployment being scaled) -> state: what a scale step first does to the
    #: processes of canceled and superseded deployments (``rules.zero_canceled_superseded``)
    cleanup: Callable[[CapiState, Deployment], CapiState] = rule_field(CapiState, takes=2)
    #: the historic steps read the deployment's state again under its lock and stop if it
    #: changed since the dispatcher's snapshot (``updater.scale_step_one_at_a_time``)
    recheck_under_lock: bool = attrs.field(validator=flag)
    #: deployment states in which DeploymentCreate is refused (``api.deploy``): none in any
    #: shipped design (a new deployment supersedes the one in flight); a fix that has a
    #: restart wait for a cancel to finish refuses it while CANCELING
    deploy_blocked_in: frozenset[str] = attrs.field(default=frozenset(), converter=frozen,
                                                    validator=states(DEPLOYMENT_STATES))
    #: deployment states ``cancel`` accepts (``api.cancel``)
    cancelable_states: frozenset[str] = attrs.field(default=frozenset({DEPLOYING, CANCELING}), converter=frozen,
                                                    validator=states(DEPLOYMENT_STATES))
    #: deployment states the dispatcher sends to ``scale_step`` (CANCELING ones go to ``cancel_step``)
    scaled_states: frozenset[str] = attrs.field(default=updater.SCALED_BEFORE_CANARY, converter=frozen,
                                                validator=states(DEPLOYMENT_STATES))
    #: (variant, state, deployment, Diego answered, finish=True) -> state: one scale step
    #: (``updater.scale_step_one_at_a_time``, ``updater.scale_or_canary_step``); raise
    #: ``rules.Retry`` to roll it back
    scale_step: ScaleStep = rule_field(CapiState, default=updater.scale_step_one_at_a_time, takes=4)
    #: a finished scale step commits before Finalize or the PAUSED write run
    #: (capi-current: Finalize since PR #4212, the PAUSED write since PR #4219), so
    #: ``tick(finish_later=…)`` opens that window
    finish_after_commit: bool = attrs.field(default=False, validator=[flag, finish_taken])
    #: the down-scaler counts the older processes as read before the canceled ones
    #: were zeroed (capi-current, ``actions/scale.rb``; see ``scaling``); oldest first,
    #: so only with ``scaling.scale_down_oldest_first``
    down_counts_stale: bool = attrs.field(default=False, validator=[flag, stale_counts_oldest_first])
    #: (variant, state, the canceling deployment, Diego answered) -> state: one cancel step
    #: (``updater.cancel_step_*``); raise ``rules.Retry`` to roll it back
    cancel_step: Step = rule_field(CapiState, default=updater.cancel_step_scale_then_destroy, takes=4)
    doc: str = ""
    model: str = "capi"
    # --- rules with the historic behaviour as default (capi-current chooses others) ---
    #: (deploy action) -> the refusal's reason for a deployment's options, or None
    #: (DeploymentCreateMessage; ``rules.rolling_only``, ``rules.deployment_options``)
    refuse_deploy: Callable[[Deploy], str | None] = rule_field(str, None, default=rules.rolling_only, takes=1)
    #: (state, deploy action, owic) -> instances the new web process starts with
    starting_instances: Callable[[CapiState, Deploy, int], int] = rule_field(
        int, default=rules.one_starting_instance, takes=3)
    #: (deploy action, the deployment it supersedes or None) -> the ``web_instances`` the
    #: new deployment is created with, None for none (``rules.web_instances_as_asked``)
    web_instances_of: Callable[[Deploy, Deployment | None], int | None] = rule_field(
        int, None, default=rules.web_instances_as_asked, takes=2)
    #: (state before a deployment is created) -> the web process its cancel rolls back to,
    #: recorded in it (``Deployment.rolls_back_to``), or None (``rules.no_rollback_recorded``)
    rollback_process: Callable[[CapiState], int | None] = rule_field(
        int, None, default=rules.no_rollback_recorded, takes=1)
    #: (the superseded deployment) -> it as a new deployment leaves it (``rules.superseded``)
    supersede: Callable[[Deployment], Deployment] = rule_field(Deployment, default=rules.superseded, takes=1)
    #: (state, the deployment just created) -> state (``rules.canary_starts_prepaused``)
    after_create: Callable[[CapiState, Deployment], CapiState] = rule_field(CapiState,
                                                                            default=rules.created_as_is, takes=2)
    #: (state) -> state, or Rejected: ``continue`` (``api.continue_canary``)
    continue_: Callable[[CapiState], CapiState | Rejected] = rule_field(
        CapiState, Rejected, default=api.no_canary_to_continue, takes=1)
    #: (state) -> state: what the dispatcher does before the steps (``updater.finalize_degenerate``)
    before_dispatch: Callable[[CapiState], CapiState] = rule_field(CapiState,
                                                                   default=updater.finalize_degenerate, takes=1)
    #: today's scale action: (state, deploying process id, instances to keep in the others)
    #: -> state: how the older web processes are scaled down
    scale_down: scaling.DownScale = rule_field(CapiState, default=scaling.scale_down_oldest_first, takes=3)
    #: today's canary step plan: (owic, web_instances or None, the steps' weights) ->
    #: ((canary, original) instances per step, …) (``canary.step_plan``)
    canary_plan: canary.PlanRule = rule_field(tuple, default=canary.step_plan, takes=3)
    #: per-variant bounds for the engines (evolves the model's CapiConfig)
    config: dict[str, Any] = attrs.field(factory=dict, eq=False)
    #: bounds ``--engine explore`` uses on top of ``config`` and the model's EXPLORE
    explore: dict[str, Any] = attrs.field(factory=dict, eq=False)
    #: properties it violates only beyond what the default search reaches: property ->
    #: where it shows (bounds and the committed counterexample; ``deployspec.declarations``)
    violates_beyond: dict[str, Beyond] = attrs.field(factory=dict, eq=False, validator=not_declared)

    def refusals(self) -> Refusals:
        """What this design refuses that the searches may leave out (``model.Refusals``):
        a rule of one's own is not known to refuse, so its actions are offered."""
        return Refusals(
            scale_in=self.scale_blocked_in & PROGRESSING_STATES,
            continue_when_paused_only=self.continue_ in _CONTINUE_WHEN_PAUSED_ONLY,
            # (a step of a deployment no longer active runs beside the failed one's)
            lone_failure_stutters=self.before_dispatch in _LONE_FAILURE_STUTTERS and self.scaled_states <= ACTIVE_STATES,
            finish_in=SHIPPED_FINISH_IN | self.scaled_states,
        )

    # --- the transition function ------------------------------------------
    def step(self, state: CapiState, action: Action) -> CapiState | Rejected:
        """Apply one action; a refusal leaves the state as it was."""
        apply = _APPLY.get(action.__class__)
        if apply is None:  # a subclass of an action (none today), or no Cloud Foundry action
            apply = next((f for cls, f in _APPLY.items() if isinstance(action, cls)), None)
            if apply is None:
                return Rejected(f"{action.kind!r} is not a Cloud Foundry action")
        return apply(self, state, action)


#: the shipped ``continue_`` rules: each refuses unless the newest active deployment is PAUSED
_CONTINUE_WHEN_PAUSED_ONLY = (api.no_canary_to_continue, api.continue_canary)
#: the shipped ``before_dispatch`` rules: each leaves a state with one active deployment as
#: it is, or finalizes that deployment (then there is no step to fail)
_LONE_FAILURE_STUTTERS = (updater.finalize_degenerate, updater.no_degenerate_check)


def _tick(variant: CapiVariant, state: CapiState, action: Tick) -> CapiState | Rejected:
    if state.app is None:
        return Rejected("no app: push first")
    if _SHIPPED.get(id(variant)) is not variant:  # a design of one's own: its rules may read anything
        return updater.dispatch(variant, state, action)
    return tick_memo.dispatched(variant, state, action)


#: what each action does, by class: one dict lookup per step (the explorer's hot
#: path) rather than a chain of isinstance tests
_APPLY: dict[type, Callable[[CapiVariant, CapiState, Any], CapiState | Rejected]] = {
    Push: lambda v, state, action: api.push(state, action),
    Stage: lambda v, state, action: api.stage(state, action),
    Deploy: api.deploy,
    Cancel: lambda v, state, action: api.cancel(v, state),
    Continue: lambda v, state, action: v.continue_(state),
    Scale: api.scale,
    Tick: _tick,
    Runtime: lambda v, state, action: settle_instance(state, action),
}


def _livelock(trace: str) -> Beyond:
    """PR #3072's scale step with three deployments (docs/findings.md); not in the default
    search. Found by ``--engine explore --bound max_deployments=3``: the model's exploration
    bounds with one deployment more."""
    return Beyond(
        config=CapiConfig(**{**CapiConfig.EXPLORE, "max_deployments": 3}).to_json(),
        trace=f"counterexamples/capi/{trace}",
        why=("max_deployments=3 (explorer, 13 steps): the scale step zeroes the superseded processes, "
             "finds no donor but the deploying process, raises and rolls back, forever"),
    )


def _after_commit(trace: str, steps: int, why: str) -> Beyond:
    """capi-current's Finalize or PAUSED write after the scale transaction (findings 8-10):
    the explorer finds it at the variant's exploration bounds; the 2-second random search
    of ``deployspec check`` does not (it rarely picks ``tick(finish_later=…)`` at the
    one step where it matters)."""
    config = CapiConfig(**{**CapiConfig.EXPLORE, "max_in_flight": (1,), "canary_plans": ((), (100,)),
                           "finish_window": True})
    return Beyond(config=config.to_json(), trace=f"counterexamples/capi/{trace}",
                  why=f"--engine explore, its exploration bounds ({steps} steps): {why}")


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
            "user_scale_not_lost",
            "capacity_within_bound",
            "deployment_never_resumes",
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
        "new deployment's process that never ran, and destroys the healthy original. The "
        "scale step does not look at the state again under the lock: a cancel or a new "
        "deployment committed after the dispatcher's snapshot is undone (tick(late=…); "
        "the race PR #3072 closed)."
    ),
    # explore the window between the dispatcher's snapshot and a scale step
    config={"snapshot_window": True},
)

CAPI_PR3072 = attrs.evolve(
    CAPI_2022,
    config={},  # it checks the state under the lock: the window changes nothing
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
    declares=frozenset(
        {
            "cancel_restores_last_good",
            "app_stays_available",
            "user_scale_not_lost",
            "capacity_within_bound",
        }
    ),
    previous_deployment=rules.previous_active,
    select_prior=rules.interim_or_oldest,
    cleanup=rules.zero_canceled_superseded,
    recheck_under_lock=True,
    violates_beyond={"deployment_converges": _livelock("capi-pr3072--deployment_converges--defa35a0d4.json")},
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
    declares=frozenset({"app_stays_available", "user_scale_not_lost", "capacity_within_bound"}),
    select_prior=rules.running_interim_or_oldest,
    violates_beyond={
        "deployment_converges": _livelock("capi-pr3084--deployment_converges--6841edcf4c.json"),
        "cancel_restores_last_good": Beyond(
            config=CapiConfig(**{**CapiConfig.EXPLORE, "max_deployments": 3}).to_json(),
            trace="counterexamples/capi/capi-pr3084--cancel_restores_last_good--0c8a2049b5.json",
            why=("max_deployments=3 (explorer, 13 steps): two rolling deployments took the original to 0 "
                 "while theirs served; with the instance report unavailable the cancel of a third falls "
                 "back to the original and restores droplet 0"),
        ),
    },
)

CAPI_CURRENT = attrs.evolve(
    CAPI_PR3084,
    name="capi-current",
    summary="today: max_in_flight, canary steps, routable/starting/unhealthy, cancel destroys first",
    upstream=(
        "cloud_controller_ng 3bbba9069894b1b74652c7b88fdfd4171136c8c4 (main, 2026-08): "
        "deployment_updater/{dispatcher,updater}.rb and actions/{scale,up_scaler,down_scaler,"
        "scale_down_old_process,scale_down_canceled_processes,cancel,finalize}.rb; canary #3892 "
        "d66f46a60d, max_in_flight #3907 2329550f2d, canary steps #4219 78d93d458d, cancel "
        "reorder #4246 c23085559c, web_instances #4247 9d4dee352b"
    ),
    doc=(
        "Today's Cloud Controller. Deployments take max_in_flight, a canary strategy with "
        "weighted steps and web_instances. The updater summarises the deploying process's "
        "instances as routable/starting/unhealthy, scales it up to min(routable + "
        "max_in_flight, target) while nothing is unhealthy, and scales the older processes "
        "down, oldest first, to target - routable, counting instances, not serving ones. A "
        "canary step ends PAUSED; continue moves on. Cancel keeps the running interim or the "
        "oldest process and destroys every other one before scaling it back up (PR #4246), "
        "so cancel after a 100 % canary step leaves nothing routable (docs-dev-guide #563). "
        "Scale is refused while DEPLOYING, PREPAUSED or PAUSED, not while CANCELING. "
        "A finished step commits its scale before Finalize or the PAUSED write run, with no "
        "lock and no second look (updater.rb: Finalize since PR #4212 cfd3d29904, the PAUSED write "
        "since PR #4219 78d93d458d; a reading of the code, "
        "no upstream test covers it): a canary superseded in between is written PAUSED "
        "again beside the new deployment; when the step zeroed no old process, a deployment "
        "created in between loses its new web process to Finalize and stays DEPLOYING for "
        "ever; when it destroyed an interim, Finalize (going down the list loaded in the "
        "transaction) fails on it, and a cancel before the next dispatch keeps the new droplet."
    ),
    declares=frozenset(
        {
            "app_stays_available",
            "user_scale_not_lost",
            "capacity_within_bound",
        }
    ),
    # no livelock here: the scale step no longer zeroes superseded processes first; but
    # Finalize and the PAUSED write after the commit break five more (docs/findings.md 8-10, 12)
    violates_beyond={
        "single_active_deployment": _after_commit(
            "capi-current--single_active_deployment--515d6c9395.json", 6,
            "a canary superseded before its PAUSED write is PAUSED again beside the new deployment"),
        "deployment_converges": _after_commit(
            "capi-current--deployment_converges--0b0551e922.json", 7,
            "Finalize destroys the process of a deployment created since the commit"),
        "cancel_restores_last_good": _after_commit(
            "capi-current--cancel_restores_last_good--c98dd14efa.json", 8,
            "Finalize stops on the interim the step destroyed; a cancel before the next "
            "dispatch keeps the new droplet"),
        "deployment_ships_its_droplet": _after_commit(
            "capi-current--deployment_ships_its_droplet--24d6ab83ff.json", 7,
            "Finalize writes DEPLOYED on a deployment superseded since the commit, beside the "
            "new deployment's process on its own droplet"),
        "deployment_never_resumes": _after_commit(
            "capi-current--deployment_never_resumes--a0f43c7b40.json", 6,
            "Finalize writes DEPLOYED over a cancel committed since the commit (the PAUSED write "
            "writes PAUSED over it the same way)"),
    },
    refuse_deploy=rules.deployment_options,
    starting_instances=rules.starting_instances,
    after_create=rules.canary_starts_prepaused,
    continue_=api.continue_canary,
    before_dispatch=updater.no_degenerate_check,
    cancelable_states=frozenset(ACTIVE_STATES),
    scale_blocked_in=rules.BLOCKED_WHILE_PROGRESSING,
    scaled_states=updater.SCALED_WITH_CANARY,
    scale_step=updater.scale_or_canary_step,
    cancel_step=updater.cancel_step_destroy_then_scale,
    finish_after_commit=True,
    down_counts_stale=True,
    # owic 1 or 2 is where a superseded or canceled deployment loses the app: keeping
    # push/scale small makes a 100-example round find it (issue 3's checker budget).
    config={"max_in_flight": (1, 2), "canary_plans": ((), (50,), (100,), (50, 100)), "max_instances": 2,
            "finish_window": True, "web_instances": (1, 2)},
    # exhaustive search: rolling and the 100% canary step (docs-dev-guide #563), one in flight,
    # no count asked (``--bound 'web_instances=[1]'`` asks one: four times the states)
    explore={"max_in_flight": (1,), "canary_plans": ((), (100,)), "max_instances": 2, "web_instances": ()},
)

CAPI_SAFE = attrs.evolve(
    CAPI_CURRENT,
    name="capi-safe",
    summary="ours: capi-current + graceful cancel, idle-first down-scaling, bounded starts",
    upstream="proposal on top of cloud_controller_ng 3bbba90 (capi-current), keeping PR #3084's rule",
    doc=(
        "capi-current with ten small changes, each where a property broke (docs/findings.md, "
        "docs/properties.md). "
        "(1) Cancel rolls back the way a deployment rolls forward: the prior web process is "
        "scaled up by at most max_in_flight in flight while the others are scaled down as it "
        "becomes routable, and destroyed once it is back at owic, all routable "
        "(docs-dev-guide #563; PR #4246 calls cancel not graceful; it destroyed first for the "
        "quota, which this respects too); with nothing routable or starting and a prior whose "
        "instances crash there is nothing to keep serving, and it cancels at once. (2) The down-scaler takes instances from older "
        "processes that serve nothing before those that serve, so superseding a deployment "
        "whose instances are still starting does not scale the serving original to 0. "
        "(3) Processes of CANCELED/SUPERSEDED deployments are scaled down with the other older "
        "processes instead of being zeroed at once (they may be the only ones serving). "
        "(4) A canary step is the plain split, canary + original <= N, so it never needs more "
        "than the count it takes the app to (the original count, or web_instances) plus "
        "max_in_flight. (5) A new deployment's process starts "
        "with at most the room left under that bound by the processes already there. "
        "(6) When instance reports are unavailable the cancel step retries instead of "
        "treating every interim as dead (PR #3084's rescue), and a prior process whose "
        "instances only crash gives way to the newest one that serves (the roll-back would "
        "otherwise wait for it forever). (7) A web process cannot be "
        "scaled while any deployment is active, CANCELING included: the newest process then "
        "is the one cancel destroys, so the scale would be lost; and that is checked under the "
        "app's lock, inside the scale's transaction (upstream checks before it, process_scale.rb, "
        "leaving a deployment created meanwhile to take the old count). (8) A finished step "
        "finalizes or pauses inside its scale transaction, under the deployment's lock, "
        "as before PRs #4212 and #4219, so nothing created or canceled meanwhile is overwritten. "
        "(9) A deploy that names no web_instances keeps the count of the deployment it "
        "supersedes (unless that one is being canceled), and a canary step splits the count "
        "the deployment takes the app to, so a count asked by a deployment in flight is not "
        "lost when another supersedes it (docs/explore-findings 3). (10) A deployment records, "
        "when it is created, the newest web process that serves (not a canceling deployment's, "
        "not the oldest), keeps it at 0 rather than destroy it while it rolls out, and its cancel "
        "rolls back to it when neither a running interim nor the oldest process serves: after a "
        "canary's 100 % step the oldest is at 0 and the canary served, and PR #3084's rule "
        "rolled the app back past it."
    ),
    declares=frozenset(),
    select_prior=rules.running_interim_or_recorded_that_can_serve,
    rollback_process=rules.newest_serving_process,
    scale_blocked_in=rules.BLOCKED_WHILE_ACTIVE,
    cancel_step=updater.cancel_step_roll_back,
    scale_down=scaling.scale_down_idle_first,
    cleanup=rules.keep_processes,
    canary_plan=canary.step_plan_without_extra,
    starting_instances=rules.starting_instances_within_bound,
    web_instances_of=rules.web_instances_kept,
    finish_after_commit=False,
    down_counts_stale=False,
    violates_beyond={},  # (8): Finalize and the PAUSED write inside the transaction
    # the wider bounds: a fixed design must hold with three instances too, and with a
    # count asked below and above the original one
    config={"max_in_flight": (1, 2), "canary_plans": ((), (50,), (100,), (50, 100)), "web_instances": (1, 3)},
    explore={"max_in_flight": (1,), "canary_plans": ((), (100,)), "max_instances": 2, "web_instances": ()},
)

VARIANTS: dict[str, CapiVariant] = {
    v.name: v for v in (CAPI_2022, CAPI_PR3072, CAPI_PR3084, CAPI_CURRENT, CAPI_SAFE)
}

#: the shipped designs by id (``_tick`` memoises their dispatch: ``tick_memo``)
_SHIPPED: dict[int, CapiVariant] = {id(v): v for v in VARIANTS.values()}
