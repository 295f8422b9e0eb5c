"""Observations: the plain-JSON view of a Cloud Foundry state.

Properties read observations only, so they judge the reference model and any
other implementation alike. Ids are normalised: web processes and deployments
are numbered by creation order over the app's life, droplets by staging order.
The format is ``spec/capi.observation.schema.json``.
"""

from __future__ import annotations

from typing import Any

from .state import App, CapiState, Deployment, Process


def observe(state: CapiState) -> dict[str, Any]:
    app = state.app
    deployments = []
    for d in state.deployments:  # (a loop, not a call per deployment: the explorer's hot path)
        seen = _SEEN.get(id(d))
        if seen is not None and seen[0] is d:
            out = seen[1].copy()
            out["canary_steps"] = list(d.canary_steps)
            deployments.append(out)
        else:
            deployments.append(_deployment(d))
    droplets = _DROPLETS.get(state.droplets)
    if droplets is None:
        droplets = _droplets(state.droplets)
    return {
        "app": None if app is None else {"droplet": app.droplet, "started": app.started},
        "droplets": list(map(dict.copy, droplets)),
        "processes": [
            {"id": p.id, "droplet": p.droplet, "instances": list(p.instances)}
            for p in state.processes
        ],
        "deployments": deployments,
    }


# Each state gets its own observation (new dicts and lists: a property that changes
# its observation changes no other), copied from what is worked out once per value:

#: id(deployment) -> (the deployment, its observation): states share their deployments
#: (a step changes one at most; the writing helpers intern them). The deployment is
#: held, so its id is not reused while it is here; cleared past ``_SEEN_MAX`` entries.
_SEEN: dict[int, tuple[Deployment, dict[str, Any]]] = {}
_SEEN_MAX = 10_000
#: the droplets (a tuple of bools) -> their observations (a few: one per droplet staged);
#: keys compare as Python compares (``1 == True``), and the model's droplets are bools
_DROPLETS: dict[tuple[bool, ...], tuple[dict[str, Any], ...]] = {}


def _deployment(d: Deployment) -> dict[str, Any]:
    """A deployment's observation, kept in ``_SEEN`` for the next state holding it."""
    if len(_SEEN) >= _SEEN_MAX:
        _SEEN.clear()
    out = _observed_deployment(d)
    _SEEN[id(d)] = (d, out.copy())
    return out


def _droplets(droplets: tuple[bool, ...]) -> tuple[dict[str, Any], ...]:
    """The droplets' observations, kept in ``_DROPLETS`` for the next state holding them."""
    if len(_DROPLETS) >= _SEEN_MAX:
        _DROPLETS.clear()
    out = _DROPLETS[droplets] = tuple({"id": i, "healthy": h} for i, h in enumerate(droplets))
    return out


def _observed_deployment(d: Deployment) -> dict[str, Any]:
    return {
        "id": d.id,
        "state": d.state,
        "status_value": d.status_value,
        "status_reason": d.status_reason,
        "deploying_process": d.deploying_process,
        "droplet": d.droplet,
        "previous_droplet": d.previous_droplet,
        "owic": d.owic,
        "max_in_flight": d.max_in_flight,
        "strategy": d.strategy,
        "canary_steps": list(d.canary_steps),
        "canary_step": d.canary_step,
        "web_instances": d.web_instances,
    }


def from_observation(obs: dict[str, Any]) -> CapiState:
    """Build the state an observation describes (fixtures, the Z3 bridge)."""
    processes = tuple(
        Process(id=p["id"], droplet=p["droplet"], instances=tuple(p["instances"]))
        for p in obs.get("processes", [])
    )
    deployments = tuple(
        Deployment(
            id=d["id"],
            state=d["state"],
            status_value=d["status_value"],
            status_reason=d["status_reason"],
            deploying_process=d["deploying_process"],
            droplet=d["droplet"],
            previous_droplet=d["previous_droplet"],
            owic=d["owic"],
            max_in_flight=d.get("max_in_flight", 1),
            strategy=d.get("strategy", "rolling"),
            canary_steps=tuple(d.get("canary_steps", ())),
            canary_step=d.get("canary_step", 0),
            web_instances=d.get("web_instances"),
        )
        for d in obs.get("deployments", [])
    )
    app = obs.get("app")
    droplets = tuple(dr["healthy"] for dr in obs.get("droplets", []))
    used = [p.droplet for p in processes] + [d.droplet for d in deployments]
    if app is not None:
        used.append(app["droplet"])
    if len(droplets) <= max(used, default=-1):
        droplets = droplets + (True,) * (max(used) + 1 - len(droplets))
    return CapiState(
        app=None if app is None else App(droplet=app["droplet"], started=app.get("started", True)),
        droplets=droplets,
        processes=processes,
        deployments=deployments,
        next_process_id=max((p.id for p in processes), default=-1) + 1
        if not deployments
        else max([p.id for p in processes] + [d.deploying_process for d in deployments]) + 1,
    )


