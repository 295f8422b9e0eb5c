"""Swap staging into production, step by step as "Set up staging environments in
Azure App Service" (``deploy-staging-slots.md``, "What happens during a swap") has it,
numbered as there (its step 3, local cache, is not modelled).

1. The target's (production's) slot-specific settings are applied to every source
   (staging) instance, which restarts them: they pull their reference again. The
   doc ties this restart to settings being applied (slot-specific, continuous
   deployment, authentication); the model restarts every time, as a Kudu issue
   reports (projectkudu/kudu#2503; docs/findings.md, "Modelling choices").
2. Wait for every source instance; if any fails to start, revert the source's
   settings (another restart, another pull) and abort. Production is untouched. A
   slot with no content (the ``DOCKER`` placeholder) counts as started: the sources
   do not say what a placeholder app does.
4. Warm-up: a request to each instance (any response counts; not modelled further).
5. Routing switch: the names trade sites. Content (image reference, non-sticky
   settings) stays with its site, so it moves with the name it now answers to.
6. The former production site, now ``staging``, gets the source's old slot-specific
   settings and restarts: it pulls its reference again.

The steps run within one action: pushes do not interleave inside a swap.
"""

from __future__ import annotations

import attrs

from .platform import restart_site
from .state import CRASH_LOOP, PRODUCTION, STAGING, Site, SlotsState


def _sticky(site: Site, names: tuple[str, ...]) -> dict[str, bool]:
    return {n: v for n, v in site.settings if n in names}


def _with_sticky(site: Site, names: tuple[str, ...], sticky: dict[str, bool]) -> Site:
    rest = tuple((n, v) for n, v in site.settings if n not in names)
    return attrs.evolve(site, settings=tuple(sorted(rest + tuple(sticky.items()))))


def swap(state: SlotsState) -> SlotsState:
    names = state.slot_setting_names
    source, target = state.site(STAGING), state.site(PRODUCTION)
    source_sticky, target_sticky = _sticky(source, names), _sticky(target, names)
    # Step 1: target's slot settings on the source, which restarts and pulls.
    moved = restart_site(state, _with_sticky(source, names, target_sticky))
    # Step 2: any instance failing to start reverts the source and aborts.
    if any(i.status == CRASH_LOOP for i in moved.instances):
        reverted = restart_site(state, source)
        return attrs.evolve(state.with_site(STAGING, reverted), last_swap="aborted")
    # Steps 4-5: warm-up, then the names trade sites.
    state = state.with_site(STAGING, moved)
    state = attrs.evolve(state, production=1 - state.production, last_swap="completed")
    # Step 6: the former production site, now staging, gets its settings and restarts.
    old = _with_sticky(state.site(STAGING), names, source_sticky)
    return state.with_site(STAGING, restart_site(state, old))
