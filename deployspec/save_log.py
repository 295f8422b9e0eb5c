"""The counterexamples a search saves, noted as it saves them, so an interrupted run
reports every file it left under ``--out``.

A signal (Ctrl-C; SIGTERM, a CI job's timeout; the stop an interrupted ``--jobs`` parent
sends its processes) can land after a search wrote its counterexample and before the
search returned it: the file was on disk and its violation unreported (the summary said
"8 counterexamples saved" with 9 files there, and that property "not judged" in the
JUnit report). :func:`deployspec.traces.keep` notes each trace *before* it writes it; an
interrupted task then reports, besides what it returned, each noted trace whose file
holds it (:func:`unreported`). Noted first and checked on disk after, there is no moment
at which a signal leaves a file written and not noted, and nothing is reported that
is not on disk.
"""

from __future__ import annotations

from pathlib import Path

from deployspec.engines.result import Result

#: the traces ``keep`` is about to save or saved since :func:`begin` (with the path each
#: goes to), None in a process where no task began (a replay, a contract run)
_noted: list[tuple[dict, Path]] | None = None


def begin() -> None:
    """Note the saves from now on, for one task (a search and its follow-ups), forgetting
    the last task's."""
    global _noted
    _noted = []


def note(trace: dict, path: Path) -> None:
    """``trace`` is about to be saved at ``path`` (:func:`deployspec.traces.keep`)."""
    if _noted is not None:
        _noted.append((trace, path))


def unreported(found: list[Result]) -> list[Result]:
    """The violations saved since :func:`begin` that ``found`` (what the interrupted task
    returned, or carried on its KeyboardInterrupt) does not hold: each noted trace whose
    file holds it, as the violation its search would have returned."""
    from deployspec import traces

    held = {id(r.trace) for r in found if r.trace is not None}
    more = []
    for trace, path in _noted or ():
        if id(trace) in held or not traces.holds(path, trace):
            continue
        held.add(id(trace))
        v = trace["violation"]
        more.append(Result(trace["model"], trace["variant"], trace["property"], trace["engine"], "violated",
                           counterexample=str(path), trace_length=len(trace["steps"]), message=v["message"],
                           cause=v.get("cause"), trace=trace))
    return more
