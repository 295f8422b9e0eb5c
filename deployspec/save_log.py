"""The counterexamples a search saves, noted as it saves them, so an interrupted run
reports every file it left under ``--out``.

A signal (Ctrl-C; SIGTERM, a CI job's timeout; the stop an interrupted ``--jobs``
parent sends its processes) can land after a search wrote its counterexample and before
the search returned it. :func:`deployspec.traces.keep` notes each trace *before* it
writes it, and what came of the save after; an interrupted task then reports, besides
what it returned, each noted violation: saved (its file holds it), or not saved and why.
Noted first and checked on disk after, no moment of the task's own process leaves a file
written and not noted, and no file is reported that does not hold its trace. A ``--jobs``
process that answers too late for its parent is heard from the folder (:func:`found_on_disk`).
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Iterator
from pathlib import Path

import attrs

from deployspec.engines.result import Result
from deployspec.models import UsageError


@attrs.define
class Noted:
    """A trace ``keep`` is about to save at ``path`` (None: no ``--out``), and ``fields``,
    what came of it (``traces.keep``'s), once it returned."""

    trace: dict
    path: Path | None
    fields: dict | None = None


#: the notes of the task running in this process (:func:`noting`), None outside one
_noted: list[Noted] | None = None


@contextlib.contextmanager
def noting() -> Iterator[None]:
    """Within: each trace ``keep`` saves is noted, for one task (a search and its follow-ups)."""
    global _noted
    _noted = []
    try:
        yield
    finally:
        _noted = None


def note(trace: dict, path: Path | None) -> Noted | None:
    """``trace`` is about to be saved at ``path``: its note, for ``keep`` to fill in."""
    if _noted is None:
        return None
    entry = Noted(trace, path)
    _noted.append(entry)
    return entry


def unreported(found: list[Result]) -> list[Result]:
    """The violations noted in this task that ``found`` (what the interrupted task
    returned, or carried on its KeyboardInterrupt) does not hold, as the results their
    searches would have returned: a save that ended, with what came of it; one cut short,
    only if its file holds it."""
    from deployspec import traces

    traces_held = {id(r.trace) for r in found}
    files_held = {r.counterexample for r in found if r.counterexample}
    more = []
    for entry in _noted or ():
        fields = entry.fields
        if fields is None:  # cut short while saving: on disk, or not at all
            if entry.path is None or not traces.holds(entry.path, entry.trace):
                continue
            fields = {"counterexample": str(entry.path)}
        file = fields.get("counterexample")
        if id(entry.trace) in traces_held or file in files_held:
            continue
        traces_held.add(id(entry.trace))
        if file:
            files_held.add(file)
        more.append(violation_of(entry.trace, fields))
    return more


def at_stop(stop: KeyboardInterrupt, returned: list[Result] | None) -> list[Result]:
    """What an interrupted task found that is a verdict: the violations of what it
    returned (a stop after the search ended, a swallowed one re-raised), else those its
    KeyboardInterrupt carries (``check.causes``), and each noted one neither holds."""
    if returned is not None:
        carried = [r for r in returned if r.verdict == "violated"]
    else:
        carried = getattr(stop, "found", None) or []
    return carried + unreported(carried)


def violation_of(trace: dict, fields: dict) -> Result:
    """The violation result of a saved ``trace`` (``fields``: ``traces.keep``'s)."""
    v = trace["violation"]
    return Result(trace["model"], trace["variant"], trace["property"], trace["engine"], "violated",
                  trace_length=len(trace["steps"]), message=v["message"], cause=v.get("cause"), trace=trace,
                  **{k: fields.get(k) for k in ("counterexample", "unsaved", "kept", "replaced")})


def found_on_disk(out_dir: str | None, since: float, reported: set[str]) -> list[Result]:
    """The violations saved under ``out_dir`` since ``since`` (a time) whose file names are
    not in ``reported``: what a ``--jobs`` process wrote and did not answer in time (its
    parent waits a few seconds, then ends it)."""
    from deployspec import traces

    if not out_dir:
        return []
    more = []
    try:
        names = sorted(e.name for e in os.scandir(out_dir) if e.name.endswith(".json") and e.is_file()
                       and e.name not in reported and e.stat().st_mtime >= since)
    except OSError:
        return []
    for name in names:
        path = Path(out_dir) / name
        try:
            trace = traces.load(path)
        except UsageError:  # not a trace (another program's file)
            continue
        more.append(violation_of(trace, {"counterexample": str(path)}))
    return more
