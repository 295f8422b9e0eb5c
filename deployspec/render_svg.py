"""A counterexample as a timeline picture (SVG), readable at a glance.

Columns are steps (the initial state first); rows are *lanes*, one per thing
that runs instances (a web process, a slot: whatever the model's observation
holds under a key whose items have ``instances``), drawn as stacked bars, one
cell per instance coloured by its status; below them, one band per deployment
(items with a ``state``), coloured by state. The settle phase is shaded and the
breaking step outlined in red. Generic over observations, so every model draws
without code of its own (what is read of them: :mod:`deployspec.timeline`);
``model.lanes`` names the rows.
"""

from __future__ import annotations

import textwrap
from collections import Counter
from collections.abc import Callable
from typing import Any

import attrs

from deployspec.render_text import action_label, cause_said, what_broke
from deployspec.svg_palette import (
    FAILING,
    HATCH,
    REJECTED_INK,
    SETTLE_FILL,
    STATE_COLOURS,
    STATUS_COLOURS,
    colour,
    ink,
)
from deployspec.text import markup as escape  # also control characters, which XML forbids
from deployspec.timeline import bands, changed_parts, columns, label_parts, lane_items, lanes

COL = 64  # width of one step column
CELL_W, CELL_H, GAP = 40, 11, 2
LEFT = 150  # lane labels
HEAD = 64  # title lines above the rotated action labels
BAND_H = 16
#: the most instance cells one lane shows at a step; the rest are one cell, "+N", their
#: statuses counted in its tooltip (a trace may hold 10,000 instances a process: drawn
#: one by one, a 44 MB trace became a 527 MB picture)
MAX_CELLS = 40


def _cell(x: int, y: int, width: int, height: int, status: str, title: str) -> list[str]:
    """An instance's cell (or a legend's swatch): its status's colour, hatched if it fails."""
    out = [(f'<rect x="{x}" y="{y}" width="{width}" height="{height}" rx="2" '
           f'fill="{colour(STATUS_COLOURS, status)}">{title}</rect>')]
    if status in FAILING:
        out.append(f'<rect x="{x}" y="{y}" width="{width}" height="{height}" rx="2" fill="url(#failing)"/>')
    return out


def render(trace: dict[str, Any], lane_name: str | None = None,
           other: tuple[str, Callable[[dict], str]] | None = None,
           parts_of: Callable[[dict], list[str]] | None = None) -> str:
    """The SVG document for a trace file's contents. ``other``: what else there is to
    see (a title, and observation -> text), drawn as one more row, written where it
    changes (:func:`other_row`); ``parts_of``: a lane's label (``Model.lane_parts``);
    both given with ``lane_name``, else the trace's model's."""
    if lane_name is None:
        from deployspec.models import get_model

        model = get_model(trace["model"])
        lane_name, other, parts_of = model.lanes, other_row(model), model.lane_parts
    at = _layout(trace, other, parts_of or label_parts)
    out = [*_header(trace, at, lane_name), *_settling(at), *_step_labels(at)]
    for k in at.lane_keys:
        out += _lane(at, k)
    for k in at.band_keys:
        out += _band(at, k)
    out += [*_other(at), *_breaking_column(at), *_legend(at), "</svg>"]
    return "\n".join(out) + "\n"


def other_row(model: Any) -> tuple[str, Callable[[dict], str]] | None:
    """What a model's text report shows beside its lanes, as a row of the picture: the
    slots registry (tags, webhooks due, the validated digest: what a push or a webhook
    delivery acts on, which the lanes did not show), by its own ``render_state``; None
    where the bands already are that (capi's deployments)."""
    if model.render_state is None:
        return None
    title = (model.render_titles or ("", "other"))[1]
    return title, lambda obs: model.render_state(obs)[1]


