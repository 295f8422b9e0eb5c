"""Which web process survives a cancel: the selection rule, symbolically (Z3).

When the deployment updater cancels a deployment it keeps one web process (the
*prior* process), scales it to the original instance count and destroys every
other web process. The seed (cloud_controller_ng #3019) is a wrong choice here,
and every later design changed the choice. This module states the choice over
*all* app states up to a bound, not only the interleavings a search reaches:

* :class:`SelectionView`: what a rule reads at a cancel step (process order,
  who created each process, instance counts (RUNNING, CRASHED), deployment states, which one is
  being canceled, whether instance reports were available), built from a
  concrete :class:`~deployspec.reference.capi.state.CapiState` or from a model;
* :class:`Symbolic`: the same view as Z3 variables, N process slots and M
  deployment slots;
* :data:`WELLFORMED`: the states the controller can actually be in when it
  runs a cancel step, one documented constraint each (a soundness test checks
  every state the concrete model reaches against them);
* :data:`RULES`: each Python rule of ``reference/capi/rules.py`` as a Z3 term
  (a test checks they agree on Hypothesis-generated views);
* :data:`PROPERTIES`: what a good choice satisfies.

Upstream: cloud_controller_ng ``lib/cloud_controller/deployment_updater/updater.rb``
at 4528366a1b (before PR #3072), 545fb70000 (PR #3072), 53f45944b7 (PR #3084), and
``actions/cancel.rb`` at 3bbba90698 (today, same rule as PR #3084); summarised in
docs/upstream/cloud-controller.md sections 1.5, 2, 3 and 4.6.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import attrs
import z3
from deployspec.reference.capi import rules
from deployspec.reference.capi.observe import from_observation
from deployspec.reference.capi.state import (
    ACTIVE_STATES,
    CANCELED,
    CANCELING,
    CRASHED,
    DEGENERATE,
    DEPLOYED,
    DEPLOYING,
    DEPLOYMENT_STATES,
    RUNNING,
    STARTING,
    STATUS_REASONS,
    SUPERSEDED,
    CapiState,
    Deployment,
)

#: the canceled deployment's cancel step retries (the rule raised ``Retry``)
RETRY = -1
#: the owner of a web process no deployment created: the one ``push`` created
PUSHED = -1

STATE_CODE = {s: i for i, s in enumerate(DEPLOYMENT_STATES)}
REASON_CODE = {r: i for i, r in enumerate(STATUS_REASONS)}

#: families of designs, by what their DeploymentCreate supersedes
TWO_ACTIVE = "two-active"  # before PR #3072: a CANCELING deployment stays active beside a new one
ONE_ACTIVE = "one-active"  # PR #3072 onwards: at most one deployment is active
#: a cancel step that destroys web processes only in the step that completes the cancel
#: (CANCELED/CANCELED) and calls the rule before it has changed anything
DESTROYS_AT_END = "cancel-destroys-at-end"
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
    in creation order. ``status_value`` is left out: the controller derives it
    from the state (ACTIVE in active states, FINALIZED otherwise). Instances are
    ``running`` RUNNING, ``crashed`` CRASHED (all zero when not given) and the
    rest STARTING.
    """

    owners: tuple[int, ...]
    desired: tuple[int, ...]
    running: tuple[int, ...]
    deployments: tuple[tuple[str, str], ...]
    canceled: int
    reports: bool
    crashed: tuple[int, ...] = attrs.field(
        default=attrs.Factory(lambda self: (0,) * len(self.owners), takes_self=True))

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
                self.deployments, self.canceled, self.reports)

    @classmethod
    def of(cls, state: CapiState, deployment: Deployment, reports: bool) -> SelectionView:
        """The view of a concrete state at the cancel step of ``deployment``."""
        index = {d.deploying_process: d.id for d in state.deployments}  # later ids win, as deployment_of
        return cls(
            owners=tuple(index.get(p.id, PUSHED) for p in state.processes),
            desired=tuple(p.desired for p in state.processes),
            running=tuple(p.count(RUNNING) for p in state.processes),
            deployments=tuple((d.state, d.status_reason) for d in state.deployments),
            canceled=deployment.id,
            reports=reports,
            crashed=tuple(p.count(CRASHED) for p in state.processes),
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
        return from_observation(self.to_observation())

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
        return ", ".join(procs) + " | " + ", ".join(deps) + reports


# ---------------------------------------------------------------------------
# The symbolic view
# ---------------------------------------------------------------------------


class Symbolic:
    """A :class:`SelectionView` with at most ``N`` web processes and ``M``
    deployments, as Z3 integers. Slots past ``n`` (``m``) are fixed to neutral
    values so a model is determined by the live part."""

    def __init__(self, N: int, M: int):
        if N < 1 or M < 1:
            raise ValueError("the bounds must be at least 1 process and 1 deployment")
        self.N, self.M = N, M
        self.n, self.m, self.c = z3.Ints("n m canceled")
        self.reports = z3.Bool("reports")
        self.owner = [z3.Int(f"owner_{i}") for i in range(N)]
        self.desired = [z3.Int(f"desired_{i}") for i in range(N)]
        self.running = [z3.Int(f"running_{i}") for i in range(N)]
        self.crashed = [z3.Int(f"crashed_{i}") for i in range(N)]
        #: set by a rule encoding that reads ``crashed`` before :meth:`domain` is built;
        #: otherwise the domain fixes every count at 0 (see there)
        self.reads_crashed = False
        self.state = [z3.Int(f"state_{j}") for j in range(M)]
        self.reason = [z3.Int(f"reason_{j}") for j in range(M)]
        self._cache: dict[tuple, z3.ArithRef] = {}

    # ---- reading ----------------------------------------------------------
    def live(self, i: int) -> z3.BoolRef:
        return z3.IntVal(i) < self.n

    def _at(self, values: list, index: z3.ArithRef, default: int = -1) -> z3.ArithRef:
        key = (id(values), index.get_id(), default)
        if key not in self._cache:  # the same lookups recur in many constraints
            term: z3.ArithRef = z3.IntVal(default)
            for k in reversed(range(len(values))):
                term = z3.If(index == k, values[k], term)
            self._cache[key] = term
        return self._cache[key]

    def owner_state(self, i: int) -> z3.ArithRef:
        """The state of the deployment that created process i (-1 if pushed)."""
        return self._at(self.state, self.owner[i])

    def owner_reason(self, i: int) -> z3.ArithRef:
        return self._at(self.reason, self.owner[i])

    def is_(self, j, state: str, reason: str | None = None) -> z3.BoolRef:
        """Deployment j (an index or a term) is in ``state`` (with ``reason``)."""
        st = self.state[j] if isinstance(j, int) else self._at(self.state, j)
        cond = st == STATE_CODE[state]
        if reason is not None:
            rs = self.reason[j] if isinstance(j, int) else self._at(self.reason, j)
            cond = z3.And(cond, rs == REASON_CODE[reason])
        return cond

    def exists(self, j: int) -> z3.BoolRef:
        return z3.IntVal(j) < self.m

    def canceled_process_live(self) -> z3.BoolRef:
        return z3.Or([z3.And(self.live(i), self.owner[i] == self.c) for i in range(self.N)])

    def slot_value(self, values: list, slot: z3.ArithRef) -> z3.ArithRef:
        """``values[slot]`` for a symbolic slot (the survivor)."""
        return self._at(values, slot)

    # ---- the shape of the encoding (not assumptions about behaviour) --------
    def domain(self) -> list[z3.BoolRef]:
        """Ranges, neutral values past n and m, and one process per deployment
        (``deploying_web_process`` is a single reference). Unless a rule reads them,
        CRASHED counts are fixed at 0: sound, since the rule's choice then does not
        depend on them and every property and symptom only gets weaker when a process
        crashes, and it keeps minimal counterexamples free of crashes they do not need."""
        out = [1 <= self.m, self.m <= self.M, 0 <= self.n, self.n <= self.N,
               0 <= self.c, self.c < self.m]
        for i in range(self.N):
            out.append(z3.If(
                self.live(i),
                z3.And(PUSHED <= self.owner[i], self.owner[i] < self.m,
                       0 <= self.running[i], 0 <= self.crashed[i],
                       z3.Or(self.reads_crashed, self.crashed[i] == 0),
                       self.running[i] + self.crashed[i] <= self.desired[i]),
                z3.And(self.owner[i] == PUSHED, self.desired[i] == 0, self.running[i] == 0,
                       self.crashed[i] == 0),
            ))
            for k in range(i + 1, self.N):
                out.append(z3.Implies(z3.And(self.live(k), self.owner[i] != PUSHED),
                                      self.owner[i] != self.owner[k]))
        for j in range(self.M):
            out.append(z3.If(
                self.exists(j),
                z3.And(0 <= self.state[j], self.state[j] < len(DEPLOYMENT_STATES),
                       0 <= self.reason[j], self.reason[j] < len(STATUS_REASONS)),
                z3.And(self.state[j] == -1, self.reason[j] == -1),
            ))
        return out

    # ---- concrete values ----------------------------------------------------
    def assignment(self, view: SelectionView) -> list[tuple[z3.ExprRef, z3.ExprRef]]:
        if view.n > self.N or view.m > self.M:
            raise ValueError(f"view with {view.n} processes and {view.m} deployments exceeds "
                             f"the bound ({self.N}, {self.M})")
        pairs = [(self.n, z3.IntVal(view.n)), (self.m, z3.IntVal(view.m)),
                 (self.c, z3.IntVal(view.canceled)), (self.reports, z3.BoolVal(view.reports))]
        for i in range(self.N):
            live = i < view.n
            pairs += [(self.owner[i], z3.IntVal(view.owners[i] if live else PUSHED)),
                      (self.desired[i], z3.IntVal(view.desired[i] if live else 0)),
                      (self.running[i], z3.IntVal(view.running[i] if live else 0)),
                      (self.crashed[i], z3.IntVal(view.crashed[i] if live else 0))]
        for j in range(self.M):
            s, r = view.deployments[j] if j < view.m else (None, None)
            pairs += [(self.state[j], z3.IntVal(STATE_CODE[s] if s else -1)),
                      (self.reason[j], z3.IntVal(REASON_CODE[r] if r else -1))]
        return pairs

    def evaluate(self, term: z3.ExprRef, view: SelectionView) -> Any:
        """The value of ``term`` on a concrete view (an int or a bool)."""
        value = z3.simplify(z3.substitute(term, *self.assignment(view)))
        if z3.is_true(value) or z3.is_false(value):
            return z3.is_true(value)
        return value.as_long()

    def view(self, model: z3.ModelRef) -> SelectionView:
        """The concrete view a Z3 model describes."""
        val = lambda t: model.eval(t, model_completion=True).as_long()
        n, m = val(self.n), val(self.m)
        states, reasons = list(STATE_CODE), list(REASON_CODE)
        return SelectionView(
            owners=tuple(val(self.owner[i]) for i in range(n)),
            desired=tuple(val(self.desired[i]) for i in range(n)),
            running=tuple(val(self.running[i]) for i in range(n)),
            deployments=tuple((states[val(self.state[j])], reasons[val(self.reason[j])])
                              for j in range(m)),
            canceled=val(self.c),
            reports=z3.is_true(model.eval(self.reports, model_completion=True)),
            crashed=tuple(val(self.crashed[i]) for i in range(n)),
        )

    def same_class(self, view: SelectionView) -> z3.BoolRef:
        """Views equivalent to ``view`` (same :meth:`SelectionView.key`)."""
        cond = [self.n == view.n, self.m == view.m, self.c == view.canceled,
                self.reports == view.reports]
        for i in range(view.n):
            cond += [self.owner[i] == view.owners[i], (self.running[i] > 0) == (view.running[i] > 0),
                     (self.crashed[i] > 0) == (view.crashed[i] > 0)]
        for j, (s, r) in enumerate(view.deployments):
            cond += [self.state[j] == STATE_CODE[s], self.reason[j] == REASON_CODE[r]]
        return z3.And(cond)


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

WELLFORMED: tuple[Constraint, ...] = (
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
        ALWAYS, lambda s: z3.Or([s.owner[0] == PUSHED] + [_wipe(s, j) for j in range(s.M)])),
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
        "DeploymentCreate supersedes the newest DEPLOYING deployment, so a DEPLOYING "
        "deployment is the newest one (CANCELING ones may be older).",
        frozenset({TWO_ACTIVE}),
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
        frozenset({ONE_ACTIVE}),
        lambda s: z3.And([s.m == s.c + 1] + [
            z3.Implies(s.c != j, _pair_allowed(s, j, FINAL_PAIRS + ((CANCELED, SUPERSEDED),)))
            for j in range(s.M)])),
    Constraint(
        "canceled_process_not_oldest",
        "Since the canceled deployment was created nothing destroyed the oldest web process "
        "of that moment (no finalize: nothing newer was DEPLOYING; no other cancel step: the "
        "state is re-checked under the lock; no scale step destroys the oldest), so the "
        "canceled deployment's process is not the oldest.",
        frozenset({ONE_ACTIVE}),
        lambda s: s.owner[0] != s.c),
    Constraint(
        "canceled_process_kept",
        "Nor was the canceled deployment's own process destroyed: its own scale step never "
        "gives its last instance away, and its cancel step destroys nothing before it "
        "completes.",
        frozenset({ONE_ACTIVE, DESTROYS_AT_END}),
        lambda s: s.canceled_process_live()),
)


