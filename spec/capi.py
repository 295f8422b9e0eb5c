"""What a Cloud Foundry deployment controller must guarantee.

Each property reads observations (``capi.observation.schema.json``) and names
the report it protects against.
"""

from __future__ import annotations

from .capi_canary import canary_pauses_at_every_step
from .capi_cancel import cancel_accepted_in_flight, cancel_restores_last_good
from .capi_observations import (
    ACTIVE_STATES,
    MODEL,
    PROGRESSING_STATES,
    active,
    healthy,
    routable,
)
from .core import (
    Breach,
    Observation,
    Step,
    counted,
    settled_property,
    state_property,
    step_label,
    trace_property,
)


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


#: nothing asked yet: (count, the count a cancel gives back, who asked: (verb, when))
NOT_ASKED = (None, None, None)


def asked(memory: tuple, step: Step) -> tuple:
    """The web instance count the user last asked for, after one step.

    A push or a scale asks for one; so does a deploy with ``web_instances`` (the count
    the deployment takes the app to). A cancel gives back the count that stood before a
    deploy in flight asked for another: it restores the original count, which that one
    is. Kept with it: that count to give back (while a deployment is active), and who
    asked: the verb, and the state of the deployment then in flight (``idle``: none), a
    lost count's cause. Shared by ``app_stays_available`` and ``user_scale_not_lost``.
    """
    wanted, before, asker = memory
    kind = step.action["type"]
    if step.rejected is None:
        if kind in ("push", "scale"):  # the user's own count: no cancel takes it back
            wanted, asker, before = step.action["instances"], (kind, _in_flight(step.before)), None
        elif kind == "deploy" and step.action.get("web_instances"):
            if before is None:  # the first count a deploy of this train asks for
                before = (wanted, asker)
            wanted, asker = step.action["web_instances"], ("deploy", _in_flight(step.before))
        elif kind == "cancel" and before is not None:
            (wanted, asker), before = before, None
    if before is not None and not active(step.after):  # the train ended: nothing to give back
        before = None
    return wanted, before, asker


def _verbs_only(wanting: tuple) -> tuple:
    """:func:`asked`'s memory without the state each count was asked in, which only
    ``user_scale_not_lost``'s causes read: kept, it would tell apart states this property
    judges alike, and the explorer would visit more of them (capi-current: 58,070 states to
    its nine-step cause became 62,504)."""
    wanted, before, asker = wanting
    if before is not None and before[1] is not None:
        before = (before[0], (before[1][0], None))
    return wanted, before, None if asker is None else (asker[0], None)


def _in_flight(obs: Observation) -> str:
    """The state of the newest active deployment, in lower case, or ``idle``."""
    states = [d["state"] for d in active(obs)]
    return states[-1].lower() if states else "idle"


@trace_property(MODEL, initial=(False, NOT_ASKED), meanings={
    "cancel-restarts-from-zero": "the cancel keeps a process the deployment had scaled to 0, which restarts from "
                                 "nothing (docs-dev-guide #563)",
    "cancel-scales-down-serving": "the cancel scales the serving process down to the original count",
    "cancel-keeps-crashed": "the cancel keeps a process whose instances crash",
    "cancel-keeps-unstarted": "the cancel keeps a process none of whose instances has started (cloud_controller_ng "
                              "#3019, the seed)",
    "cancel-keeps-zero": "the cancel keeps a process at 0 (a scale made while CANCELING went to the one it destroys)",
    "scale-step": "the deployment's scale step took the last routable instance",
})
def app_stays_available(memory, step: Step):
    """While the app is started and was serving, some web instance stays routable,
    unless the user's latest request (push, scale, or deploy with web_instances)
    asked for 0 instances (a cancel takes back what its deploy asked, :func:`asked`).

    The seed's expected result ("rolling deployments should not lead to an
    unavailable application in case the new app version can't be started",
    cloud_controller_ng #3019; cli #2257; docs-dev-guide #563).

    Causes (:func:`_loss_cause`): what the cancel step kept (a process it
    restarts from 0 — docs-dev-guide #563 —, one it scales down, crashed or
    unstarted instances), the deployments' scale step, or the user verb.
    """
    serving, wanting = memory
    wanting = _verbs_only(asked(wanting, step))
    obs = step.after
    if obs["app"] is None or not obs["app"]["started"] or not wanting[0]:  # (0, or nothing asked)
        return (False, wanting), None
    up = routable(obs)
    if serving and up == 0:
        return (False, wanting), Breach(_loss_cause(step), f"no routable web instance left after {step_label(step)}")
    return (serving or up > 0, wanting), None


