"""A deployment created with ``web_instances`` rolls out to web_instances, not to owic.

cloud_controller_ng 3bbba9069894b1b74652c7b88fdfd4171136c8c4 (docs/upstream/cloud-controller.md §4):
``DeploymentModel#desired_web_instances`` is web_instances when given, else the original web
instance count (owic); ``Updater#scale`` runs ``Scale`` with T = I = desired_web_instances and
finalizes once the deploying process has I routable (§4.1, §4.3); ``DeploymentCreate`` starts the
new process with ``min(max_in_flight, web_instances)`` (§4.9, fixture F43). capi-safe keeps all of
that and bounds the start by the room left under ``max(owic, web_instances) + max_in_flight``.

The searches deploy with web_instances where a configuration's ``web_instances`` bound offers
it (capi-current's and capi-safe's do); these rollouts pin the scale target itself.
"""

from __future__ import annotations

import pytest
from deployspec.reference.capi.actions import Deploy, Push, Runtime, Tick

from deployspec.adapter import ReferenceAdapter
from deployspec.models import get_model
from deployspec.session import Session

MODEL = get_model("capi")
VARIANTS = ("capi-current", "capi-safe")


def session(variant: str) -> Session:
    """A session on the reference variant, every property of the model watching."""
    v = MODEL.variant(variant)
    return Session(MODEL, ReferenceAdapter(MODEL, v), MODEL.properties, MODEL.default_config(v))


def counts(obs: dict) -> tuple[int, ...]:
    """Desired instances of each web process, oldest first."""
    return tuple(len(p["instances"]) for p in obs["processes"])


def roll_out(variant: str, owic: int, web_instances: int, max_in_flight: int) -> tuple[Session, list]:
    """Push ``owic`` instances and let them all become routable, deploy with web_instances,
    then leave the platform alone (each starting instance becomes routable, the updater
    ticks) until nothing is left to do. Returns the session and the process counts after
    the deploy and after every tick."""
    s = session(variant)
    s.perform(Push(owic))
    for _ in range(owic):
        s.perform(Runtime(0))
    s.perform(Deploy(max_in_flight=max_in_flight, web_instances=web_instances))
    seen = [counts(s.obs)]
    for _ in range(100):
        action = MODEL.settle_action(s.obs)
        if action is None:
            break
        assert s.perform(action) is None, s.violation
        if isinstance(action, Tick):
            seen.append(counts(s.obs))
    assert MODEL.settle_action(s.obs) is None, "the rollout did not settle"
    return s, seen


#: owic, web_instances, max_in_flight, and the web processes' desired instances (P0, P1) after
#: the deploy and after each tick, by §4.3: the new process starts with min(M, wi); a tick keeps
#: max(T - r, 0) old instances (old + routable new = T = wi), raises the new process to
#: min(r + M, wi), and once it has wi routable, finalizes (every other web process destroyed)
ROLLOUTS = [
    # web_instances above owic: the old process keeps its instance until the new one has
    # wi - 1 routable (a target of owic would take it at the first tick)
    (2, 3, 1, [(2, 1), (2, 2), (1, 3), (3,)]),
    (1, 3, 2, [(1, 2), (1, 3), (3,)]),
    (2, 3, 5, [(2, 3), (3,)]),
    # web_instances below owic: the old process goes down to wi - r at once
    (3, 2, 1, [(3, 1), (1, 2), (2,)]),
    (3, 1, 1, [(3, 1), (1,)]),
    (3, 2, 5, [(3, 2), (2,)]),
]


@pytest.mark.parametrize("variant", VARIANTS)
@pytest.mark.parametrize("owic, web_instances, max_in_flight, expected", ROLLOUTS,
                         ids=[f"owic{o}-wi{w}-mif{m}" for o, w, m, _ in ROLLOUTS])
def test_a_deployment_with_web_instances_finishes_at_web_instances(variant, owic, web_instances,
                                                                   max_in_flight, expected):
    s, seen = roll_out(variant, owic, web_instances, max_in_flight)
    assert seen == expected
    (deployment,) = s.obs["deployments"]
    assert (deployment["owic"], deployment["web_instances"]) == (owic, web_instances)
    assert (deployment["state"], deployment["status_value"], deployment["status_reason"]) == (
        "DEPLOYED", "FINALIZED", "DEPLOYED")
    # only the deploying process is left, with web_instances routable instances, not owic
    assert s.obs["processes"] == [{"id": deployment["deploying_process"], "droplet": 0,
                                   "instances": ["RUNNING"] * web_instances}]
    assert s.settle() is None  # no property broke on the way, none when settled


@pytest.mark.parametrize("variant", VARIANTS)
@pytest.mark.parametrize("owic, web_instances, max_in_flight", [
    (2, 3, 5), (3, 2, 5), (5, 10, 200), (10, 5, 200), (3, 2, 1), (1, 3, 2),
])
def test_the_new_process_starts_with_web_instances_up_to_max_in_flight(variant, owic, web_instances,
                                                                       max_in_flight):
    """``starting_process_instances``: min(max_in_flight, web_instances); owic plays no part
    (create_spec 'uses the web_instances from the message'; capi-safe's room is ample here)."""
    s = session(variant)
    s.perform(Push(owic))
    s.perform(Deploy(max_in_flight=max_in_flight, web_instances=web_instances))
    assert counts(s.obs) == (owic, min(max_in_flight, web_instances))


@pytest.mark.parametrize("variant", VARIANTS)
def test_superseding_a_deployment_in_flight_counts_web_instances_in_the_bound(variant):
    """A second deploy while the first one's two instances are still starting: capi-safe's
    room is max(owic 1, web_instances 3) + max_in_flight 2 = 5 minus the 3 instances there,
    so the new process starts with min(2, 3) = 2, as capi-current's does (a bound of
    owic + max_in_flight would leave it none). Both then finish at web_instances."""
    s = session(variant)
    s.perform(Push(1))
    s.perform(Deploy(max_in_flight=2, web_instances=3))
    s.perform(Deploy(max_in_flight=2, web_instances=3))
    assert counts(s.obs) == (1, 2, 2)
    assert s.settle() is None
    assert [len(p["instances"]) for p in s.obs["processes"]] == [3]
    assert s.obs["deployments"][-1]["state"] == "DEPLOYED"
