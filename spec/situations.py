"""Situations: a coarse reading of an observation, for a run's coverage.

A contract run can pass while its search hardly ever acted where a bug lives: a
canary PAUSED for one user step in 250 examples, which let a controller that
refused every ``continue`` pass. Counting the steps taken in each situation, and
naming the situations that the reference designs reach under the run's
configuration (the ``--reference`` design's, when one is given) and in which the
run never took a step, says where the run looked. A situation is read
off the observation alone, so it means the same on the reference and on any
implementation; each model's situations are few, so every one can be named.
"""

from __future__ import annotations

from typing import Any

from .slots import digests

Observation = dict[str, Any]

#: before any deployment
NO_DEPLOYMENT = "no deployment"
#: capi: the newest deployment's state, in the order a deployment passes them
CAPI_ORDER = (NO_DEPLOYMENT, "DEPLOYING", "PREPAUSED", "PAUSED", "CANCELING", "DEPLOYED", "CANCELED")


def capi_situation(obs: Observation) -> str:
    """The newest deployment's state (what the user's next verb acts on)."""
    deployments = obs["deployments"]
    if not deployments:
        return NO_DEPLOYMENT
    return max(deployments, key=lambda d: d["id"])["state"]


def capi_situations(config: dict, canaries: bool = True) -> tuple[str, ...]:
    """The situations a design reaches under a configuration (``to_json``): a canary's
    PREPAUSED and PAUSED need a canary plan and a design that takes canary deployments
    (``canaries``: none before PR #3892, 2024); with no deployment allowed, none but the
    first."""
    if config.get("max_deployments") == 0:
        return (NO_DEPLOYMENT,)
    pauses = canaries and any(config.get("canary_plans") or ())
    return tuple(s for s in CAPI_ORDER if pauses or s not in ("PREPAUSED", "PAUSED"))


#: slots: what a swap would ship, in the order a release passes them
STAGING_EMPTY = "staging runs nothing"
ALIKE = "slots run the same"
VALIDATED = "staging runs a validated other image"
UNVALIDATED = "staging runs an unvalidated other image"
SLOTS_ORDER = (STAGING_EMPTY, ALIKE, VALIDATED, UNVALIDATED)


def slots_situation(obs: Observation) -> str:
    """What staging runs against production: what a swap would ship."""
    staging = digests(obs, "staging")
    if not staging:
        return STAGING_EMPTY
    if staging == digests(obs, "production"):
        return ALIKE
    return VALIDATED if staging <= set(obs["validated"]) else UNVALIDATED


def slots_situations(config: dict) -> tuple[str, ...]:
    """The situations every design reaches under a configuration: from ``start=release``
    both slots run the release build, and staging never runs nothing again; with no push
    allowed, the start's own is all there is."""
    release = config.get("start") == "release"
    if config.get("max_pushes") == 0:
        return (ALIKE,) if release else (STAGING_EMPTY,)
    return tuple(s for s in SLOTS_ORDER if not release or s != STAGING_EMPTY)
