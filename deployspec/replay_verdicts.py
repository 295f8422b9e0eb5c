"""What a replay says of each file: its one line, its exit status, and what ``--json``
tells of it (``replay_command`` replays; this module words the verdicts)."""

from __future__ import annotations

import json

from deployspec.contract import faults
from deployspec.spec.core import action_label
from deployspec.text import escaped, first_few, printable_line


def report_replay(path, trace, outcome, bounds=None, recorded_here: bool | None = None) -> tuple[int, str, dict]:
    """A replay's verdict, 1 if it reproduces, its one line, and what ``--json`` tells of it.
    ``recorded_here``: whether the implementation replayed on is the one the file was
    recorded on (None: a design is replayed on, the recorded one if it has the file's name)."""
    start = outcome.start_note(trace)  # e.g. slots: where another design's Terraform leaves the app
    notes = [start] if start else []
    parted = None
    own = outcome.target == trace["variant"] if recorded_here is None else recorded_here
    if own and not bounds and not outcome.started_elsewhere(trace):
        from deployspec.replay import CHANGED, CHANGED_IMPLEMENTATION

        parted = outcome.departure(trace)  # on the recorded design, the recorded story or a changed one
        if parted is not None and not trace.get("fault"):  # (a fault trace's verdict says it its own way)
            notes.append(f"departs from the recorded steps at step {parted}: "
                         f"{CHANGED if recorded_here is None else CHANGED_IMPLEMENTATION}")
    status, line, facts = _reported(path, trace, outcome, bounds, notes)
    return status, line, facts | {"departs_at": parted}


def _reported(path, trace, outcome, bounds, notes: list[str]) -> tuple[int, str, dict]:
    if bounds:
        notes.append("with " + ", ".join(f"{k}={json.dumps(v)}" for k, v in bounds.items()))
    on = outcome.target + (f" ({'; '.join(notes)})" if notes else "")
    if trace.get("fault"):
        return _fault_replayed(path, trace, outcome, on)
    if trace.get("recorded_property"):  # (--property: judged by another than it records)
        return _judged(path, outcome, on)
    if outcome.reproduced:
        v = outcome.violation
        how = f" (cause {v.cause})" if v.cause else ""
        recorded = trace["violation"].get("cause")
        if recorded and v.cause != recorded:
            how += f", not the recorded cause {recorded}"
        if v.step != trace["violation"]["step"]:
            how += f", not at the recorded step {trace['violation']['step']}"
        line = f"{path}: reproduces on {on}: {v.property} at step {v.step}{how}: {v.message}"
        facts = {"outcome": "reproduces", "step": v.step, "cause": v.cause, "rejected": _rejected(outcome)}
        return 1, escaped(line), facts | {"message": line}
    rejected = _rejected(outcome)
    line = f"{path}: does not reproduce on {on}: {trace['property']} holds{_refused_note(outcome)}"
    facts = {"outcome": "does_not_reproduce", "step": None, "cause": None, "rejected": rejected}
    return 0, escaped(line), facts | {"message": line}


def _judged(path, outcome, on: str) -> tuple[int, str, dict]:
    """The verdict of a file's steps judged by another property than it records
    (``replay --property``): violated (1, ``reproduces``) or holds (0)."""
    v, rejected = outcome.violation, _rejected(outcome)
    if outcome.reproduced:
        how = f" (cause {v.cause})" if v.cause else ""
        line = f"{path}: {v.property} violated on {on} at step {v.step}{how}: {v.message}"
        facts = {"outcome": "reproduces", "step": v.step, "cause": v.cause, "rejected": rejected}
        return 1, escaped(line), facts | {"message": line}
    line = f"{path}: {outcome.property} holds on {on}{_refused_note(outcome)}"
    return 0, escaped(line), {"outcome": "does_not_reproduce", "step": None, "cause": None, "rejected": rejected,
                              "message": line}


