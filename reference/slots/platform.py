"""What App Service and the registry do on their own: pulls, restarts, webhook deliveries.

Every start of a container pulls the slot's configured reference again (portal
restart, host move, scale-out, crash retry, a changed setting): "Configure a
custom container", section "How container images are stored", and cobalt #316.
A mutable tag can therefore land a different digest at any of these moments.
"""

from __future__ import annotations

import attrs
from deployspec.reference.core import Rejected

from .state import (
    CRASH_LOOP,
    DOCKER_ENABLE_CI,
    EMPTY,
    RELEASE,
    RUNNING,
    Instance,
    Site,
    SlotsState,
)


def pull(state: SlotsState, site: Site) -> Instance:
    """Start one container of ``site``: resolve its reference now and run the digest."""
    if site.image is None:
        return Instance(None, EMPTY)
    digest = state.registry.resolve(site.image)
    if digest is None:
        return Instance(None, CRASH_LOOP)  # the tag does not exist yet: the pull fails
    return Instance(digest, RUNNING if state.registry.healthy(digest) else CRASH_LOOP)


def restart_site(state: SlotsState, site: Site) -> Site:
    """Every instance restarts and pulls (at the same moment, so the same digest)."""
    return attrs.evolve(site, instances=tuple(pull(state, site) for _ in site.instances))


def restart(state: SlotsState, slot: str) -> SlotsState:
    return state.with_site(slot, restart_site(state, state.site(slot)))


def restart_instance(state: SlotsState, slot: str, i: int) -> SlotsState | Rejected:
    site = state.site(slot)
    if not 0 <= i < len(site.instances):
        return Rejected(f"{slot} has no instance {i}")
    instances = site.instances[:i] + (pull(state, site),) + site.instances[i + 1 :]
    return state.with_site(slot, attrs.evolve(site, instances=instances))


def crash_retry(state: SlotsState, slot: str, i: int) -> SlotsState | Rejected:
    site = state.site(slot)
    if not 0 <= i < len(site.instances) or site.instances[i].status != CRASH_LOOP:
        return Rejected(f"{slot} instance {i} is not failing to start")
    return restart_instance(state, slot, i)


def scale_out(state: SlotsState) -> SlotsState:
    """Scale settings belong to the plan, which every slot shares: each site gets one more."""
    sites = tuple(attrs.evolve(s, instances=s.instances + (pull(state, s),)) for s in state.sites)
    return attrs.evolve(state, sites=sites)


def push(state: SlotsState, healthy: bool) -> SlotsState:
    """``docker push :release``: a new digest, the tag moved to it; the webhook fires
    if its scope matches."""
    digest = len(state.registry.digests)
    tags = tuple((t, d) for t, d in state.registry.tags if t != RELEASE) + ((RELEASE, digest),)
    hook = state.registry.webhook
    fires = hook is not None and hook.fires_on(RELEASE)
    return state.with_registry(
        digests=state.registry.digests + (healthy,),
        tags=tags,
        pending=state.registry.pending + (1 if fires else 0),
    )


def deliver_webhook(state: SlotsState) -> SlotsState | Rejected:
    """One delivery reaches ``<app>[-<slot>].scm.azurewebsites.net/docker/hook`` (the CD
    URL belongs to the slot name). The payload does not choose the image: the slot
    restarts and pulls its configured reference, if its DOCKER_ENABLE_CI is on."""
    if state.registry.pending == 0:
        return Rejected("no webhook delivery pending")
    state = state.with_registry(pending=state.registry.pending - 1)
    target = state.registry.webhook.target
    if not state.site(target).setting(DOCKER_ENABLE_CI):
        return state  # the endpoint answers but CD is off for this content
    return restart(state, target)
