"""An incident's search (``check --incident``) in words: its proofs, what it never took,
and the titles of its counterexamples."""

from __future__ import annotations

from pathlib import Path

from deployspec.engines.explore_text import proof_text as bounded_proof_text
from deployspec.engines.explore_text import untried_text
from deployspec.incident import Incident, Settle
from deployspec.spec.core import action_label


def calls_in(actions) -> int:
    """The actions of an incident that are not ``settle``: the users' calls and pinned platform actions."""
    return sum(not isinstance(a, Settle) for a in actions)


def proof_text(stats: dict, incident: Incident) -> str:
    """A holding verdict: over every interleaving, with the calls the design refused on the
    way (part of the answer: capi-safe refuses a scale mid-rollout) and those it accepted that
    came to nothing (an aborted rollback swap: no rollback happened); the size bounds, which
    bound no call of the incident, left out. A search cut short says what it never reached."""
    figures = stats["incident"]
    start = figures.get("start")  # (a model that says where its runs start: App Service's slots)
    if not stats["complete"]:
        untaken = (f"; the incident's actions from action {figures['reached'] + 1} on were never reached"
                   if figures["reached"] < figures["actions"] else "")
        return bounded_proof_text(stats) + untaken + (f"; from start={start}" if start is not None else "")
    refused, failed = (", ".join(f"{k} (in {n} state{'s' if n != 1 else ''})" for k, n in figures.get(which, {}).items())
                       for which in ("refused", "failed"))
    return (f"holds in every interleaving of the platform's actions with the {figures['calls']} calls of "
            f"{figures['file']} ({stats['states']:,} states, {stats['seconds']:.1f} s"
            + (f"; from start={start}" if start is not None else "") + ")"
            + (f"; {always_refused_text(figures, incident.actions)}" if figures.get("always_refused") else "")
            + (f"; {always_failed_text(figures, incident.actions)}" if figures.get("always_failed") else "")
            + (f"; the design refused some calls in some runs: {refused}" if refused else "")
            + (f"; some calls the design accepted came to nothing in some runs: {failed}" if failed else "")
            + untried_text(stats))


def always_refused_text(figures: dict, actions) -> str:
    """The calls the design refused in every run (``figures["always_refused"]``), by number
    and as ``show`` prints them: a file whose calls came in an order no app allows (deploy
    before push) would otherwise read as a proof about the incident."""
    said = ", ".join(f"{action_label(actions[n - 1].to_json())} (action {n})" for n in figures["always_refused"])
    return (f"the design refused {said} in every run: a rule of the design (a gate doing its work), or calls out "
            "of order (action N counts the file's actions, not its lines)")


def always_failed_text(figures: dict, actions) -> str:
    """The calls that took effect in no run (``figures["always_failed"]``: a rollback swap
    whose slot never starts aborts in every run, which "in some runs" understated): where
    the design accepted them they came to nothing, and it refused them in the other runs."""
    said = ", ".join(f"{action_label(actions[int(n) - 1].to_json())} (action {n}: {why} where accepted)"
                     for n, why in figures["always_failed"].items())
    return f"{said} took effect in no run"


def untaken_text(stats: dict, incident: Incident, skipped=frozenset()) -> str:
    """A search that saw every state and never took all the incident's actions: where it
    stuck. The first search: a ``settle`` the design never rests at, or a pinned platform
    action it never offers there, so nothing is judged of what follows. A search for a
    further cause (``skipped``): no run got there but by breaking the property a way
    already found, so there is no other cause."""
    reached = stats["incident"]["reached"]
    action = incident.actions[reached]
    label = f"the incident's action {reached + 1} ({action_label(action.to_json())})"
    if skipped:
        return (f"no other cause: no run got to {label} without breaking the property a way already found "
                f"({', '.join(sorted(skipped))}) ({stats['states']:,} states)")
    because = stats["incident"].get("refused_because")
    why = ("the platform never came to rest there on this design" if isinstance(action, Settle) else
           f"the design refused it wherever a run got there ({because})" if because else
           "the platform never could take it there on this design")
    return f"{label} was never taken in {stats['states']:,} states: {why}; nothing is judged of what follows"


def title_of(incident: Incident, variant: str, prop: str, taken: int) -> str:
    """A counterexample's title: the incident, and the calls after the violation, named so
    a reader does not blame them (the search stops where the property breaks)."""
    left = [a for a in incident.actions[taken:] if not isinstance(a, Settle)]
    calls = calls_in(incident.actions)
    after = (f"after {calls - len(left)} of its {calls} calls, before {', '.join(action_label(a.to_json()) for a in left)}"
             if left else f"after its {calls} calls")
    return f"{Path(incident.source).name} on {variant}: {prop} broken {after}, in one interleaving of the platform's actions"
