"""Well-formedness: the states a cancel step can actually run in, one constraint each."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

import attrs
import z3
from deployspec.reference.capi.state import (
    CANCELED,
    CANCELING,
    DEGENERATE,
    DEPLOYED,
    DEPLOYING,
    PAUSED,
    PREPAUSED,
    SUPERSEDED,
)

from .symbolic import Symbolic
from .view import (
    DESTROYING_AT_END,
    DESTROYS_AT_END,
    FINALIZE_WHOLE,
    NOT_RECORDED,
    ONE_ACTIVE,
    PUSHED,
    RECORDING_SERVING,
    RECORDS_SERVING,
    SNAPSHOT_CLOSED,
    TWO_ACTIVE,
)

if TYPE_CHECKING:
    from .encodings import VariantEncoding

# ---------------------------------------------------------------------------
# Well-formedness: the states a cancel step can run in
# ---------------------------------------------------------------------------


@attrs.frozen
class Constraint:
    name: str
    doc: str
    #: the traits of a design (``traits``) the constraint relies on
    needs: frozenset[str]
    build: Callable[[Symbolic], z3.BoolRef]


def _wipe(s: Symbolic, j: int) -> z3.BoolRef:
    """Deployment j destroyed every web process but one: finalize or a completed cancel."""
    return z3.And(s.exists(j), z3.Or(s.is_(j, DEPLOYED, DEPLOYED), s.is_(j, CANCELED, CANCELED)))


def _all(conditions) -> z3.BoolRef:
    return z3.And(list(conditions) + [z3.BoolVal(True)])


def _pair_allowed(s: Symbolic, j: int, pairs) -> z3.BoolRef:
    return z3.Implies(s.exists(j), z3.Or([s.is_(j, st, rs) for st, rs in pairs]))


ALWAYS: frozenset[str] = frozenset()
FINAL_PAIRS = ((DEPLOYED, DEPLOYED), (DEPLOYED, SUPERSEDED), (DEPLOYED, DEGENERATE), (CANCELED, CANCELED))
#: every (state, status_reason) pair a design writes (``Deployment.moved_to`` in reference/capi,
#: as the controllers' code writes them)
WRITTEN_PAIRS = FINAL_PAIRS + ((DEPLOYING, DEPLOYING), (CANCELING, CANCELING), (CANCELED, SUPERSEDED),
                               (PREPAUSED, DEPLOYING), (PAUSED, PAUSED))

WELLFORMED: tuple[Constraint, ...] = (
    Constraint(
        "statuses_written",
        "A deployment's state and reason are a pair some step writes: DEPLOYING/DEPLOYING, "
        "PREPAUSED/DEPLOYING and PAUSED/PAUSED (canaries), CANCELING/CANCELING, DEPLOYED with "
        "reason DEPLOYED, SUPERSEDED or DEGENERATE, CANCELED with CANCELED or SUPERSEDED. "
        "Without it, the designs that no narrower constraint covers (capi-current) were offered "
        "views no controller writes (DEPLOYING/PAUSED), and their few tries went to those.",
        ALWAYS, lambda s: z3.And([_pair_allowed(s, j, WRITTEN_PAIRS) for j in range(s.M)])),
    Constraint(
        "has_web_process",
        "The app has a web process: push creates one, and finalize, cancel and the "
        "scale step each keep one (the scale step never destroys the oldest).",
        ALWAYS, lambda s: s.n >= 1),
    Constraint(
        "canceled_is_canceling",
        "The dispatcher runs cancel steps for CANCELING deployments (CANCELING/CANCELING, "
        "written by DeploymentCancel), and no step earlier in the dispatch changes another "
        "deployment's state.",
        ALWAYS, lambda s: s.is_(s.c, CANCELING, CANCELING)),
    Constraint(
        "pushed_process_is_oldest",
        "Only push creates a web process without a deployment, and it is the first one.",
        ALWAYS, lambda s: _all(z3.Implies(s.live(i), s.owner[i] != PUSHED) for i in range(1, s.N))),
    Constraint(
        "creation_order",
        "A deployment creates its process when it is created, after every existing web "
        "process, so process order and deployment order agree.",
        ALWAYS, lambda s: _all(z3.Implies(z3.And(s.live(k), s.owner[i] != PUSHED), s.owner[i] < s.owner[k])
                             for i in range(s.N) for k in range(i + 1, s.N))),
    Constraint(
        "pushed_process_kept_until_wiped",
        "The pushed process is always the oldest, and the scale step never destroys the "
        "oldest (it stays at 0 instances); only finalize (DEPLOYED/DEPLOYED) and a completed "
        "cancel (CANCELED/CANCELED) destroy it.",
        frozenset({FINALIZE_WHOLE}), lambda s: z3.Or([s.owner[0] == PUSHED] + [_wipe(s, j) for j in range(s.M)])),
    Constraint(
        "finalize_keeps_only_its_process",
        "Finalize of deployment d destroys every web process but d's; every process created "
        "since belongs to a newer deployment.",
        ALWAYS, lambda s: _all(z3.Implies(
            z3.And(s.exists(j), s.is_(j, DEPLOYED, DEPLOYED), s.live(i), s.owner[i] != j),
            s.owner[i] > j) for j in range(s.M) for i in range(s.N))),
    Constraint(
        "cancel_keeps_only_one",
        "A completed cancel of deployment d left one web process; every process created "
        "before d's cancel completed (all created by d or earlier, or pushed) existed then, "
        "so at most one of them is live.",
        ALWAYS, lambda s: _all(z3.Implies(
            z3.And(s.exists(j), s.is_(j, CANCELED, CANCELED)),
            z3.Sum([z3.If(z3.And(s.live(i), s.owner[i] <= j), 1, 0) for i in range(s.N)]) <= 1)
            for j in range(s.M))),
    Constraint(
        "recorded_before_canceled",
        "The process a deployment records as the one its cancel rolls back to existed when "
        "the deployment was created: pushed, or created by an older deployment.",
        ALWAYS, lambda s: z3.Or(s.recorded == NOT_RECORDED, s.slot_value(s.owner, s.recorded) < s.c)),
    Constraint(
        "recorded_never_crashes",
        "A design that records a process with a RUNNING instance records one whose droplet "
        "starts, and no instance of such a droplet crashes (reference/capi/runtime.py).",
        frozenset({RECORDS_SERVING}),
        lambda s: z3.Or(s.recorded == NOT_RECORDED, s.slot_value(s.crashed, s.recorded) == 0)),
    Constraint(
        "degenerate_has_no_process",
        "A deployment is finalized as DEPLOYED/DEGENERATE because its process is gone, "
        "and a destroyed process never comes back.",
        ALWAYS, lambda s: _all(z3.Implies(s.live(i), z3.Not(s.is_(s.owner[i], DEPLOYED, DEGENERATE)))
                             for i in range(s.N))),
    # ---- before PR #3072 ----
    Constraint(
        "statuses_before_3072",
        "Before PR #3072 the controller writes DEPLOYING/DEPLOYING, CANCELING/CANCELING, "
        "DEPLOYED with reason DEPLOYED, SUPERSEDED or DEGENERATE, and CANCELED/CANCELED "
        "(a superseded deployment was always DEPLOYING, so never CANCELED/SUPERSEDED).",
        frozenset({TWO_ACTIVE}),
        lambda s: z3.And([_pair_allowed(s, j, FINAL_PAIRS + ((DEPLOYING, DEPLOYING), (CANCELING, CANCELING)))
                          for j in range(s.M)])),
    Constraint(
        "deploying_is_newest",
        "DeploymentCreate supersedes the DEPLOYING deployment, so a DEPLOYING "
        "deployment is the newest one (CANCELING ones may be older), unless a scale step "
        "sent before a new deployment or a cancel wrote DEPLOYING on its deployment after "
        "them (capi-2022's snapshot window: tick(late=…)).",
        frozenset({TWO_ACTIVE, SNAPSHOT_CLOSED}),
        lambda s: z3.And([z3.Implies(z3.And(s.exists(j), s.is_(j, DEPLOYING)), s.m == j + 1)
                          for j in range(s.M)])),
    Constraint(
        "canceled_process_gone_only_if_replaced",
        "An active deployment whose process is gone is finalized as DEGENERATE at the start "
        "of a dispatch, so at a cancel step the canceled deployment's process can be gone "
        "only because of a wipe, or because the newer DEPLOYING deployment's scale step, "
        "earlier in the same dispatch, took its last instance: it was then the oldest web "
        "process with instances, so every older process is at 0, and the step moved it only "
        "because every instance of the deploying process was RUNNING (it has at least one: "
        "it starts with one and cannot be scaled while DEPLOYING).",
        frozenset({TWO_ACTIVE, DESTROYS_AT_END}),
        lambda s: z3.Or(
            s.canceled_process_live(),
            z3.Or([_wipe(s, j) for j in range(s.M)]),
            z3.And(
                z3.Or([z3.And(s.live(i), s.owner[i] > s.c, s.is_(s.owner[i], DEPLOYING),
                              s.running[i] >= 1)
                       for i in range(s.N)]),
                z3.And([z3.Implies(z3.And(s.live(i), s.owner[i] < s.c), s.desired[i] == 0)
                        for i in range(s.N)])))),
    # ---- PR #3072 onwards ----
    Constraint(
        "single_active_deployment",
        "DeploymentCreate supersedes any active deployment (DEPLOYING -> DEPLOYED/SUPERSEDED, "
        "else CANCELED/SUPERSEDED), so the canceled deployment is the only active one and the "
        "newest: a newer one would have superseded it.",
        frozenset({ONE_ACTIVE, FINALIZE_WHOLE}),
        lambda s: z3.And([s.m == s.c + 1] + [
            z3.Implies(s.c != j, _pair_allowed(s, j, FINAL_PAIRS + ((CANCELED, SUPERSEDED),)))
            for j in range(s.M)])),
    Constraint(
        "canceled_process_not_oldest",
        "Since the canceled deployment was created nothing destroyed the oldest web process "
        "of that moment (no finalize: nothing newer was DEPLOYING; no other cancel step: the "
        "state is re-checked under the lock; no scale step destroys the oldest), so the "
        "canceled deployment's process is not the oldest.",
        frozenset({ONE_ACTIVE, FINALIZE_WHOLE}),
        lambda s: s.owner[0] != s.c),
    Constraint(
        "canceled_process_kept",
        "Nor was the canceled deployment's own process destroyed: its own scale step never "
        "gives its last instance away, and its cancel step destroys nothing before it "
        "completes.",
        frozenset({ONE_ACTIVE, DESTROYS_AT_END, FINALIZE_WHOLE}),
        lambda s: s.canceled_process_live()),
)


def traits(variant, encoding: VariantEncoding, config=None) -> frozenset[str]:
    """What the well-formedness constraints may rely on for this variant: its family,
    how its cancel step destroys processes, what it records for its cancel, and whether
    its configuration opens the
    window between the dispatcher's snapshot and a scale step: ``config`` when one
    is given (``--bound snapshot_window=…``), else the variant's own."""
    out = {encoding.family}
    if config is not None:
        window = getattr(config, "snapshot_window", False)
    else:
        window = (getattr(variant, "config", None) or {}).get("snapshot_window")
    if not window:
        out.add(SNAPSHOT_CLOSED)
    if getattr(variant.cancel_step, "__name__", None) in DESTROYING_AT_END:
        out.add(DESTROYS_AT_END)
    if not getattr(variant, "finish_after_commit", False):
        out.add(FINALIZE_WHOLE)
    if getattr(getattr(variant, "rollback_process", None), "__name__", None) in RECORDING_SERVING:
        out.add(RECORDS_SERVING)
    return frozenset(out)


def wellformed(s: Symbolic, traits: frozenset[str]) -> list[z3.BoolRef]:
    """The constraints that hold for a design with these traits."""
    return [c.build(s) for c in WELLFORMED if c.needs <= traits]
