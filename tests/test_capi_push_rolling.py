"""``cf push --strategy rolling``: a deployment of a droplet staged for it (bound
``push_rolling``), which becomes the app's current droplet and which a cancel takes back
(DeploymentCreate's target state, ``app/actions/deployment_create.rb``)."""

import attrs
import pytest
from deployspec.reference.capi import Cancel, Deploy, Push, Runtime, Tick

from deployspec.models import get_model

from .helpers import capi_state

CAPI = get_model("capi")
VARIANTS = ["capi-2022", "capi-pr3072", "capi-pr3084", "capi-current", "capi-safe"]


def _run(variant, *actions):
    return CAPI.observe(capi_state(variant, *actions, push_rolling=True))


@pytest.mark.parametrize("name", VARIANTS)
def test_a_push_deploys_its_new_droplet_and_a_cancel_puts_the_old_one_back(name):
    variant = CAPI.variant(name)
    obs = _run(variant, Push(1), Runtime(0), Deploy(new_droplet=False))
    (d,) = obs["deployments"]
    assert obs["droplets"] == [{"id": 0, "healthy": True}, {"id": 1, "healthy": False}]
    assert obs["app"]["droplet"] == 1 and (d["droplet"], d["previous_droplet"]) == (1, 0)
    assert obs["processes"][-1]["droplet"] == 1  # the deploying process runs the new droplet
    canceled = _run(variant, Push(1), Runtime(0), Deploy(new_droplet=False), Cancel())
    assert canceled["app"]["droplet"] == 0  # the app's droplet before the push
    # a restart, by contrast, cannot take back what it ships (cloud_controller_ng #3531)
    restarted = _run(variant, Push(1), Runtime(0), Deploy(), Cancel())
    assert restarted["deployments"][0]["previous_droplet"] == restarted["deployments"][0]["droplet"] == 0


def test_the_fixed_design_brings_the_old_droplet_back_after_a_bad_push():
    """capi-safe: a push of a droplet that cannot start, canceled, settles on the healthy
    original process, and the app points at its droplet again."""
    variant = CAPI.variant("capi-safe")
    obs = _run(variant, Push(1), Runtime(0), Deploy(new_droplet=False), Runtime(1), Cancel(), Tick(), Tick())
    assert obs["app"]["droplet"] == 0
    assert [d["state"] for d in obs["deployments"]] == ["CANCELED"]
    assert [(p["droplet"], p["instances"]) for p in obs["processes"]] == [(0, ["RUNNING"])]


def test_push_rolling_is_offered_only_with_its_bound_and_within_the_droplet_bound():
    obs = _run(CAPI.variant("capi-safe"), Push(1))
    plain = CAPI.default_config()
    on = attrs.evolve(plain, push_rolling=True)
    assert not any(a.kind == "deploy" and a.new_droplet is not None for a in CAPI.candidate_actions(obs, plain))
    pushes = [a for a in CAPI.candidate_actions(obs, on) if a.kind == "deploy" and a.new_droplet is not None]
    assert {a.new_droplet for a in pushes} == {True, False}
    full = attrs.evolve(on, max_droplets=1)
    assert not any(a.kind == "deploy" and a.new_droplet is not None for a in CAPI.candidate_actions(obs, full))


def test_the_field_is_sent_only_when_set():
    """Traces and protocol messages of restarts read as before the field existed."""
    assert "new_droplet" not in Deploy().to_json()
    assert Deploy(new_droplet=True).to_json()["new_droplet"] is True
    for action in (Deploy(), Deploy(new_droplet=True), Deploy(new_droplet=False)):
        assert CAPI.action(action.to_json()) == action
    assert str(Deploy(new_droplet=False)) == "deploy(max_in_flight=1, new_droplet=False)"
    assert "push_rolling" not in CAPI.default_config().to_json()
    assert CAPI.config_from_json({"push_rolling": True}).push_rolling is True
    with pytest.raises(ValueError, match="push_rolling must be true or false"):
        CAPI.config_from_json({"push_rolling": 1})
