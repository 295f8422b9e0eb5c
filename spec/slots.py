"""What an App Service app with staging and production slots must guarantee.

Each property reads observations (``slots.observation.schema.json``) and the
trace so far, and names the report it protects against: the four failure
scenarios of microsoft/cobalt #316 ("Remove ACR Pull in favor of managing
container settings in App Dev CD"), and Microsoft's advice to deploy unique
tags or digests ("Image tag best practices").
"""

from __future__ import annotations

from .core import Breach, Observation, Step, state_property, trace_property

MODEL = "slots"
#: what a property about what slots run needs to judge anything: a build, and a deploy
#: of it (by ``set_image``, or a webhook's delivery: cobalt #212's pipeline); the model's
#: ``essential`` adds the swap, which the properties about releases need
DEPLOYED_BUILD = ("push", ("set_image", "deliver_webhook"))
SLOTS = ("production", "staging")
CRASH_LOOP = "crash_loop"  # an instance whose container fails to start (retried)


def resolve(registry: dict, image: dict | None) -> int | None:
    """The digest a pull of an observed image reference would get now (None: nothing)."""
    if image is None:
        return None
    if "digest" in image:
        return image["digest"]
    return registry["tags"].get(image["tag"])


def digests(obs: Observation, slot: str) -> frozenset[int]:
    """Digests the slot's containers run (or fail to start on)."""
    return frozenset(i["digest"] for i in obs["slots"][slot]["instances"] if i["digest"] is not None)


def _names(ds) -> str:
    return ", ".join(f"d{d}" for d in sorted(ds)) or "nothing"


def _swapped(step: Step) -> bool:
    """A swap completed in this step: the name production routes to another site."""
    return step.after["slots"]["production"]["site"] != step.before["slots"]["production"]["site"]


@trace_property(MODEL, initial=frozenset(), essential=DEPLOYED_BUILD, meanings={
    # (what the step did first, then how the reference designs come to do it: a user's controller
    # that pins digests read "pulls the moved tag" of its own bug, and looked for a tag)
    "crash_retry": "a retried start changed what production runs (cobalt #316 scenarios 2 and 4: App Service "
                   "retries a failing start and pulls the moved tag)",
    "restart": "a restart changed what production runs (cobalt #316 scenario 3: the portal's restart pulls the "
               "moved tag)",
    "recycle": "a recycled container changed what production runs (cobalt #316 scenario 3: a backend server "
               "dies, and the container pulls the moved tag)",
    "scale_out": "a new instance runs what production was not given (cobalt #316 scenario 3: it pulls the moved "
                 "tag)",
    "swap": "the swap changed what the site it promotes runs (cobalt #316 scenario 1: the swap restarts that "
            "site, which pulls the moved tag)",
    "deliver_webhook": "cobalt #299/#316: the registry's webhook deploys a push to production",
})
def production_runs_only_released_images(released, step: Step):
    """Production runs only what the latest release put there: the digests a deliberate
    ``set_image`` on production resolved to, or what staging ran when a swap promoted it.

    cobalt #316 scenarios 2, 3 and 4: a crash retry, a restart or scale-out, or a
    first start re-resolves a mutable tag and "it is deployed unexpectedly to production".
    A release replaces the one before: after a swap back, the digest rolled back is no
    longer released, and a pull that brings it back into production is as unreviewed
    as a new build.

    Causes: the kind of the step that brought the unreleased digest into production
    (``deliver_webhook``, ``restart``, ``crash_retry``, ``scale_out``, ``recycle``,
    ``swap``, whose phase 1 restarts the site it promotes...), so a close look shows each
    of #316's ways on its own, where it showed only the shortest.
    """
    if step.index == 0:  # what production ran before the first step was released by whoever set it up
        released = digests(step.before, "production")
    if step.rejected is None:
        if step.action["type"] == "set_image" and step.action["slot"] == "production":
            released = digests(step.after, "production")
        elif step.action["type"] == "swap" and _swapped(step):
            released = digests(step.before, "staging")
    stray = digests(step.after, "production") - released
    if stray:
        validated = step.after["validated"]
        return released, Breach(step.action["type"], (
            f"production runs {_names(stray)} after step {step.index} ({step.action['type']}), "
            f"not what the latest release put there (released: {_names(released)}; validated in staging: "
            f"{_names(validated)})"
        ))
    return released, None


