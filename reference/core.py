"""What every model shares: actions that serialise to JSON, and refusals.

An action is a small frozen attrs class whose ``kind`` is its name in the JSON
vocabulary (``{"type": "deploy", "max_in_flight": 1}``). The same objects are
drawn by Hypothesis, enumerated by the explorer, written in trace files and
sent over the protocol, so there is exactly one vocabulary per model.
"""

from __future__ import annotations

import inspect
import json
from collections.abc import Callable, Mapping
from typing import Any, ClassVar

import attrs


@attrs.frozen
class Rejected:
    """A legitimate refusal (the real API would answer 422), not a failure."""

    reason: str


@attrs.frozen
class Beyond:
    """A violation a design has beyond what the default search reaches (``violates_beyond``).

    ``deployspec check`` accepts either verdict for it, except a complete proof
    within bounds that include ``config``: that search would have met the trace."""

    #: the configuration the counterexample was found with (as in its trace file)
    config: dict[str, Any] = attrs.field(eq=False)
    #: the committed counterexample, relative to the repository
    trace: str
    #: how it breaks, and what it takes (shown under the matrix)
    why: str

    def __str__(self) -> str:
        return f"{self.why}; {self.trace}"


class InvalidVariant(ValueError):
    """A variant with a field of the wrong kind (the validators of the variant classes,
    below). Raised where the variant is made, so a design of one's own is refused naming
    that line of its module, not taken for a fault of its rules (``variant_plugins``)."""


def not_declared(instance: Any, attribute: Any, value: dict[str, Beyond]) -> None:
    """attrs validator of ``violates_beyond``: a property is declared one way or the other."""
    both = set(value) & set(instance.declares)
    if both:
        raise InvalidVariant(f"{instance.name}: {', '.join(sorted(both))} both declared and violated beyond "
                             "(attrs.evolve keeps the violates_beyond of the design it changes: pass "
                             "violates_beyond without them, e.g. violates_beyond={})")


def flag(instance: Any, attribute: Any, value: Any) -> None:
    """attrs validator of a variant's switch: True or False. Anything else would be read
    for its truth where the rules ask (``"no"`` as on), another design than the one meant."""
    if not isinstance(value, bool):
        raise InvalidVariant(f"{instance.name}'s {attribute.name} must be True or False, "
                             f"not {type(value).__name__} {_brief(value)}")


def rule(instance: Any, attribute: Any, value: Any) -> None:
    """attrs validator of a variant's rule: a function, called as the rule it replaces is
    (as many arguments: a rule taking others was refused only once the search called it,
    a search's error, where ``deployspec variants`` had listed the design)."""
    if not callable(value):
        raise InvalidVariant(f"{instance.name}'s {attribute.name} must be a function (a rule), "
                             f"not {type(value).__name__} {_brief(value)}")
    takes = attribute.metadata.get(TAKES)
    if takes is None:
        return
    try:  # (not through functools.wraps: a decorator may take other arguments than what it wraps)
        signature = inspect.signature(value, follow_wrapped=False)
    except Exception:  # noqa: BLE001 - a builtin, or a callable that will not say: held to it when called
        return
    try:
        signature.bind(*range(takes))
    except TypeError as exc:
        own = getattr(value, "__name__", None) if inspect.isroutine(value) or inspect.isclass(value) else None
        name = own if isinstance(own, str) else type(value).__name__
        raise InvalidVariant(
            f"{instance.name}'s {attribute.name} must take the {takes} argument{'' if takes == 1 else 's'} the rule "
            f"it replaces takes: {name}{signature} ({_unlike(signature, takes, exc)}; the comment on "
            f"{type(instance).__name__}.{attribute.name} gives them)") from None


def _unlike(signature: inspect.Signature, takes: int, refused: TypeError) -> str:
    """How a rule's parameters differ from the ``takes`` positional arguments it is called
    with, said of the rule (Python's own words, "too many positional arguments", are the
    caller's: they read as if the rule took too many)."""
    params = signature.parameters.values()
    if any(p.kind is p.VAR_POSITIONAL for p in params):
        positional = takes
    else:
        positional = sum(p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD) for p in params)
    if positional < takes:
        return f"it takes {positional or 'none'}"
    needed = sum(p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD) and p.default is p.empty for p in params)
    if needed > takes:
        return f"it needs {needed}"
    keyword = next((p.name for p in params if p.kind is p.KEYWORD_ONLY and p.default is p.empty), None)
    if keyword is not None:
        return f"its keyword-only {keyword} has no default"
    return str(refused)


#: a rule field's metadata key: the types its results may have (what the shipped rules return)
RETURNS = "returns"
#: a rule field's metadata key: how many arguments the rule is called with
TAKES = "takes"


def rule_field(*returns: type | None, takes: int, **kwargs: Any) -> Any:
    """A variant's rule: a field holding a function (validated by ``rule``) called with
    ``takes`` arguments, whose results are of the types ``returns`` (None for None). A rule
    handed in from outside is held to them at each call (``variant_plugins``), so one
    returning another kind of thing is named where it returned, not where deployspec
    first used the result."""
    kinds = tuple(type(None) if r is None else r for r in returns)
    return attrs.field(validator=rule, metadata={RETURNS: kinds, TAKES: takes}, **kwargs)


