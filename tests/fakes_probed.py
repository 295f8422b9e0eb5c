"""Implementations that differ from a reference only on actions the search's candidates leave out: a run probes them."""

# The reference refuses such an action there, or it changes nothing (model.probe_actions;
# tests/test_contract_probes.py). Factories by name: accepts_refused_KIND and
# refuses_no_op_KIND on capi-safe, slots_… on slots-pipeline-immutable (KIND as in the
# vocabulary: continue_, deliver_webhook).

from __future__ import annotations

from deployspec.contract.examples import ReferenceImplementation


class AcceptsRefused(ReferenceImplementation):
    """The reference, except that it answers "accepted" to a refused action of one kind
    (and does nothing): its observations are the reference's throughout."""

    def __init__(self, model, variant, kind):
        super().__init__(model, variant)
        self.kind = kind

    def perform(self, action):
        reason = super().perform(action)
        return None if action["type"] == self.kind else reason


class RefusesNoOp(ReferenceImplementation):
    """The reference, except that it refuses an action of one kind where the reference
    accepts it and nothing changes (a second cancel while CANCELING, a restart that
    would pull what every instance runs): its observations are the reference's throughout."""

    def __init__(self, model, variant, kind):
        super().__init__(model, variant)
        self.kind = kind

    def perform(self, action):
        if action["type"] == self.kind and self.variant.step(self.state, self.model.action(action)) == self.state:
            return "nothing to do"
        return super().perform(action)


_BY_NAME = {"accepts_refused_": AcceptsRefused, "refuses_no_op_": RefusesNoOp}


def factory_named(name: str):
    """``accepts_refused_push`` → a factory of AcceptsRefused("capi", "capi-safe", "push"), and so on;
    None for a name of no such form."""
    model, variant, rest = "capi", "capi-safe", name
    if name.startswith("slots_"):
        model, variant, rest = "slots", "slots-pipeline-immutable", name[len("slots_"):]
    for prefix, cls in _BY_NAME.items():
        if rest.startswith(prefix) and rest[len(prefix):]:
            return lambda: cls(model, variant, rest[len(prefix):])
    return None


class IgnoresFailedSteps(ReferenceImplementation):
    """capi-safe, except that its updater's steps never fail: ``tick(failed=[d])`` runs
    d's step all the same (capi-safe keeps one deployment active, so the search's
    candidates never fail a step: only a probe asks)."""

    def perform(self, action):
        if action["type"] == "tick":
            action = {**action, "failed": []}
        return super().perform(action)


def ignores_failed_steps():
    return IgnoresFailedSteps("capi", "capi-safe")