def traits(variant, encoding: VariantEncoding) -> frozenset[str]:
    """What the well-formedness constraints may rely on for this variant: its family,
    and how its cancel step destroys processes."""
    out = {encoding.family}
    if getattr(variant.cancel_step, "__name__", None) in DESTROYING_AT_END:
        out.add(DESTROYS_AT_END)
    return frozenset(out)


def wellformed(s: Symbolic, traits: frozenset[str]) -> list[z3.BoolRef]:
    """The constraints that hold for a design with these traits."""
    return [c.build(s) for c in WELLFORMED if c.needs <= traits]


# ---------------------------------------------------------------------------
# The rules, as Z3 terms: the survivor's slot, or RETRY
# ---------------------------------------------------------------------------


def _newest(s: Symbolic, eligible: Callable[[int], z3.BoolRef], otherwise: z3.ArithRef) -> z3.ArithRef:
    """The highest slot for which ``eligible`` holds, else ``otherwise``."""
    term = otherwise
    for i in range(s.N):
        term = z3.If(z3.And(s.live(i), eligible(i)), i, term)
    return term


def _is_interim(s: Symbolic, i: int) -> z3.BoolRef:
    """Process i is the deploying process of a DEPLOYED/SUPERSEDED deployment."""
    return z3.And(s.owner[i] != PUSHED, s.is_(s.owner[i], DEPLOYED, SUPERSEDED))


