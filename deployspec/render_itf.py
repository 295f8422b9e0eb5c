"""A counterexample in the Informal Trace Format (ITF) of Apalache and Quint.

ITF (https://apalache-mc.org/docs/adr/015adr-trace.html) is a trace as plain
JSON: ``#meta``, the list of ``vars`` and one object per state. Each state here
is an observation (its top-level keys are the variables) plus ``action`` (the
action that led to it) and ``rejected`` (the refusal's reason, ``""`` when
accepted).

Values are written so that readers which type the trace can load it (Quint's
``ofItfNormalized``, itf-rs into Rust types, itf-py), each variable keeping one
type from state to state. Where the observation schema says so:

- a value that may be null, or a field that may be left out, is Quint's option:
  ``{"tag": "None", "value": {"#tup": []}}`` or ``{"tag": "Some", "value": v}`` (ITF
  has no null, and its ``#unserializable`` is refused by most readers); every record
  then has every field its schema names;
- one of several single-field objects (slots' image, ``{"tag": t}`` or
  ``{"digest": d}``) is a variant named by its field, ``{"tag": "digest",
  "value": 3}``;
- an object keyed by data (the registry's tags) is a map, ``{"#map": [[k, v]]}``,
  not a record, whose keys must be field names.

The action is a variant named by its type, its other fields the record it
carries (``{"tag": "scale", "value": {"instances": 3}}``; ``{"#tup": []}`` when
it has none, as the first state's ``init``). Integers beyond 2**53 are
``{"#bigint": "..."}``. ``#meta`` holds strings only (itf-rs reads its entries
as such).
"""

from __future__ import annotations

import re
import typing
from typing import Any

import attrs

from deployspec.reference.core import ActionError

FORMAT_DESCRIPTION = "https://apalache-mc.org/docs/adr/015adr-trace.html"
SAFE_INT = 2**53 - 1
UNIT = {"#tup": []}
NONE = {"tag": "None", "value": UNIT}


def some(v: Any) -> dict:
    return {"tag": "Some", "value": v}


def value(v: Any, schema: dict | None = None, root: dict | None = None) -> Any:
    """A JSON value of an observation, as an ITF expression; ``schema`` (with the
    document ``root`` its ``$ref``s point into) is what the observation schema says
    of it, None where nothing does."""
    if not isinstance(schema, dict):  # (a schema may say ``true`` of a field)
        schema = None
    if schema is not None:
        schema = _resolved(schema, root)
        nullable, schema = _without_null(schema, root)
        if nullable:
            return NONE if v is None else some(value(v, schema, root))
    if v is None:
        return NONE
    if isinstance(v, bool | str | float):
        return v
    if isinstance(v, int):
        return v if -SAFE_INT <= v <= SAFE_INT else {"#bigint": str(v)}
    if isinstance(v, list | tuple):
        items = schema.get("items") if schema else None
        return [value(x, items if isinstance(items, dict) else None, root) for x in v]
    if isinstance(v, dict):
        return _object(v, schema, root)
    return str(v)


def _object(v: dict, schema: dict | None, root: dict | None) -> Any:
    if schema is None:
        return {str(k): value(x) for k, x in v.items()}
    choices = _single_field_choices(schema, root)
    if choices is not None and len(v) == 1:
        (name, x), = v.items()
        if name in choices:
            return {"tag": name, "value": value(x, choices[name], root)}
    properties = schema.get("properties")
    extra = schema.get("additionalProperties")
    if properties is None and isinstance(extra, dict):  # keyed by data: a map
        return {"#map": [[str(k), value(x, extra, root)] for k, x in v.items()]}
    properties = properties or {}
    required = set(schema.get("required", ()))
    out = {str(k): (value(x, properties.get(k), root) if k in required or k not in properties
                    else _option(x, properties[k], root)) for k, x in v.items()}
    for k in properties:  # one shape for every record: a field left out is None
        if k not in v and k not in required:
            out[str(k)] = NONE
    return out


def _option(v: Any, schema: Any, root: dict | None) -> dict:
    """A field the schema does not require, as an option (None when absent or null)."""
    if not isinstance(schema, dict):
        schema = None
    if schema is not None:
        _, schema = _without_null(_resolved(schema, root), root)
    return NONE if v is None else some(value(v, schema, root))


def _resolved(schema: dict, root: dict | None) -> dict:
    ref = schema.get("$ref")
    if isinstance(ref, str) and ref.startswith("#/") and root is not None:
        at: Any = root
        for part in ref[2:].split("/"):
            at = at.get(part, {}) if isinstance(at, dict) else {}
        return _resolved(at, root) if isinstance(at, dict) else {}
    return schema


