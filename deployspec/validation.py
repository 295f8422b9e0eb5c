"""The JSON Schema validator for everything deployspec reads: trace files,
observations and protocol messages.

JSON Schema counts ``2.0`` as an integer. Python does not: a step number,
a ``settle_from`` or an id read as ``2.0`` would later index a list, or print
as ``P0.0``. Here an integer must be written as one. And a list of numbered things (processes, deployments, digests) says its
items' ids once each (``x-uniqueBy``), and in order (``x-numberedBy``, ``x-ascendingBy``),
which JSON Schema alone cannot say.
"""

from __future__ import annotations

import json
from typing import Any

import jsonschema
from jsonschema import validators

_BASE = jsonschema.Draft202012Validator


def _is_integer(_checker: Any, instance: Any) -> bool:
    return isinstance(instance, int) and not isinstance(instance, bool)


#: the keyword an observation schema marks its lists of numbered things with: no two items
#: share the named field (two web processes ``id: 7`` are one lane of a picture, one row of
#: a table, and a property reading "the process with id 7" sees either); validators that do
#: not know it ignore it, as JSON Schema says of unknown keywords
UNIQUE_BY = "x-uniqueBy"


def _unique_by(validator: Any, field: str, instance: Any, _schema: Any):
    if not validator.is_type(instance, "array"):
        return
    seen: dict[str, int] = {}
    for i, item in enumerate(instance):
        if not isinstance(item, dict) or field not in item:
            continue
        try:
            key = json.dumps(item[field], sort_keys=True)
        except (TypeError, ValueError, RecursionError):
            continue
        if key in seen:
            yield jsonschema.ValidationError(f"items {seen[key]} and {i} have the same {field} {key}",
                                             path=[i, field])
        else:
            seen[key] = i


#: a list whose items are numbered by their place: item i has the named field i (capi's droplets
#: and deployments: the properties read ``deployments[d]`` as deployment ``d``)
NUMBERED_BY = "x-numberedBy"
#: a list in the named field's strictly increasing order (capi's web processes, oldest first:
#: the properties read the first as the oldest)
ASCENDING_BY = "x-ascendingBy"


def _numbered_by(validator: Any, field: str, instance: Any, _schema: Any):
    if not validator.is_type(instance, "array"):
        return
    for i, item in enumerate(instance):
        if isinstance(item, dict) and _is_integer(None, item.get(field)) and item[field] != i:
            yield jsonschema.ValidationError(
                f"{item[field]}: item {i} must have {field} {i} (numbered 0, 1, 2… in creation order, oldest "
                "first)", path=[i, field])
            return


def _ascending_by(validator: Any, field: str, instance: Any, _schema: Any):
    if not validator.is_type(instance, "array"):
        return
    before = None
    for i, item in enumerate(instance):
        value = item.get(field) if isinstance(item, dict) else None
        if not _is_integer(None, value):
            continue
        if before is not None and value <= before:
            yield jsonschema.ValidationError(
                f"{value}: not above the {field} before it, {before} (oldest first, {field}s increasing)",
                path=[i, field])
            return
        before = value


Validator = validators.extend(_BASE, validators={UNIQUE_BY: _unique_by, NUMBERED_BY: _numbered_by,
                                                ASCENDING_BY: _ascending_by},
                              type_checker=_BASE.TYPE_CHECKER.redefine("integer", _is_integer))


def inner(error: Any) -> Any:
    """Of an ``anyOf``/``oneOf`` error, what is wrong inside the branch the value fits best
    (``app: {…} is not valid under any of the given schemas`` hid ``app/droplet: 2.0 is not
    of type 'integer'``, the float protocol.md warns of); any other error as it is."""
    if error.validator in ("anyOf", "oneOf") and error.context:
        return jsonschema.exceptions.best_match([error])
    return error


def explained(error: Any, limit: int = 300) -> str:
    """A schema error's message in one line: a list too long by its length (jsonschema
    quotes the whole list), any other message clipped to ``limit`` characters. Where
    jsonschema writes values in Python (``None``, ``True``), they are written as JSON
    writes them: the value the message begins with (``null is not of type 'integer'``;
    a string stays quoted as a name, ``'UP'``) and each value ``enum`` or ``const``
    expects (``false is not one of [null, 'on']``)."""
    if error.validator == "maxItems":
        return f"{len(error.instance):,} items, at most {error.validator_value:,}"
    message = error.message
    instance = error.instance
    try:
        if error.validator == "enum":
            options = ", ".join(_option(v) for v in error.validator_value)
            message = f"{_option(instance)} is not one of [{options}]"
        elif error.validator == "const":
            message = f"{_option(error.validator_value)} was expected"
        elif not isinstance(instance, str) and message.startswith(python := repr(instance)):
            message = json.dumps(instance, allow_nan=False) + message[len(python):]
    except (TypeError, ValueError, RecursionError):  # (no JSON spelling: Python's stays)
        pass
    message = " ".join(message.split())
    return message if len(message) <= limit else message[: limit - 1] + "…"


def _option(value: Any) -> str:
    """One value as a message names it: a string quoted as a name, as jsonschema quotes
    it (``'UP'``), anything else as JSON writes it."""
    return repr(value) if isinstance(value, str) else json.dumps(value, allow_nan=False)


def validator(schema: dict) -> Any:
    """A Draft 2020-12 validator of ``schema`` whose integers are integers."""
    return Validator(schema)