def _oldest_or_retry(s: Symbolic) -> z3.ArithRef:
    return z3.If(s.n >= 1, 0, RETRY)


def encode_newest_other_process(s: Symbolic) -> z3.ArithRef:
    return _newest(s, lambda i: s.owner[i] != s.c, z3.IntVal(RETRY))


def encode_interim_or_oldest(s: Symbolic) -> z3.ArithRef:
    return _newest(s, lambda i: _is_interim(s, i), _oldest_or_retry(s))


def encode_running_interim_or_oldest(s: Symbolic) -> z3.ArithRef:
    return _newest(s, lambda i: z3.And(_is_interim(s, i), s.reports, s.running[i] > 0),
                   _oldest_or_retry(s))


def encode_running_interim_or_oldest_strict(s: Symbolic) -> z3.ArithRef:
    return z3.If(s.reports, encode_running_interim_or_oldest(s), RETRY)


def cannot_serve(s: Symbolic, slot: z3.ArithRef) -> z3.BoolRef:
    """The process in ``slot`` has a CRASHED instance and no RUNNING one (false for RETRY)."""
    return z3.And(s.slot_value(s.crashed, slot) > 0, s.slot_value(s.running, slot) == 0)


def encode_running_interim_or_oldest_that_can_serve(s: Symbolic) -> z3.ArithRef:
    """The strict rule, but a prior that cannot serve gives way to the newest
    process with a RUNNING instance, if any (the canceled deployment's own included)."""
    s.reads_crashed = True
    prior = encode_running_interim_or_oldest_strict(s)
    return z3.If(cannot_serve(s, prior), _newest(s, lambda i: s.running[i] > 0, prior), prior)