@attrs.frozen
class _Layout:
    """Where each part of the picture goes, from what the trace holds."""

    per_step: list  # the lanes of each observation (:func:`lanes`), the initial one first
    parts: list  # each observation's lane labels, a part per field (``timeline.label_parts``)
    band_steps: list  # the bands of each observation (:func:`bands`)
    labels: list[str]  # each column's: "initial", then "k: the action" (a gap's says what it leaves out)
    rejected: list[str | None]  # each column's step's refusal, or None
    lane_keys: list[str]
    band_keys: list[str]
    depth: dict[str, int]  # the instance cells a lane stacks at most
    width: int
    title: str
    #: (colour, line): the trace's own title, the violation's message and its cause, wrapped
    message: list[tuple[str, str]]
    top: int  # the lanes' top (below the rotated action labels)
    lane_y: dict[str, int]
    band_y: dict[str, int]
    bottom: int  # below the last band
    legend_y: int
    bad_col: int  # the breaking step's column
    settle_col: int | None  # the settle phase's first column, if it has one
    #: the other row's title and its text at each observation (``other_row``), or None
    other: tuple[str, list[str]] | None
    other_y: int
    other_lines: list[list[str]]  # what the other row writes in each column (``timeline.changed_parts``)

    @property
    def columns(self) -> int:
        return len(self.per_step)

    @property
    def below(self) -> int:
        """What the message's further lines push down."""
        return 14 * (len(self.message) - 1)


def _layout(trace: dict[str, Any], other: tuple[str, Callable[[dict], str]] | None = None,
            parts_of: Callable[[dict], list[str]] = label_parts) -> _Layout:
    """Where each part of ``trace``'s picture goes: the columns drawn (a long trace's middle
    left out, :func:`timeline.columns`), then the heading, the lanes, the bands and the other row."""
    steps = trace["steps"]
    every = [trace["initial"]] + [s["observation"] for s in steps]
    bad = trace["violation"]["step"]
    bad_index = len(every) - 1 if bad == -1 or bad >= len(steps) else bad + 1
    fault = trace.get("fault")
    if fault:  # the action an implementation failed at: a column of its own, marked, the state as it stood
        steps = steps + [{"action": fault["action"], "rejected": None}]
        every.append(every[-1])
        bad_index = len(every) - 1
    drawn = columns(len(every), bad_index)
    observations = [{} if i is None else every[i] for i in drawn]
    labels, rejected = _column_labels(drawn, steps, len(every))
    if fault:
        labels[-1] += " FAULT"
    per_step = [lanes(o, parts_of) for o in observations]
    parts = _over_gaps(drawn, [{name: parts_of(x) for name, x in lane_items(o)} for o in observations])
    band_steps = [bands(o) for o in observations]
    lane_keys = list(dict.fromkeys(k for ls in per_step for k in ls))
    band_keys = list(dict.fromkeys(k for bs in band_steps for k in bs))
    # (two cells at least: the lane's name and its label above its floor line)
    depth = {k: min(MAX_CELLS, max(2, max((len(ls[k][1]) for ls in per_step if k in ls), default=1)))
             for k in lane_keys}
    title, width, message, top = _heading(trace, [label + (" (rejected)" if why else "")  # (as drawn)
                                                  for label, why in zip(labels, rejected)])
    lane_y, band_y, other_y = _rows(top, depth, band_keys)
    y = other_y
    others, other_lines = None, []
    if other is not None:
        others = (other[0], _over_gaps(drawn, [other[1](every[i]) if i is not None else None for i in drawn]))
        other_lines = changed_parts(others[1])
        y += _other_height(other_lines) + 4
    return _Layout(per_step, parts, band_steps, labels, rejected, lane_keys, band_keys, depth, width, title, message,
                   top, lane_y, band_y, y, y + 14, drawn.index(bad_index), _settle_column(trace, drawn), others,
                   other_y, other_lines)


def _rows(top: int, depth: dict[str, int], band_keys: list[str]) -> tuple[dict[str, int], dict[str, int], int]:
    """Each lane's top (as deep as its most instances, ``depth``), then each band's, and
    the top of what comes below them (the other row)."""
    y, lane_y, band_y = top, {}, {}
    for k, cells in depth.items():
        lane_y[k] = y
        y += cells * (CELL_H + GAP) + 14
    y += 6
    for k in band_keys:
        band_y[k] = y
        y += BAND_H + 4
    return lane_y, band_y, y


