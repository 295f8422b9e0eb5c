"""Where a run's search took its steps: a count per situation (``spec/situations.py``).

The searches' own steps are counted (a machine's rules and its ``wait``), not the
settle phase's, which no user drives, nor replays of saved traces, nor the shrinking
of a violation (which repeats the steps that found it). A step counts
in the situation before it, with whether it took effect (accepted, and the
observation changed), by action kind.
"""

from __future__ import annotations

from typing import Any

import attrs


@attrs.define
class Coverage:
    """Steps and effects per situation of one model, over a run's searches."""

    #: observation -> its situation (``Model.situation``)
    situation: Any
    #: situation -> steps taken in it
    steps: dict[str, int] = attrs.field(factory=dict)
    #: situation -> action kind -> steps in which it took effect there
    effects: dict[str, dict[str, int]] = attrs.field(factory=dict)

    def note(self, before: dict, kind: str, took_effect: bool) -> None:
        where = self.situation(before)
        self.steps[where] = self.steps.get(where, 0) + 1
        if took_effect:
            kinds = self.effects.setdefault(where, {})
            kinds[kind] = kinds.get(kind, 0) + 1

    def to_json(self, order: tuple[str, ...] = ()) -> dict[str, Any]:
        """``{situation: {"steps": n, "took_effect": {kind: n}}}``, the situations in
        ``order`` first (with their zeros), then any other seen, by name."""
        names = list(order) + sorted(s for s in self.steps if s not in order)
        return {s: {"steps": self.steps.get(s, 0), "took_effect": dict(sorted(self.effects.get(s, {}).items()))}
                for s in names}


def coverage_lines(situations: dict[str, dict[str, Any]], reference: str | None = None, *,
                   checks: int = 1, stopped: bool = False) -> list[str]:
    """The text summary's lines: steps per situation, and the situations that the
    reference designs (``reference``, the run's ``--reference``) reach under the run's
    configuration where the run took none (``situations`` as :meth:`Coverage.to_json`
    gives it; empty: nothing was counted). ``checks``: how many checks' searches the
    counts add up (each searches on its own, so a state can count once per check);
    ``stopped``: a check's search ended at a violation, short of its examples, which
    may be why a situation was never reached."""
    if not any(s["steps"] for s in situations.values()):
        return []
    counts = " · ".join(f"{name} {s['steps']:,}" for name, s in situations.items() if s["steps"])
    over = f", over {checks} checks" if checks > 1 else ""
    lines = [f"steps by situation (before the step{over}): {counts}"]
    missed = [name for name, s in situations.items() if not s["steps"]]
    if missed:
        who = f"{reference} reaches" if reference else "some reference design reaches"
        short = "; a violated check's search stopped at its violation" if stopped else ""
        lines.append(f"no step taken in: {', '.join(missed)} ({who} {'it' if len(missed) == 1 else 'them'} "
                     f"under this configuration: whatever the implementation does there, no check judged "
                     f"it{short})")
    return lines
