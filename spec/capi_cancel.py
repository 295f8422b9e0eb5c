"""What a cancel must do: the properties ``cancel_restores_last_good`` and
``cancel_accepted_in_flight`` (two of ``capi.PROPERTIES``), and what the app ran when a
deployment was created, which a cancel brings back."""

from __future__ import annotations

from .capi_observations import MODEL, PROGRESSING_STATES, healthy, starting
from .core import Observation, Step, counted, step_label, trace_property


@trace_property(MODEL, initial=((), None))
def cancel_restores_last_good(memory, step: Step):
    """An accepted cancel makes the app's current droplet the one it had when the
    canceled deployment was created (:func:`_droplet_not_assigned_back`). Once a
    cancel has completed and the runtime has settled, one web process
    remains with the original instance count and, if the app ran a healthy
    droplet when the canceled deployment was created, it runs one of those,
    every instance routable.

    The seed's expected result: cancel must keep the healthy process and stop
    only the canceled deployment's own (cloud_controller_ng #3019, PR #3084).
    Judged when no instance is STARTING any more, unless the user acted first.
    What the app ran: once something served, what its web processes with
    instances ran (:func:`_ran_when_created`). An app that ran no healthy droplet
    before the deployment has no "last good" to demand back.
    """
    ran_before, armed = memory
    before, after = step.before, step.after
    if step.action["type"] == "cancel" and step.rejected is None:
        unassigned = _droplet_not_assigned_back(step)
        if unassigned is not None:
            return (ran_before, None), unassigned
    created = len(after["deployments"]) - len(ran_before)
    if created > 0:
        ran_before += (_ran_when_created(before),) * created
    if step.actor == "user" and step.rejected is None:
        armed = None
    for d in after["deployments"]:
        was = next((b for b in before["deployments"] if b["id"] == d["id"]), None)
        if was and was["state"] == "CANCELING" and d["state"] == "CANCELED" and d["status_reason"] == "CANCELED":
            armed = d["id"]
    if armed is None or starting(after) > 0:
        return (ran_before, armed), None
    return (ran_before, None), _restored(after, after["deployments"][armed], ran_before[armed])


def _droplet_not_assigned_back(step: Step) -> str | None:
    """An accepted cancel makes the canceled deployment's ``previous_droplet`` the app's
    current droplet again (DeploymentCancel, ``deployment_cancel.rb`` at 3bbba90, before
    it writes CANCELING); the one the cf CLI cancels, the newest with status ACTIVE."""
    target = next((d for d in reversed(step.before["deployments"]) if d["status_value"] == "ACTIVE"), None)
    current = step.after["app"]["droplet"]
    if target is None or current == target["previous_droplet"]:
        return None
    return (f"cancel of d{target['id']} at {step_label(step)} left the app's current droplet {current}, not "
            f"droplet {target['previous_droplet']}, its current one when d{target['id']} was created: a restart "
            "deploys the canceled droplet again")


def _ran_when_created(obs: Observation) -> frozenset[int]:
    """The droplets the app ran when a deployment was created, leaving out a
    CANCELING deployment's process (its cancel was taking it away): when one of
    the others served (a RUNNING instance), those of the ones with instances;
    when none served, those of all of them (no version had proven itself).

    A process at 0 ran nothing then: a canary's 100 % step leaves the original at 0
    while the canary serves every instance, and a cancel of the deployment after
    it must bring the canary's droplet back, not the original's."""
    canceling = {d["deploying_process"] for d in obs["deployments"] if d["state"] == "CANCELING"}
    kept = [p for p in obs["processes"] if p["id"] not in canceling]
    if any("RUNNING" in p["instances"] for p in kept):
        kept = [p for p in kept if p["instances"]]
    return frozenset(p["droplet"] for p in kept)


def _restored(obs: Observation, d: dict, ran: frozenset[int]) -> str | None:
    procs = obs["processes"]
    cancel = f"cancel of d{d['id']}"
    if len(procs) != 1:
        return f"{cancel} left {len(procs)} web processes"
    p = procs[0]
    if len(p["instances"]) != d["owic"]:
        return f"{cancel} left P{p['id']} with {counted(len(p['instances']), 'instance')}, not the original {d['owic']}"
    if not p["instances"]:
        return None
    good = frozenset(r for r in ran if healthy(obs, r))
    if not good:
        return None  # the app ran no healthy droplet before: nothing to restore
    if p["droplet"] not in good:
        return (
            f"{cancel} left P{p['id']} running droplet {p['droplet']}, not the healthy "
            f"{_droplets(good)} the app ran before the deployment"
        )
    down = [i for i in p["instances"] if i != "RUNNING"]
    if down:
        return f"{cancel} left P{p['id']} with {len(down)} of {len(p['instances'])} instances not routable"
    return None


def _droplets(ds: frozenset[int]) -> str:
    return ", ".join(f"droplet {d}" for d in sorted(ds)) or "nothing"


@trace_property(MODEL, initial=None)
def cancel_accepted_in_flight(memory, step: Step):
    """While a deployment is in flight (DEPLOYING, PREPAUSED or PAUSED) and is the one
    ``cf cancel-deployment`` acts on, a cancel is accepted.

    The user's way back: ``DeploymentCancel`` refuses only a deployment that is not
    ``cancelable?``, one in none of ``DeploymentModel::ACTIVE_STATES`` (cloud_controller_ng
    3bbba90, ``app/actions/deployment_cancel.rb``, ``app/models/runtime/deployment_model.rb``;
    the droplet it restores can be gone, which the model never makes so); the CLI cancels
    the newest deployment whose status value is ACTIVE. A design that refuses to cancel a
    PAUSED canary, or a deployment between two of its steps, leaves the user a release they
    can only push through; no other property objects, as a refusal changes nothing.
    Whether a CANCELING deployment may be canceled again is not judged (a repeat asks for
    nothing new)."""
    if step.action["type"] != "cancel" or step.rejected is None:
        return None, None
    target = next((d for d in reversed(step.before["deployments"]) if d["status_value"] == "ACTIVE"), None)
    if target is None or target["state"] not in PROGRESSING_STATES:
        return None, None
    return None, (f"cancel refused at {step_label(step)} while d{target['id']} was {target['state']}: "
                  f"{step.rejected}")