def _column_labels(drawn: list[int | None], steps: list[dict], observed: int) -> tuple[list[str], list[str | None]]:
    """Each column's label ("initial", "k: the action", or what a gap leaves out) and its
    step's refusal (or None); ``observed``: how many observations the trace holds."""
    labels, rejected = [], []
    for c, i in enumerate(drawn):
        if i is None:
            left_out = (drawn[c + 1] if c + 1 < len(drawn) else observed) - drawn[c - 1] - 1
            labels.append(f"… {left_out} step{'' if left_out == 1 else 's'} not drawn …")
        else:
            labels.append(f"{i - 1}: {action_label(steps[i - 1]['action'])}" if i else "initial")
        rejected.append(None if not i else steps[i - 1].get("rejected"))
    return labels, rejected


def _settle_column(trace: dict[str, Any], drawn: list[int | None]) -> int | None:
    """The first column drawn of the settle phase, if the trace has one."""
    settle_from = trace.get("settle_from")
    if settle_from is None or settle_from >= len(trace["steps"]):
        return None
    return next((c for c, i in enumerate(drawn) if i is not None and i >= settle_from + 1), None)


def _heading(trace: dict[str, Any], labels: list[str]) -> tuple[str, int, list[str], int]:
    """The title, the picture's width, the message's lines and the lanes' top: as wide as
    the steps need or the title (bold, 15 px); the message wraps within that, and the
    rotated action labels sit between it and the lanes."""
    longest = max(len(label) + 2 for label in labels)  # (room for " (rejected)" was left above every one)
    title = _cut(f"{trace['model']} / {trace['variant']}: {what_broke(trace)}", TITLE_CHARS)
    width = max(LEFT + len(labels) * COL + int(longest * 6.2 * 0.57) + 10, int(len(title) * 9.2) + 20, 480)
    per_line = max(30, int((width - 20) / 6.2))
    message = [("#c92a2a", line) for line in _wrapped(trace["violation"]["message"], per_line, MESSAGE_LINES)]
    if trace.get("title"):  # the story the file tells (a postmortem's picture needs it: a user)
        message = [("#333", line) for line in _wrapped(trace["title"], per_line, 2)] + message
    if trace["violation"].get("cause"):
        message += [("#555", line) for line in _wrapped(f"cause: {cause_said(trace)}", per_line, 3)]
    top = HEAD + 14 * (len(message) - 1) + int(longest * 6.2 * 0.82) + 16
    return title, width, message, top


def _wrapped(text: Any, per_line: int, lines: int) -> list[str]:
    """``text`` in at most ``lines`` lines of ``per_line`` characters (cut first: more than
    the lines hold still overflows them, and textwrap splits it all)."""
    said = str(text)[:(lines + 1) * per_line]
    return textwrap.wrap(said, per_line, max_lines=lines, placeholder=" …", break_on_hyphens=False) or [""]


def _over_gaps(drawn: list[int | None], values: list) -> list:
    """``values``, one per column, with a gap column's as the column's before it: nothing is
    written in the gap, and what the steps it leaves out changed is written after it, as a
    change (a lane's new site, the other row's new text)."""
    return [values[c - 1] if i is None else v for c, (i, v) in enumerate(zip(drawn, values))]


def _header(trace: dict[str, Any], at: _Layout, lane_name: str) -> list[str]:
    """The document's opening, the title, the message and what the picture shows."""
    height = at.legend_y + 64
    steps = len(trace["steps"])
    return [
        (f'<svg xmlns="http://www.w3.org/2000/svg" width="{at.width}" height="{height}" '
         f'viewBox="0 0 {at.width} {height}" font-family="Helvetica, Arial, sans-serif" font-size="11">'),
        f"<title>{escape(trace['variant'])}: {escape(what_broke(trace))}</title>",
        HATCH,
        '<rect width="100%" height="100%" fill="white"/>',
        f'<text x="10" y="20" font-size="15" font-weight="bold">{escape(at.title)}</text>',
        *(f'<text x="10" y="{38 + 14 * i}" fill="{fill}">{escape(line)}</text>'
          for i, (fill, line) in enumerate(at.message)),
        (f'<text x="10" y="{54 + at.below}" fill="#555">engine {escape(str(trace.get("engine")))}, '
         f'{steps} step{"" if steps == 1 else "s"}; one row per {escape(lane_name)}</text>'),
    ]


