"""Slots observations fed to one property at a time (test_slots_properties,
test_slots_swap_property, test_spec_details): hand-built ones, each checked against
``slots.observation.schema.json``, and the reference's own (``verdict``)."""

from deployspec.reference.slots.actions import Push, SetImage

from deployspec.adapter import ReferenceAdapter
from deployspec.models import get_model
from deployspec.session import Session
from deployspec.validation import validator as strict_validator

from .helpers import feed

SLOTS = get_model("slots")
SCHEMA = strict_validator(SLOTS.schema())  # as the entrances do: an integer written 2.0 is no integer
PLATFORM = ("deliver_webhook", "recycle", "crash_retry")
RELEASE = {"tag": "release"}


def slot(site, *digests, image=RELEASE):
    """A slot whose instances run ``digests`` (None: an empty container; a dict: as given)."""
    instances = [d if isinstance(d, dict) else {"digest": d, "status": "running" if d is not None else "empty"}
                 for d in digests]
    return {"site": site, "image": image, "settings": [], "instances": instances}


def world(production, staging, *, tag=None, validated=(), last_swap=None):
    """Two slots fed by a registry where d0..d2 were pushed and ``:release`` points to ``tag``."""
    return {
        "registry": {"digests": [{"id": i, "healthy": True} for i in range(3)],
                     "tags": {} if tag is None else {"release": tag}, "webhook": None, "pending_deliveries": 0},
        "slots": {"production": production, "staging": staging},
        "validated": list(validated),
        "last_swap": last_swap,
    }


def run(prop, start, *steps):
    """Feed one property steps from the observation ``start``; each step is
    ``(action, after)`` or ``(action, after, refusal)``. The first violation or None."""
    return feed(SLOTS.property(prop), SCHEMA, start, steps, PLATFORM)


#: foo built and released to production: the start of most reference runs
DEPLOY_FOO = [Push(), SetImage("production")]


def verdict(variant, prop, actions, settle=False):
    """The first violation of ``prop`` when the reference ``variant`` performs ``actions``
    (then settles, if asked), or None."""
    v = SLOTS.variant(variant)
    return Session(SLOTS, ReferenceAdapter(SLOTS, v), (SLOTS.property(prop),), SLOTS.default_config(v)).play(
        actions, settle)
