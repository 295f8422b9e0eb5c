"""Shrinking a saved counterexample further, by replay alone.

Hypothesis shrinks the choices it drew, which can leave steps that do not matter
(a ``stage`` nobody deploys). This removes steps one at a time, then pairs, as
long as replaying on the same variant still violates the same property (for the
same cause, when the property names one), and rebuilds the trace from the last
replay (observations stay consistent).
The platform settles at the end, as in any replay of a settled trace.
"""

from __future__ import annotations

from deployspec import traces
from deployspec.replay import ReplayOutcome, replay


def _attempt(trace: dict, actions: list[dict]) -> ReplayOutcome | None:
    candidate = dict(trace, steps=[{"action": a} for a in actions], settle_from=len(actions))
    outcome = replay(candidate)
    cause = trace["violation"].get("cause")  # older traces name none
    if not outcome.reproduced or (cause is not None and outcome.violation.cause != cause):
        return None
    return outcome


def minimize(trace: dict) -> dict:
    """The smallest trace found by removing steps; ``trace`` if none can go."""
    end = trace.get("settle_from")
    actions = [s["action"] for s in (trace["steps"] if end is None else trace["steps"][:end])]
    best = _attempt(trace, actions)
    if best is None:
        return trace  # does not reproduce by replay: keep it as it is
    changed = True
    while changed:
        changed = False
        for width in (1, 2):
            i = 0
            while i + width <= len(actions):
                shorter = actions[:i] + actions[i + width:]
                outcome = _attempt(trace, shorter)
                if outcome is not None:
                    actions, best, changed = shorter, outcome, True
                else:
                    i += 1
    return traces.build(
        model=trace["model"],
        variant=trace["variant"],
        config=trace["config"],
        property=trace["property"],
        engine=trace["engine"],
        seed=trace["seed"],
        session=best.session,
        extra={**trace.get("extra", {}), "minimized_by_replay": True},
    )
