"""Turning an implementation's failure into one clear report that ends the run.

An :class:`~deployspec.adapter.ImplementationError` raised inside a Hypothesis
rule would be taken for a failing example and shrunk (restarting a crashed or
hung program dozens of times). :class:`ImplementationFault` derives from
``BaseException`` so it passes through Hypothesis untouched, like
``KeyboardInterrupt``, carrying the step and the cause.
"""

from __future__ import annotations

import contextlib
import json
from typing import Any

import attrs

from deployspec.adapter import ImplementationError
from deployspec.render_text import action_label
from deployspec.text import printable_line

#: how a non-deterministic implementation's fault begins, wherever it is noticed
NOT_DETERMINISTIC = ("non-deterministic behaviour: the same steps, run again from a reset, gave a different "
                     "result")


class ImplementationFault(BaseException):
    """The implementation failed at a known step; the run stops here."""

    def __init__(self, cause: str, *, where: str, history: tuple[str, ...] = (), checking: str | None = None):
        super().__init__(cause)
        self.cause = cause
        self.where = where
        self.history = history
        self.checking = checking
        #: the violation found before the fault, if any (its trace is kept)
        self.found = None
        #: how long the check it ended had run (a hang shows as its timeout and more)
        self.seconds = 0.0
        #: the committed trace being replayed then (``known.py``), if one was: the steps are its
        self.replaying: str | None = None
        #: whether the implementation gave no answer in time (asking again costs the timeout)
        self.hung = False
        #: the run that led to it, when it came at a step: the configuration, the first observation,
        #: the steps before and the action it failed at, as the guard asked them since its reset
        #: (``GuardedAdapter._fault``; a property that cannot read an answer: ``with_steps``)
        self.led_to: dict | None = None
        #: where ``contract --out`` saved that run as a trace (``faults.keep``), or why it could not
        self.counterexample: str | None = None
        self.unsaved: str | None = None
        #: how many steps that trace holds (fewer than ``led_to``'s where shortened by replay)
        self.saved_steps = 0

    def line(self) -> str:
        """The one-line report: where, while checking what (replaying which committed trace), and why."""
        during = f" while checking {self.checking}" if self.checking else ""
        during += f", replaying {self.replaying}" if self.replaying else ""
        return f"implementation fault at {self.where}{during}: {self.cause}"

    def to_json(self) -> dict:
        """As ``--json`` gives it (contract's and replay's ``fault``)."""
        return {"where": self.where, "checking": self.checking, "cause": self.cause, "steps": list(self.history)} \
            | ({"replaying": self.replaying} if self.replaying else {}) \
            | {k: v for k, v in (("counterexample", self.counterexample), ("unsaved", self.unsaved)) if v}

    def with_history(self, most: int = 20) -> str:
        """:meth:`line` and the steps since reset that led to the fault (the last ``most``),
        still one line: what the program was asked, in order, to reproduce it by hand."""
        if not self.history:
            return self.line()
        steps = self.history[-most:]
        cut = f"the last {most} of {len(self.history)}: " if len(self.history) > most else ""
        return f"{self.line()}; steps since reset ({cut}{', '.join(steps)})"

    def __str__(self) -> str:
        return self.line()


class FaultBox:
    """Remembers the first fault of a run (later ones are its echoes), and what the
    implementation answered to each run of steps from a reset: the same steps must
    give the same answers (docs/protocol.md), and a repeat that does not names them."""

    #: at most this many runs of steps are remembered: about 0.6 KiB a run in a contract
    #: run of capi or slots (0.3 KiB for the run and its answer, and each distinct
    #: observation, 0.7-1.7 KiB, once: one for every three or four runs), so some 30 MiB
    #: at most, and as much again for recall's tree (``recall.Answers`` keeps each distinct
    #: observation once more, in the implementation's order of keys: estimated, not
    #: measured); past it, new ones are not (Hypothesis's own check of repeated examples remains)
    REMEMBERED = 50_000

    def __init__(self) -> None:
        self.first: ImplementationFault | None = None
        #: the observation after the first reset with each configuration (its JSON): every
        #: reset with it must come back to it (a replay of several files resets with each's)
        self.initial: dict[str, dict] = {}
        #: the runs of steps seen, as a tree: (run, the action's JSON) -> the longer run;
        #: a run from a reset starts at (None, the configuration's JSON)
        self._runs: dict[tuple[int | None, str], int] = {}
        #: a run -> what its last step gave: (refused, the observation's JSON)
        self.answers: dict[int, tuple[bool, str]] = {}
        #: each observation's (and action's) JSON once, whichever runs it is in (most repeat)
        self._texts: dict[str, str] = {}

    def record(self, fault: ImplementationFault) -> ImplementationFault:
        if self.first is None:
            self.first = fault
        return self.first

    def run(self, before: int | None, step: str) -> int | None:
        """The run of steps ``before`` and then ``step``; None once too many are known."""
        key = (before, step)
        known = self._runs.get(key)
        if known is None and len(self._runs) < self.REMEMBERED:
            known = self._runs[(before, self._texts.setdefault(step, step))] = len(self._runs)
        return known

    def answer(self, run: int, refused: bool, obs: dict) -> tuple[tuple[bool, str], tuple[bool, str]]:
        """What ``run`` answered now, and what it answered the first time (the same if this is it)."""
        text = json.dumps(obs, sort_keys=True)
        now = (refused, self._texts.setdefault(text, text))
        return now, self.answers.setdefault(run, now)


