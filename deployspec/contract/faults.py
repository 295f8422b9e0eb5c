"""An implementation's fault saved as a trace (``contract --out``), so that
``replay FILE --exec/--python`` asks the same steps again: the fault comes back
(exit 3), or the implementation now answers (0), as a fixed bug's trace no longer
reproduces. A crash at step 40 of a generated run, a hang, or an answer that
differs from the first time, is then one command away, not a list of labels to
type into the implementation's own tests.
"""

from __future__ import annotations

import re
import time
from collections.abc import Callable

from deployspec import interruption, traces
from deployspec.contract.guard import NOT_DETERMINISTIC, ImplementationFault, config_json
from deployspec.contract.subprocess_adapter import STDERR_TAIL
from deployspec.minimize import CannotReplay, shortest
from deployspec.render_text import action_label
from deployspec.spec.core import counted

#: why a shortening stopped when the run was interrupted meanwhile
INTERRUPTED = "stopped early: interrupted"


def savable(fault: ImplementationFault) -> bool:
    """Whether ``fault`` came at a step of a check, with the run that led to it known: not
    at start, at a reset, or in a repeated example as a whole (no steps to save)."""
    return fault.led_to is not None and fault.checking is not None


def trace_of(fault: ImplementationFault, *, model: str, variant: str, seed: int | None,
             implementation: dict) -> dict:
    """The trace of a :func:`savable` ``fault``: the run that led to it and the action it failed at."""
    return traces.of_fault(
        model=model, variant=variant, config=config_json(fault.led_to["config"]), property=fault.checking,
        seed=seed, led_to=fault.led_to, where=fault.where, cause=fault.cause, message=fault.line(),
        extra={"implementation": implementation})


def shortened(fault: ImplementationFault, again: Callable[[list[dict]], ImplementationFault | None],
              seconds: float, in_process: bool = False) -> tuple[ImplementationFault, bool | str]:
    """The fault of the shortest run found that still ends in the same fault (:func:`same`),
    the steps before the failing action removed one at a time, then pairs
    (``minimize.shortest``; a hang's halves first, as each try that hangs waits for the
    timeout), each run asked of the implementation from a reset by ``again`` (its fault,
    or None); and True, or why the shortening stopped early or was not tried (a trace's
    ``extra.minimized_by_replay``). The deadline is asked before each run, so the last
    one may end past it. A hang ``in_process`` (a ``--python`` object's) is not asked
    again: the call the alarm interrupted may have left the process's state broken."""
    if fault.hung and in_process:
        return fault, "not tried: a hung call in deployspec's own process is not asked again"
    if fault.cause.startswith(NOT_DETERMINISTIC):
        return fault, "not tried: one run of steps cannot show an answer that differs from the first time"
    failing, steps = fault.led_to["action"], [s["action"] for s in fault.led_to["steps"]]

    def ends_in_it(before: list[dict]) -> ImplementationFault | None:
        try:  # (a stop: the shortest run so far is saved, then the stop goes on: keep_fault)
            interruption.raise_if_pending()
            found = again(before + [failing])
        except KeyboardInterrupt:
            raise CannotReplay(INTERRUPTED.removeprefix("stopped early: ")) from None
        return found if found is not None and same(found, fault, len(before)) else None

    deadline = time.monotonic() + seconds
    try:
        first = ends_in_it(steps)
    except CannotReplay as stop:
        return fault, f"stopped early: {stop}"
    if first is None:
        return fault, "not shortened: the same steps, asked again, did not end in the same fault"
    return shortest(steps, ends_in_it, first, deadline, halving=fault.hung)


def shortening_seconds(fault: ImplementationFault, timeout: float) -> float:
    """How long shortening ``fault`` may take: ``MINIMIZE_SECONDS``; for a hang, time for
    :data:`HANG_TRIES` tries that hang again (each waits for the timeout), at most
    :data:`MOST_FOR_A_HANG` (a hang of 41 steps was saved as found, where 2 did it)."""
    from deployspec.contract.harness import MINIMIZE_SECONDS

    return min(MOST_FOR_A_HANG, max(MINIMIZE_SECONDS, HANG_TRIES * timeout)) if fault.hung else MINIMIZE_SECONDS


#: tries that hang again a hang's shortening has time for (halving 41 steps to the 2 that
#: hang took 7), and the most seconds it may take
HANG_TRIES, MOST_FOR_A_HANG = 8, 60.0


def same(found: ImplementationFault, fault: ImplementationFault, at: int) -> bool:
    """Whether ``found`` is ``fault`` again at step ``at``: at the same kind of action, for
    the same cause (but the last line a program wrote to stderr, which may hold a time or
    a pid), with the run that led to it known. Another way to the same error (a scale
    where a tick failed) is another fault."""
    return found.led_to is not None and _same(found.led_to["action"], found.cause, len(found.led_to["steps"]),
                                              fault.led_to["action"], fault.cause, at)