def _fault_replayed(path, trace, outcome, on: str) -> tuple[int, str, dict]:
    """The verdict of an implementation's fault trace whose fault did not come back (it
    came back: the fault's line, exit 3): the action it failed at was answered (exit 0,
    ``fault_gone``), or the check broke (exit 1, ``check_breaks``: on the way there, or
    once it was answered). Where the replay parted from the answers the file records
    before that action, it did not ask it in the state it failed in: said, as is a fault
    that was an answer differing from the first time, which two runs may not show again."""
    n, fault, rejected = len(trace["steps"]), trace["fault"], _rejected(outcome)
    asked = f"step {n} ({action_label(fault['action'])})"
    notes = []
    parted = outcome.departure(trace)
    if parted is not None:
        notes.append(f"the replay parted from the recorded answers at step {parted}, so {asked} was not asked "
                     "where it failed")
    if faults.repeats(trace) > 1:
        notes.append(f"the fault was an answer differing from the first time; the answers did not differ in "
                     f"{faults.repeats(trace)} runs")
    said = f" ({'; '.join(notes)})" if notes else ""
    v = outcome.violation
    if v is not None and v.property == outcome.property:
        reached = f"no fault: {on} answered {asked}, but" if len(outcome.session.steps) > n else \
            f"{on} did not reach {asked}:"
        how = f" (cause {v.cause})" if v.cause else ""
        line = f"{path}: {reached} {v.property} is violated at step {v.step}{how}: {v.message}{said}"
        facts = {"outcome": "check_breaks", "step": v.step, "cause": v.cause, "rejected": rejected}
        return 1, escaped(line), facts | {"message": line}
    line = f"{path}: no fault: {on} answered {asked} and {trace['property']} holds{_refused_note(outcome)}{said}"
    facts = {"outcome": "fault_gone", "step": None, "cause": None, "rejected": rejected}
    return 0, escaped(line), facts | {"message": line}


def _refused_note(outcome) -> str:
    """How many of a replay's actions the target refused (each sent, and moved past), and
    which: a verdict that holds because a step was refused is that step's story."""
    steps = [(i, s) for i, s in enumerate(outcome.session.steps) if s["rejected"]]
    if not steps:
        return ""
    refused = [f"step {i} {action_label(s['action'])}" for i, s in steps]
    # the first one's reason: a CI user wanted to see that their design's rule is what fixed it
    why = printable_line(str(steps[0][1]["rejected"]), 120)
    said = f": {why}" if len(steps) == 1 else f"; the first as: {why}"
    return f" ({len(refused)} action(s) refused: {escaped(first_few(refused, 3) + said)})"


def _rejected(outcome) -> int:
    return sum(1 for s in outcome.session.steps if s["rejected"])


def by_file(verdicts, loaded):
    """Each file ``loaded`` with its verdict, or None where it was not replayed (after a
    fault or an interruption): verdicts come one per file, in order, after a fault
    before the first file (its file "") if any."""
    said = [v for v in verdicts if v[0] != ""]
    for at, (path, trace) in enumerate(loaded):
        yield path, trace, said[at] if at < len(said) else None


def replay_document(verdicts, loaded, target: str, status: int, left_out=()) -> dict:
    """``replay --json``: each file's verdict, in order (the files a fault left unreplayed
    too), the files ``--variant`` left out (another model's, in a folder), the
    implementation's failure if one stopped the run, and the exit status."""
    files = []
    for path, trace, verdict in by_file(verdicts, loaded):
        entry = {"file": path, "model": trace["model"], "variant": trace["variant"], "property": trace["property"]}
        if verdict is not None:
            _, _, _, seconds, facts = verdict
            entry |= {"outcome": facts["outcome"], "step": facts.get("step"), "cause": facts.get("cause"),
                      "rejected": facts.get("rejected"), "message": facts["message"], "seconds": round(seconds, 3),
                      "departs_at": facts.get("departs_at")}
            if facts.get("counterexample"):  # (--out: the replay saved as a trace of the design)
                entry["counterexample"] = facts["counterexample"]
            if "declared" in facts:  # (--declared: whether the design declares the violation)
                entry["declared"] = facts["declared"]
        else:
            entry |= {"outcome": "not_replayed", "step": None, "cause": None, "rejected": None,
                      "message": "not replayed: the implementation failed first", "seconds": 0.0, "departs_at": None}
        files.append(entry)
    faults = [v[4]["fault"] for v in verdicts if v[1] == 3]
    left = [{"file": str(p), "model": t["model"]} for p, t in {str(p): t for p, t in left_out}.items()]
    return {"on": target, "files": files, "left_out": left, "fault": faults[0] if faults else None,
            "exit_status": status}