class GuardedAdapter:
    """Wraps an adapter: counts steps since reset and converts failures to faults.

    It also holds the implementation to the protocol's word on a refusal: the
    state is unchanged (docs/protocol.md). A refusal whose observation differs from
    the one before it is a fault, not a step for the properties to judge: none of
    them asks what a refused action did (``step.rejected`` means "nothing"), and no
    reference variant changes its state on one (``Rejected`` carries a reason, no
    state), so the implementation's accounts of the step contradict each other.
    """

    def __init__(self, inner, box: FaultBox | None = None, checking: str | None = None,
                 took_effect: dict[str, int] | None = None, asked: dict[str, int] | None = None):
        self.inner = inner
        self.box = box or FaultBox()
        self.checking = checking
        #: accepted actions that changed the observation, by kind (shared over a run: what
        #: a check that holds judged; ``harness.check_one``'s ``vacuous``)
        self.took_effect = {} if took_effect is None else took_effect
        #: actions asked of the implementation, by kind (shared over a run: a kind never asked
        #: was never offered; a step recalled from an earlier example was asked there)
        self.asked = {} if asked is None else asked
        #: the kind of the action just accepted and the observation before it
        self._accepted: tuple[str, dict] | None = None
        self.history: list[str] = []
        self.phase = "reset"
        self._config = ""  # the configuration of the last reset (``config_key``)
        #: the last observation, while no action was performed since (None: not known)
        self._seen: dict | None = None
        #: the observation before the action just refused, and the refusal's reason
        self._refused: tuple[dict, str] | None = None
        #: the steps since reset (``FaultBox.run``; None: not remembered), and whether the
        #: last was refused (None: no step since the last observation)
        self._run: int | None = None
        self._last_refused: bool | None = None
        self._last_reason: str | None = None
        #: what was asked since the reset, as a trace keeps it (the configuration, the first
        #: observation, each step's action, refusal and observation), for a fault's ``led_to``;
        #: and the action asked last, until its observation is in, with its refusal's reason
        self._asked_since_reset: dict = {"config": None, "initial": None, "steps": []}
        self._pending: tuple[dict, str | None] | None = None

    @property
    def remembered(self) -> bool:
        """Whether the box remembers the run of steps since the reset (and so checks its repeats)."""
        return self._run is not None

    @property
    def _checking(self) -> str | None:
        """The check a fault now ends: a program that never answered a reset failed at
        start, not in the check it began."""
        return self.checking if self.box.initial else None

    def _fault(self, exc: ImplementationError) -> ImplementationFault:
        where = self.phase
        if where == "reset" and exc.during == "observe":  # an adapter asks for it with the reset
            where = "the initial observation"
        fault = ImplementationFault(str(exc), where=where, history=tuple(self.history), checking=self._checking)
        fault.hung = exc.hung
        first = self.box.record(fault)
        if first is fault:
            fault.led_to = self._led_to()
        return first

    def _led_to(self) -> dict | None:
        """The run as the implementation was asked it, to the action asked last (a search's
        step recalled from an earlier answer is not: the run that brought the implementation
        there is, from its reset); None before a reset's answer or between actions."""
        since = self._asked_since_reset
        if self._pending is None or since["initial"] is None:
            return None
        return {**since, "steps": list(since["steps"]), "action": self._pending[0]}

    def _calling(self, method, *args: Any) -> Any:
        """``method(*args)`` of the implementation, its failure a fault at this step; while
        it runs, this guard is the one calling (:func:`located`: the watchdog's last word)."""
        global _guard_calling
        _guard_calling = self
        try:
            return method(*args)
        except ImplementationError as exc:
            raise self._fault(exc) from None
        finally:
            _guard_calling = None

    def reset(self, config: Any) -> None:
        self.history = []
        self.phase = "reset"
        self._config = config_key(config)
        self._seen = self._refused = self._last_refused = self._pending = None
        self._asked_since_reset = {"config": config, "initial": None, "steps": []}
        self._run = self.box.run(None, self._config)
        self._calling(self.inner.reset, config)
        self.phase = "the initial observation"

    def perform(self, action) -> str | None:
        label = action_label(action.to_json())
        self.phase = f"step {len(self.history)} ({label})"
        self.history.append(label)
        self.asked[action.kind] = self.asked.get(action.kind, 0) + 1
        before, self._seen, self._refused = self._seen, None, None
        data = action.to_json()
        if self._run is not None:
            self._run = self.box.run(self._run, json.dumps(data, sort_keys=True))
        self._pending = (data, None)
        reason = self._calling(self.inner.perform, action)
        self._pending = (data, reason)
        self._last_refused, self._last_reason = reason is not None, reason
        self._accepted = (action.kind, before) if reason is None and before is not None else None
        if reason is not None:  # as the trace table marks it: runs of refused deploy()s read apart
            self.history[-1] = _label(action.to_json(), True)
            if before is not None:
                self._refused = before, reason
        return reason

    def observe(self) -> dict:
        obs = self._calling(self.inner.observe)
        if self.phase == "the initial observation":
            self._same_start(obs)
        refused, self._refused = self._refused, None
        if refused is not None and obs != refused[0]:
            self._changed_by_refusal(*refused, obs)
        if self._last_refused is not None and self._run is not None:
            self._same_as_before(obs)
        accepted, self._accepted = self._accepted, None
        if accepted is not None and obs != accepted[1]:
            self.took_effect[accepted[0]] = self.took_effect.get(accepted[0], 0) + 1
        self._last_refused = None
        self._seen = obs
        if self.phase == "the initial observation":
            self._asked_since_reset["initial"] = obs
        elif self._pending is not None:  # the step's answer, judged sound: part of the run a fault may end
            action, reason = self._pending
            self._asked_since_reset["steps"].append({"action": action, "rejected": reason, "observation": obs})
            self._pending = None
        return obs

    def _same_as_before(self, obs: dict) -> None:
        """The same steps from a reset with the same configuration must give the same
        answers: said at the step where they first differ, with the steps that lead there
        (Hypothesis, which runs examples again, would only see that its draws changed)."""
        answer, before = self.box.answer(self._run, self._last_refused, obs)
        if answer == before:
            return
        if answer[0] != before[0]:
            said = (f"was refused ({printable_line(str(self._last_reason), 80)}), where it was accepted before"
                    if answer[0] else "was accepted, where it was refused before")
        else:
            said = f"observed {_first_differences(json.loads(before[1]), obs, 'before', 'this time')}"
        raise self._fault(ImplementationError(
            f"{NOT_DETERMINISTIC}: this step {said} (is reset complete? is anything random or "
            "time-dependent?)"))

    def _changed_by_refusal(self, before: dict, reason: str, after: dict) -> None:
        """A refusal must leave the state unchanged: say what changed, the first few paths."""
        raise self._fault(ImplementationError(
            f"rejected ({printable_line(reason, 80)}), yet the observation changed (a refusal must leave "
            f"the state unchanged, and nothing changes but by actions): "
            f"{_first_differences(before, after, 'before', 'after')}"))

    def _same_start(self, obs: dict) -> None:
        """A reset that leaves something behind makes every later example meaningless."""
        first = self.box.initial.setdefault(self._config, obs)
        if obs != first:
            from deployspec.contract.conformance import differences

            diff = differences(first, obs, "the first reset", implementation="this one")
            raise self._fault(ImplementationError(
                f"reset did not bring the implementation back to its initial state: {diff[0]}"))

    def close(self) -> None:
        self.inner.close()