def _settling(at: _Layout) -> list[str]:
    """The settle phase shaded, where the trace has one."""
    if at.settle_col is None:
        return []
    sx = LEFT + at.settle_col * COL
    return [(f'<rect x="{sx}" y="{at.top - 8}" width="{(at.columns - at.settle_col) * COL}" '
            f'height="{at.bottom - at.top + 8}" fill="{SETTLE_FILL}"/>'),
            (f'<line x1="{sx}" x2="{sx}" y1="{at.top - 8}" y2="{at.bottom + 12}" stroke="#495057" '
             'stroke-dasharray="3,3"/>'),
            (f'<text x="{sx + 4}" y="{at.bottom + 10}" fill="#495057" font-style="italic">'
            f'users stop; the platform settles</text>')]


def _step_labels(at: _Layout) -> list[str]:
    """Each column's action, rotated; a refused one grey, the breaking one red."""
    out = []
    for c, text in enumerate(at.labels):
        cx = LEFT + c * COL + COL // 2
        reason = at.rejected[c]
        rejected = bool(reason)
        colour = REJECTED_INK if rejected else ("#c92a2a" if c == at.bad_col else "#212529")
        why = ""
        if rejected:
            text += " (rejected)"
            why = f"<title>rejected: {escape(str(reason))}</title>"  # the reason, as a tooltip
        struck = ' text-decoration="line-through"' if rejected else ""
        out.append(f'<text transform="translate({cx + 3},{at.top - 12}) rotate(-55)" fill="{colour}"{struck}>'
                   f"{why}{escape(text)}</text>")
    return out