@trace_property(MODEL, initial=None, meanings={
    "swap": "a swap changed what the site it moved runs, so the swap back brings another build into production "
            "(cobalt #316 scenario 1: the swap restarts that site, which pulls the moved tag)",
    "restart": "a restart changed what the site moved to staging runs before the swap back (on a tag: it pulls "
               "the moved tag)",
    "recycle": "a recycle changed what the site moved to staging runs before the swap back (on a tag: it pulls "
               "the moved tag)",
    "crash_retry": "a retried start changed what the site moved to staging runs before the swap back (on a tag: "
                   "it pulls the moved tag)",
    "scale_out": "a new instance of the site moved to staging runs another build before the swap back (on a "
                 "tag: it pulls the moved tag)",
    "deliver_webhook": "the registry's webhook brings the site moved to staging what production runs before the swap "
                       "back",
})
def rollback_restores_previous(memory, step: Step):
    """Swapping back after a swap, with nothing deployed in between, puts back the
    digests production ran before the first swap.

    The App Service documentation's rollback is "swap the same two slots again"
    (right after the swap). cobalt #316 scenario 1 asks more: A, now staging, picks
    up B's image on a restart (the swap's own), so the rollback swap puts the bad
    image back in production. So only a deploy between the swaps changes what
    "previous" means: a ``set_image``, or a webhook delivery that brings staging a build
    neither slot ran (cobalt's design proposal, #212: the release tag pushed to ACR
    triggers the deployment to staging). One that brings staging what production runs
    is scenario 1's pick-up ("A, now staging, picks up the latest image"), judged as a
    restart is. Pushes, restarts, scale-outs and
    validations are what a rollback must survive. A production that ran no image
    (none configured, or a tag not built yet) must run none after the swap back: a
    rollback brings in nothing new.

    Causes: the last step that changed what the site moved to staging runs, between the
    swaps (``restart``, ``crash_retry``, ``scale_out``, ``recycle``, ``deliver_webhook``),
    or a swap itself (``swap``: scenario 1, the swap's restart of the site it moves).
    Memory: what production ran before the last swap (or None: nothing to roll back to),
    with that step's kind (None: nothing changed it).
    """
    armed, changed_by = memory if memory is not None else (None, None)
    if step.rejected is not None:
        return memory, None
    if step.action["type"] == "swap" and _swapped(step):
        message = None
        now = digests(step.after, "production")
        if armed is not None and now != armed:
            was = (f"not the {_names(armed)} it ran before the previous swap" if armed else
                   "where it ran no image before the previous swap (none configured, or crash-looping "
                   "on a tag not built yet)")
            pulled_now = now != digests(step.before, "staging")  # the swap back's own restart pulled it
            message = Breach("swap" if pulled_now or changed_by is None else changed_by,
                             f"swap back at step {step.index} left production on {_names(now)}, {was}")
        demoted = "swap" if digests(step.after, "staging") != digests(step.before, "production") else None
        return (digests(step.before, "production"), demoted), message
    if step.action["type"] == "set_image":
        return None, None
    if step.action["type"] == "deliver_webhook" and (
            digests(step.after, "staging") - digests(step.before, "staging") - digests(step.before, "production")):
        return None, None  # the webhook deployed a new build to staging: the design proposal's release step
    if armed is not None and digests(step.after, "staging") != digests(step.before, "staging"):
        return (armed, step.action["type"]), None
    return memory, None


@trace_property(MODEL, initial=None, essential=("push",))
def push_does_not_touch_production(memory, step: Step):
    """A push to the registry (and its webhook delivery) does not change what
    production runs: only a deliberate release does.

    cobalt #316 (the webhook as the deploy trigger) and #299 (a registry-wide
    webhook made every push redeploy); PR #324 removed the webhook for this.
    A push or delivery that an implementation refused and that changed
    production all the same breaks it too (as a refused ``set_image`` releases
    nothing in ``production_runs_only_released_images``).
    """
    if step.action["type"] in ("push", "deliver_webhook"):
        was, now = step.before["slots"]["production"], step.after["slots"]["production"]
        if was["instances"] != now["instances"]:
            before, after = digests(step.before, "production"), digests(step.after, "production")
            if before == after:  # the same versions, other containers: say which
                before, after = _containers(was), _containers(now)
            else:
                before, after = _names(before), _names(after)
            return memory, (f"{step.action['type']} at step {step.index} changed production (site "
                            f"{now['site']}) from {before} to {after}")
    return memory, None


