"""Shrinking a saved counterexample further, by replay alone.

Hypothesis shrinks the choices it drew, which can leave steps that do not matter
(a ``stage`` nobody deploys). This removes steps one at a time, then pairs, as
long as replaying on the same variant still violates the same property (for the
same cause, when the property names one), and rebuilds the trace from the last
replay (observations stay consistent).
The platform settles at the end, as in any replay of a settled trace.

By default the trace is replayed on its variant; a contract run passes a
``replay_on`` that replays on the implementation under test instead (each
attempt from a reset), with a deadline, since an implementation can be slow;
it raises :class:`CannotReplay` when it cannot go on (the implementation
failed), and the smallest trace found so far is kept.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import TypeVar

from deployspec import interruption, traces
from deployspec.replay import ReplayOutcome, replay

T = TypeVar("T")


class CannotReplay(Exception):
    """Raised by a ``replay_on`` that cannot replay any more candidates."""


def _attempt(trace: dict, actions: list[dict], replay_on: Callable[[dict], ReplayOutcome]) -> ReplayOutcome | None:
    interruption.raise_if_pending()
    candidate = dict(trace, steps=[{"action": a} for a in actions], settle_from=len(actions))
    outcome = replay_on(candidate)
    cause = trace["violation"].get("cause")  # older traces name none
    if not outcome.reproduced or (cause is not None and outcome.violation.cause != cause):
        return None
    return outcome


def shortest(actions: list, attempt: Callable[[list], T | None], best: T,
             deadline: float | None, halving: bool = False) -> tuple[T, bool | str]:
    """Remove steps one at a time, then adjacent pairs, for as long as ``attempt`` of the
    shorter list still gives a result (the finding again), until none can go: the last
    result (``best``, that of ``actions``, when none could go), and True, or why it stopped
    before every removal was tried (the deadline passed, or ``attempt`` raised
    :class:`CannotReplay`). With ``halving``, runs of half the steps, then a quarter, …
    go first: where each try that keeps the finding is slow (a hang waits for its
    timeout), a few long removals do what many single ones would."""
    done: bool | str = True
    widths = _halves(len(actions)) if halving else []
    try:
        changed = True
        while changed:
            changed = False
            for width in [*widths, 1, 2]:
                i = 0
                while i + width <= len(actions):
                    if deadline is not None and time.monotonic() > deadline:
                        raise CannotReplay("out of time")
                    shorter = actions[:i] + actions[i + width:]
                    found = attempt(shorter)
                    if found is not None:
                        actions, best, changed = shorter, found, True
                    else:
                        i += width if width > 2 else 1
            widths = []  # (once: then one step and two at a time, until none can go)
    except CannotReplay as stop:  # keep the smallest found so far
        done = f"stopped early: {stop}"
    return best, done


def _halves(n: int) -> list[int]:
    """``n // 2``, ``n // 4``, … down to two steps."""
    out = []
    while n // 2 >= 2:
        n //= 2
        out.append(n)
    return out


def minimize(trace: dict, replay_on: Callable[[dict], ReplayOutcome] = replay,
             seconds: float | None = None) -> dict:
    """The smallest trace found by removing steps, rebuilt from its last replay (the
    whole trace again if none can go); ``trace`` itself, unchanged, if it does not
    reproduce by replay.

    ``replay_on(trace)`` replays a candidate (default: on the trace's variant);
    after ``seconds`` the smallest trace found so far is kept. A rebuilt trace's
    ``extra.minimized_by_replay`` is True, or why it stopped early."""
    deadline = None if seconds is None else time.monotonic() + seconds
    end = trace.get("settle_from")
    actions = [s["action"] for s in (trace["steps"] if end is None else trace["steps"][:end])]
    try:
        best = _attempt(trace, actions, replay_on)
    except CannotReplay:
        best = None
    if best is None:
        return trace  # does not reproduce by replay: keep it as it is
    best, done = shortest(actions, lambda shorter: _attempt(trace, shorter, replay_on), best, deadline)
    return traces.build(
        model=trace["model"],
        variant=trace["variant"],
        config=trace["config"],
        property=trace["property"],
        engine=trace["engine"],
        seed=trace["seed"],
        session=best.session,
        extra={**trace.get("extra", {}), "minimized_by_replay": done},
    )
