"""A counterexample in the Informal Trace Format (ITF) of Apalache and Quint.

ITF (https://apalache-mc.org/docs/adr/015adr-trace.html) is a trace as plain
JSON: ``#meta``, the list of ``vars`` and one object per state. Each state here
is an observation (its top-level keys are the variables) plus ``action`` (the
action that led to it, ``{"type": "init"}`` for the first) and ``rejected``
(the refusal's reason, ``""`` when accepted), so tools that read ITF (the Quint
REPL, ITF viewers, MBT harnesses) can load our counterexamples.

ITF has no null: ``None`` becomes ``{"#unserializable": "null"}``. Integers
beyond 2**53 would be ``{"#bigint": "..."}``; lists stay JSON arrays
(sequences) and objects records.
"""

from __future__ import annotations

from typing import Any

FORMAT_DESCRIPTION = "https://apalache-mc.org/docs/adr/015adr-trace.html"
SAFE_INT = 2**53 - 1


def value(v: Any) -> Any:
    """A JSON value of an observation, as an ITF expression."""
    if v is None:
        return {"#unserializable": "null"}
    if isinstance(v, (bool, str, float)):
        return v
    if isinstance(v, int):
        return v if -SAFE_INT <= v <= SAFE_INT else {"#bigint": str(v)}
    if isinstance(v, (list, tuple)):
        return [value(x) for x in v]
    if isinstance(v, dict):
        return {str(k): value(x) for k, x in v.items()}
    return {"#unserializable": repr(v)}


def render(trace: dict[str, Any], source: str | None = None) -> dict[str, Any]:
    obs_keys = list(trace["initial"])
    states = []
    entries = [({"type": "init"}, None, trace["initial"])] + [
        (s["action"], s.get("rejected"), s["observation"]) for s in trace["steps"]
    ]
    for i, (action, rejected, obs) in enumerate(entries):
        state = {"#meta": {"index": i}, "action": value(action), "rejected": rejected or ""}
        state.update({k: value(obs.get(k)) for k in obs_keys})
        states.append(state)
    meta = {
        "format": "ITF",
        "format-description": FORMAT_DESCRIPTION,
        "source": source or f"deployspec {trace['model']}/{trace['variant']}",
        "description": f"{trace['property']} violated: {trace['violation']['message']}",
        "deployspec": {
            "model": trace["model"],
            "variant": trace["variant"],
            "property": trace["property"],
            "engine": trace.get("engine"),
            "seed": value(trace.get("seed")),
            # state index = step index + 1 (state 0 is the initial one)
            "violation_state": len(entries) - 1 if trace["violation"]["step"] < 0 else trace["violation"]["step"] + 1,
            # the state the settle phase starts from (after the last user step): always a
            # state, also when settling had nothing to do (the first settle step's state,
            # as before, was past the end then)
            "settle_from_state": value(None if trace.get("settle_from") is None else trace["settle_from"]),
        },
    }
    return {"#meta": meta, "vars": ["action", "rejected"] + obs_keys, "states": states}
