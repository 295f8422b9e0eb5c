"""An implementation's fault saved as a trace (``contract --out``), so that
``replay FILE --exec/--python`` asks the same steps again: the fault comes back
(exit 3), or the implementation now answers (0), as a fixed bug's trace no longer
reproduces. A crash at step 40 of a generated run, a hang, or an answer that
differs from the first time, is then one command away, not a list of labels to
type into the implementation's own tests.
"""

from __future__ import annotations

import time
from collections.abc import Callable

from deployspec import traces
from deployspec.contract.guard import NOT_DETERMINISTIC, ImplementationFault, config_json
from deployspec.minimize import CannotReplay, shortest
from deployspec.spec.core import counted


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
              seconds: float) -> tuple[ImplementationFault, bool | str]:
    """The fault of the shortest run found that still ends in ``fault``'s cause, steps
    removed one at a time, then pairs (``minimize.shortest``), each run asked of the
    implementation from a reset by ``again`` (its fault, or None); and True, or why the
    shortening stopped early or was not tried (a trace's ``extra.minimized_by_replay``)."""
    if fault.hung:
        return fault, "not tried: each try of a hang waits for the timeout"
    if fault.cause.startswith(NOT_DETERMINISTIC):
        return fault, "not tried: one run of steps cannot show an answer that differs from the first time"
    actions = [s["action"] for s in fault.led_to["steps"]] + [fault.led_to["action"]]
    deadline = time.monotonic() + seconds
    try:
        first = again(actions)
    except CannotReplay as stop:
        return fault, f"stopped early: {stop}"
    if first is None:
        return fault, "not shortened: the same steps, asked again, did not end in the same fault"
    return shortest(actions, again, first, deadline)


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
        return (f"saved: {fault.counterexample} (the {counted(fault.saved_steps, 'step')} that led to the fault"
                f"{_shortened_from(fault)}); replay: {replay_command(fault.counterexample, target, timeout)}")
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
