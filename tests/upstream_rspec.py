"""Builders shared by the tests that run cloud_controller_ng's own RSpec examples on the
model (test_capi_upstream_rspec*.py): a state from processes and deployments written as
the specs set them up, and what the examples assert on."""

from __future__ import annotations

from deployspec.reference.capi import from_observation
from deployspec.reference.core import Rejected

R, S, C = "RUNNING", "STARTING", "CRASHED"


def P(pid: int, inst, droplet: int = 0) -> dict:
    """A web process: ``inst`` an int (that many RUNNING instances) or a string of R/S/C."""
    statuses = [R] * inst if isinstance(inst, int) else [{"R": R, "S": S, "C": C}[c] for c in inst]
    return {"id": pid, "droplet": droplet, "instances": statuses}


def D(did: int, pid: int, state: str = "DEPLOYING", value: str | None = None, reason: str | None = None,
      owic: int = 6, droplet: int = 0, previous: int = 0, **extra) -> dict:
    value = value or ("ACTIVE" if state in ("DEPLOYING", "PREPAUSED", "PAUSED", "CANCELING") else "FINALIZED")
    reason = reason or {"DEPLOYING": "DEPLOYING", "PREPAUSED": "DEPLOYING", "PAUSED": "PAUSED",
                        "CANCELING": "CANCELING", "DEPLOYED": "DEPLOYED", "CANCELED": "CANCELED"}[state]
    d = {"id": did, "state": state, "status_value": value, "status_reason": reason, "deploying_process": pid,
         "droplet": droplet, "previous_droplet": previous, "owic": owic}
    d.update(extra)
    return d


def build(processes, deployments, droplets=(True,), app_droplet: int = 0):
    return from_observation({
        "app": {"droplet": app_droplet, "started": True},
        "droplets": [{"id": i, "healthy": h} for i, h in enumerate(droplets)],
        "processes": processes, "deployments": deployments,
    })


def counts(state) -> dict:
    return {p.id: p.desired for p in state.processes}


def statuses(state, did: int) -> tuple:
    d = state.deployments[did]
    return d.state, d.status_value, d.status_reason


def step(variant, state, action):
    """``variant``'s step, which must accept the action (a refusal fails the test, saying why)."""
    out = variant.step(state, action)
    assert not isinstance(out, Rejected), out
    return out
