"""The text picture of a trace: one line per step, the breaking step marked."""

from __future__ import annotations

from typing import Any

from deployspec.spec.core import action_label
from deployspec.text import escaped
from deployspec.traces import found_by

ABBREV = {"RUNNING": "R", "STARTING": "s", "CRASHED": "x"}


def capi_state(obs: dict[str, Any]) -> tuple[str, str]:
    procs = " ".join(
        f"P{p['id']}[dr{p['droplet']}]:{''.join(ABBREV[i] for i in p['instances']) or '0'}"
        for p in obs["processes"]
    )
    deps = " ".join(
        f"d{d['id']}:{d['state']}" + (f"/{d['status_reason']}" if d["status_reason"] != d["state"] else "")
        for d in obs["deployments"]
    )
    return procs or "-", deps or "-"


def render(trace: dict[str, Any]) -> str:
    """A person's view of a trace file. Every text the trace brings is escaped on its own
    line: a newline in a title or a reason cannot start a line that reads as the tool's."""
    from deployspec.models import get_model

    message = escaped(trace["violation"]["message"])
    fault = trace.get("fault")
    head = [
        escaped(f"{trace['model']} / {trace['variant']}: {what_broke(trace)} ({found_by(trace)})"),
        f"  {message}",
        "",
    ]
    if trace["violation"].get("cause"):
        head.insert(2, f"  cause: {escaped(cause_said(trace))}")
    if trace.get("title"):
        head.insert(1, f"  {escaped(trace['title'])}")
    body = render_steps(
        get_model(trace["model"]), trace["steps"], None if fault else trace["violation"]["step"],
        trace.get("settle_from"), trace["initial"]
    )
    if fault:  # the action it failed at, in the table's place for a next step
        body.append(f">>{len(trace['steps']):>3}  {escaped(action_label(fault['action']))}  "
                    f"FAULT: {escaped(fault['cause'])}")
    elif trace["violation"]["step"] == -1:
        body.append(">> after settling: " + message)
    return "\n".join(head + body)


def cause_said(trace: dict[str, Any]) -> str:
    """The violation's cause, with what it means where its property says (``Property.meanings``:
    ``crash_retry: cobalt #316 scenarios 2 and 4: ...``)."""
    from deployspec.models import get_model

    cause = trace["violation"]["cause"]
    prop = next((p for p in get_model(trace["model"]).properties if p.name == trace["property"]), None)
    meaning = prop.meaning(cause) if prop is not None else None
    return f"{cause}: {meaning}" if meaning else cause


def what_broke(trace: dict[str, Any]) -> str:
    """``P violated``, or for an implementation's fault ``implementation fault while checking P``:
    every view's heading."""
    if trace.get("fault"):
        return f"implementation fault while checking {trace['property']}"
    return f"{trace['property']} violated"


def column_titles(model) -> tuple[str, str]:
    """The lanes' and the other column's titles, the lanes' with how an instance reads (the
    text report's and the HTML page's)."""
    return getattr(model, "render_titles", None) or (
        f"{model.lanes_plural} (R routable, s starting, x crashed, 0 none)", "deployments")


def render_steps(model, steps: list[dict], bad: int | None, settle_from: int | None,
                 initial: dict | None = None) -> list[str]:
    """One line per step: the action, then each lane and the deployments after it; first,
    with ``initial``, what the platform was before the first step (a property that compares
    with it, such as what production ran before a swap, reads it there)."""
    state_of = model.render_state or capi_state
    lanes_label, other = column_titles(model)
    rows = []
    for step in steps:
        lanes, deps = state_of(step["observation"])
        label = action_label(step["action"]) + (" REJECTED" if step.get("rejected") else "")
        rows.append((escaped(label), escaped(lanes), escaped(deps)))
    first = [escaped(part) for part in state_of(initial)] if initial is not None else None
    # columns as wide as their widest cell (a slot's crash_retry(slot=production, instance=0)),
    # within reason: an implementation's thousand instances overflow rather than widen every row
    aw = max([34] + [len(label) for label, _, _ in rows if len(label) <= 60])
    lw = max([48] + [len(lanes) for _, lanes, _ in rows + ([("", *first)] if first else []) if len(lanes) <= 90])
    lines = [f"{'':2}{'#':>3}  {'action':{aw}} {lanes_label:{lw}} {other}"]
    key_lanes, key_other = model.render_key  # (capi: "d" names droplets on the left, deployments on the right)
    lines.append(f"{'':2}{'':>3}  {'':{aw}} {key_lanes:{lw}} {key_other}")
    if first is not None:
        lines.append(f"{'':2}{'':>3}  {'(initial)':{aw}} {first[0]:{lw}} {first[1]}")
    for i, (step, (label, lanes, deps)) in enumerate(zip(steps, rows)):
        if settle_from is not None and i == settle_from:
            lines.append(f"{'':6}-- users stop; the platform settles --")
        mark = ">>" if i == bad else "  "
        lines.append(f"{mark}{i:>3}  {label:{aw}} {lanes:{lw}} {deps}")
        if step.get("rejected"):
            lines.append(f"{'':6}  rejected: {escaped(step['rejected'])}")
    return lines


def divergence(trace: dict[str, Any]) -> str:
    """Under a conformance trace's table, where the implementation parted from the
    reference, both views and every difference (the violation's line names the first
    and counts the rest), as the contract run that found it printed it; "" for others."""
    from deployspec.contract.conformance import PREFIX, divergence_report
    from deployspec.models import UsageError

    if not trace["property"].startswith(PREFIX) or trace.get("fault"):  # (a fault: no step parted)
        return ""
    try:
        return divergence_report(trace) + "\n"
    except UsageError as exc:  # a reference design not handed in here: what the run recorded
        from deployspec.models import get_model

        reference = trace["property"][len(PREFIX):]
        if reference in get_model(trace["model"]).variants:  # (another reason: said as it is)
            return f"(where it parted from the reference is not shown: {exc})\n"
        return (f"{escaped(trace['violation']['message'])}\n(the reference's whole view is not shown: "
                f"{escaped(reference)} is not a design known here; DEPLOYSPEC_VARIANTS=MODULE hands it in: "
                "docs/variants.md)\n")
    except (Exception, SystemExit) as exc:  # the reference's rule raised: a design handed in, said
        from deployspec import variant_plugins

        why = variant_plugins.fault(trace["property"][len(PREFIX):], exc)
        if why is None:  # a shipped variant's: deployspec's own bug
            raise
        return f"(where it parted from the reference is not shown: {why})\n"
