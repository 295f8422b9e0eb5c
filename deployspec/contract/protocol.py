"""The deployspec contract protocol, version 1: JSON lines on stdin/stdout.

The harness writes one request per line (``reset``, ``action``, ``observe``)
and reads one reply per line, each echoing the request's ``id``. An action is
either ``performed`` or ``rejected`` (a legitimate refusal, with a reason),
and its reply carries the observation after it, so a step is one round trip;
``error`` says the implementation failed. Every message has a JSON Schema in
``deployspec/contract/schemas/``; ``docs/protocol.md`` shows them with a
transcript. The idea is Maelstrom's (Jepsen): one harness, any language.

This module only builds requests and judges replies; it does no I/O.
"""

from __future__ import annotations

import json
from collections import OrderedDict
from functools import cache
from importlib import resources
from typing import Any

import attrs

from deployspec import validation
from deployspec.adapter import ImplementationError
from deployspec.reference.core import shown
from deployspec.text import decoded, quoted

VERSION = 1
#: a line longer than this (a request, or a reply) is garbage, not a message: neither side holds more
MAX_LINE = 8 * 1024 * 1024
#: the least an implementation's start is given (a program's first reply, or an object's
#: import and factory: either may still be loading); --timeout, when longer, gives it more
STARTUP_TIMEOUT = 30.0
REQUESTS = ("reset", "action", "observe")
REPLIES = ("reset_ok", "performed", "rejected", "observation", "error")
#: the replies each request may get (``error`` always may)
EXPECTED = {
    "reset": ("reset_ok", "error"),
    "action": ("performed", "rejected", "error"),
    "observe": ("observation", "error"),
}


@cache
def schema(name: str) -> dict:
    """The JSON Schema of one message (a request or a reply type)."""
    text = resources.files("deployspec.contract").joinpath(f"schemas/{name}.schema.json").read_text()
    return json.loads(text)


@cache
def validator(name: str) -> Any:
    return validation.validator(schema(name))


# --- requests ---------------------------------------------------------------


def reset(rid: int, model: str, config: dict) -> dict:
    return {"id": rid, "type": "reset", "protocol": VERSION, "model": model, "config": config}


def action(rid: int, action_json: dict) -> dict:
    return {"id": rid, "type": "action", "action": action_json}


def observe(rid: int) -> dict:
    return {"id": rid, "type": "observe"}


def describe(request: dict) -> str:
    """How a report names a request: ``reset``, ``observe``, ``action deploy``."""
    if request["type"] == "action":
        return f"action {request['action'].get('type')}"
    return request["type"]


# --- replies ------------------------------------------------------------------


def parse_reply(line: bytes, request: dict, previous: dict | None = None) -> dict:
    """Decode and check one reply line against the request it answers.

    Raises :class:`ImplementationError` with the cause in one line: not JSON,
    the wrong id (the id of ``previous``, the request answered last: a second reply to it), a type this request cannot get, or a schema violation. An
    ``error`` reply is returned (the caller decides what it means).
    """
    what = describe(request)
    try:
        reply = loads(line)
    except json.JSONDecodeError as exc:
        raise ImplementationError(f"reply to {what} is not JSON: {_clip(line)}{_where_broken(exc)}") from None
    except UnicodeDecodeError:
        raise ImplementationError(f"reply to {what} is not JSON: {_clip(line)}") from None
    except (ValueError, RecursionError) as exc:
        raise ImplementationError(f"reply to {what} cannot be read: {unreadable(exc)}") from None
    if not isinstance(reply, dict):
        raise ImplementationError(f"reply to {what} is not a JSON object: {_clip(line)}")
    kind = reply.get("type")
    rid = reply.get("id")
    if "id" not in reply:
        said = f" (an error reply: {_clip(str(reply.get('message')))})" if kind == "error" else ""
        raise ImplementationError(f"reply to {what} has no id; the request's id is {request['id']}{said}")
    if not (kind == "error" and rid is None) and rid != request["id"]:
        if previous is not None and rid == previous["id"]:  # the request before this one had its reply
            raise ImplementationError(
                f"reply to {what} carries the id of the request before it, {rid}: a second reply to "
                f"{describe(previous)}, which had its reply already"
            )
        raise ImplementationError(
            f"reply to {what} carries id {shown(rid)}, but the request's id is {request['id']}"
        )
    if kind not in EXPECTED[request["type"]]:
        expected = " or ".join(EXPECTED[request["type"]])
        raise ImplementationError(f"reply to {what} has type {shown(kind)}; expected {expected}")
    problem = None if _plainly_valid(schema(kind), reply) else first_error(validator(kind), reply)
    if problem:
        raise ImplementationError(f"reply to {what} violates the protocol ({kind} schema): {problem}")
    return reply


