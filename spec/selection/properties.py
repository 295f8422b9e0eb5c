"""What a good choice satisfies, and how a bad one shows in ``spec/capi.py``."""

from __future__ import annotations

from collections.abc import Callable

import attrs
import z3
from deployspec.reference.capi.state import (
    DEPLOYED,
    SUPERSEDED,
)

from .symbolic import Symbolic
from .view import PUSHED, RETRY

# ---------------------------------------------------------------------------
# What a good choice satisfies
# ---------------------------------------------------------------------------


@attrs.frozen
class SelectionProperty:
    name: str
    doc: str
    #: the spec/capi.py properties a violation of this one can break, most direct first
    guards: tuple[str, ...]
    build: Callable[[Symbolic, z3.ArithRef], z3.BoolRef]


def candidate(s: Symbolic, i: int) -> z3.BoolRef:
    """Process i may rightly survive: pushed, or created by a finalized deployment
    (DEPLOYED/DEPLOYED: the app's current process), or an interim left by a
    deployment older than the canceled one (DEPLOYED/SUPERSEDED)."""
    return z3.And(
        s.live(i), s.owner[i] != s.c,
        z3.Or(s.owner[i] == PUSHED,
              s.is_(s.owner[i], DEPLOYED, DEPLOYED),
              z3.And(s.is_(s.owner[i], DEPLOYED, SUPERSEDED), s.owner[i] < s.c)))


def _nothing_can_serve(s: Symbolic) -> z3.BoolRef:
    """No process that may rightly survive runs, and the oldest only crashes."""
    return z3.And(z3.Not(z3.Or([z3.And(candidate(s, i), s.running[i] > 0) for i in range(s.N)])),
                  s.crashed[0] > 0, s.running[0] == 0)


def _survivor_not_newer(s: Symbolic, survivor: z3.ArithRef) -> z3.BoolRef:
    owner = s.slot_value(s.owner, survivor)
    own_and_serving = z3.And(owner == s.c, s.slot_value(s.running, survivor) > 0, _nothing_can_serve(s))
    return z3.Implies(z3.And(survivor != RETRY, s.canceled_process_live()),
                      z3.Or(owner < s.c, own_and_serving))


def _survivor_runs(s: Symbolic, survivor: z3.ArithRef) -> z3.BoolRef:
    some_runs = z3.Or([z3.And(candidate(s, i), s.running[i] > 0) for i in range(s.N)])
    runs = s.slot_value(s.running, survivor) > 0
    oldest_cannot_serve = z3.And(s.crashed[0] > 0, s.running[0] == 0)
    return z3.Implies(survivor != RETRY,
                      z3.If(some_runs, runs, z3.Or(survivor == 0, survivor == s.recorded,
                                                   z3.And(oldest_cannot_serve, runs))))


def _survivor_exists(s: Symbolic, survivor: z3.ArithRef) -> z3.BoolRef:
    return z3.Implies(s.reports, survivor != RETRY)


PROPERTIES: tuple[SelectionProperty, ...] = (
    SelectionProperty(
        "survivor_not_newer",
        "While the canceled deployment still has its web process, the survivor is neither "
        "that process nor one created by a newer deployment (the seed, cloud_controller_ng "
        "#3019: the new deployment's never-started process survived). When the canceled "
        "process is already gone, a newer deployment replaced it earlier in the same "
        "dispatch and there is nothing left to undo. One exception, as in the spec's "
        "cancel_restores_last_good: when no process that may rightly survive can serve (none "
        "runs and the oldest only crashes) there is no last good version, and the canceled "
        "deployment's own process may survive if it runs (capi-safe keeps the app serving).",
        ("cancel_restores_last_good", "app_stays_available"),
        _survivor_not_newer),
    SelectionProperty(
        "survivor_runs",
        "If some process that may rightly survive has a RUNNING instance, the survivor has "
        "one; otherwise the survivor is the oldest web process (PR #3084's intent; the dead "
        "interim of PR #3072; the unavailable-report fallback of PR #3084) or the one the "
        "canceled deployment recorded as serving when it was created (capi-safe), or, when the "
        "oldest has CRASHED instances and none RUNNING, a process that runs: keeping one that "
        "cannot serve takes the app down (capi-safe's rule gives way; whether the process it "
        "keeps may survive is survivor_not_newer's question).",
        ("app_stays_available", "cancel_restores_last_good"),
        _survivor_runs),
    SelectionProperty(
        "survivor_exists",
        "With instance reports available the rule selects a survivor. A retry while reports "
        "are unavailable is transient (the next dispatch usually has them), but with reports "
        "available nothing changes between dispatches: the cancel would retry forever.",
        ("deployment_converges",),
        _survivor_exists),
)


def selection_property(name: str) -> SelectionProperty:
    for p in PROPERTIES:
        if p.name == name:
            return p
    raise KeyError(name)


# ---------------------------------------------------------------------------
# How a bad choice shows in spec/capi.py (narrows the search for a trace)
# ---------------------------------------------------------------------------


def _takes_app_down(s: Symbolic, survivor: z3.ArithRef) -> z3.BoolRef:
    """Some web process runs, and the survivor (the only process a scale-then-destroy
    cancel step leaves) has no RUNNING instance: the app is down right after it."""
    return z3.And(survivor != RETRY,
                  z3.Or([z3.And(s.live(i), s.running[i] > 0) for i in range(s.N)]),
                  s.slot_value(s.running, survivor) == 0)


def _survivor_idle(s: Symbolic, survivor: z3.ArithRef) -> z3.BoolRef:
    """The survivor has no RUNNING instance, or was created by the canceled deployment
    or a newer one. Any other survivor existed when the canceled deployment was created
    (creation order), and where the cancel step chooses before it scales anything, one
    that runs had instances then (an older process only loses instances while a newer
    deployment rolls out): the cancel restores a droplet the app ran. A cancel that
    rolls back over several dispatches (capi-safe) may choose again a prior it scaled up
    from 0; there this narrows the search for a trace rather than being necessary."""
    return z3.And(survivor != RETRY, z3.Or(s.slot_value(s.running, survivor) == 0,
                                           s.slot_value(s.owner, survivor) >= s.c))


#: spec/capi.py property -> necessary condition on the view for a cancel step to break it
SYMPTOMS: dict[str, Callable[[Symbolic, z3.ArithRef], z3.BoolRef]] = {
    "app_stays_available": _takes_app_down,
    "cancel_restores_last_good": _survivor_idle,
}
