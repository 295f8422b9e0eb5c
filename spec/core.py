"""Properties as monitors over a trace of observations.

Three kinds, after how they are judged:

* ``state``: must hold in every observation (an invariant);
* ``trace``: judged step by step with a small immutable memory of the past
  (e.g. "was the app serving before?");
* ``settled``: judged once the platform has been left alone to settle after the
  last user action (bounded liveness, e.g. "deployments finish").

A monitor's memory is immutable and hashable, so the explorer can store it beside the
state (it hashes each pair it reaches, also the one a violation ends on).

A property may say *how* it broke: a :class:`Breach` is a complaint with a
``cause``, a short stable label of the mechanism. The engines can then look
for one counterexample per cause (``deployspec check --variant``), each shrunk
on its own, so a property broken in two ways shows both stories instead of only
the shorter one.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # typing.Self is 3.11's; annotations are not evaluated
    from typing import Self

import attrs

Observation = dict[str, Any]


@attrs.frozen
class Step:
    """One step of a trace as a property sees it."""

    index: int
    action: dict[str, Any]
    actor: str  # "user" or "platform"
    rejected: str | None  # the refusal's reason, or None when the action was accepted
    before: Observation
    after: Observation


@attrs.frozen
class Property:
    name: str
    model: str
    kind: str
    doc: str
    initial: Any = None
    advance: Callable[[Any, Step], tuple[Any, str | None]] | None = None
    at_settled: Callable[[Observation], str | None] | None = None
    #: the action kinds without which this property judges nothing (``Model.essential``'s
    #: form); None: the model's (a slots property about pushes needs no swap)
    essential: tuple[str | tuple[str, ...], ...] | None = None
    #: (cause, what it means) for some of its causes (``Breach.cause``), in the words of the
    #: report they come from (a close look lists them: "crash_retry" alone did not say "cobalt
    #: #316 scenario 2"); pairs, so that a property stays hashable
    meanings: tuple[tuple[str, str], ...] = ()

    def meaning(self, cause: str | None) -> str | None:
        """What ``cause`` means, or None where the property does not say."""
        return dict(self.meanings).get(cause) if cause else None


def state_property(model: str, essential: tuple[str | tuple[str, ...], ...] | None = None
                   ) -> Callable[[Callable[[Observation], str | None]], Property]:
    """``fn(observation) -> message | None`` must hold after every step."""

    def wrap(fn):
        def advance(memory, step: Step):
            return memory, fn(step.after)

        return Property(fn.__name__, model, "state", inspect.getdoc(fn) or "", None, advance, essential=essential)

    return wrap


def trace_property(model: str, initial: Any, essential: tuple[str | tuple[str, ...], ...] | None = None,
                   meanings: dict[str, str] | None = None) -> Callable[[Callable], Property]:
    """``fn(memory, step) -> (memory, message | None)``, memory starting at ``initial``."""

    def wrap(fn):
        return Property(fn.__name__, model, "trace", inspect.getdoc(fn) or "", initial, fn, essential=essential,
                        meanings=tuple((meanings or {}).items()))

    return wrap


def settled_property(model: str) -> Callable[[Callable[[Observation], str | None]], Property]:
    """``fn(observation) -> message | None`` once the platform has settled."""

    def wrap(fn):
        return Property(fn.__name__, model, "settled", inspect.getdoc(fn) or "", None, None, fn)

    return wrap


class Breach(str):
    """A complaint (the message itself) that names its mechanism in ``cause``."""

    cause: str

    def __new__(cls, cause: str, message: str) -> Self:
        self = super().__new__(cls, message)
        self.cause = cause
        return self

    def __reduce__(self):  # pickle and copy (results cross process boundaries)
        return (Breach, (self.cause, str(self)))


def cause_of(message: str | None) -> str | None:
    """The mechanism a complaint names, or None for a plain message."""
    return getattr(message, "cause", None)


@attrs.frozen
class Violation:
    property: str
    step: int  # index into the trace's steps; the settled check gives the last step's (-1: no step)
    message: str
    #: the mechanism, when the property names one (see :class:`Breach`)
    cause: str | None = None


def _violation(prop: Property, step: int, message: str) -> Violation:
    return Violation(prop.name, step, str(message), cause_of(message))


class Monitor:
    """Feeds steps to a set of properties and reports the first violation.

    ``skip`` holds ``(property, cause)`` pairs already found: such a violation
    is not reported, and the run is muted from then on (nothing later in it is
    reported either), so a counterexample for another cause never passes
    through a known one first and replays to the violation it was saved for.
    """

    def __init__(self, properties: tuple[Property, ...], skip: frozenset[tuple[str, str]] = frozenset()):
        self.properties = properties
        self.memory = [p.initial for p in properties]
        self.skip = skip
        self.muted = False

    def advance(self, step: Step) -> Violation | None:
        if self.muted:
            return None
        for i, prop in enumerate(self.properties):
            if prop.advance is None:
                continue
            self.memory[i], message = prop.advance(self.memory[i], step)
            if message is not None:
                return self._report(_violation(prop, step.index, message))
        return None

    def settled(self, obs: Observation, step_index: int) -> Violation | None:
        if self.muted:
            return None
        for prop in self.properties:
            if prop.at_settled is not None:
                message = prop.at_settled(obs)
                if message is not None:
                    return self._report(_violation(prop, step_index, message))
        return None

    def _report(self, v: Violation) -> Violation | None:
        if (v.property, v.cause) in self.skip:
            self.muted = True
            return None
        return v


def action_label(action: dict[str, Any]) -> str:
    """An action as every table, picture and message shows it: its arguments but those at
    their defaults (capi's deploy: rolling, max_in_flight 1, web_instances 0), a
    deployment list (a tick's) as ``d0,d1``, a process as ``P1``."""
    kind = action["type"]
    args = []
    for key, value in action.items():
        if key == "type" or value in ([], (), None) or (key == "web_instances" and value == 0):
            continue
        if key == "strategy" and value == "rolling":
            continue
        if key == "max_in_flight" and value == 1:
            continue
        if key in ("failed", "reports_unavailable", "finish_later", "late"):
            value = ",".join(f"d{d}" for d in value)
        if key == "process":
            value = f"P{value}"
        args.append(f"{key}={value}")
    return f"{kind}({', '.join(args)})"


def counted(n: int, noun: str) -> str:
    """``1 web instance``, ``3 web instances``: a count in a message, its noun agreeing."""
    return f"{n} {noun}{'' if n == 1 else 's'}"


def step_label(step: Step) -> str:
    """A step as the trace tables name it (``step 3 (deploy())``, ``step 5 (tick(failed=d1))``)."""
    return f"step {step.index} ({action_label(step.action)})"