def _plainly_valid(sch: dict, msg: dict) -> bool:
    """A quick yes for the common case (jsonschema costs ~60 us a reply; a step, ~1 ms).

    Understands only the flat keywords the message schemas use; anything else,
    or any doubt, answers False and jsonschema decides (and explains).
    """
    props = sch["properties"]
    if not set(sch["required"]) <= msg.keys() <= props.keys():
        return False
    for key, value in msg.items():
        rule = props[key]
        if "const" in rule:
            if value != rule["const"] or type(value) is not type(rule["const"]):
                return False
        elif rule.get("type") == "integer":
            if type(value) is not int or value < rule.get("minimum", value):
                return False
        elif rule.get("type") == "string":
            if type(value) is not str or len(value) < rule.get("minLength", 0):
                return False
        elif rule.get("type") == "object" and set(rule) <= {"type", "description"}:
            if type(value) is not dict:
                return False
        else:
            return False
    return True


#: the deepest nesting of objects and lists a message or observation may have (the
#: models' observations nest at most 5 deep, a reply carrying one 6): deeper, validating would
#: recurse (jsonschema, and ``repr`` in its messages) towards the recursion limit, where
#: the answer would depend on the caller's stack and the Python version
MAX_NESTING = 64


def nested_too_deeply(value: Any, limit: int = MAX_NESTING) -> bool:
    """Whether ``value`` nests objects and lists more than ``limit`` deep (found without
    recursing: the value may be as deep as the parser takes)."""
    stack = [(value, 1)]
    while stack:
        v, depth = stack.pop()
        children = v.values() if isinstance(v, dict) else v if isinstance(v, list) else None
        if children is None:
            continue
        if depth > limit:
            return True
        stack.extend((c, depth + 1) for c in children if isinstance(c, (dict, list)))
    return False


def canonical(value: Any) -> str:
    """``value`` as one JSON text whatever the order of its objects' members: what a
    validated observation is remembered by (``1``, ``1.0`` and ``true`` stay apart)."""
    return json.dumps(value, sort_keys=True, separators=(",", ":"))


def first_error(v: Any, instance: Any) -> str | None:
    """The first schema violation as ``path: message``, or None.

    The message quotes the offending value, which may be megabytes: clipped. A value
    nested past ``MAX_NESTING`` is one violation, said before validating it."""
    if nested_too_deeply(instance):
        return f"top level: it is nested too deeply (over {MAX_NESTING} levels)"
    if v.is_valid(instance):
        return None
    e = min(v.iter_errors(instance), key=lambda e: (len(e.absolute_path), list(map(str, e.absolute_path))))
    e = validation.inner(e)
    where = "/".join(str(p) for p in e.absolute_path) or "top level"
    return f"{where}: {validation.explained(e)}"


def loads(text: bytes | str) -> Any:
    """One message as the protocol reads it: JSON, so not the NaN, Infinity and -Infinity
    Python's json reads (a float no other parser takes, and NaN equals nothing, not
    even the model's NaN); those raise ValueError, as another value Python cannot hold.
    Nor an object naming a member twice (:func:`unique_names`)."""
    return json.loads(text, parse_constant=_not_json, object_pairs_hook=unique_names)


def _not_json(name: str) -> Any:
    raise ValueError(f"{name} is not a JSON value")


def unique_names(pairs: list[tuple[str, Any]]) -> dict:
    """An object's members as a dict; ValueError if a name comes twice. JSON leaves what
    that means to the reader (Python's keeps the last, other parsers the first), so
    ``{"id": 9, …, "id": 5}`` answers one request here and another elsewhere."""
    out = dict(pairs)
    if len(out) < len(pairs):
        seen: set[str] = set()
        twice = next(name for name, _ in pairs if name in seen or seen.add(name))
        raise ValueError(f"an object names {json.dumps(twice)} twice")
    return out


def unreadable(exc: ValueError | RecursionError) -> str:
    """Why a message could not be read or written in Python although it parsed: nesting
    past the recursion limit, an integer past ``sys.get_int_max_str_digits()``, or a
    NaN or Infinity, which JSON does not have (:func:`loads`)."""
    if isinstance(exc, RecursionError):
        return "it is nested too deeply"
    return str(exc).split(";")[0]


def _where_broken(exc: json.JSONDecodeError) -> str:
    """Why a line that began as JSON (an object or array) is none, and where: its reason
    and position, with the text just before (past the 80 characters quoted, or not);
    "" for a line that never was JSON (a log line: the quote says enough)."""
    text = exc.doc.lstrip()
    if not text.startswith(("{", "[")):
        return ""
    before = exc.doc[max(exc.pos - 30, 0):exc.pos].rstrip()
    return (f" ({exc.msg} at character {exc.pos + 1}, after "
            f"{quoted(('…' if exc.pos > 30 else '') + before)})")