def not_recorded(trace: dict, found: ImplementationFault) -> str | None:
    """What a fault trace's replay says of a fault that is not the one recorded (another
    cause, step or action: the implementation changed, or the file was edited), or None."""
    recorded = trace["fault"]
    at = len(trace["steps"])
    if found.led_to is not None and _same(found.led_to["action"], found.cause, len(found.led_to["steps"]),
                                          recorded["action"], recorded["cause"], at):
        return None
    return f"not the recorded fault, at step {at} ({action_label(recorded['action'])}): {recorded['cause']}"


def _same(action: dict, cause: str, at: int, action_there: dict, cause_there: str, there: int) -> bool:
    return at == there and action["type"] == action_there["type"] and _cause(cause) == _cause(cause_there)


#: the timeout a hang was found with, in deployspec's own words for a hang (``no reply to
#: action scale within 3 s``, ``perform() did not return within 2 s``): a replay with
#: another --timeout meets the same hang; an implementation's own words stay as they are
_WAITED = re.compile(r"^(no reply to [^;(]{1,80}? within |[\w.]{1,80}\(\) did not return within )"
                     r"\d+(?:\.\d+)?(?:e[-+]?\d+)? s\b")


def _cause(cause: str) -> str:
    """A fault's cause as two of them are compared: without what the program last wrote
    to stderr (a time, a pid) or the seconds waited (``no reply … within 3 s`` recorded,
    ``within 2 s`` replayed with ``--timeout 2``, was called another fault)."""
    return _WAITED.sub(r"\1… s", cause.split(STDERR_TAIL)[0])


def keep_fault(fault: ImplementationFault, conn, out_dir: str | None, seed: int) -> None:
    """Save the run that led to ``fault`` on ``conn`` (``harness.Connection``) under
    ``out_dir`` as a trace, shortened (:func:`shortened`), once."""
    from deployspec.contract.harness import identity

    if not (out_dir and savable(fault)):
        return
    found, done = shortened(fault, lambda actions: _fault_again(conn, fault, actions),
                            shortening_seconds(fault, conn.timeout), in_process=conn.target.kind == "python")
    trace = trace_of(found, model=conn.model.name, variant=conn.target.name, seed=seed,
                     implementation=identity(conn))
    trace["extra"]["minimized_by_replay"] = done
    keep(fault, trace, out_dir)
    if done == INTERRUPTED:  # Ctrl-C (or SIGTERM) while shortening: saved, and the run stops as asked
        raise KeyboardInterrupt


def _fault_again(conn, fault: ImplementationFault, actions: list[dict]) -> ImplementationFault | None:
    """The fault the implementation gives when asked ``actions`` from a reset (started
    again if it failed before), with ``fault``'s check; None where it gives none, or where
    an action is one no search would send there (a process that no longer exists)."""
    from deployspec.contract import sweep
    from deployspec.contract.harness import plan_checks
    from deployspec.session import Session

    if conn.box.first is not None:
        conn.revive()
    model, config = conn.model, fault.led_to["config"]
    adapter = conn.adapter(fault.checking)
    try:  # (with the check: an observation it cannot read is the fault)
        session = Session(model, adapter, tuple(plan_checks(model, conn.reference, [fault.checking], config)),
                          config)
        for data in actions:
            action = model.action(data)
            if not sweep.searchable(model, session.obs, action, config):
                return None
            session.perform(action)
    except ImplementationFault as again:
        return again
    finally:
        adapter.close()
    return None


def keep(fault: ImplementationFault, trace: dict, out_dir: str) -> None:
    """Save ``trace`` (:func:`trace_of`) under ``out_dir``, once: ``fault.counterexample`` is
    then its path, or ``fault.unsaved`` why it could not be written."""
    if fault.counterexample is None:
        kept = traces.keep(trace, out_dir)
        fault.counterexample, fault.unsaved = kept["counterexample"], kept["unsaved"]
        fault.saved_steps = len(trace["steps"])


def saved_text(fault: ImplementationFault, target, timeout: float, option: str) -> str | None:
    """``saved: FILE (…); replay: COMMAND`` for the trace of the steps that led to ``fault``,
    ``not saved: …`` where it could not be written, the hint to save it with ``option``
    where nothing was asked to; None where there are no steps to save."""
    from deployspec.contract.cli import replay_command

    if fault.counterexample:
        led = f"the {counted(fault.saved_steps, 'step')} that led to the fault" if fault.saved_steps else \
            "the fault at the first step"
        return (f"saved: {fault.counterexample} ({led}{_shortened_from(fault)}); replay: "
                f"{replay_command(fault.counterexample, target, timeout)}")
    if fault.unsaved:
        return f"not saved: {fault.unsaved}"
    return f"(use {option} to save the steps that led to the fault, to replay them)" if savable(fault) else None


def _shortened_from(fault: ImplementationFault) -> str:
    """``, shortened from 37`` where the saved run is shorter than the one the search failed in."""
    found = len(fault.led_to["steps"])
    return f", shortened from {found}" if fault.saved_steps < found else ""


def repeats(trace: dict) -> int:
    """How many times a replay asks a fault trace's steps: twice where the fault was an
    answer differing from the first time (one run cannot show it), else once."""
    fault = trace.get("fault")
    return 2 if fault and fault["cause"].startswith(NOT_DETERMINISTIC) else 1
