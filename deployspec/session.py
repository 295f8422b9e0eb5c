"""One run against an adapter: perform actions, record the trace, judge properties.

Shared by the Hypothesis machine, replay and the contract harness, so a trace
means the same thing whichever engine produced it.
"""

from __future__ import annotations

from typing import Any

import attrs

from deployspec.reference.core import Action
from deployspec.spec.core import Monitor, Property, Step, Violation


class Session:
    def __init__(self, model, adapter, properties: tuple[Property, ...], config: Any,
                 skip: frozenset[tuple[str, str]] = frozenset()):
        self.model = model
        self.adapter = adapter
        self.properties = properties
        self.config = config
        #: (property, cause) pairs already found: not reported again (see Monitor)
        self.skip = skip
        self.reset()

    def reset(self) -> None:
        self.adapter.reset(self.config)
        self.initial = self.adapter.observe()
        self.obs = self.initial
        self.steps: list[dict[str, Any]] = []
        self.monitor = Monitor(self.properties, self.skip)
        self.violation: Violation | None = None
        self.settle_from: int | None = None

    def perform(self, action: Action) -> Violation | None:
        before = self.obs
        rejected = self.adapter.perform(action)
        after = self.adapter.observe()  # (a fault in either: the guard keeps the run asked since its reset)
        self.obs = after
        data = action.to_json()
        self.steps.append({"action": data, "rejected": rejected, "observation": after})
        step = Step(len(self.steps) - 1, data, action.actor, rejected, before, after)
        v = self._judged(self.monitor.advance, step)
        if v is not None and self.violation is None:
            self.violation = v
        return v

    def _judged(self, judge, *args):
        """``judge(*args)``; an implementation's fault on the way (a property that cannot read
        its observation) carries the steps since reset, and the run that led to it."""
        try:
            return judge(*args)
        except BaseException as exc:
            from deployspec.contract.guard import with_steps

            with_steps(exc, self.steps, self.config, self.initial)
            raise

    def play(self, actions, settle: bool = True) -> Violation | None:
        """Perform ``actions`` until one breaks a property; if none does, let the platform
        settle (unless ``settle`` is false). The first violation, or None."""
        for action in actions:
            if self.perform(action) is not None:
                break
        else:
            if settle:
                self.settle()
        return self.violation

    def platform_steps(self, limit: int):
        """The platform's own actions while users stay away (the updater ticks,
        instances start), each asked after the one before was performed by the caller
        (the settle phase, the machine's ``wait``), until it rests, a tick changes
        nothing, or ``limit`` actions were given. Returns (StopIteration's value)
        whether it was seen at rest."""
        for _ in range(limit):
            action = self.model.settle_action(self.obs)
            if action is None:
                return True
            before = self.obs
            yield action
            if action.kind == "tick" and self.obs == before:
                return True
        return self.model.settle_action(self.obs) is None  # (it may finish on the last step allowed)

    def settle(self) -> Violation | None:
        """Leave the platform alone: the updater ticks, instances start, until
        nothing changes or the configured bound is spent; then judge."""
        self.settle_from = len(self.steps)
        bound = self.config.settle_steps
        steps = self.platform_steps(bound)
        while True:
            try:
                action = next(steps)
            except StopIteration as end:
                cut = not end.value  # the platform was never seen to have nothing more to do
                break
            v = self.perform(action)
            if v is not None:
                return v
        v = self._judged(self.monitor.settled, self.obs, len(self.steps) - 1)
        if v is not None and cut:  # bounded liveness: say the bound may be what was missed
            v = attrs.evolve(v, message=f"{v.message} (the settle phase was cut at settle_steps="
                                        f"{bound}: the platform had not come to rest)")
        if v is not None and self.violation is None:
            self.violation = v
        return v