def _loss_cause(step: Step) -> str:
    """How the last routable instance went, from what the step shows.

    A tick while a deployment was CANCELING (and its step did not fail) is the
    cancel step: it kept some web process (the prior) and destroyed the others.
    Named by what the kept process had just before:

    * ``cancel-restarts-from-zero``: no instance — the deployment had scaled it
      to 0 and it restarts from nothing (a canary after a 100 % step,
      docs-dev-guide #563);
    * ``cancel-scales-down-serving``: a routable instance, which the cancel step
      scaled away (down to the original count);
    * ``cancel-keeps-crashed``: crashed instances (an unhealthy droplet);
    * ``cancel-keeps-unstarted``: instances none of which had started yet;
    * ``cancel-keeps-zero``: no instance, and none after the step (a scale the user
      made while canceling went to a process the step destroyed);
    * ``cancel-keeps-nothing``: no web process of the app survived the step (no
      reference design does this; an implementation under test may).

    Any other tick is the deployments' scale step (``scale-step``); a user action
    is named by its verb.
    """
    kind = step.action["type"]
    if kind != "tick":
        return kind
    failed = set(step.action.get("failed", ()))
    if not any(d["state"] == "CANCELING" and d["id"] not in failed for d in step.before["deployments"]):
        return "scale-step"
    had = {p["id"]: p["instances"] for p in step.before["processes"]}
    kept = [had[p["id"]] for p in step.after["processes"] if p["id"] in had]
    if not kept:
        return "cancel-keeps-nothing"
    if any(not had[p["id"]] and p["instances"] for p in step.after["processes"] if p["id"] in had):
        return "cancel-restarts-from-zero"
    if any("RUNNING" in instances for instances in kept):
        return "cancel-scales-down-serving"
    if any("CRASHED" in instances for instances in kept):
        return "cancel-keeps-crashed"
    if not any(kept) and not any(p["instances"] for p in step.after["processes"] if p["id"] in had):
        return "cancel-keeps-zero"
    return "cancel-keeps-unstarted"


@settled_property(MODEL)
def deployment_converges(obs: Observation) -> str | None:
    """Once user actions stop, every deployment of a healthy droplet is finalized,
    every cancel completes and, with none active, exactly one web process remains.

    Bounded liveness: judged after the platform settles (the updater keeps ticking
    and instances start) within the model's settle bound. A PAUSED canary waits
    for the user's continue by design, so it is not stuck; a deployment of a
    droplet that cannot start never finishes rolling out, also by design (upstream
    keeps it DEPLOYING), but canceling it must end whatever the droplets' health.
    """
    if obs["app"] is None:
        return None
    for d in active(obs):
        if d["state"] == "CANCELING":
            return f"d{d['id']} is still CANCELING after settling"
        if healthy(obs, d["droplet"]) and d["state"] != "PAUSED":
            return f"d{d['id']} (healthy droplet {d['droplet']}) is still {d['state']} after settling"
    if not active(obs) and len(obs["processes"]) != 1:
        return f"{len(obs['processes'])} web processes remain with no deployment active"
    return None


def desired(obs: Observation) -> int:
    """The app's desired web instances, over every web process."""
    return sum(len(p["instances"]) for p in obs["processes"])


