"""What a trace file must be beyond its JSON Schema (``trace.schema.json``), checked
on load against the model it names: each observation one of the model's, actions of its
vocabulary, step numbers within the trace, a settle phase that is the platform's alone,
a fault after the last step, a configuration and a property of the model. Each breach
is a one-line UsageError naming the file."""

from __future__ import annotations

from functools import lru_cache
from pathlib import Path
from typing import Any

from deployspec import validation
from deployspec.models import UsageError, get_model


def observations(path: Path, model, data: dict) -> None:
    """Each observation of the trace against the model's observation schema; one that
    came before (the same canonical JSON) is not validated again: a long trace repeats
    its observations, and jsonschema takes about 0.3 ms for each (loading a 21 MB trace of
    30,000 steps and a few distinct observations took 9.9 s, now 2.3; with every
    observation distinct, 2 % longer than before)."""
    from deployspec.contract.protocol import canonical

    schema = _observation_validator(model.name)
    valid: set[str] = set()
    for where, obs in [("initial", data["initial"])] + [
            (f"steps/{i}/observation", step["observation"]) for i, step in enumerate(data["steps"])]:
        try:
            key = canonical(obs)
        except (ValueError, RecursionError):  # (read, but too deep to write again: validated, and said)
            key = None
        if key in valid:
            continue
        error = next(iter(sorted(schema.iter_errors(obs), key=lambda e: list(e.absolute_path))), None)
        if error is not None:
            error = validation.inner(error)
            inner = "/".join(str(p) for p in error.absolute_path)
            raise UsageError(f"{path}: not a {model.name} observation at {where}"
                             f"{'/' + inner if inner else ''}: {validation.explained(error, 160)}")
        if key is not None:
            valid.add(key)


def by_model(path: Path, model, data: dict, drawing: bool = False) -> None:
    """What the schema cannot say: actions the model knows, step numbers within the
    trace, a configuration and a property of the model (``drawing``: for ``show``, which
    needs no design, :func:`_property_kind`)."""
    for i, step in enumerate(data["steps"]):
        try:
            model.action(step["action"])
        except ValueError as exc:
            raise UsageError(f"{path}: step {i}: {exc}") from None
    n = len(data["steps"])
    if data.get("fault") is not None:
        _fault(path, model, data)
    elif data["violation"]["step"] >= n:  # -1: a settled check with no step before it
        raise UsageError(f"{path}: violation.step {data['violation']['step']} is beyond the "
                         f"trace's {n} step(s)")
    settle_from = data.get("settle_from")
    if settle_from is not None and settle_from > n:
        raise UsageError(f"{path}: settle_from {settle_from} is beyond the trace's {n} step(s)")
    if settle_from is not None:
        # the settle phase is the platform's alone (``Session.settle``: ``settle_action`` of each
        # observation in turn); a replay plays the steps before it and settles by the target's own
        # rules: any other step there (a user's action, a tick that fails) would be dropped unsaid
        _settling(path, model, data, settle_from)
    try:
        model.config_from_json(data["config"])
    except (ValueError, TypeError) as exc:
        raise UsageError(f"{path}: bad config: {exc}") from None
    name, kind = data["property"], _property_kind(path, model, data["property"], drawing)
    if data.get("fault") is not None:
        return  # (not the property's verdict: the implementation failed before it had one)
    if data["violation"]["step"] < 0 and kind != "settled":
        raise UsageError(f"{path}: violation.step -1: only a property judged once the platform settles "
                         f"breaks before any step, and {name} is judged at each step")
    if settle_from is None and kind == "settled":
        # without a settle phase a replay would never judge it, and say it holds
        raise UsageError(f"{path}: {name} is judged once the platform settles, and the trace has "
                         "no settle_from")


def _property_kind(path: Path, model, name: str, drawing: bool) -> str:
    """The kind of the trace's property. For ``show`` (``drawing``), a conformance check
    with a design this process was not handed is a trace property as any: the trace holds
    the difference it recorded, and a CI artifact drawn on another machine needs no
    design (a user's trace of their own reference was refused as an unknown variant)."""
    from deployspec.contract.conformance import PREFIX

    try:
        return model.property(name).kind
    except UsageError as exc:
        if drawing and name.startswith(PREFIX) and name[len(PREFIX):] not in model.variants:
            return "trace"
        raise UsageError(f"{path}: {exc}") from None


def _fault(path: Path, model, data: dict) -> None:
    """A fault follows the steps: ``violation.step`` is the last one (-1: none), no settle
    phase is told apart (every step is replayed as recorded), and its action is the model's."""
    n = len(data["steps"])
    if data["violation"]["step"] != n - 1:
        raise UsageError(f"{path}: violation.step {data['violation']['step']}: a fault trace's is its last "
                         f"step, {n - 1}")
    if data.get("settle_from") is not None:
        raise UsageError(f"{path}: settle_from {data['settle_from']}: a fault trace replays every step as "
                         "recorded (null)")
    try:
        model.action(data["fault"]["action"])
    except ValueError as exc:
        raise UsageError(f"{path}: fault/action: {exc}") from None


def _settling(path: Path, model, data: dict, settle_from: int) -> None:
    """Each step from ``settle_from`` on is what the platform does when left alone in the
    observation before it (``model.settle_action``)."""
    from deployspec.render_text import action_label

    steps = data["steps"]
    for i in range(settle_from, len(steps)):
        before = steps[i - 1]["observation"] if i > 0 else data["initial"]
        alone = model.settle_action(before)
        if alone is None or alone.to_json() != model.action(steps[i]["action"]).to_json():
            done = "had nothing left to do" if alone is None else f"does {action_label(alone.to_json())}"
            raise UsageError(f"{path}: step {i}: {action_label(steps[i]['action'])}, at or after settle_from "
                             f"{settle_from}, where the platform left alone {done}")


@lru_cache(maxsize=8)
def _observation_validator(model: str) -> Any:
    return validation.validator(get_model(model).schema())
