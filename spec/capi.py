"""What a Cloud Foundry deployment controller must guarantee.

Each property reads observations (``capi.observation.schema.json``) and names
the report it protects against.
"""

from __future__ import annotations

from .core import Observation, Step, settled_property, state_property, trace_property

MODEL = "capi"
ACTIVE_STATES = ("DEPLOYING", "PREPAUSED", "PAUSED", "CANCELING")


def routable(obs: Observation) -> int:
    return sum(i == "RUNNING" for p in obs["processes"] for i in p["instances"])


def starting(obs: Observation) -> int:
    return sum(i == "STARTING" for p in obs["processes"] for i in p["instances"])


def active(obs: Observation) -> list[dict]:
    return [d for d in obs["deployments"] if d["state"] in ACTIVE_STATES]


def serving_droplets(obs: Observation) -> frozenset[int]:
    return frozenset(p["droplet"] for p in obs["processes"] if "RUNNING" in p["instances"])


def _healthy(obs: Observation, droplet: int) -> bool:
    return obs["droplets"][droplet]["healthy"]


@state_property(MODEL)
def single_active_deployment(obs: Observation) -> str | None:
    """At most one deployment of the app is active (DEPLOYING, PREPAUSED, PAUSED, CANCELING).

    The seed (cloud_controller_ng #3019) proposes it as the fix, and PR #3072 made it
    so: with two active deployments, the cancel of one picks the other's process.
    """
    live = active(obs)
    if len(live) > 1:
        names = ", ".join(f"d{d['id']} {d['state']}" for d in live)
        return f"{len(live)} active deployments: {names}"
    return None


@trace_property(MODEL, initial=(False, 0))
def app_stays_available(memory, step: Step):
    """While the app is started and was serving, some web instance stays routable,
    unless the user's latest request (push or scale) asked for 0 instances.

    The seed's expected result ("rolling deployments should not lead to an
    unavailable application in case the new app version can't be started",
    cloud_controller_ng #3019; cli #2257; docs-dev-guide #563).
    """
    serving, wanted = memory
    obs, kind = step.after, step.action["type"]
    if step.rejected is None and kind in ("push", "scale"):
        wanted = step.action["instances"]
    if obs["app"] is None or not obs["app"]["started"] or wanted == 0:
        return (False, wanted), None
    up = routable(obs)
    if serving and up == 0:
        return (False, wanted), f"no routable web instance left after {_describe(step)}"
    return (serving or up > 0, wanted), None


@trace_property(MODEL, initial=(frozenset(), (), None))
def cancel_restores_last_good(memory, step: Step):
    """Once a cancel has completed and the runtime has settled, one web process
    remains, with the original instance count, every instance routable, running
    a droplet the app ran before the canceled deployment or one that had served.

    The seed's expected result: cancel must keep the healthy process and stop
    only the canceled deployment's own (cloud_controller_ng #3019, PR #3084).
    Judged when no instance is STARTING any more, unless the user acted first.
    """
    served, ran_before, armed = memory
    before, after = step.before, step.after
    served = served | serving_droplets(before)
    created = len(after["deployments"]) - len(ran_before)
    if created > 0:  # what the app's web processes ran when each new deployment was created
        ran_before += (frozenset(p["droplet"] for p in before["processes"]),) * created
    if step.actor == "user" and step.rejected is None:
        armed = None
    for d in after["deployments"]:
        was = next((b for b in before["deployments"] if b["id"] == d["id"]), None)
        if was and was["state"] == "CANCELING" and d["state"] == "CANCELED" and d["status_reason"] == "CANCELED":
            armed = (d["id"], served | ran_before[d["id"]])
    if armed is None or starting(after) > 0:
        return (served, ran_before, armed), None
    did, good = armed
    return (served, ran_before, None), _restored(after, after["deployments"][did], good)


def _restored(obs: Observation, d: dict, good: frozenset[int]) -> str | None:
    procs = obs["processes"]
    if len(procs) != 1:
        return f"cancel of d{d['id']} left {len(procs)} web processes"
    p = procs[0]
    if len(p["instances"]) != d["owic"]:
        return (
            f"cancel of d{d['id']} left P{p['id']} with {len(p['instances'])} instances, "
            f"not the original {d['owic']}"
        )
    if p["instances"] and good and p["droplet"] not in good:
        return (
            f"cancel of d{d['id']} left P{p['id']} running droplet {p['droplet']}, "
            f"which neither ran before the deployment nor had served"
        )
    down = [i for i in p["instances"] if i != "RUNNING"]
    if down:
        return (
            f"cancel of d{d['id']} left P{p['id']} with {len(down)} of "
            f"{len(p['instances'])} instances not routable"
        )
    return None


@settled_property(MODEL)
def deployment_converges(obs: Observation) -> str | None:
    """Once user actions stop, every deployment of a healthy droplet is finalized
    and, with none active, exactly one web process remains.

    Bounded liveness: judged after the platform settles (the updater keeps ticking
    and instances start) within the model's settle bound.
    """
    if obs["app"] is None:
        return None
    stuck = [d for d in active(obs) if _healthy(obs, d["droplet"])]
    if stuck:
        return f"d{stuck[0]['id']} (healthy droplet {stuck[0]['droplet']}) is still {stuck[0]['state']} after settling"
    if not active(obs) and len(obs["processes"]) != 1:
        return f"{len(obs['processes'])} web processes remain with no deployment active"
    return None


def _describe(step: Step) -> str:
    a = step.action
    args = ", ".join(f"{k}={v}" for k, v in a.items() if k != "type" and v not in ((), [], None))
    return f"step {step.index} ({a['type']}({args}))"


PROPERTIES = (
    single_active_deployment,
    app_stays_available,
    cancel_restores_last_good,
    deployment_converges,
)
