"""Build a ``RuleBasedStateMachine`` for a model, an adapter and some properties.

One rule per verb of the model's vocabulary (``deploy``, ``cancel``, ``tick``…);
a rule runs only when the observation offers such an action (a precondition, not
a rejection); its arguments are drawn from the actions the model offers, simplest
first so shrinking lands on readable traces. Properties are checked after every
step; at the end the platform settles and the settled properties are judged.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from deployspec.spec.core import Violation
from hypothesis import reject
from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, precondition, rule

from deployspec.session import Session


class PropertyViolated(AssertionError):
    """A property broke; carries the session so the trace can be saved."""

    def __init__(self, violation: Violation, session: Session):
        from deployspec.render_text import render_steps

        picture = render_steps(session.model, session.steps, violation.step, session.settle_from)
        super().__init__(
            f"{violation.property}: {violation.message} (step {violation.step})\n"
            + "\n".join(picture)
        )
        self.violation = violation
        self.session = session


def build_machine(
    model,
    adapter_factory: Callable[[], Any],
    properties,
    config,
    *,
    settle: bool = True,
    name: str = "DeploymentMachine",
    skip: frozenset[tuple[str, str]] = frozenset(),
) -> type[RuleBasedStateMachine]:
    """A machine class; each instance opens one adapter and runs one session.

    ``skip``: (property, cause) pairs not to report again (``Monitor``)."""

    class Machine(RuleBasedStateMachine):
        def __init__(self) -> None:
            super().__init__()
            self.session = Session(model, adapter_factory(), tuple(properties), config, skip)
            self._offered: dict[str, list] | None = None
            #: a step raised (a fault, Ctrl-C): teardown must not drive the system again
            self._broken = False

        def offered(self, kind: str) -> list:
            """The actions of one verb the model offers now (computed once per step)."""
            if self._offered is None:
                by_kind: dict[str, list] = {}
                for a in model.candidate_actions(self.session.obs, config):
                    by_kind.setdefault(a.kind, []).append(a)
                self._offered = by_kind
            return self._offered.get(kind, [])

        def do(self, action) -> None:
            self._offered = None
            self._broken = True
            v = self.session.perform(action)
            self._broken = False
            if v is not None:
                raise PropertyViolated(v, self.session)
            if self.session.monitor.muted:
                reject()  # broke in a way already found: nothing new can come of this run

        def teardown(self) -> None:
            try:
                if settle and self.session.violation is None and not self._broken:
                    v = self.session.settle()
                    if v is not None:
                        raise PropertyViolated(v, self.session)
            finally:
                self.session.adapter.close()

    for kind in model.vocabulary:
        Machine_rule = _make_rule(kind)
        setattr(Machine, kind.rstrip("_") if kind.endswith("_") else kind, Machine_rule)
    Machine.__name__ = Machine.__qualname__ = name
    return Machine


#: how many alternatives a rule's ``pick`` can address; the offered list is shorter,
#: and ``pick`` is taken modulo its length, so shrinking moves to the simplest option.
PICKS = st.integers(min_value=0, max_value=63)


def _make_rule(kind: str):
    def has_some(self) -> bool:
        return bool(self.offered(kind))

    def run(self, pick: int) -> None:
        options = self.offered(kind)
        self.do(options[pick % len(options)])

    run.__name__ = kind
    return precondition(has_some)(rule(pick=PICKS)(run))
