"""Runs recorded once per connection and configuration, then judged by every check:
the sweep of every first step (before each search, ``sweep.py``) and the committed
counterexamples (after a search that found nothing, ``known.py``). A violation one
shows is shortened like any trace; what took effect in them counts as judged."""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import TYPE_CHECKING

import attrs

from deployspec import traces
from deployspec.contract import known, sweep
from deployspec.engines.result import Result

if TYPE_CHECKING:  # (harness imports this module)
    from deployspec.contract import harness


@attrs.frozen
class _Recorded:
    """Runs recorded once per connection and configuration, judged by every check."""

    #: ``stats["found_by"]`` of a violation one of them shows
    found_by: str
    #: the stats keys: runs judged, seconds spent driving the implementation
    judged: str
    seconds: str
    #: (model, adapter factory, config) -> the runs, recorded
    record: Callable[..., sweep.Sweep]


SWEEP = _Recorded("sweep", "swept", "sweep_seconds", sweep.record)
KNOWN = _Recorded("known", "known", "known_seconds",
                  lambda model, adapters, config: sweep.record_runs(model, adapters, config, known.runs(model)))


def unless_known(conn: harness.Connection, prop, config, seed: int, shrink, held: Result) -> Result:
    """``held`` (the search's verdict), unless a committed counterexample, run once per
    connection and configuration, breaks ``prop``: then that violation, with the search's
    figures. Raises :class:`ImplementationFault`."""
    found, replayed = first_found(conn, prop, config, seed, shrink, KNOWN)
    held.stats.update(replayed)
    if found is None:
        return held
    found.stats = held.stats | replayed | {"found_by": "known", "replayed": found.stats["replayed"],
                                         "seconds": round(held.stats.get("seconds", 0) + found.stats["seconds"], 3)}
    return found


def judged_effects(conn: harness.Connection, config, known: bool) -> frozenset[str]:
    """What took effect in the recordings a check that held judged (the sweep's, and the
    committed traces' unless ``known`` is false): recorded once, by the first check, so
    the implementation's counters saw them then only."""
    kinds = (SWEEP, KNOWN) if known else (SWEEP,)
    recorded = [conn.sweeps.get((kind.found_by, sweep.key(config))) for kind in kinds]
    return frozenset().union(*(r.took_effect() for r in recorded if r is not None))


def first_found(conn: harness.Connection, prop, config, seed: int, shrink, kind: _Recorded) -> tuple[Result | None, dict]:
    """The first recorded run that breaks ``prop`` (``SWEEP``: every first step, before the
    search; ``KNOWN``: the committed counterexamples, after a search that found nothing),
    shortened like any trace, or None; and what it did
    (runs judged, seconds spent driving the implementation for this check: 0 after the
    first check, which records them). Raises :class:`ImplementationFault`."""
    model, target = conn.model, conn.target
    started = time.perf_counter()
    key = (kind.found_by, sweep.key(config))
    recorded = conn.sweeps.get(key)
    paid = 0.0
    if recorded is None:
        recorded = kind.record(model, lambda: conn.adapter(prop.name), config)
        conn.sweeps[key] = recorded
        paid = recorded.seconds
    session, judged = sweep.judge(model, recorded, prop, config)
    stats = {kind.judged: judged, kind.seconds: round(paid, 3)}
    if session is None:
        return None, stats
    source = recorded.recordings[judged - 1].source
    trace = shrink(traces.build(model=model.name, variant=target.name, config=config.to_json(),
                                property=prop.name, engine="contract", seed=seed, session=session,
                                extra={"replayed": source} if source else None))
    elapsed = time.perf_counter() - started
    return Result(model.name, target.name, prop.name, "contract", "violated",
                  trace_length=len(trace["steps"]), message=trace["violation"]["message"],
                  stats=stats | {"found_by": kind.found_by, "examples": 0, "steps": 0,
                                 "seconds": round(elapsed, 3), "seed": seed}
                  | ({"replayed": source} if source else {}),
                  cause=trace["violation"].get("cause"), trace=trace), stats
