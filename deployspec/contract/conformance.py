"""Conformance: the implementation observes what a reference variant observes.

A stricter verdict than the spec's: after every step the implementation's
observation must equal the reference's, and it must accept exactly the actions
the reference accepts (the refusal's wording is free). It is written as one
more trace property, ``conforms_to_<variant>``, whose memory is the reference
state, so the Hypothesis machine shrinks a divergence like any violation and
the trace file replays it like any other (``Model.property`` resolves the name).
"""

from __future__ import annotations

from typing import Any

from deployspec import exception_notes
from deployspec.reference.core import Rejected
from deployspec.render_text import action_label
from deployspec.spec.core import Property, Step
from deployspec.text import escaped

PREFIX = "conforms_to_"


def name_for(variant: str) -> str:
    return PREFIX + variant


def conformance_property(model, variant_name: str, config: Any, subject: str = "implementation") -> Property:
    """``subject`` names what is compared with the reference in the messages: the
    implementation, or the variant a conformance trace is replayed on."""
    variant = model.variant(variant_name)

    def advance(state, step: Step):
        try:
            return _advance(state, step)
        except (Exception, SystemExit) as exc:  # the reference's rule (a design handed in) raised
            mark_reference(exc, variant_name)
            raise

    def _advance(state, step: Step):
        if step.index == 0:
            problems = differences(model.observe(state), step.before, variant_name, implementation=subject)
            if problems:
                return state, _message("the initial observation", variant_name, problems)
        result = variant.step(state, model.action(step.action))
        where = f"step {step.index} ({action_label(step.action)})"
        if isinstance(result, Rejected):
            if step.rejected is None:
                return state, f"{where}: {variant_name} rejects it ({result.reason}), {_the(subject)} accepted it"
            result = state
        elif step.rejected is not None:
            return result, f"{where}: {variant_name} accepts it, {_the(subject)} rejected it ({step.rejected})"
        problems = differences(model.observe(result), step.after, variant_name, implementation=subject)
        if problems:
            return result, _message(f"after {where} the observation", variant_name, problems)
        return result, None

    return Property(
        name=name_for(variant_name),
        model=model.name,
        kind="trace",
        doc=(f"After every step the implementation's observation equals the reference variant "
             f"{variant_name}'s, and it accepts exactly the actions {variant_name} accepts."),
        initial=model.initial_state(config),
        advance=advance,
    )


#: the attribute of an exception that names the reference variant whose rule raised it
_RAISED_IN = "_deployspec_reference"


def mark_reference(exc: BaseException, variant: str) -> None:
    """Note on ``exc`` that the reference ``variant`` raised it: a replay of a conformance
    trace then blames that design, not the target or the implementation (the last one to
    raise it: two designs may share a rule that raises one exception object it keeps)."""
    exception_notes.keep(exc, _RAISED_IN, variant)


def reference_raised(exc: BaseException) -> str | None:
    """The reference variant :func:`mark_reference` noted on ``exc``, or None."""
    return exception_notes.kept(exc, _RAISED_IN)


def _the(subject: str) -> str:
    return "the implementation" if subject == "implementation" else subject


def _message(what: str, variant: str, problems: list[str]) -> str:
    more = f" (and {len(problems) - 1} more difference(s))" if len(problems) > 1 else ""
    return f"{what} differs from {variant}: {problems[0]}{more}"


def differences(expected: Any, actual: Any, reference: str = "reference", path: str = "",
                implementation: str = "implementation") -> list[str]:
    """Every place where two observations differ, as ``path: reference X, implementation Y``."""
    if isinstance(expected, dict) and isinstance(actual, dict):
        return _dict_differences(expected, actual, reference, path, implementation)
    if isinstance(expected, list) and isinstance(actual, list):
        return _list_differences(expected, actual, reference, path, implementation)
    if expected != actual or type(expected) is not type(actual):
        return [f"{path or 'observation'}: {reference} {_show(expected)}, {implementation} {_show(actual)}"]
    return []


def _dict_differences(expected: dict, actual: dict, reference: str, path: str, impl: str) -> list[str]:
    """Two objects' keys each lacks, and their differences under the keys both have, in the reference's order."""
    out = []
    for key in list(expected) + [k for k in actual if k not in expected]:
        sub = f"{path}.{key}" if path else str(key)
        if key not in actual:
            out.append(f"{sub}: {reference} {_show(expected[key])}, {impl} lacks it")
        elif key not in expected:
            out.append(f"{sub}: {reference} lacks it, {impl} {_show(actual[key])}")
        else:
            out += differences(expected[key], actual[key], reference, sub, impl)
    return out


