"""Replaying a trace file: the same actions, on any variant or implementation.

An action the target rejects is recorded as rejected and skipped. When the
trace ends in a settle phase, the target settles by its own rules (it may need
more or fewer ticks than the recorded variant did) before being judged. On an
implementation (``adapter``), a property that cannot read an observation is
the implementation's fault, as in ``deployspec contract``.
"""

from __future__ import annotations

from typing import Any

import attrs

from deployspec.adapter import ReferenceAdapter
from deployspec.models import get_model
from deployspec.session import Session
from deployspec.spec.core import Violation


@attrs.frozen
class ReplayOutcome:
    target: str
    property: str
    violation: Violation | None
    session: Session

    @property
    def reproduced(self) -> bool:
        return self.violation is not None and self.violation.property == self.property


def replay(trace: dict, variant: str | None = None, adapter: Any = None, target: str | None = None) -> ReplayOutcome:
    model = get_model(trace["model"])
    config = model.config_from_json(trace["config"])
    prop = model.property(trace["property"], config)
    if adapter is None:
        target = variant or trace["variant"]
        adapter = ReferenceAdapter(model, model.variant(target))
    else:
        from deployspec.contract.guard import guard_property

        prop = guard_property(prop)
    session = Session(model, adapter, (prop,), config)
    try:
        settle_from = trace.get("settle_from")
        actions = trace["steps"] if settle_from is None else trace["steps"][:settle_from]
        for step in actions:
            if session.perform(model.action(step["action"])) is not None:
                break
        else:
            if settle_from is not None:
                session.settle()
    finally:
        adapter.close()
    return ReplayOutcome(target or "implementation", prop.name, session.violation, session)
