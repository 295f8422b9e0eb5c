"""Reading a Cloud Foundry observation: the states a deployment may be in and what its
processes' instances say (the capi properties' shared vocabulary, ``spec/capi*.py``)."""

from __future__ import annotations

from .core import Observation

MODEL = "capi"
PROGRESSING_STATES = ("DEPLOYING", "PREPAUSED", "PAUSED")
ACTIVE_STATES = PROGRESSING_STATES + ("CANCELING",)


def routable(obs: Observation) -> int:
    return sum(i == "RUNNING" for p in obs["processes"] for i in p["instances"])


def starting(obs: Observation) -> int:
    return sum(i == "STARTING" for p in obs["processes"] for i in p["instances"])


def active(obs: Observation) -> list[dict]:
    return [d for d in obs["deployments"] if d["state"] in ACTIVE_STATES]


def healthy(obs: Observation, droplet: int) -> bool:
    return obs["droplets"][droplet]["healthy"]