def _without_null(schema: dict, root: dict | None) -> tuple[bool, dict]:
    """Whether the schema admits null, and what it says of the other values."""
    kinds = schema.get("type")
    if isinstance(kinds, list) and "null" in kinds:
        return True, {**schema, "type": [k for k in kinds if k != "null"]}
    enum = schema.get("enum")
    if isinstance(enum, list) and None in enum:
        return True, {**schema, "enum": [e for e in enum if e is not None]}
    for key in ("oneOf", "anyOf"):
        alternatives = schema.get(key)
        if isinstance(alternatives, list):
            others = [a for a in alternatives if _resolved(a, root).get("type") != "null"]
            if len(others) < len(alternatives):
                return True, _resolved(others[0], root) if len(others) == 1 else {key: others}
    return False, schema


def _single_field_choices(schema: dict, root: dict | None) -> dict[str, dict] | None:
    """For one of several objects of one required field each, the field name -> its
    schema (a tagged union); else None."""
    alternatives = schema.get("oneOf") or schema.get("anyOf")
    if not isinstance(alternatives, list) or len(alternatives) < 2:
        return None
    choices: dict[str, dict] = {}
    for a in alternatives:
        a = _resolved(a, root)
        fields = a.get("properties")
        if a.get("type") != "object" or not isinstance(fields, dict) or len(fields) != 1:
            return None
        (name, field), = fields.items()
        if a.get("required") != [name] or name in choices:
            return None
        choices[name] = field
    return choices


def action(done: dict, model=None) -> dict:
    """An action as the variant its type names, carrying its other fields: every field
    of its kind where the model is known (an older trace's ``deploy`` leaves out
    ``new_droplet``), one that may be None as an option."""
    nullable: dict[str, dict] = {}
    if model is not None and done.get("type") != "init":
        try:
            known = model.action(done)
        except ActionError:
            pass
        else:
            done = known.to_json(every_field=True)
            nullable = {f.name: ANY_OR_NULL for f in attrs.fields(type(known)) if _admits_none(f.type)}
    fields = {k: x for k, x in done.items() if k != "type"}
    return {"tag": str(done.get("type")), "value": value(fields, {"properties": nullable}) if fields else UNIT}


#: a schema that admits null and says nothing of other values
ANY_OR_NULL = {"type": ["null", "boolean", "integer", "number", "string", "array", "object"]}


def _admits_none(annotation: Any) -> bool:
    if isinstance(annotation, str):  # (``from __future__ import annotations``)
        return re.search(r"\bNone\b", annotation) is not None
    return type(None) in typing.get_args(annotation)


def render(trace: dict[str, Any], source: str | None = None) -> dict[str, Any]:
    """The trace in ITF, typed by its model's observation schema and action vocabulary
    (where the model is known here)."""
    model = _model(trace["model"])
    schema = model.schema() if model else None
    properties = (schema or {}).get("properties", {})
    obs_keys = list(trace["initial"])
    states = []
    entries = [({"type": "init"}, None, trace["initial"])] + [
        (s["action"], s.get("rejected"), s["observation"]) for s in trace["steps"]
    ]
    for i, (done, rejected, obs) in enumerate(entries):
        state = {"#meta": {"index": i}, "action": action(done, model), "rejected": rejected or ""}
        state.update({k: value(obs.get(k), properties.get(k, {}), schema) for k in obs_keys})
        states.append(state)
    violation_state = len(entries) - 1 if trace["violation"]["step"] < 0 else trace["violation"]["step"] + 1
    meta = {
        "format": "ITF",
        "format-description": FORMAT_DESCRIPTION,
        "source": _printable(source) if source else f"deployspec {trace['model']}/{trace['variant']}",
        # (a fault's message says what failed and while checking what)
        "description": ("" if trace.get("fault") else f"{trace['property']} violated: ") + trace["violation"]["message"],
        "model": trace["model"],
        "variant": trace["variant"],
        "property": trace["property"],
        "engine": str(trace.get("engine")),
        # state index = step index + 1 (state 0 is the initial one)
        "violation-state": str(violation_state),
    }
    if trace.get("seed") is not None:
        meta["seed"] = str(trace["seed"])
    if trace.get("settle_from") is not None:
        # the state the settle phase starts from (after the last user step): always a
        # state, also when settling had nothing to do
        meta["settle-from-state"] = str(trace["settle_from"])
    return {"#meta": meta, "vars": ["action", "rejected"] + obs_keys, "states": states}


def _model(name: str):
    from deployspec.models import UsageError, get_model

    try:
        return get_model(name)
    except UsageError:
        return None


def _printable(name: str) -> str:
    """A file name as valid UTF-8 text (bytes that are not are written ``\\xff``)."""
    return name.encode("utf-8", "surrogateescape").decode("utf-8", "backslashreplace")
