"""What the contract tests of a pytest run left unexercised, said once at its end, as
``deployspec contract``'s summary says it: the action kinds that never took effect (or
were never asked), with what would give them something to do.

Each implementation opened (one per pytest-xdist worker) counts what took effect and what
was asked; a worker hands its counts to the controller (``workeroutput``), which adds them
up. A run in which the implementation failed says nothing: its tests stopped early, so
what they never reached is no news (the CLI's summary is silent there too).
"""

from __future__ import annotations

from typing import Any

import pytest

#: the run's counts so far (the controller's, or a run without xdist)
_TALLY = pytest.StashKey[dict]()


def counts(conn, conformance: str | None, faults: int) -> dict[str, Any]:
    """One opened implementation's counts: by action kind, what took effect and what was
    asked; the conformance check's verdict, if it ran (which designs' word the note can
    cite); how many tests ended in its fault."""
    return {"took_effect": dict(conn.took_effect), "asked": dict(conn.asked), "conformance": conformance,
            "faults": faults}


def tally(config, told: dict[str, Any]) -> None:
    """Add one implementation's :func:`counts` to the run's."""
    into = config.stash.setdefault(_TALLY, {"took_effect": {}, "asked": {}, "conformance": None, "faults": 0})
    for key in ("took_effect", "asked"):
        for kind, n in told[key].items():
            into[key][kind] = into[key].get(kind, 0) + n
    into["faults"] += told["faults"]
    # a violation on one worker is the run's verdict, whatever the others saw
    if told["conformance"] is not None and into["conformance"] != "violated":
        into["conformance"] = told["conformance"]


def lines(config, model, reference: str | None, target, bounds: dict | None) -> list[str]:
    """The note for the end of the run (``summary.idle_note``, in the CLI's words), or
    none: no contract test opened an implementation, one failed, or every kind took effect."""
    told = config.stash.get(_TALLY, None)
    if told is None or told["faults"] or not told["took_effect"]:
        return []
    from deployspec.contract import harness
    from deployspec.contract.conformance import PREFIX
    from deployspec.contract.summary import idle_note
    from deployspec.engines.result import Result

    results = [] if told["conformance"] is None or reference is None else [
        Result(model.name, target.name, PREFIX + reference, "contract", told["conformance"])]
    run = harness.ContractRun(model.name, target, harness.config_for(model, reference, bounds), results,
                              reference=reference, bounds=tuple(bounds or ()),
                              took_effect={k: told["took_effect"].get(k, 0) for k in model.vocabulary},
                              asked={k: told["asked"].get(k, 0) for k in model.vocabulary})
    return idle_note(run)