@attrs.frozen
class RuleEncoding:
    """A Python rule of ``reference/capi/rules.py`` and its Z3 term."""

    rule: rules.PriorSelection
    encode: Callable[[Symbolic], z3.ArithRef]


RULES: dict[str, RuleEncoding] = {
    "newest_other_process": RuleEncoding(rules.newest_other_process, encode_newest_other_process),
    "interim_or_oldest": RuleEncoding(rules.interim_or_oldest, encode_interim_or_oldest),
    "running_interim_or_oldest": RuleEncoding(rules.running_interim_or_oldest,
                                              encode_running_interim_or_oldest),
    "running_interim_or_oldest_strict": RuleEncoding(rules.running_interim_or_oldest_strict,
                                                     encode_running_interim_or_oldest_strict),
    "running_interim_or_oldest_that_can_serve": RuleEncoding(
        rules.running_interim_or_oldest_that_can_serve, encode_running_interim_or_oldest_that_can_serve),
}


@attrs.frozen
class VariantEncoding:
    """What the Z3 engine needs of a variant: its rule and its family."""

    rule: RuleEncoding
    family: str


#: by variant name; a name missing from the model's variants is simply not checked
VARIANTS: dict[str, VariantEncoding] = {
    "capi-2022": VariantEncoding(RULES["newest_other_process"], TWO_ACTIVE),
    "capi-pr3072": VariantEncoding(RULES["interim_or_oldest"], ONE_ACTIVE),
    "capi-pr3084": VariantEncoding(RULES["running_interim_or_oldest"], ONE_ACTIVE),
    # today's actions/cancel.rb (3bbba90698) keeps PR #3084's rule; create supersedes as #3072
    "capi-current": VariantEncoding(RULES["running_interim_or_oldest"], ONE_ACTIVE),
    "capi-safe": VariantEncoding(RULES["running_interim_or_oldest_that_can_serve"], ONE_ACTIVE),
}


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
                      z3.If(some_runs, runs, z3.Or(survivor == 0, z3.And(oldest_cannot_serve, runs))))


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
        "interim of PR #3072; the unavailable-report fallback of PR #3084), or, when the "
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
    (creation order), so the app ran its droplet then; if it runs, that droplet has
    served, and the cancel scales it back: it restores a droplet the app ran before."""
    return z3.And(survivor != RETRY, z3.Or(s.slot_value(s.running, survivor) == 0,
                                           s.slot_value(s.owner, survivor) >= s.c))


#: spec/capi.py property -> necessary condition on the view for a cancel step to break it
SYMPTOMS: dict[str, Callable[[Symbolic, z3.ArithRef], z3.BoolRef]] = {
    "app_stays_available": _takes_app_down,
    "cancel_restores_last_good": _survivor_idle,
}
