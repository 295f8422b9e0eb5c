"""Build a ``RuleBasedStateMachine`` for a model, an adapter and some properties.

The machine has one rule, ``step`` (``_step``): it draws a move among those possible
now (``moves``), then the move's arguments. A move is a verb of the model's
vocabulary (``deploy``, ``cancel``, ``tick``…) that the observation offers, its
arguments drawn from the actions the model offers, simplest first so shrinking
lands on readable traces; or ``wait``, which lets the platform take some of its own
steps (``_wait``). Properties are checked after every step; at the end the platform
settles and the settled properties are judged.

With ``probes=True`` (contract runs) one more move, ``probe``, tries the actions
the model leaves out because every design refuses them or they change nothing
there (``model.probe_actions``): an implementation must refuse or ignore them
too. It is one move among the verbs' and never comes twice in a row
(``_probe``), so probes stay a minority of the steps.

Each move is also a method of the machine (``push(pick)``, ``wait(steps)``,
``probe(choice)``…), which the tests call directly.
"""

from __future__ import annotations

import functools
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
    candidates: Callable[[dict, Any], list] | None = None,
) -> type[RuleBasedStateMachine]:
    """A machine class; each instance opens one adapter and runs one session.

    ``skip``: (property, cause) pairs not to report again (``Monitor``).
    ``probes``: also try ``model.probe_actions`` (a contract run). ``candidates``: the
    design's own (``Model.offered``; default ``model.candidate_actions``)."""
    probing = model.probe_actions if probes else None
    candidates = candidates or model.candidate_actions

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
                for a in candidates(self.session.obs, config):
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

    verbs = tuple(model.vocabulary)
    assert WAIT not in verbs and PROBE not in verbs, f"a verb is named {WAIT!r} or {PROBE!r}"
    for kind in verbs:
        setattr(Machine, method_name(kind), _verb(kind))
    Machine.wait = _wait()
    if probing is not None:
        Machine.probe = _probe(verbs)
    Machine.moves = _moves(model, verbs, probing is not None)
    Machine.arguments = _arguments(verbs, config, probing is not None)
    Machine.step = _step()
    Machine.__name__ = Machine.__qualname__ = name
    return Machine


#: how many alternatives a verb's ``pick`` can address; the offered list is shorter,
#: and ``pick`` is taken modulo its length, so shrinking moves to the simplest option.
PICKS = st.integers(min_value=0, max_value=63)

WAIT = "wait"
PROBE = "probe"


def method_name(kind: str) -> str:
    """The machine's method for a verb (``continue_`` is ``continue``'s)."""
    return kind.rstrip("_") if kind.endswith("_") else kind


@functools.cache
def _index(n: int) -> st.SearchStrategy[int]:
    return st.integers(0, n - 1)


def _step():
    """The machine's one rule: a move drawn uniformly among those possible now
    (``moves``), then its arguments.

    Why one rule and not one per verb: Hypothesis's swarm testing switches off a
    random share of a machine's rules for a whole example (half of them, on
    average), and a bug here needs several verbs in one example (push, set_image,
    validate, swap, push, swap). Over the 33 pairs of benchmarks/search_bench.py,
    seeds 0-9, the mean number of examples before the first violation fell from a
    geometric mean of 8.17 to 3.76 (capi-2022's seed bug 34.4 to 8.2, a crash retry
    planted in slots-pipeline-immutable 510.5 to 60.2; docs/performance.md).
    Shrinking lowers the move's index (``moves``: by name, probes last)."""

    def possible(self) -> bool:
        return bool(self.moves())

    def run(self, data) -> None:
        moves = self.moves()
        move = moves[data.draw(_index(len(moves)))]
        getattr(self, method_name(move))(**{k: data.draw(s) for k, s in self.arguments[move].items()})

    run.__name__ = "step"
    return precondition(possible)(rule(data=st.data())(run))


def _arguments(verbs: tuple[str, ...], config, probes: bool) -> dict[str, dict[str, st.SearchStrategy]]:
    """What each move draws (the machine's ``arguments``): a verb its pick, ``wait``
    its steps, ``probe`` (a contract run's) its choice."""
    arguments: dict[str, dict[str, st.SearchStrategy]] = {kind: {"pick": PICKS} for kind in verbs}
    arguments[WAIT] = {"steps": st.integers(1, max(1, config.settle_steps))}
    if probes:
        arguments[PROBE] = {"choice": st.integers(0, len(verbs) * 64 - 1)}
    return arguments


def _moves(model, verbs: tuple[str, ...], probes: bool):
    # the verbs and ``wait`` by name: the order Hypothesis gave them as rules of their
    # own, so shrinking, which lowers a step's move, heads for the moves it did
    # (``cancel`` before ``deploy``: the seed's trace, not a deploy superseded)
    order = sorted((*verbs, WAIT), key=method_name)

    def moves(self) -> list[str]:
        """The moves possible now: the verbs the model offers and ``wait`` while the
        platform has steps of its own to take, by name; then ``probe`` (a contract
        run) unless the step before was one."""
        busy = model.settle_action(self.session.obs) is not None
        possible = [move for move in order if (busy if move == WAIT else self.offered(move))]
        if probes and not self._probed_last and self.probed():
            possible.append(PROBE)
        return possible

    return moves


def _verb(kind: str):
    def run(self, pick: int) -> None:
        """One of the actions of this verb the model offers now (``pick`` wraps round)."""
        options = self.offered(kind)
        self.do(options[pick % len(options)])

    run.__name__ = method_name(kind)
    return run


def _wait():
    def wait(self, steps: int) -> None:
        """Users stay away while the platform takes ``steps`` of its own (the settle
        phase's, 1 to ``settle_steps``, fewer if it rests first), and then the example
        goes on. Shrinking lowers ``steps`` toward one: a ``runtime`` or a ``tick``.

        Why: a state the platform reaches only after several of its own steps (a
        canary's pause: its instance starts, then two ticks) was rarely reached with
        steps left to act on it, as each step is a verb drawn among eight, most of
        which (a deploy, a cancel, a scale) move elsewhere; a controller that refused
        every ``continue`` passed a contract run. Waiting until the platform rests,
        always, closed the windows other bugs need (a cancel not yet taken up): fewer
        seeds found the seed bug. Its steps are the platform's own actions, recorded
        and judged one by one like any other, so a trace holds no ``wait``."""
        for action in self.session.platform_steps(steps):  # (the settle phase's, and as it ends)
            self.do(action)

    return wait


def _probe(verbs: tuple[str, ...]):
    n = len(verbs)

    def probe(self, choice: int) -> None:
        """A verb, then one of its probe actions, both from ``choice``.

        How often: a probe is one move among the verbs', so about as likely as one
        verb's actions; and it never comes twice in a row (``moves``), so probes stay
        a minority of the steps. One probe shows a divergence by itself (the
        implementation accepts, refuses or changes what the reference does not), so
        none needs another before it.

        Shrinking: the verb is ``choice`` modulo the whole vocabulary (when it has no
        probes here, the next one in the vocabulary that has), not an index into the
        verbs probed here, so it stays the same when the shrinker deletes earlier
        steps; verb and action come from one number, so a probe is as few choices as
        a verb's step, few enough for the shrinker to delete."""
        by_kind = self.probed()
        verb, pick = choice % n, choice // n
        options = by_kind[next(k for k in verbs[verb:] + verbs[:verb] if k in by_kind)]
        self.do(options[pick % len(options)])
        self._probed_last = True

    return probe
