"""Build a ``RuleBasedStateMachine`` for a model, an adapter and some properties.

One rule per verb of the model's vocabulary (``deploy``, ``cancel``, ``tick``…);
a rule runs only when the observation offers such an action (a precondition, not
a rejection); its arguments are drawn from the actions the model offers, simplest
first so shrinking lands on readable traces. One more rule, ``wait``, lets the
platform take some of its own steps (``_wait_rule``). Properties are checked after
every step; at the end the platform settles and the settled properties are judged.

With ``probes=True`` (contract runs) one more rule, ``probe``, tries the actions
the model leaves out because every design refuses them or they change nothing
there (``model.probe_actions``): an implementation must refuse or ignore them
too. It is one rule among the verbs' and never runs twice in a row
(``_probe_rule``), so probes stay a minority of the steps.
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
    name: str = "DeploymentMachine",
    skip: frozenset[tuple[str, str]] = frozenset(),
    probes: bool = False,
) -> type[RuleBasedStateMachine]:
    """A machine class; each instance opens one adapter and runs one session.

    ``skip``: (property, cause) pairs not to report again (``Monitor``).
    ``probes``: also try ``model.probe_actions`` (a contract run)."""
    probing = model.probe_actions if probes else None

    class Machine(RuleBasedStateMachine):
        def __init__(self) -> None:
            super().__init__()
            self.session = Session(model, adapter_factory(), tuple(properties), config, skip)
            self._offered: dict[str, list] | None = None
            self._probes: dict[str, list] | None = None
            self._probed_last = False
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

        def probed(self) -> dict[str, list]:
            """The probe actions now, by verb (computed once per step)."""
            if self._probes is None:
                by_kind: dict[str, list] = {}
                for a in probing(self.session.obs, config):
                    by_kind.setdefault(a.kind, []).append(a)
                self._probes = by_kind
            return self._probes

        def do(self, action) -> None:
            self._offered = self._probes = None
            self._probed_last = False
            self._broken = True
            v = self.session.perform(action)
            self._broken = False
            if v is not None:
                raise PropertyViolated(v, self.session)
            if self.session.monitor.muted:
                reject()  # broke in a way already found: nothing new can come of this run

        def teardown(self) -> None:
            try:
                if self.session.violation is None and not self._broken:
                    v = self.session.settle()
                    if v is not None:
                        raise PropertyViolated(v, self.session)
            finally:
                self.session.adapter.close()

    for kind in model.vocabulary:
        Machine_rule = _make_rule(kind)
        setattr(Machine, kind.rstrip("_") if kind.endswith("_") else kind, Machine_rule)
    assert WAIT not in model.vocabulary, f"a verb is named {WAIT!r}"
    Machine.wait = _wait_rule(model, config)
    if probing is not None:
        assert PROBE not in model.vocabulary, f"a verb is named {PROBE!r}"
        Machine.probe = _probe_rule(tuple(model.vocabulary))
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


WAIT = "wait"


def _wait_rule(model, config):
    """The rule ``wait``: users stay away while the platform takes ``steps`` of its own
    (the settle phase's, 1 to ``settle_steps``, fewer if it rests first), and then the
    example goes on. Shrinking lowers ``steps`` toward one: a ``runtime`` or a ``tick``.

    Why: a state the platform reaches only after several of its own steps (a canary's
    pause: its instance starts, then two ticks) was rarely reached with steps left to
    act on it, as each step is a verb drawn among eight, most of which (a deploy, a
    cancel, a scale) move elsewhere; a controller that refused every ``continue``
    passed a contract run. Waiting until the platform rests, always, closed the windows
    other bugs need (a cancel not yet taken up): fewer seeds found the seed bug. Its
    steps are the platform's own actions, recorded and judged one by one like any
    other, so a trace holds no ``wait``."""
    def busy(self) -> bool:
        return model.settle_action(self.session.obs) is not None

    def run(self, steps: int) -> None:
        for action in self.session.platform_steps(steps):  # (the settle phase's, and as it ends)
            self.do(action)

    run.__name__ = WAIT
    return precondition(busy)(rule(steps=st.integers(1, max(1, config.settle_steps)))(run))


PROBE = "probe"


def _probe_rule(verbs: tuple[str, ...]):
    """The rule for probes: a verb, then one of its probe actions.

    How often: Hypothesis draws a rule uniformly from those it may run, so a
    probe is about as likely as one verb's actions; and this rule never runs
    twice in a row, so an example whose verb rules swarm testing turned off
    (before the push only ``push`` is offered) ends at once, as it did before
    probes, instead of running 40 refused steps. One probe shows a divergence
    by itself (the implementation accepts, refuses or changes what the
    reference does not), so none needs another before it.

    Shrinking: the verb is drawn from the whole vocabulary (when it has no
    probes here, the next one in the vocabulary that has), not from the verbs
    probed here, so it stays the same when the shrinker deletes earlier steps.
    Verb and action come from one number, so a step of this rule is as few
    choices as a verb's, few enough for the shrinker to delete (it deletes up to
    five consecutive choices). The vocabulary is passed as an argument (a
    constant: no choice) so that the rule has two arguments: Hypothesis orders
    rules by their number of arguments, and its shrinker, lowering a step's rule
    index, then turns probes into the verbs' steps, not verbs' steps into probes."""
    n = len(verbs)

    def may_probe(self) -> bool:
        return not self._probed_last and bool(self.probed())

    def run(self, verbs: tuple[str, ...], choice: int) -> None:
        by_kind = self.probed()
        verb, pick = choice % n, choice // n
        options = by_kind[next(k for k in verbs[verb:] + verbs[:verb] if k in by_kind)]
        self.do(options[pick % len(options)])
        self._probed_last = True

    run.__name__ = PROBE
    choice = st.integers(0, n * 64 - 1)
    return precondition(may_probe)(rule(verbs=st.just(verbs), choice=choice)(run))
