"""Hand-built capi traces, fed to one property at a time (the test_properties_* modules)."""

from deployspec.spec.core import Step

from deployspec.models import get_model
from deployspec.validation import validator as strict_validator

from .helpers import app, dep, feed, proc

SCHEMA = strict_validator(get_model("capi").schema())  # as the entrances do: an integer written 2.0 is no integer
NOTHING = {"app": None, "droplets": [], "processes": [], "deployments": []}

SERVING = app([proc(0, 1)], [])
#: a rolling deployment has started a new process (P1) next to the serving one
DEPLOYING = app([proc(0, 1), proc(1, 1, running=0, starting=1)], [dep(0, "DEPLOYING", "DEPLOYING", 1, 1)])
#: ... and its scale step has taken P0's only instance while P1's is still starting
SCALED_AWAY = app([proc(0, 0), proc(1, 1, running=0, starting=1)], [dep(0, "DEPLOYING", "DEPLOYING", 1, 1)])


def run(prop, observations, actions, before=NOTHING):
    """Feed one property a trace; the first violation, or None.

    ``actions``: ``(kind, args)``, or ``(kind, args, reason)`` for a refused action.

    Each trace is built by hand, one observation per step, so a test says exactly
    which branch of a property it exercises; the observations are checked against
    ``capi.observation.schema.json`` so the traces stay ones an implementation could report.
    """
    steps = [({"type": kind, **args}, obs, *refused)
             for obs, (kind, args, *refused) in zip(observations, actions, strict=True)]
    return feed(prop, SCHEMA, before, steps, ("tick", "runtime"))


def check(prop, obs):
    """A state property's verdict on one observation."""
    SCHEMA.validate(obs)
    return prop.advance(None, Step(0, {"type": "tick"}, "platform", None, obs, obs))[1]
