"""The view as Z3 variables: N process slots and M deployment slots."""

from __future__ import annotations

from typing import Any

import z3
from deployspec.reference.capi.state import (
    DEPLOYMENT_STATES,
    STATUS_REASONS,
)

from .view import NOT_RECORDED, PUSHED, REASON_CODE, STATE_CODE, SelectionView

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
        #: the slot the canceled deployment recorded (``NOT_RECORDED``: none)
        self.recorded = z3.Int("recorded")
        #: set by a rule encoding that reads ``recorded``; otherwise it is fixed at NOT_RECORDED
        self.reads_recorded = False
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
        crashes, and it keeps minimal counterexamples free of crashes they do not need.
        The recorded slot, when a rule reads it, is a live process or none; otherwise none
        (the rule's choice does not depend on it)."""
        out = [1 <= self.m, self.m <= self.M, 0 <= self.n, self.n <= self.N,
               0 <= self.c, self.c < self.m,
               z3.Or(self.recorded == NOT_RECORDED,
                     z3.And(self.reads_recorded, 0 <= self.recorded, self.recorded < self.n))]
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
                 (self.c, z3.IntVal(view.canceled)), (self.reports, z3.BoolVal(view.reports)),
                 (self.recorded, z3.IntVal(view.recorded))]
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
            recorded=val(self.recorded),
        )

    def same_class(self, view: SelectionView) -> z3.BoolRef:
        """Views equivalent to ``view`` (same :meth:`SelectionView.key`)."""
        cond = [self.n == view.n, self.m == view.m, self.c == view.canceled,
                self.reports == view.reports, self.recorded == view.recorded]
        for i in range(view.n):
            cond += [self.owner[i] == view.owners[i], (self.running[i] > 0) == (view.running[i] > 0),
                     (self.crashed[i] > 0) == (view.crashed[i] > 0)]
        for j, (s, r) in enumerate(view.deployments):
            cond += [self.state[j] == STATE_CODE[s], self.reason[j] == REASON_CODE[r]]
        return z3.And(cond)
