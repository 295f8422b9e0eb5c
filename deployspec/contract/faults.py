"""An implementation's fault saved as a trace (``contract --out``), so that
``replay FILE --exec/--python`` asks the same steps again: the fault comes back
(exit 3), or the implementation now answers (0), as a fixed bug's trace no longer
reproduces. A crash at step 40 of a generated run, a hang, or an answer that
differs from the first time, is then one command away, not a list of labels to
type into the implementation's own tests.
"""

from __future__ import annotations

from deployspec import traces
from deployspec.contract.guard import NOT_DETERMINISTIC, ImplementationFault


def trace_of(fault: ImplementationFault, *, model: str, variant: str, seed: int | None,
             implementation: dict) -> dict | None:
    """The trace of ``fault``: the run that led to it and the action it failed at; None
    for one that came at no step (the start, a reset, a repeated example as a whole)."""
    if fault.led_to is None or fault.checking is None:
        return None
    config = fault.led_to["config"]
    return traces.of_fault(
        model=model, variant=variant, config=config.to_json() if hasattr(config, "to_json") else config,
        property=fault.checking, seed=seed, led_to=fault.led_to, where=fault.where, cause=fault.cause,
        message=fault.line(), extra={"implementation": implementation})


def keep(fault: ImplementationFault, trace: dict | None, out_dir: str | None) -> None:
    """Save ``trace`` (:func:`trace_of`) under ``out_dir``: ``fault.counterexample`` is then
    its path, or ``fault.unsaved`` why it could not be written."""
    if trace is None or not out_dir or fault.counterexample is not None:
        return
    kept = traces.keep(trace, out_dir)
    fault.counterexample, fault.unsaved = kept["counterexample"], kept["unsaved"]


def repeats(trace: dict) -> int:
    """How many times a replay asks a fault trace's steps: twice where the fault was an
    answer differing from the first time (one run cannot show it), else once."""
    fault = trace.get("fault")
    return 2 if fault and fault["cause"].startswith(NOT_DETERMINISTIC) else 1
