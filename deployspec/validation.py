"""The JSON Schema validator for everything deployspec reads: trace files,
observations and protocol messages.

JSON Schema counts ``2.0`` as an integer. Python does not: a step number,
a ``settle_from`` or an id read as ``2.0`` would later index a list, or print
as ``P0.0``. Here an integer must be written as one.
"""

from __future__ import annotations

import json
from typing import Any

import jsonschema
from jsonschema import validators

_BASE = jsonschema.Draft202012Validator


def _is_integer(_checker: Any, instance: Any) -> bool:
    return isinstance(instance, int) and not isinstance(instance, bool)


Validator = validators.extend(_BASE, type_checker=_BASE.TYPE_CHECKER.redefine("integer", _is_integer))


def explained(error: Any, limit: int = 300) -> str:
    """A schema error's message in one line: a list too long by its length (jsonschema
    quotes the whole list), any other message clipped to ``limit`` characters, the value
    it begins with spelled as JSON spells it (``null is not of type 'integer'``, where
    jsonschema writes Python's ``None``; strings stay quoted as names, ``'UP'``)."""
    if error.validator == "maxItems":
        return f"{len(error.instance):,} items, at most {error.validator_value:,}"
    message = error.message
    instance = error.instance
    if not isinstance(instance, str) and message.startswith(python := repr(instance)):
        try:
            message = json.dumps(instance, allow_nan=False) + message[len(python):]
        except (TypeError, ValueError, RecursionError):  # (no JSON spelling: Python's stays)
            pass
    message = " ".join(message.split())
    return message if len(message) <= limit else message[: limit - 1] + "…"


def validator(schema: dict) -> Any:
    """A Draft 2020-12 validator of ``schema`` whose integers are integers."""
    return Validator(schema)