@trace_property(MODEL, initial=NOT_ASKED, meanings={
    "scale-while-canceling": "a scale accepted while CANCELING lands on the process the cancel destroys "
                             "(docs/findings.md, finding 4)",
    "scale-while-idle": "a scale made with no deployment in flight is lost: a deployment started after it keeps an "
                        "instance (a canary from 0 today, finding 14; any deployment in the historic designs)",
    "deploy-while-idle": "a superseded deploy's web_instances is dropped (finding 11)",
    "push-while-idle": "the count a push asked for is lost by a later deployment: a deploy during a roll-back "
                       "reads it from a half-scaled process (capi-2022), or a cancel is undone by a finished "
                       "step's pending write and the deployment's count stays (capi-current, finding 12)",
})
def user_scale_not_lost(wanting, step: Step):
    """An accepted scale is what the app has once no deployment is active: the
    request is either rejected or honoured, never silently dropped.

    From issue 3, after the notes on ``process_scale.rb`` (cloud_controller_ng
    3bbba90): since PR #3892 a scale is refused while a deployment is DEPLOYING,
    PREPAUSED or PAUSED, but accepted while it is CANCELING, and it then lands on
    the newest web process, the canceled deployment's own, which the cancel step
    destroys. Watched from the latest accepted ``push`` or ``scale``, or deploy with
    ``web_instances`` (the count it takes the app to, lost when another deploy
    supersedes it: docs/explore-findings 3); a cancel takes the deploy's back
    (:func:`asked`).

    Causes, who asked for the count that was lost (:func:`asked`): ``VERB-while-STATE``,
    the verb (``push``, ``scale``, or ``deploy`` with web_instances) and the state of the
    deployment in flight when it was accepted, ``idle`` for none. So each way is found and
    shown on its own: a scale accepted while CANCELING lands on the process the cancel
    destroys (``scale-while-canceling``, finding 4), a deployment started after a scale to
    0 keeps an instance (``scale-while-idle``: a canary today, finding 14, which hid behind
    finding 4's shorter trace while the property had no causes), a superseded deploy's
    count is dropped (``deploy-while-idle``, finding 11).
    """
    wanting = asked(wanting, step)
    wanted, _, asker = wanting
    obs = step.after
    if wanted is None or obs["app"] is None or active(obs):
        return wanting, None
    have = desired(obs)
    if have != wanted:
        verb, when = asker
        return NOT_ASKED, Breach(f"{verb}-while-{when}", (
            f"the app has {counted(have, 'web instance')} after {step_label(step)}, "
            f"but the last accepted {verb} asked for {wanted}"
        ))
    return wanting, None


def capacity_bound(d: dict) -> int:
    """What a deployment may use: the original count (or web_instances, if
    larger) plus max_in_flight."""
    return max(d["owic"], d.get("web_instances") or 0) + d.get("max_in_flight", 1)


#: the user's own instance counts: while a deployment is rolled back, user_scale_not_lost's
USER_COUNTS = ("push", "scale")


@trace_property(MODEL, initial=None, meanings={
    "deploy": "a deployment's create adds more than max_in_flight allows, e.g. on top of one in flight, which "
              "keeps the instances it added (a deployment train, PR #4124; finding 5)",
    "tick": "the updater's step adds more than max_in_flight allows (a canary step that needs one instance "
            "more, finding 6; a roll-back scaling the prior process up as well)",
    "scale": "a scale accepted while a deployment progresses adds to its count (a design that accepts it)",
    "push": "an implementation (a contract run) accepted a push while a deployment was in flight",
    "cancel": "an implementation (a contract run) scaled instances up in the cancel itself",
})
def capacity_within_bound(memory, step: Step):
    """While a deployment is in progress (DEPLOYING, PREPAUSED, PAUSED), no step
    raises the app's desired web instances above the original count (or
    web_instances, if larger) plus max_in_flight; while it is rolled back
    (CANCELING), no step but a user's push or scale does (the roll-back, by the updater
    or the cancel itself, scales the prior process up as the deployment scaled its own;
    a count some designs accept then is the user's, ``user_scale_not_lost``'s).

    What max_in_flight promises a quota holder, stated in issue 3: cloud_controller_ng
    PR #4101's design discussion ("desired instances at 10, and max-in-flight of 3,
    we always want 13 running instances") and PR #4124 (749e6fc08c), which set out to
    stop "deployment trains" from exceeding the max-in-flight limit; the create
    error in ``deployment_create.rb`` at 3bbba90 tells users their quota "may not be
    large enough to support rolling deployments or your configured max-in-flight". Judged against the newest deployment in progress after the
    step, on steps that add instances (a quota is checked when instances are
    added: a create over it fails, an updater step over it fails and stalls the
    deployment); the count may stay above a bound lowered by a newer deployment
    as long as nothing adds to it. The cause is the verb that added them: a
    deployment's create (``deploy``) or the updater's step (``tick``).
    """
    judged = PROGRESSING_STATES if step.action["type"] in USER_COUNTS else ACTIVE_STATES
    live = [d for d in step.after["deployments"] if d["state"] in judged]
    if not live:
        return None, None
    d = live[-1]
    before, have, bound = desired(step.before), desired(step.after), capacity_bound(d)
    if have > bound and have > before:
        return None, Breach(step.action["type"],
            f"{step_label(step)} raised the app to {have} desired web instances while "
            f"d{d['id']} is {d['state']}, above its bound {bound} (original {d['owic']}"
            + (f", web_instances {d['web_instances']}" if d.get("web_instances") else "")
            + f" + max_in_flight {d.get('max_in_flight', 1)})"
        )
    return None, None