def _list_differences(expected: list, actual: list, reference: str, path: str, impl: str) -> list[str]:
    """Two lists: numbered entries paired by id, objects by place (then how many each has),
    and lists of plain values of another length said whole."""
    here = path or "observation"
    ids = _ids(expected), _ids(actual)
    if None not in ids and ids[0] != ids[1]:  # numbered entries: paired by id, not by place
        return _by_id(expected, actual, ids, reference, path, impl)
    if len(expected) != len(actual) and not all(isinstance(x, dict) for x in expected + actual):
        return [f"{here}: {reference} {_show(expected)}, {impl} {_show(actual)}"]
    out = []
    for i, (e, a) in enumerate(zip(expected, actual)):
        out += differences(e, a, reference, f"{path}[{i}]", impl)
    if len(expected) != len(actual):
        entries = "entry" if len(expected) == 1 else "entries"
        out.append(f"{here}: {reference} has {len(expected)} {entries}, {impl} {len(actual)}")
    return out


def _ids(entries: list) -> list | None:
    """The ``id`` of each entry, when every entry is an object with a distinct one; else None."""
    ids = [e.get("id") if isinstance(e, dict) else None for e in entries]
    if any(i is None or isinstance(i, dict | list) for i in ids) or len(set(ids)) < len(ids):
        return None
    return ids


def _by_id(expected: list, actual: list, ids: tuple[list, list], reference: str, path: str,
           impl: str) -> list[str]:
    """Lists of numbered entries (processes, deployments) whose ids differ: the entries one
    side lacks, then the differences of those both have, each named by its id
    (``processes[id=1].instances``; by place, an implementation that still listed a removed
    process showed every later one as changed: ``processes[0].id: capi-safe 1, implementation 0``)."""
    here = path or "observation"
    theirs = dict(zip(ids[1], actual))
    out = [f"{here}: {impl} lacks the entry with id {_show(k)}, which {reference} has"
           for k in ids[0] if k not in theirs]
    out += [f"{here}: {impl} has an entry with id {_show(k)}, which {reference} lacks"
            for k in ids[1] if k not in set(ids[0])]
    for k, e in zip(ids[0], expected):
        if k in theirs:
            out += differences(e, theirs[k], reference, f"{path}[id={_show(k)}]", impl)
    common = [k for k in ids[0] if k in theirs]
    if not out and common != [k for k in ids[1] if k in common]:
        out.append(f"{here}: the same entries in another order ({reference} ids {_show(ids[0])}, {impl} "
                   f"{_show(ids[1])})")
    return out


def _show(value: Any) -> str:
    import json

    text = json.dumps(value)
    return text if len(text) <= 60 else text[:57] + "..."


def divergence_report(trace: dict) -> str:
    """The readable diff of a conformance trace: both views at the diverging step; the
    trace's texts escaped (a newline in its message would start a line of its own)."""
    from deployspec.models import get_model
    from deployspec.render_text import capi_state

    model = get_model(trace["model"])
    variant_name = trace["property"][len(PREFIX):]
    variant = model.variant(variant_name)
    state_of = getattr(model, "render_state", None) or capi_state
    state = model.initial_state(model.config_from_json(trace["config"]))
    at = trace["violation"]["step"]
    steps = trace["steps"]
    expected = model.observe(state)
    if differences(expected, trace["initial"]) or not 0 <= at < len(steps):
        # before the first step (reported with step 0, whose own observations may agree)
        where, actual = "the initial observation", trace["initial"]
    else:
        for step in steps[: at + 1]:
            result = variant.step(state, model.action(step["action"]))
            state = state if isinstance(result, Rejected) else result
        where, actual = f"step {at} ({action_label(steps[at]['action'])})", steps[at]["observation"]
        expected = model.observe(state)
    width = max(len(variant_name), len("implementation"))
    lines = [f"first divergence from {variant_name} at {where}:"]
    for who, obs in ((variant_name, expected), ("implementation", actual)):
        procs, deps = state_of(obs)
        lines.append(f"  {who:{width}}  {procs:48} {deps}")
    for d in differences(expected, actual, variant_name) or [trace["violation"]["message"]]:
        lines.append(f"    {d}")
    return "\n".join(map(escaped, lines))  # each its own line, whatever the trace's texts hold
