"""A counterexample as one self-contained HTML page: the SVG timeline and the step table."""

from __future__ import annotations

import html
import shlex
from typing import Any

from deployspec import render_svg
from deployspec.render_text import (
    action_label,
    capi_state,
    cause_said,
    column_titles,
    divergence,
    what_broke,
)
from deployspec.text import escaped
from deployspec.text import markup as escape  # also control characters, which XML forbids
from deployspec.traces import found_by


def render(trace: dict[str, Any], source: str | None = None) -> str:
    """The page of ``trace``, read from the file ``source`` (named in its replay line)."""
    from deployspec.models import get_model

    model = get_model(trace["model"])
    state_of = model.render_state or capi_state
    fault = trace.get("fault")
    bad = None if fault else trace["violation"]["step"]
    settle_from = trace.get("settle_from")
    lanes, others = state_of(trace["initial"])  # before the first step: what a property may compare with
    rows = [(f'<tr class="initial"><td></td><td>(initial)</td><td><code>{escape(lanes)}</code></td>'
            f'<td><code>{escape(others)}</code></td></tr>')]
    for i, step in enumerate(trace["steps"]):
        if settle_from is not None and i == settle_from:
            rows.append('<tr class="settle"><td colspan="4">users stop; the platform settles</td></tr>')
        lanes, others = state_of(step["observation"])
        label = action_label(step["action"])
        if step.get("rejected"):
            label += f" — rejected: {step['rejected']}"
        cls = ' class="bad"' if i == bad else (' class="rejected"' if step.get("rejected") else "")
        rows.append(f"<tr{cls}><td>{i}</td><td>{escape(label)}</td><td><code>{escape(lanes)}</code></td>"
                    f"<td><code>{escape(others)}</code></td></tr>")
    if fault:  # the action it failed at, where its step would be
        rows.append(f'<tr class="bad"><td>{len(trace["steps"])}</td><td>{escape(action_label(fault["action"]))}</td>'
                    f'<td colspan="2">FAULT: {escape(fault["cause"])}</td></tr>')
    elif bad == -1 or bad >= len(trace["steps"]):
        rows.append(f'<tr class="bad"><td></td><td colspan="3">after settling: '
                    f'{escape(trace["violation"]["message"])}</td></tr>')
    title = f"{trace['variant']}: {what_broke(trace)}"
    key_lanes, key_other = model.render_key  # how a cell reads, as the text report says it
    lanes_title, other_title = column_titles(model)
    return f"""<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8"><title>{escape(title)}</title>
<style>
body {{ font-family: Helvetica, Arial, sans-serif; margin: 1.5em; color: #212529; }}
table {{ border-collapse: collapse; margin-top: 1em; }}
td, th {{ border-bottom: 1px solid #dee2e6; padding: 3px 8px; text-align: left; font-size: 13px; }}
tr.bad {{ background: #ffe3e3; font-weight: bold; }}
tr.rejected {{ color: #868e96; }}
tr.initial {{ color: #495057; font-style: italic; }}
tr.settle td {{ font-style: italic; color: #868e96; background: #f1f3f5; }}
.meta {{ color: #555; }}
tr.key td {{ color: #868e96; font-size: 11px; }}
</style></head><body>
<h1>{escape(title)}</h1>
{f'<p>{escape(trace["title"])}</p>' if trace.get("title") else ""}
<p><strong>{escape(trace["violation"]["message"])}</strong></p>
{f'<p>cause: <code>{escape(cause_said(trace))}</code></p>' if trace["violation"].get("cause") else ""}
<p class="meta">model {escape(trace["model"])}, {escape(found_by(trace))}, {len(trace["steps"])} step{"" if len(trace["steps"]) == 1 else "s"}.
Replay: <code>{escape(replay_line(trace, source))}</code>.</p>
{render_svg.render(trace)}
<table><thead><tr><th>#</th><th>action</th><th>{escape(lanes_title)}</th><th>{escape(other_title)}</th></tr>
<tr class="key"><td></td><td></td><td><code>{escape(key_lanes)}</code></td><td><code>{escape(key_other)}</code></td></tr></thead>
<tbody>
{chr(10).join(rows)}
</tbody></table>
{f'<pre>{html.escape(escaped(parted, keep=chr(10)))}</pre>' if (parted := divergence(trace)) else ""}
</body></html>
"""


def replay_line(trace: dict[str, Any], source: str | None) -> str:
    """The command that replays the trace shown: its file (``FILE`` when drawn from no
    file of a name), and for an implementation's trace the option naming it, as the
    contract run that found it recorded it (``extra.implementation``; a placeholder where
    it did not: the page is a CI's artifact, read where the run's output is not)."""
    from deployspec.contract.cli import DEFAULT_TIMEOUT, replay_words
    from deployspec.handing_in import handing_in

    line = f"deployspec replay {shlex.quote(source) if source else 'FILE'}"
    if trace.get("engine") != "contract":
        return handing_in(trace["variant"]) + line
    found_on = (trace.get("extra") or {}).get("implementation")
    found_on = found_on if isinstance(found_on, dict) else {}
    kind = next((k for k in ("exec", "python") if isinstance(found_on.get(k), str)), None)
    if kind is None:
        return line + " --exec PROGRAM (or --python MODULE:FACTORY: the implementation it was found on)"
    timeout = found_on.get("timeout")
    timeout = timeout if isinstance(timeout, (int, float)) and not isinstance(timeout, bool) and timeout > 0 \
        else DEFAULT_TIMEOUT
    reference = found_on.get("reference")  # (a design handed in as the run's --reference: the variable too)
    return (handing_in(reference) if isinstance(reference, str) else "") + \
        replay_words(source or "FILE", kind, found_on[kind], timeout)
