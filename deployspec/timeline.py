"""What a timeline picture shows of a trace, read from its observations (no drawing):
the lanes (what runs instances) and bands (what has a state) of an observation, which
observations get a column, and what a step changed of a text the picture writes whole
first (the slots registry). Generic over observations, so every model draws without
code of its own (:mod:`deployspec.render_svg` draws them)."""

from __future__ import annotations

import itertools
from collections.abc import Iterable
from typing import Any


def _scalar_text(key: str, value: Any) -> str | None:
    if isinstance(value, (str, int, bool)):
        return f"{key} {value}"
    if isinstance(value, dict) and all(isinstance(v, (str, int, bool, type(None))) for v in value.values()):
        return f"{key} " + ",".join(f"{k}={v}" for k, v in value.items())
    return None


def lanes(obs: dict[str, Any], parts_of=None) -> dict[str, tuple[str, list[str], list[str]]]:
    """``{lane key: (label, [instance status, ...], [instance note, ...])}`` from any observation.

    A lane is an item of a top-level list (keyed ``<Initial><id>``, e.g. ``P2``
    for ``processes``) or dict (keyed by name, e.g. ``production``) whose
    items carry ``instances``; an instance is a status string or an object
    with a ``status``. ``parts_of(item)``: its label's parts (a model's
    ``lane_parts``), else :func:`label_parts`.
    """
    parts_of = parts_of or label_parts
    out: dict[str, tuple[str, list[str], list[str]]] = {}
    for name, x in lane_items(obs):
        statuses = [i if isinstance(i, str) else str(i.get("status")) for i in x["instances"]]
        notes = [_note(i) for i in x["instances"]]
        out[name] = (" ".join(parts_of(x)), statuses, notes)
    return out


def lane_items(obs: dict[str, Any]) -> Iterable[tuple[str, dict]]:
    """``(lane key, item)`` for each item of the observation that runs instances."""
    for key, value in obs.items():
        if isinstance(value, list) and value and all(isinstance(x, dict) and "instances" in x for x in value):
            yield from ((f"{key[:1].upper()}{x.get('id', i)}", x) for i, x in enumerate(value))
        elif isinstance(value, dict) and value and all(
            isinstance(x, dict) and "instances" in x for x in value.values()
        ):
            yield from ((str(name), x) for name, x in value.items())


def label_parts(item: dict) -> list[str]:
    """What a lane's label says, a part per field (``site B``, ``image digest=1``)."""
    return [t for k, v in item.items() if k not in ("id", "instances") and (t := _scalar_text(k, v))]


def _note(instance: Any) -> str:
    """What an instance runs, when the observation says it per instance (e.g. a digest)."""
    if not isinstance(instance, dict):
        return ""
    return " ".join(f"{k} {v}" for k, v in instance.items() if k != "status" and v is not None)


def bands(obs: dict[str, Any]) -> dict[str, str]:
    """``{band key: state text}``: items of top-level lists that have a ``state``."""
    out: dict[str, str] = {}
    for key, value in obs.items():
        if isinstance(value, list) and value and all(isinstance(x, dict) and "state" in x for x in value):
            for i, x in enumerate(value):
                text = str(x["state"])
                reason = x.get("status_reason")
                if reason and reason != x["state"]:
                    text += f"/{reason}"
                out[f"{key[:1].lower()}{x.get('id', i)}"] = text
    return out


#: the most observations a picture draws a column for; a longer trace is drawn as its first
#: ``FIRST_COLUMNS``, one column saying how many steps it leaves out, and the last ones
#: around the break (3,000 steps were a picture 193,108 px wide, its lanes named only at its left)
MAX_COLUMNS = 120
FIRST_COLUMNS = 20


def columns(n: int, bad: int) -> list[int | None]:
    """The observations drawn, by index (None: a column for those left out): all of them,
    or the first ones and those up to the break (``bad``) and past it, within ``MAX_COLUMNS``."""
    if n <= MAX_COLUMNS:
        return list(range(n))
    last = MAX_COLUMNS - FIRST_COLUMNS - 1  # (a column for the gap)
    start = min(max(FIRST_COLUMNS + 1, bad - last // 2), n - last)
    if start == FIRST_COLUMNS + 1:  # a gap would stand for one observation: draw it instead
        return [*range(MAX_COLUMNS - 1), None]
    if start + last < n:  # a gap after them too
        last -= 1
    return [*range(FIRST_COLUMNS), None, *range(start, start + last), *([None] if start + last < n else [])]


def changed_parts(texts: list[str]) -> list[list[str]]:
    """Per column, the lines the other row writes: the whole text first; then, where a
    step changed it, the parts it added (each ``NAME=value``, and the words besides
    them as one: ``swap aborted``) and ``no NAME`` for a ``NAME=…`` it dropped; the
    whole new text where that says nothing (words gone, parts reordered); nothing
    where nothing changed."""
    out: list[list[str]] = [[texts[0]] if texts else []]
    for before, now in itertools.pairwise(texts):
        if before == now:
            out.append([])
            continue
        was, has = text_parts(before), text_parts(now)
        named = {p.split("=")[0] for p in has if "=" in p}
        changed = [p for p in has if p not in was] + [f"no {p.split('=')[0]}" for p in was
                                                        if "=" in p and p.split("=")[0] not in named]
        out.append(changed or [now or "(nothing)"])
    return out


def text_parts(text: str) -> list[str]:
    """``release=1 hooks=2 swap aborted`` → ``["release=1", "hooks=2", "swap aborted"]``."""
    words = text.split()
    free = " ".join(w for w in words if "=" not in w)
    return [w for w in words if "=" in w] + ([free] if free else [])