#: the guard whose call into the implementation is running, if any (:meth:`GuardedAdapter._calling`)
_guard_calling: GuardedAdapter | None = None


#: what the running calls are part of, for :func:`located`: ``at`` where an unguarded call
#: stands ("start": the import and the factory), ``file`` the trace being replayed
_context: dict[str, str] = {}


@contextlib.contextmanager
def during(**context: str):
    """Calls into the implementation made within are said with ``context`` by :func:`located`:
    ``at="start"`` (outside any guard), ``file=PATH`` (a replay says each fault with its file)."""
    _context.update(context)
    try:
        yield
    finally:
        for key in context:
            _context.pop(key, None)


#: the fault :func:`located` said last, with the run that led to it: the watchdog's, whose
#: call will not return, for ``contract`` to save and report before the process ends
last_located: ImplementationFault | None = None


def located(cause: str) -> str:
    """The fault of the call running now, said as it would be if it returned (the watchdog's
    line, when it will not): ``[FILE: ]implementation fault at STEP while checking P: CAUSE[; steps
    since reset (…)]``,
    ``at start`` for the import or the factory, else ``implementation fault: CAUSE``."""
    global last_located
    guard = _guard_calling
    if guard is not None:
        fault = ImplementationFault(cause, where=guard.phase, checking=guard._checking, history=tuple(guard.history))
        fault.led_to, fault.hung, last_located = guard._led_to(), True, fault
        # (contract's fault lines carry the steps since reset; a replay's has them in its file)
        line = fault.line() if "file" in _context else fault.with_history()
    elif "at" in _context:
        line = ImplementationFault(cause, where=_context["at"]).line()
    else:
        line = f"implementation fault: {cause}"
    return f"{_context['file']}: {line}" if "file" in _context else line


