"""A canary deployment's pauses: the property ``canary_pauses_at_every_step`` (one of
``capi.PROPERTIES``), the share of canary instances a step asks for, and the breach each
wrong pause is.

A design's rounding of a step's weight is its own, so the share is a band that upstream's
plan and capi-safe's both fall within; the names are the observation's (``owic``,
``web_instances``, ``canary_steps``, ``canary_step``).
"""

from __future__ import annotations

from .capi_observations import MODEL
from .core import Breach, Step, counted, step_label, trace_property


def canary_share(d: dict) -> tuple[int, int]:
    """The fewest and most routable instances a canary deployment may pause with at its
    current step, whatever the design's rounding.

    With a step of weight ``w`` percent the canary is about ``w`` percent of the count the
    deployment is about: at least ``floor(w * n / 100)`` of the smaller of the original
    count and the count the deployment takes the app to (``web_instances``, else the
    original), and at most ``ceil(w * n / 100)`` of the larger; at least one when the app is
    to serve any, at most one for a plan without steps. Upstream's plan (``round(N * w /
    100)``, at least 1, N the smaller count: ``DeploymentModel#canary_step_plan`` at 3bbba90)
    and capi-safe's (N the count taken to) both fall within it."""
    owic, wi, weights = d["owic"], d["web_instances"], d["canary_steps"]
    taken_to = owic if wi is None else wi
    least = min(1, taken_to)
    if not weights:
        return least, 1
    weight = weights[min(step_of(d), len(weights)) - 1]
    low, high = min(owic, taken_to), max(owic, taken_to)
    return max(least, low * weight // 100), max(1, -(-high * weight // 100))


def step_of(d: dict) -> int:
    """The step a canary is at (``canary_current_step``, 1 before any is written)."""
    return max(d["canary_step"], 1)


def steps_in(d: dict) -> int:
    """The steps of a canary's plan; one for a plan without steps."""
    return max(len(d["canary_steps"]), 1)


def unfinished(d: dict, last: int, step: Step) -> Breach | None:
    """A canary rolling out the rest (DEPLOYING, DEPLOYED) before its last step's pause."""
    if last >= steps_in(d):
        return None
    return Breach("step-skipped", f"d{d['id']} became {d['state']} at {step_label(step)} having paused at "
                                  f"{last} of its {steps_in(d)} canary step(s)")


def out_of_turn(d: dict, last: int, at: int, step: Step) -> Breach:
    """A pause at any step but the next one of the plan."""
    cause = ("step-out-of-order" if at < last else
             "step-repeated" if at == last or at > steps_in(d) else "step-skipped")
    return Breach(cause, f"d{d['id']} paused at canary step {at} at {step_label(step)}, after pausing last at "
                         f"step {last} of its {steps_in(d)}")


def pause_shown(d: dict, at: int, step: Step) -> Breach | None:
    """A pause whose deploying process has the step's share routable, or the breach."""
    low, high = canary_share(d)
    have = sum(i == "RUNNING" for p in step.after["processes"] if p["id"] == d["deploying_process"]
               for i in p["instances"])
    if low <= have <= high:
        return None
    cause, bound = ("canary-short", f"at least {low}") if have < low else ("canary-over", f"at most {high}")
    return Breach(cause, f"d{d['id']} paused at canary step {at} at {step_label(step)} with "
                         f"{counted(have, 'routable instance')} of P{d['deploying_process']}; its step asks for {bound}")


#: states in which a canary no longer owes steps (whether it may leave them is
#: deployment_never_resumes'); so does any deployment whose status value is FINALIZED
_STEPPED_OUT = frozenset({"CANCELING", "CANCELED", "DEPLOYED"})


@trace_property(MODEL, initial=(), essential=("continue_",))
def canary_pauses_at_every_step(memory, step: Step):
    """A canary deployment pauses at each of its steps, in order, before it rolls out the
    rest, and each pause shows the step's share of canary instances, routable.

    What ``cf push --strategy canary --instance-steps`` promises: the deployment stops at
    every step (PAUSED, ``Updater#canary`` writes it once the deploying process has the
    step's canary instances routable: ``deployment_updater/updater.rb`` and
    ``actions/up_scaler.rb`` ``finished_scaling?`` at cloud_controller_ng 3bbba90), and
    ``cf continue-deployment`` moves it to the next step, or after the last one lets it
    become DEPLOYING (``deployment_continue.rb``). A pause is the user's moment to look at
    the canary: one with nothing routable shows nothing, one with the whole app on the new
    droplet has already shipped it, and one at a step already shown leaves the user
    continuing without moving on. A plan without steps is one step. Judged until the
    deployment is canceled, superseded or ends; a deployment created for a stopped app is
    DEPLOYED at once upstream (``deployment_create.rb``) and owes no pause.

    Causes: ``step-skipped`` (PAUSED at a later step than the next, or DEPLOYING or
    DEPLOYED before the last step's pause), ``step-repeated`` (PAUSED again at a step
    already paused at, or at one past the plan), ``step-out-of-order`` (PAUSED at an
    earlier step than the last pause), ``canary-short`` and ``canary-over`` (paused with
    fewer or more routable instances of its deploying process than :func:`canary_share`
    allows). Memory: (deployment id, the step it last paused at), one per canary deployment
    still stepped through.

    Vacuous (``holds ?``) where no ``continue_`` took effect: without canary plans in the
    configuration (a contract run's default) no canary deploy is offered and nothing here
    is judged; a gate with ``--fail-vacuous`` said it held (a user's report).
    """
    watched = dict(memory)
    before = {d["id"]: (d["state"], d["canary_step"]) for d in step.before["deployments"]}
    kept, breach = [], None
    for d in step.after["deployments"]:
        i, state = d["id"], d["state"]
        if d["strategy"] != "canary" or (i in before and i not in watched):
            continue
        last = watched.get(i, 0)
        if state in _STEPPED_OUT or d["status_value"] == "FINALIZED":
            if (state, d["status_reason"]) == ("DEPLOYED", "DEPLOYED") and _was_started(step) and breach is None:
                breach = unfinished(d, last, step)
            continue
        if (state, d["canary_step"]) != before.get(i) and breach is None:
            if state == "PAUSED":
                at = step_of(d)
                breach = pause_shown(d, at, step) if at == last + 1 <= steps_in(d) else out_of_turn(d, last, at, step)
                last = at
            elif state == "DEPLOYING":
                breach = unfinished(d, last, step)
        kept.append((i, last))
    return tuple(kept), breach


def _was_started(step: Step) -> bool:
    return bool(step.before["app"] and step.before["app"]["started"])
