"""Replaying a trace file: the same actions, on any variant or implementation.

An action the target rejects is recorded as rejected and skipped. When the
trace ends in a settle phase, the target settles by its own rules (it may need
more or fewer ticks than the recorded variant did) before being judged. On an
implementation (``adapter``), a property that cannot read an observation is
the implementation's fault, as in ``deployspec contract``.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

import attrs

from deployspec.adapter import ReferenceAdapter
from deployspec.contract.conformance import PREFIX
from deployspec.contract.guard import guard_property
from deployspec.models import UsageError, did_you_mean, get_model
from deployspec.reference.core import Action
from deployspec.session import Session
from deployspec.spec.core import Violation


@attrs.frozen
class ReplayOutcome:
    target: str
    property: str
    violation: Violation | None
    session: Session
    #: whether ``--bound`` moved the start (the model's start with and without them differ)
    bounds_moved_start: bool = False
    #: the configuration replayed with (what a trace of the replay records)
    config: Any = None

    @property
    def reproduced(self) -> bool:
        return self.violation is not None and self.violation.property == self.property

    def started_elsewhere(self, trace: dict) -> bool:
        """The replay began from another state than the recorded one (another design's
        own start: ``Model.replay_config``, or ``--bound``)."""
        return self.session.initial != trace.get("initial", self.session.initial)

    def start_note(self, trace: dict) -> str | None:
        """Where the replay began, for the verdict: elsewhere than recorded (the design's
        own start, where its Terraform leaves the app, or the ``--bound`` given), or the
        recorded start when the trace names one (a slots trace from a tag Terraform left:
        a design that pins digests still meets it there); None: nothing to say."""
        if self.started_elsewhere(trace):
            if self.bounds_moved_start:
                return "from another start than recorded"
            if self.target == trace["variant"]:  # its own configuration: the recorded start, or should be
                return f"from another start than recorded: {CHANGED}"
            return "from its own start"
        start = recorded_start(trace)
        return f"from start={start}, as recorded" if start is not None else None


    def departure(self, trace: dict) -> int | None:
        """The first step after which a replay on the recorded design observed or refused
        otherwise than the trace records (an edited file, or a model changed since), or None."""
        for i, (done, recorded) in enumerate(zip(self.session.steps, trace["steps"])):
            if (done["rejected"] is None) != (recorded.get("rejected") is None) \
                    or json.loads(json.dumps(done["observation"])) != recorded["observation"]:
                return i
        return None


def recorded_start(trace: dict) -> str | None:
    """The named start a trace's configuration records (slots: where Terraform left the
    app, which ``--bound start=NAME`` changes), or None."""
    start = (trace.get("config") or {}).get("start")
    return start if isinstance(start, str) else None


#: why a replay on the recorded design parts from the recorded steps
CHANGED = "the file, or the design or model it replays on, changed since it was saved"
#: the same, replayed on the implementation a contract run recorded it on
CHANGED_IMPLEMENTATION = "the file, or the implementation, changed since it was saved"


def replay(trace: dict, variant: str | None = None, adapter: Any = None, target: str | None = None,
           allowed: Callable[[dict, Action], bool] | None = None,
           bounds: dict[str, Any] | None = None) -> ReplayOutcome:
    """Replay ``trace``'s actions on a variant or an implementation (``adapter``).

    On another variant, that design's own configuration (``Model.replay_config``: for
    slots, where its Terraform leaves the app) with every bound the search was given.
    On an implementation, the trace's own configuration. ``bounds`` (``replay
    --bound``) then change some of it: another start for a fixed implementation.

    ``allowed(observation, action)``: when given, the replay stops short, not
    reproduced, before an action it refuses in the observation it would act on
    (shortening a trace must not send an implementation what no search would)."""
    model = get_model(trace["model"])
    implementation = adapter is not None
    if not implementation:
        target = variant or trace["variant"]
        adapter = ReferenceAdapter(model, model.variant(target))
    config = config_on(trace, None if implementation else target, bounds)
    # a conformance trace replayed on a variant: that variant is what differs, if anything
    prop = model.property(trace["property"], config, subject="implementation" if implementation else target)
    if implementation and not trace["property"].startswith(PREFIX):
        # (as contract guards them: an observation a property cannot read is the implementation's
        # fault; a conformance property's reference raising is the reference design's)
        prop = guard_property(prop)
    session = Session(model, adapter, (prop,), config)
    try:
        settle_from = trace.get("settle_from")
        actions = trace["steps"] if settle_from is None else trace["steps"][:settle_from]
        fault = trace.get("fault")  # the action an implementation failed at comes last (settle_from is null)
        for step in actions + ([{"action": fault["action"]}] if fault else []):
            action = model.action(step["action"])
            if allowed is not None and not allowed(session.obs, action):
                break  # not reproduced: the violation, if any, would come later
            if session.perform(action) is not None:
                break
        else:
            # (a fault trace's check judged once the platform settles: after the action it failed at)
            # (judged by another property than recorded, ``replay --property``: a settled one
            # is judged once the platform settles, as a search judges it)
            if settle_from is not None or (prop.kind == "settled" and (fault or trace.get("recorded_property"))):
                session.settle()
    finally:
        adapter.close()
    on = None if implementation else target
    moved = bool(bounds) and model.observe(model.initial_state(config)) != model.observe(
        model.initial_state(config_on(trace, on)))
    return ReplayOutcome(target or "implementation", prop.name, session.violation, session, moved, config)


def config_on(trace: dict, target: str | None, bounds: dict[str, Any] | None = None) -> Any:
    """The configuration ``trace`` replays with on variant ``target`` (``Model.replay_config``;
    None: an implementation, the trace's own), with ``bounds`` changed; a UsageError when
    the bounds it was given do not fit that design's own, or ``bounds`` do not fit."""
    model = get_model(trace["model"])
    config = model.config_from_json(trace["config"])
    if target is not None:
        config = model.replay_config(config, recorded_on(trace, model), target)
    if not bounds:
        return config
    replayed, fields = model.config_type.REPLAYED, attrs.fields_dict(model.config_type)
    for name in bounds:
        if name in fields and name not in replayed:
            raise UsageError(f"--bound {name}: bounds what a search tries; a replay runs the recorded "
                             f"actions (it takes: {', '.join(replayed)})")
        if name not in fields:  # (with_bounds would list every field: the search's too)
            raise UsageError(f"--bound {name}: no bound of {model.name}{did_you_mean(name, replayed)} "
                             f"(a replay takes: {', '.join(replayed)})")
    return model.with_bounds(config, bounds)


def recorded_on(trace: dict, model) -> str | None:
    """The variant whose configuration a trace's search started from: the recorded
    variant, or for an implementation's trace the ``--reference`` of its contract run
    (None: the model's default)."""
    if trace["variant"] in model.variants:
        return trace["variant"]
    implementation = (trace.get("extra") or {}).get("implementation")
    reference = implementation.get("reference") if isinstance(implementation, dict) else None
    return reference if isinstance(reference, str) else None