def frozen(value: Any) -> Any:
    """attrs converter of a set field: a ``{...}`` written in a design becomes the frozenset
    the shipped ones hold (a variant is hashed: a search memoises by it); anything else is
    left for the validator to name."""
    return frozenset(value) if isinstance(value, set) else value


def states(known: tuple[str, ...]) -> Any:
    """attrs validator of a set of states a rule asks about (``d.state in …``): a set of
    the ``known`` ones. A text would be searched for substrings ("DEPLOYING" holds
    "DEPLOY"), and a misspelt state would never match."""

    def check(instance: Any, attribute: Any, value: Any) -> None:
        if not isinstance(value, (set, frozenset)) or not all(isinstance(s, str) for s in value):
            raise InvalidVariant(f"{instance.name}'s {attribute.name} must be a set of states, some of "
                                 f"{', '.join(known)}, not {type(value).__name__} {_brief(value)}")
        unknown = sorted(value - set(known))
        if unknown:
            raise InvalidVariant(f"{instance.name}'s {attribute.name} has unknown states "
                                 f"{', '.join(map(repr, unknown))} (known: {', '.join(known)})")

    return check


def _brief(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 60 else text[:59] + "…"


#: an action field's metadata key: the field is in its JSON only when it is not its default
SENT_IF_SET = "sent_if_set"


class ActionError(ValueError):
    """A JSON action that does not belong to the vocabulary."""


class Action:
    """Base of every action class; subclasses are ``@attrs.frozen``."""

    kind: ClassVar[str]
    #: who performs it: "user" (an API call) or "platform" (updater, runtime).
    actor: ClassVar[str] = "user"

    def to_json(self, every_field: bool = False) -> dict[str, Any]:
        """The action as JSON; ``every_field`` keeps the ones left out at their default
        (a typed reader, as of ITF, wants one shape per kind)."""
        out: dict[str, Any] = {"type": self.kind}
        for field in attrs.fields(type(self)):
            value = getattr(self, field.name)
            if not every_field and field.metadata.get(SENT_IF_SET) and value == field.default:
                continue  # a field added later: the actions of earlier traces read as before
            out[field.name] = list(value) if isinstance(value, tuple) else value
        return out

    def __str__(self) -> str:
        args = ", ".join(
            f"{f.name}={list(getattr(self, f.name)) if isinstance(getattr(self, f.name), tuple) else getattr(self, f.name)!r}"
            for f in attrs.fields(type(self))
        )
        return f"{self.kind}({args})"


def action_from_json(vocabulary: dict[str, type[Action]], data: Any) -> Action:
    """Build an action from its JSON form, checking names and types strictly."""
    if not isinstance(data, dict):
        raise ActionError(f"an action must be a JSON object, got {type(data).__name__}")
    kind = data.get("type")
    cls = vocabulary.get(kind) if isinstance(kind, str) else None
    if cls is None:
        raise ActionError(f"unknown action type {shown(kind)} (known: {', '.join(sorted(vocabulary))})")
    fields = {f.name: f for f in attrs.fields(cls)}
    extra = set(data) - set(fields) - {"type"}
    if extra:
        raise ActionError(f"action {kind!r} has unknown field(s): {', '.join(sorted(extra))}")
    kwargs: dict[str, Any] = {}
    for name, field in fields.items():
        if name not in data:
            if field.default is attrs.NOTHING:
                raise ActionError(f"action {kind!r} lacks field {name!r}")
            continue
        value = data[name]
        expected = field.type if isinstance(field.type, str) else getattr(field.type, "__name__", "")
        kwargs[name] = _coerce(kind, name, expected, value)
    try:
        return cls(**kwargs)
    except (TypeError, ValueError) as exc:
        # attrs' validators raise with (message, attribute, options, value): the message alone
        why = exc.args[0] if len(exc.args) > 1 and isinstance(exc.args[0], str) else exc
        raise ActionError(f"action {kind!r}: {why}") from None


#: the largest size bound a configuration may set (instances, deployments, droplets,
#: pushes, in-flight counts): far beyond what any search can cover, small enough
#: that a typo (``max_instances=1000000``) is refused instead of running for hours
MAX_BOUND = 64
#: the largest step count a configuration may set (settle steps, depth)
MAX_STEPS = 100_000


def check_bound(name: str, value: int, limit: int = MAX_BOUND) -> None:
    """Refuse a configuration value above ``limit`` (callers check the type and the minimum)."""
    if value > limit:
        raise ValueError(f"{name} must be at most {limit}, got {shown(value)}")


def config_fields(cls, data: Mapping[str, Any], *, least: Mapping[str, int] | None = None,
                  steps: tuple[str, ...] = ("settle_steps", "max_depth"),
                  special: Mapping[str, Callable[[str, Any], Any]] | None = None) -> dict[str, Any]:
    """A configuration's fields read from JSON for the attrs class ``cls``, each model's
    the same way: an unknown name refused; a ``bool`` field true or false; an ``int``
    one an integer, at least its ``least`` (else 0) and at most ``MAX_STEPS`` for the
    step counts of ``steps``, ``MAX_BOUND`` for the sizes; a field of ``special`` read by
    its own reader, which returns the value to keep. Raises ValueError, one line."""
    fields = {f.name: getattr(f.type, "__name__", str(f.type)) for f in attrs.fields(cls)}
    unknown = set(data) - set(fields)
    if unknown:
        from deployspec.models import did_you_mean

        names = sorted(unknown)
        guess = did_you_mean(names[0], fields) if len(names) == 1 else ""
        raise ValueError(f"unknown configuration field(s): {', '.join(names)}{guess} (known: {', '.join(fields)})")
    out = {}
    for name, value in data.items():
        if special and name in special:
            out[name] = special[name](name, value)
            continue
        if fields[name] == "bool":
            if not isinstance(value, bool):
                raise ValueError(f"{name} must be true or false, got {shown(value)}")
        elif fields[name] != "int":  # the model's bug: a field of another type needs its reader
            raise TypeError(f"{cls.__name__}.{name} ({fields[name]}) has no reader in config_fields' special")
        else:
            low = (least or {}).get(name, 0)
            if not isinstance(value, int) or isinstance(value, bool) or value < low:
                what = "a positive" if low else "a non-negative"
                raise ValueError(f"{name} must be {what} integer, got {shown(value)}")
            check_bound(name, value, MAX_STEPS if name in steps else MAX_BOUND)
        out[name] = value
    return out


def shown(value: Any) -> str:
    """A value read from JSON, as a message quotes it: a string as a name (``'x'``), other
    values in JSON's spelling (``null``, ``true``, ``[1, 2]``: what the user wrote, not
    Python's ``None``), a huge integer by its digits, what JSON cannot spell as Python
    does; clipped."""
    if isinstance(value, int) and not isinstance(value, bool) and value.bit_length() >= 200:
        return f"a number of {len(str(value))} digits"
    if isinstance(value, str):
        from deployspec.text import quoted

        return quoted(value if len(value) <= 40 else value[:37] + "...")
    try:
        text = json.dumps(value, allow_nan=False)
    except (TypeError, ValueError):
        text = repr(value)
    return text if len(text) <= 40 else text[:37] + "..."


#: the largest integer an action may carry (instances, weights, ids): the reference
#: models keep one entry per instance and a replay records every step's observation,
#: so the cost of a trace grows with the square of its instance counts (a 3 KB trace
#: asking for 10,000 instances, then a deploy, took 4 minutes and 2.4 GB to replay;
#: 1,000 take half a second); searches ask for at most 64 (``MAX_BOUND``)
MAX_ACTION_INT = 1_000


def _coerce(kind: str, name: str, expected: str, value: Any) -> Any:
    """``value`` read from JSON as an action's field of type ``expected`` (its annotation)."""
    reader = _integers if expected.startswith("tuple") else _READERS.get(expected)
    if reader is None:  # an action class given a field of a type this reader does not check: the model's bug
        raise TypeError(f"action {kind!r}: field {name!r} has a type the JSON reader does not know: {expected}")
    return reader(f"action {kind!r}: field {name!r}", value)


def _is_int(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def _within_range(field: str, value: int) -> int:
    if abs(value) > MAX_ACTION_INT:
        raise ActionError(f"{field} is out of range (at most {MAX_ACTION_INT} in absolute value)")
    return value


def _integers(field: str, value: Any) -> tuple[int, ...]:
    if not isinstance(value, list) or not all(_is_int(v) for v in value):
        raise ActionError(f"{field} must be a list of integers")
    if len(value) > MAX_ACTION_INT:
        raise ActionError(f"{field} has more than {MAX_ACTION_INT} items")
    return tuple(_within_range(field, v) for v in value)


def _integer(field: str, value: Any) -> int:
    if not _is_int(value):
        raise ActionError(f"{field} must be an integer")
    return _within_range(field, value)


def _integer_or_null(field: str, value: Any) -> int | None:
    if value is not None and not _is_int(value):
        raise ActionError(f"{field} must be an integer or null")
    return value if value is None else _within_range(field, value)


def _boolean(field: str, value: Any) -> bool:
    if not isinstance(value, bool):
        raise ActionError(f"{field} must be true or false")
    return value


def _boolean_or_null(field: str, value: Any) -> bool | None:
    if value is not None and not isinstance(value, bool):
        raise ActionError(f"{field} must be true, false or null")
    return value


def _string(field: str, value: Any) -> str:
    if not isinstance(value, str):
        raise ActionError(f"{field} must be a string")
    return value


#: how a field is read, by its annotation (``tuple[...]`` apart: a list of integers)
_READERS = {"int": _integer, "int | None": _integer_or_null, "bool": _boolean,
            "bool | None": _boolean_or_null, "str": _string}