@trace_property(MODEL, initial=None)
def swap_keeps_production_serving(memory, step: Step):
    """A swap puts in production only containers that started, and a swap that does not
    complete (production still routes to the same site) leaves production as it was; an
    accepted swap that reports itself completed trades the sites, one that aborted does not.

    App Service's swap ("Set up staging environments", What happens during a swap, step 2):
    staging's instances restart with production's settings, and if any fails to start,
    the swap reverts staging and stops; production serves throughout. A pipeline or
    controller that swaps without that wait promotes a build that cannot start, which no
    other property objects to: what a swap promotes is a release.
    """
    if step.action["type"] != "swap":
        return memory, None
    was, now = step.before["slots"]["production"], step.after["slots"]["production"]
    said = step.after.get("last_swap")
    if step.rejected is None and (said == "completed") != _swapped(step):
        # (a swap back that moved nothing passed every property: a rollback that rolls nothing back)
        return memory, (f"swap at step {step.index} reports {said or 'no outcome'} but production "
                        + ("routes to another site" if _swapped(step) else f"still routes to site {now['site']}")
                        + ": a completed swap trades the sites, an aborted one does not")
    if _swapped(step):
        failing = [i for i in now["instances"] if i["status"] == CRASH_LOOP]
        if failing:
            return memory, (f"swap at step {step.index} promoted containers that fail to start: production "
                            f"(site {now['site']}) runs {_containers(now)}; App Service stops a swap whose "
                            f"staging instances do not start")
    elif was != now:
        what = (f"instances from {_containers(was)} to {_containers(now)}" if was["instances"] != now["instances"]
                else "image reference or settings")
        return memory, (f"swap at step {step.index} left production on site {now['site']} but changed "
                        f"its {what}")
    return memory, None


def _containers(slot: dict, most: int = 8) -> str:
    """A slot's instances, each as its digest and status, or its status alone when it pulled
    nothing: ``[d0 running, d0 crash_loop, empty]``; past ``most``, how many more (an
    implementation may report thousands)."""
    instances = slot["instances"]
    shown = [f"d{i['digest']} {i['status']}" if i["digest"] is not None else i["status"]
             for i in instances[:most]]
    if len(instances) > most:
        shown.append(f"… {len(instances) - most} more")
    return f"[{', '.join(shown)}]"


@state_property(MODEL, essential=DEPLOYED_BUILD)
def slot_runs_one_version(obs: Observation) -> str | None:
    """Every running instance of a slot runs the same digest.

    ACR "Image tag best practices": with a stable tag, a node added by a scale-out
    pulls a newer version than the others serve; cobalt #316 scenario 3 names the
    scale-out among the restarts that pull the moved tag. Judged at every
    observation: the model's restarts are atomic, so every observation is a settled
    one, and a container failing to start serves nothing.
    """
    for slot in SLOTS:
        ds = {i["digest"] for i in obs["slots"][slot]["instances"] if i["status"] == "running"}
        if len(ds) > 1:
            return f"{slot} serves {_names(ds)} on different instances"
    return None


@state_property(MODEL, essential=DEPLOYED_BUILD)
def no_latent_drift(obs: Observation) -> str | None:
    """What a restart would run is what runs: each instance's digest is what its slot's
    image reference resolves to now.

    cobalt #316 scenario 3 ("possibly a very delayed impact"): the harm is set up
    by the push, long before a restart reveals it.
    """
    reg = obs["registry"]
    for slot in SLOTS:
        s = obs["slots"][slot]
        now = resolve(reg, s["image"])
        for i, inst in enumerate(s["instances"]):
            if inst["digest"] != now:
                ref = s["image"]["tag"] if s["image"] and "tag" in s["image"] else "its reference"
                return (
                    f"{slot} instance {i} runs {_names({inst['digest']} - {None})} but {ref} "
                    f"now resolves to {_names({now} - {None})}: a restart would change it"
                )
    return None


@trace_property(MODEL, initial=None, essential=("push", "set_image"))
def pipeline_ships_latest_build(memory, step: Step):
    """A deploy ships the build just pushed: after an accepted ``set_image`` on a slot,
    every container of the slot runs (or fails to start on) the digest ``:release``
    names, whatever reference the design writes (a tag, a digest).

    cobalt #316, "managing container settings in App Dev CD": the pipeline's deploy step
    sets the slot's image to the build it pushed (PR #324). A reference to another build (the first,
    the one before, production's, a tag nothing pushes) leaves the other properties
    content: the slot runs one version, which its reference resolves to, reviewed or not.
    Before the first push there is no build to ship.
    """
    if step.rejected is not None or step.action["type"] != "set_image":
        return memory, None
    latest = step.after["registry"]["tags"].get("release")
    slot = step.action["slot"]
    runs = {i["digest"] for i in step.after["slots"][slot]["instances"]}
    if latest is None or runs == {latest}:
        return memory, None
    shown = _names(d for d in runs if d is not None)
    if None in runs and len(runs) > 1:
        shown += " and nothing (an instance pulled no image)"
    return memory, (f"set_image({slot}) at step {step.index} left {slot} running {shown}: every instance "
                    f"should run the build just pushed, d{latest}")


PROPERTIES = (
    production_runs_only_released_images,
    rollback_restores_previous,
    push_does_not_touch_production,
    swap_keeps_production_serving,
    slot_runs_one_version,
    no_latent_drift,
    pipeline_ships_latest_build,
)
