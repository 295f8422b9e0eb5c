"""The steps that reached a failing rule of a design handed in, said with its report.

A rule that raises is reported by its file and line (``variant_plugins.fault``); which
steps brought the model there, the design's author had to find again by hand. The
engine that saw it keeps them on the exception on its way out (:func:`note`: the
Hypothesis engine the steps of the example, then the fewest a replay finds
(:mod:`deployspec.shortened`); the explorer the shortest path to
the state it was expanding), and the report adds them (:func:`said`).
"""

from __future__ import annotations

#: the attribute of an exception that holds what :func:`note` kept
_KEPT = "_deployspec_reached"
#: the steps a report names at most (the last ones)
SHOWN = 8


def note(exc: BaseException, text: str, replace: bool = False) -> None:
    """Keep ``text`` (``, at step 2 (cancel()) after push(instances=1), deploy()``) on
    ``exc``, unless something was kept there already (the first engine to see it knows
    best; ``replace``: it found fewer steps since). Written to its ``__dict__`` directly:
    the exception is the user's, and its class's own ``__setattr__`` is its code."""
    try:
        kept = object.__getattribute__(exc, "__dict__")
    except (AttributeError, TypeError):  # (an exception class with slots: nothing kept)
        return
    if replace:
        kept[_KEPT] = text
    else:
        kept.setdefault(_KEPT, text)


def said(exc: BaseException) -> str:
    """What :func:`note` kept on ``exc``, or ""."""
    try:
        kept = object.__getattribute__(exc, "__dict__").get(_KEPT, "")
    except (AttributeError, TypeError):
        return ""
    return kept if isinstance(kept, str) else ""


def after(labels: list[str]) -> str:
    """`` after push(instances=1), deploy()``: the steps done, the last ``SHOWN`` of them
    (and how many before those); "" for none."""
    if not labels:
        return ""
    shown = ", ".join(labels[-SHOWN:])
    return f" after {shown}" if len(labels) <= SHOWN else f" after {len(labels) - SHOWN} steps, …, {shown}"