def _clip(raw: bytes | str, n: int = 80) -> str:
    text = decoded(raw) if isinstance(raw, bytes) else raw
    text = text.rstrip("\n")
    return quoted(text if len(text) <= n else text[:n] + "…")


@attrs.define
class ObservationChecker:
    """Validates observations against the model's schema.

    jsonschema takes ~0.4 ms per capi observation, more than a whole step over
    the protocol; a run meets the same few hundred observations again and
    again, so valid ones are remembered by their canonical JSON text.
    """

    model: Any
    cache_size: int = 4096
    _validator: Any = attrs.field(init=False, default=None)
    _seen: OrderedDict = attrs.field(init=False, factory=OrderedDict)

    def check(self, observation: Any) -> str | None:
        """None when valid, else the first violation as ``path: message``."""
        if not isinstance(observation, dict):
            return f"top level: {type(observation).__name__} is not an object"
        try:  # (a cached key was validated, so nested within MAX_NESTING: first_error walks the rest)
            key = canonical(observation)
        except RecursionError:
            if not nested_too_deeply(observation):  # the caller's stack is full, not the value deep
                raise
            return first_error(None, observation)
        if key in self._seen:
            self._seen.move_to_end(key)
            return None
        if self._validator is None:
            self._validator = validation.validator(self.model.schema())
        problem = first_error(self._validator, observation)
        if problem is None:
            self._seen[key] = True
            if len(self._seen) > self.cache_size:
                self._seen.popitem(last=False)
            return None
        return problem + of_another_model(self.model, observation)


def of_another_model(model: Any, observation: dict) -> str:
    """`` (a capi observation: …)`` where an observation refused by ``model``'s schema is
    another model's: a slots trace replayed on a capi controller read as the controller's
    fault, with no word of the file picked; "" otherwise."""
    from deployspec.models import get_model, model_names

    for name in model_names():
        if name != model.name and first_error(validation.validator(get_model(name).schema()), observation) is None:
            return (f" (it is a {name} observation: the implementation serves {name}, and this run is of "
                    f"{model.name}: contract --model {name} checks it, and it replays {name} traces)")
    return ""


# --- the action vocabulary as a schema -------------------------------------------

_TYPES = {"int": {"type": "integer"}, "bool": {"type": "boolean"}, "str": {"type": "string"},
          "bool | None": {"type": ["boolean", "null"]}, "int | None": {"type": ["integer", "null"]}}


def action_schema(model) -> dict:
    """A JSON Schema of the model's actions, derived from its vocabulary.

    Shipped as ``schemas/<model>.actions.schema.json`` for implementers; a test
    keeps the file equal to what the vocabulary says.
    """
    from deployspec.reference.core import SENT_IF_SET

    variants = []
    sent_if_set = False
    for kind, cls in model.vocabulary.items():
        props: dict[str, Any] = {"type": {"const": kind}}
        required = ["type"]
        for f in attrs.fields(cls):
            t = f.type if isinstance(f.type, str) else getattr(f.type, "__name__", "")
            prop = dict(_TYPES.get(t, {"type": "array", "items": {"type": "integer"}}
                                   if t.startswith("tuple") else {}))
            options = getattr(f.validator, "options", None)
            if options is not None:
                prop["enum"] = list(options)
            if f.default is attrs.NOTHING:
                required.append(f.name)
            else:
                prop["default"] = list(f.default) if isinstance(f.default, tuple) else f.default
            if f.metadata.get(SENT_IF_SET):
                prop["description"] = "sent only when set: absent, it is its default"
                sent_if_set = True
            props[f.name] = prop
        doc = (cls.__doc__ or "").strip().split("\n\n")[0].replace("\n", " ")
        variants.append({
            "title": kind,
            "description": f"{doc} (actor: {cls.actor})",
            "type": "object",
            "required": required,
            "additionalProperties": False,
            "properties": props,
        })
    return {
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "$id": f"https://deployspec.invalid/contract/1/{model.name}.actions.schema.json",
        "title": f"an action of the {model.name} model",
        "description": "The `action` member of an action request. " + (
            "The harness sends every field, but those whose description says they are sent only when set."
            if sent_if_set else "The harness always sends every field."),
        "oneOf": variants,
    }


def _write_action_schemas() -> None:  # pragma: no cover - a maintainer's tool
    """``python -m deployspec.contract.protocol``: regenerate the action schemas."""
    from pathlib import Path

    from deployspec.models import get_model, model_names

    here = Path(__file__).parent / "schemas"
    for name in model_names():
        path = here / f"{name}.actions.schema.json"
        path.write_text(json.dumps(action_schema(get_model(name)), indent=2) + "\n")
        print(f"wrote {path}")


if __name__ == "__main__":  # pragma: no cover
    _write_action_schemas()
