"""Implementations that work but differ from capi-safe (or slots-pipeline-immutable) in one way (the conformance check, --reference)."""

# Each differs from capi-safe in one way only (tests/test_contract_conformance.py);
# `python contract_fakes.py --serve NAME` puts the factory NAME behind the protocol.

from __future__ import annotations

import attrs
from deployspec.reference.capi import rules
from deployspec.reference.slots import platform
from deployspec.reference.slots.state import STAGING

from deployspec.contract.examples import ReferenceImplementation


class RefusesIdleTicks(ReferenceImplementation):
    """Refuses a tick that has nothing to do, which capi-safe accepts (as a no-op).
    Its observations are capi-safe's throughout: only the refusal differs."""

    def perform(self, action):
        if action["type"] == "tick" and self.variant.step(self.state, self.model.action(action)) == self.state:
            return "nothing to do"
        return super().perform(action)


def refuses_idle_ticks():
    return RefusesIdleTicks("capi", "capi-safe")


class RefusesNothing(ReferenceImplementation):
    """Answers "accepted" where capi-safe refuses (a scale while a deployment is
    CANCELING), and then does nothing: its observations are capi-safe's throughout."""

    def perform(self, action):
        super().perform(action)  # the refusal's reason is dropped: None, accepted


def refuses_nothing():
    return RefusesNothing("capi", "capi-safe")


class StartsWithOneInstance(ReferenceImplementation):
    """capi-safe, except that a new deployment's process starts with one instance
    whatever is already there or in flight (as every design did before PR #3907): it
    accepts and refuses what capi-safe does, but its observations differ after some deploys."""

    def __init__(self, model, variant):
        super().__init__(model, variant)
        self.variant = attrs.evolve(self.variant, starting_instances=rules.one_starting_instance)


def starts_with_one_instance():
    return StartsWithOneInstance("capi", "capi-safe")


class RefusesButScales(ReferenceImplementation):
    """Refuses a scale while a deployment is CANCELING, as capi-safe does, but scales
    the newest web process all the same: a refusal that changes the state, which the
    protocol forbids, so a fault whatever the check, not a divergence. (Other refused
    scales, while a deployment progresses or before the push, change nothing.)"""

    def perform(self, action):
        canceling = any(d["state"] == "CANCELING" for d in self.observe()["deployments"])
        reason = super().perform(action)
        if reason is not None and action["type"] == "scale" and canceling:
            unblocked = attrs.evolve(self.variant, scale_blocked_in=frozenset())
            self.state = unblocked.step(self.state, self.model.action(action))
        return reason


def refuses_but_scales():
    return RefusesButScales("capi", "capi-safe")


class ScalesWhileDeploying(ReferenceImplementation):
    """Accepts a scale while a deployment is DEPLOYING, PREPAUSED or PAUSED, and scales
    the newest web process, the deploying one; every reference variant refuses that
    scale (process_scale.rb). While CANCELING it refuses, as capi-safe does."""

    def __init__(self, model, variant):
        super().__init__(model, variant)
        self.variant = attrs.evolve(self.variant, scale_blocked_in=frozenset({"CANCELING"}))


def scales_while_deploying():
    return ScalesWhileDeploying("capi", "capi-safe")


class Reworded(ReferenceImplementation):
    """Conforms to capi-safe in its own words: other refusal reasons, and every
    object of the observation with its keys in another order (neither is part of
    the contract)."""

    def perform(self, action):
        reason = super().perform(action)
        return None if reason is None else f"422 Unprocessable Entity: {reason.upper()}"

    def observe(self):
        return _keys_reversed(super().observe())


def _keys_reversed(value):
    if isinstance(value, dict):
        return {k: _keys_reversed(value[k]) for k in reversed(list(value))}
    if isinstance(value, list):
        return [_keys_reversed(v) for v in value]
    return value


def reworded():
    return Reworded("capi", "capi-safe")


class StartsWithADroplet(ReferenceImplementation):
    """Reports a droplet before any push (capi-safe has none until the push stages
    one); from the push on its observations are capi-safe's."""

    def observe(self):
        obs = super().observe()
        if obs["app"] is None:
            obs["droplets"] = [{"id": 0, "healthy": True}]
        return obs


def starts_with_a_droplet():
    return StartsWithADroplet("capi", "capi-safe")


class SwapsWithoutWaiting(ReferenceImplementation):
    """slots-pipeline-immutable, except that its swap does not wait for staging's restart
    (App Service's step 2): staging restarts and the names trade at once, so a build that
    fails to start is promoted. It also skips the sticky settings' exchange (steps 1 and 6)
    and the former production's restart: the same observations while no setting is sticky
    (``ci_sticky`` off, the default). Every other action is the reference's."""

    def perform(self, action):
        if action["type"] != "swap":
            return super().perform(action)
        state = self.state
        staging = platform.restart_site(state, state.site(STAGING))
        state = state.with_site(STAGING, staging)
        self.state = attrs.evolve(state, production=1 - state.production, last_swap="completed")
        return None


def swaps_without_waiting():
    return SwapsWithoutWaiting("slots", "slots-pipeline-immutable")