@trace_property(MODEL, initial=None)
def deployment_ships_its_droplet(memory, step: Step):
    """When a deployment is finalized (it becomes DEPLOYED for reason DEPLOYED), every web
    process of the app runs the deployment's droplet.

    What finalizing is: the deploying process becomes the app's web process and every
    other web process is destroyed (``Finalize`` / the updater's finalize, cloud_controller_ng
    at 3bbba90; docs/upstream/cloud-controller.md). A design whose new process runs the
    old droplet ships nothing, and one that writes DEPLOYED on a deployment it superseded
    reports a finished release beside another droplet's process; both keep the app up
    and its scale, and no other property objects.
    """
    before = {d["id"]: d for d in step.before["deployments"]}
    for d in step.after["deployments"]:
        if (d["state"], d["status_reason"]) != ("DEPLOYED", "DEPLOYED"):
            continue
        was = before.get(d["id"])
        if was is not None and (was["state"], was["status_reason"]) == ("DEPLOYED", "DEPLOYED"):
            continue
        wrong = [p for p in step.after["processes"] if p["droplet"] != d["droplet"]]
        if wrong:
            late = ", superseded before," if was is not None and was["status_reason"] == "SUPERSEDED" else ""
            return None, (f"d{d['id']}{late} was finalized at {step_label(step)} with P{wrong[0]['id']} on "
                          f"droplet {wrong[0]['droplet']}, not its droplet {d['droplet']}")
    return None, None


#: what a deployment in each state may become in one step: a cancel only ends (CANCELED,
#: also when a new deployment supersedes it), and an ended deployment stays as it is
_MAY_BECOME = {"CANCELING": ("CANCELING", "CANCELED"), "DEPLOYED": ("DEPLOYED",), "CANCELED": ("CANCELED",)}


@trace_property(MODEL, initial=None, meanings={
    "cancel-undone": "a write the updater read before the cancel lands after it: the canceled deployment "
                     "deploys again, or is PAUSED again (the race PR #3072 closed; today's finished-step "
                     "window, finding 12)",
    "cancel-degenerate": "the 2019-2023 dispatcher finalizes a canceled deployment whose process is gone as "
                         "DEPLOYED/DEGENERATE",
    "end-undone": "a write read before a newer deployment superseded this one brings it back (finding 8)",
})
def deployment_never_resumes(memory, step: Step):
    """A deployment the user canceled, or one that ended, does not come back: once
    CANCELING it only becomes CANCELED, and a DEPLOYED or CANCELED one keeps its state.

    What ``cf cancel-deployment`` promises (the deployment is rolled back and ends), and what
    the final states are (``DeploymentModel``'s FINALIZED status value, cloud_controller_ng
    3bbba90). A design that writes a state it read before the user's cancel, or before a
    new deployment superseded it, over the one written since, resumes what the user or
    the controller had stopped: a canceled canary is PAUSED again, and ``continue`` then
    deploys the droplet the cancel took back.

    Causes: ``cancel-undone`` (it was CANCELING), ``cancel-degenerate`` (it was CANCELING and
    the 2019-2023 dispatcher's clean-up of a deployment whose process is gone wrote it
    DEPLOYED/DEGENERATE: a canceled deployment reported deployed, though nothing resumes),
    ``end-undone`` (it was DEPLOYED or CANCELED).
    """
    before = {d["id"]: d["state"] for d in step.before["deployments"]}
    for d in step.after["deployments"]:
        was = before.get(d["id"])
        if was in _MAY_BECOME and d["state"] not in _MAY_BECOME[was]:
            cause = "end-undone" if was != "CANCELING" else (
                "cancel-degenerate" if d["status_reason"] == "DEGENERATE" else "cancel-undone")
            return None, Breach(cause, f"d{d['id']} was {was} and became {d['state']} at {step_label(step)}")
    return None, None


PROPERTIES = (
    single_active_deployment,
    app_stays_available,
    cancel_restores_last_good,
    deployment_converges,
    user_scale_not_lost,
    capacity_within_bound,
    deployment_ships_its_droplet,
    deployment_never_resumes,
    canary_pauses_at_every_step,
    cancel_accepted_in_flight,
)