def _lane(at: _Layout, k: str) -> list[str]:
    """One lane: its name and first label, then its instances at each step, stacked upwards
    (what changes of its label is written under the step that changed it)."""
    ly = at.lane_y[k]
    floor = ly + at.depth[k] * (CELL_H + GAP)  # bars stack upwards from the lane's floor
    first = next((ls[k][0] for ls in at.per_step if k in ls), "")
    # (two lines, a lane being two cells deep at least: "site A+ci image tag=relea…" was cut)
    shown = _wrapped(first, LABEL_CHARS, 2) if first else [""]
    out = [f'<text x="10" y="{ly + 10}" font-weight="bold">{escape(k)}</text>']
    out += [(f'<text x="10" y="{ly + 22 + 11 * i}" fill="#666" font-size="9"><title>{escape(k)}: {escape(first)}'
             f"</title>{escape(_cut(line, LABEL_CHARS))}</text>") for i, line in enumerate(shown)]
    out.append(f'<line x1="{LEFT}" x2="{LEFT + at.columns * COL}" y1="{floor + 5}" y2="{floor + 5}" stroke="#e9ecef"/>')
    for c, ls in enumerate(at.per_step):
        if k in ls:
            out += _instances(k, LEFT + c * COL + (COL - CELL_W) // 2, floor, *ls[k])
            out += _label_change(at, k, c, floor)
    return out


#: the most characters of the title, and lines of the message, the heading shows (a trace's
#: texts are anyone's: a 200,000-character variant name made a picture 1,840,360 px wide,
#: a 2 MB message one 224,539 px tall; the text report and the HTML page say them whole)
TITLE_CHARS = 160
MESSAGE_LINES = 12
#: characters of a changed label a column shows under its cells (the rest in its tooltip)
CHANGE_CHARS = 14
#: characters of a lane's label beside its name (the rest in its tooltip)
LABEL_CHARS = 26


def _label_change(at: _Layout, k: str, c: int, floor: int) -> list[str]:
    """Under a lane's cells, what of its label changed in this step: a swap's new site,
    an image reference written (``site B``, ``image digest=1``), the rest in a tooltip."""
    before, now = (at.parts[c - 1].get(k), at.parts[c].get(k)) if c else (None, None)
    if before is None or now is None:
        return []
    added = [part for part in now if part not in before]
    dropped = [part.split()[0] for part in before if part not in now]  # its field's name: "no image"
    changed = " ".join(added) or " ".join(f"no {name}" for name in dropped)
    if not changed:  # the same parts (in another order, perhaps)
        return []
    shown = _cut(changed, CHANGE_CHARS)
    return [(f'<text x="{LEFT + c * COL + 3}" y="{floor + 12}" font-size="8" fill="#1c7ed6">'
            f"<title>{escape(k)}: {escape(changed)}</title>{escape(shown)}</text>")]


def _instances(k: str, cx: int, floor: int, label: str, statuses: list[str], notes: list[str]) -> list[str]:
    """One lane's cells at one step: a bar per instance, the ones past ``MAX_CELLS`` in one."""
    out = []
    if not statuses:
        out.append(f'<rect x="{cx}" y="{floor - 2}" width="{CELL_W}" height="2" fill="#adb5bd">'
                   f"<title>{escape(k)}: 0 instances</title></rect>")
    if len(statuses) > MAX_CELLS:  # the first ones, then the rest counted in one cell
        rest = statuses[MAX_CELLS - 1:]
        counts = ", ".join(f"{count} {escape(st)}" for st, count in Counter(rest).items())
        iy = floor - MAX_CELLS * (CELL_H + GAP)
        out.append(f'<rect x="{cx}" y="{iy}" width="{CELL_W}" height="{CELL_H}" rx="2" fill="#495057">'
                   f"<title>{escape(k)} instances {MAX_CELLS - 1}-{len(statuses) - 1}: {counts}</title>"
                   "</rect>")
        out.append(f'<text x="{cx + CELL_W // 2}" y="{iy + CELL_H - 2}" font-size="8" '
                   f'text-anchor="middle" fill="white">+{len(rest)}</text>')
        statuses = statuses[:MAX_CELLS - 1]
    for i, status in enumerate(statuses):
        iy = floor - (i + 1) * (CELL_H + GAP)
        out += _cell(cx, iy, CELL_W, CELL_H, status,
                     f"<title>{escape(k)} instance {i}: {escape(status)} ({escape(notes[i] or label)})</title>")
        if notes[i]:
            out.append(f'<text x="{cx + CELL_W // 2}" y="{iy + CELL_H - 2}" font-size="8" font-weight="bold" '
                       f'text-anchor="middle" fill="{ink(colour(STATUS_COLOURS, status))}">'
                       f"{escape(_short_note(notes[i]))}</text>")
    return out


def _short_note(note: str) -> str:
    """What an instance runs, in a cell: the last field's initial and value (``digest 1``:
    ``d1``, as the messages write a digest; a bare ``1`` read as any number)."""
    parts = note.split()
    return f"{parts[-2][:1]}{parts[-1]}" if len(parts) >= 2 else parts[-1]


def _band(at: _Layout, k: str) -> list[str]:
    """One deployment's band: a cell per step coloured by its state, named where it changes,
    in as much of the name as its run of columns holds (the whole in each cell's tooltip)."""
    by = at.band_y[k]
    out = [f'<text x="10" y="{by + 12}" font-weight="bold">{escape(k)}</text>']
    states = [bs.get(k) for bs in at.band_steps]
    words = []
    for c, state in enumerate(states):
        if state is None:
            continue
        fill = colour(STATE_COLOURS, state.split("/")[0])
        out.append(f'<rect x="{LEFT + c * COL}" y="{by}" width="{COL}" height="{BAND_H}" fill="{fill}">'
                   f"<title>{escape(k)}: {escape(state)}</title></rect>")
        if c == 0 or states[c - 1] != state:
            run = next((n for n in range(1, len(states) - c) if states[c + n] != state), len(states) - c)
            words.append(f'<text x="{LEFT + c * COL + 3}" y="{by + 12}" font-size="9" fill="{ink(fill)}">'
                         f"{escape(_fitted(state, run * COL - 6))}</text>")
    return out + words  # the words on top of the band's later cells


#: the width of a character of a band's name (9 px Helvetica, its widest capitals)
CHAR_W = 6.4


def _fitted(text: str, width: float, char_w: float = CHAR_W) -> str:
    """``text`` cut to ``width`` pixels, ending in "…" where cut (a state that lasts one
    column wrote its whole name over the next one's)."""
    return _cut(text, int(width / char_w))


def _cut(text: str, chars: int) -> str:
    """``text`` in at most ``chars`` characters, ending in "…" where cut (one at least)."""
    return text if len(text) <= chars else text[:max(1, chars - 1)] + "…"


def _other(at: _Layout) -> list[str]:
    """The other row: its text at the first column, then under each step what it changed,
    a line per part (``release=1``, ``hooks=2``; ``no hooks`` for one gone), each cut to
    the column (the whole text in the tooltip)."""
    if at.other is None:
        return []
    title, texts = at.other
    oy = at.other_y
    out = [f'<text x="10" y="{oy + 12}" font-weight="bold">{escape(title)}</text>',
           (f'<rect x="{LEFT}" y="{oy}" width="{at.columns * COL}" height="{_other_height(at.other_lines)}" '
           'fill="#f8f9fa"/>')]
    for c, lines in enumerate(at.other_lines):
        tip = f"<title>{escape(title)}: {escape(texts[c])}</title>"
        for i, line in enumerate(lines):
            out.append(f'<text x="{LEFT + c * COL + 3}" y="{oy + 12 + 10 * i}" font-size="8" '
                       f'fill="{"#1c7ed6" if c else "#495057"}">{tip}{escape(_fitted(line, COL - 6, 5.2))}</text>')
    return out


def _other_height(lines: list[list[str]]) -> int:
    """The other row's height: a line for each part the busiest column writes."""
    return BAND_H + 10 * (max(map(len, lines), default=1) - 1)


def _breaking_column(at: _Layout) -> list[str]:
    bx = LEFT + at.bad_col * COL
    return [(f'<rect x="{bx + 1}" y="{at.top - 8}" width="{COL - 2}" height="{at.bottom - at.top + 8}" '
            f'fill="none" stroke="#c92a2a" stroke-width="2.5"/>'),
            (f'<text x="{bx + COL // 2}" y="{at.bottom + 24}" text-anchor="middle" fill="#c92a2a" '
            f'font-weight="bold">breaks here</text>')]


def _legend(at: _Layout) -> list[str]:
    """The instance statuses and deployment states the picture shows, a row each; the
    statuses' row also says how a lane with no instance looks."""
    out = []
    seen_status = list(dict.fromkeys(s for ls in at.per_step for _, ss, _ in ls.values() for s in ss))
    seen_state = list(dict.fromkeys(v.split("/")[0] for bs in at.band_steps for v in bs.values()))
    for names, table, row in ((seen_status, STATUS_COLOURS, 0), (seen_state, STATE_COLOURS, 1)):
        lx = 10
        ly = at.legend_y + 14 + row * 18
        for value in names:
            if table is STATUS_COLOURS:
                out += _cell(lx, ly - 9, 12, 10, value, "")
            else:
                out.append(f'<rect x="{lx}" y="{ly - 9}" width="12" height="10" fill="{colour(table, value)}"/>')
            out.append(f'<text x="{lx + 16}" y="{ly}">{escape(value)}</text>')
            lx += 24 + 7 * len(value)
        if table is STATUS_COLOURS and any(not ss for ls in at.per_step for _, ss, _ in ls.values()):
            out.append(f'<rect x="{lx}" y="{ly - 2}" width="12" height="2" fill="#adb5bd"/>')
            out.append(f'<text x="{lx + 16}" y="{ly}">no instance</text>')
    return out
