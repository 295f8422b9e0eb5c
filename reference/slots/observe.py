"""Observations: the plain-JSON view of a slots state (``spec/slots.observation.schema.json``).

Slots are keyed by name; ``site`` says which web app ("A" started as production,
"B" as staging, as in cobalt #316) answers to it. Digests are numbered in push order.
"""

from __future__ import annotations

from typing import Any

from .state import (
    PRODUCTION,
    SLOT_NAMES,
    STAGING,
    Image,
    Instance,
    Registry,
    Site,
    SlotsState,
    Webhook,
)


def observe(state: SlotsState) -> dict[str, Any]:
    reg = state.registry
    return {
        "registry": {
            "digests": [{"id": i, "healthy": h} for i, h in enumerate(reg.digests)],
            "tags": {t: d for t, d in reg.tags},
            "webhook": None
            if reg.webhook is None
            else {"target": reg.webhook.target, "scope": reg.webhook.scope},
            "pending_deliveries": reg.pending,
        },
        "slots": {name: _slot(state, state.site(name)) for name in SLOT_NAMES},
        "validated": list(state.validated),
        "last_swap": state.last_swap,
    }


def _slot(state: SlotsState, site: Site) -> dict[str, Any]:
    image = site.image
    return {
        "site": site.name,
        "image": None
        if image is None
        else ({"tag": image.tag} if image.tag is not None else {"digest": image.digest}),
        "settings": [
            {"name": n, "value": v, "sticky": n in state.slot_setting_names} for n, v in site.settings
        ],
        "instances": [{"digest": i.digest, "status": i.status} for i in site.instances],
    }


def from_observation(obs: dict[str, Any]) -> SlotsState:
    """Build the state an observation describes (test fixtures)."""
    reg = obs["registry"]
    hook = reg.get("webhook")
    sticky: set[str] = set()
    sites = []
    for name in SLOT_NAMES:
        s = obs["slots"][name]
        img = s["image"]
        sticky |= {x["name"] for x in s["settings"] if x["sticky"]}
        sites.append(
            Site(
                name=s["site"],
                image=None if img is None else Image(tag=img.get("tag"), digest=img.get("digest")),
                settings=tuple(sorted((x["name"], x["value"]) for x in s["settings"])),
                instances=tuple(Instance(i["digest"], i["status"]) for i in s["instances"]),
            )
        )
    # production is site index 0 or 1 by the site's name order ("A" < "B").
    ordered = sorted(sites, key=lambda s: s.name)
    return SlotsState(
        registry=Registry(
            digests=tuple(d["healthy"] for d in reg["digests"]),
            tags=tuple(sorted(reg["tags"].items())),
            webhook=None if hook is None else Webhook(hook["target"], hook["scope"]),
            pending=reg["pending_deliveries"],
        ),
        sites=(ordered[0], ordered[1]),
        production=ordered.index(sites[0]),
        slot_setting_names=tuple(sorted(sticky)),
        validated=tuple(obs.get("validated", ())),
        last_swap=obs.get("last_swap"),
    )


__all__ = ["PRODUCTION", "STAGING", "from_observation", "observe"]
