"""The steps that reached a failing rule of a design handed in, said with its report.

A rule that raises is reported by its file and line (``variant_plugins.fault``); which
steps brought the model there, the design's author had to find again by hand. The
engine that saw it keeps them on the exception on its way out (:func:`note`: the
Hypothesis engine the steps of the example, then the fewest a replay finds
(:mod:`deployspec.shortened`); the explorer the shortest path to
the state it was expanding), and the report adds them (:func:`said`).
"""

from __future__ import annotations

from deployspec import exception_notes

#: the attribute of an exception that holds what :func:`note` kept
_KEPT = "_deployspec_reached"
#: the steps a report names at most (the last ones), and their width at most: an error
#: line is cut to 300 characters in its middle (``printable_line``), which would take
#: "after N steps" and a step away from eight long labels
SHOWN = 8
WIDTH = 100


def note(exc: BaseException, text: str) -> None:
    """Keep ``text`` (``, at step 2 (cancel()) after push(instances=1), deploy()``) on
    ``exc``, over whatever was kept there: the engine that saw it last ran the steps it
    reports (a design may raise one exception object it keeps, in every run: Hypothesis's
    first failing example noted it before the shrunk one it reports, and ``--engine all``
    runs one engine after another)."""
    exception_notes.keep(exc, _KEPT, text)


def said(exc: BaseException) -> str:
    """What :func:`note` kept on ``exc``, or ""."""
    return exception_notes.kept(exc, _KEPT) or ""


def after(labels: list[str]) -> str:
    """`` after push(instances=1), deploy()``: the steps done, the last ``SHOWN`` of them,
    fewer where they would be wider than ``WIDTH`` (the last always), and how many
    before those (`` after 4 earlier steps, then …``); "" for none."""
    if not labels:
        return ""
    kept = [labels[-1]]
    for label in reversed(labels[-SHOWN:-1]):
        if sum(len(k) + 2 for k in kept) + len(label) > WIDTH:
            break
        kept.insert(0, label)
    if len(labels) == len(kept) + 1:  # one step left out is one step said ("after 1 earlier steps" read oddly)
        kept = labels
    shown = ", ".join(kept)
    before = len(labels) - len(kept)
    # ("after 4 steps, …, " and five labels read as four steps in all: a user trial)
    return f" after {shown}" if not before else f" after {before} earlier steps, then {shown}"