def _first_differences(was: dict, now: dict, was_named: str, now_named: str, most: int = 3) -> str:
    """Where two observations differ, the first ``most`` paths and how many more, one line."""
    from deployspec.contract.conformance import differences

    diff = differences(was, now, was_named, implementation=now_named)
    more = f" (and {len(diff) - most} more)" if len(diff) > most else ""
    return f"{'; '.join(diff[:most])}{more}"


def config_key(config: Any) -> str:
    """A configuration as a key (its JSON, as sent in the reset)."""
    return json.dumps(config_json(config), sort_keys=True, default=str)


def config_json(config: Any) -> Any:
    """A configuration as the reset sends it (a model's config object, or its JSON already)."""
    return config.to_json() if hasattr(config, "to_json") else config


def guard_property(prop):
    """A property whose crash on an observation is the implementation's fault.

    The schema cannot say everything (a deployment naming a droplet that does
    not exist); a property that cannot read an observation reports it as a
    fault instead of a traceback.
    """

    def advance(memory, step):
        try:
            return prop.advance(memory, step)
        except Exception as exc:  # noqa: BLE001 - any crash here is an inconsistent observation
            raise _unreadable(prop, f"step {step.index} ({action_label(step.action)})", exc) from None

    def at_settled(obs):
        try:
            return prop.at_settled(obs)
        except Exception as exc:  # noqa: BLE001
            raise _unreadable(prop, "the settled observation", exc) from None

    return attrs.evolve(
        prop,
        advance=advance if prop.advance is not None else None,
        at_settled=at_settled if prop.at_settled is not None else None,
    )


def with_steps(exc: BaseException, steps: list[dict], config: Any, initial: dict) -> None:
    """A fault raised where the steps since reset are not known (a property that cannot read
    an observation) gets them from the session's record, as the adapter's faults have them:
    without them, "at step 40" could not be reproduced by hand. It also gets the run that
    led to it, to save (``led_to``): the last step's answer is what could not be read."""
    if not isinstance(exc, ImplementationFault):
        return
    if not exc.history:
        exc.history = tuple(_label(s["action"], s["rejected"] is not None) for s in steps)
    if exc.led_to is None and steps:
        exc.led_to = {"config": config, "initial": initial, "steps": list(steps[:-1]), "action": steps[-1]["action"]}


def _label(action: dict, refused: bool) -> str:
    """A step as the fault's history says it (refused ones marked, as the trace table marks them)."""
    return action_label(action) + (" REJECTED" if refused else "")


def _unreadable(prop, where: str, exc: Exception) -> ImplementationFault:
    return ImplementationFault(
        f"the observation is inconsistent: {prop.name} cannot read it "
        f"({type(exc).__name__}: {exc})",
        where=where,
        checking=prop.name,
    )
