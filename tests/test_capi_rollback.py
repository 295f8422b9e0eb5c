"""``cf rollback``: a deployment of a revision the app deployed before (bound
``rollback``), whose droplet becomes the app's current one again and which a cancel takes
back; refused as DeploymentCreate refuses it (``app/actions/deployment_create.rb``,
``revision_resolver.rb``, ``deployment_target_state.rb``)."""

import attrs
import pytest
from deployspec.reference.capi import Cancel, Deploy, Push, Runtime, Stage, Tick
from deployspec.reference.core import ActionError, Rejected

from deployspec.engines.explore import explore_config, search
from deployspec.models import get_model

from .helpers import capi_state

CAPI = get_model("capi")
VARIANTS = ["capi-2022", "capi-pr3072", "capi-pr3084", "capi-current", "capi-safe"]
SAME = "Unable to rollback. The code and configuration you are rolling back to is the same as the deployed revision."


def _state(variant, *actions):
    return capi_state(variant, *actions, rollback=True)


def _refusal(variant, state, action) -> str:
    r = variant.step(state, action)
    assert isinstance(r, Rejected), action
    return r.reason


@pytest.mark.parametrize("name", VARIANTS)
def test_a_rollback_ships_the_revision_and_a_cancel_puts_the_current_droplet_back(name):
    variant = CAPI.variant(name)
    bad = (Push(1), Runtime(0), Stage(False), Deploy())  # a restart ships the bad droplet 1
    obs = CAPI.observe(_state(variant, *bad, Deploy(revision=0)))
    rollback = obs["deployments"][-1]
    assert obs["app"]["droplet"] == 0
    assert (rollback["droplet"], rollback["previous_droplet"]) == (0, 1)
    assert obs["processes"][-1]["droplet"] == 0  # the new process runs the revision's droplet
    canceled = CAPI.observe(_state(variant, *bad, Deploy(revision=0), Cancel()))
    assert canceled["app"]["droplet"] == 1  # what the app had when the rollback was created


@pytest.mark.parametrize("name", VARIANTS)
def test_what_deployment_create_refuses_of_a_rollback(name):
    variant = CAPI.variant(name)
    pushed = _state(variant, Push(1))
    # the push created the first revision, the one deployed: nothing to roll back to
    assert _refusal(variant, pushed, Deploy(revision=0)) == SAME
    staged = _state(variant, Push(1), Stage(True))
    # a droplet only staged has no revision; one never staged neither
    assert _refusal(variant, staged, Deploy(revision=1)) == "The revision does not exist"
    assert _refusal(variant, staged, Deploy(revision=7)) == "The revision does not exist"
    shipped = _state(variant, Push(1), Stage(True), Deploy())
    assert _refusal(variant, shipped, Deploy(revision=0, new_droplet=True)) == (
        "Cannot set both fields 'droplet' and 'revision'")
    assert not isinstance(variant.step(shipped, Deploy(revision=0)), Rejected)


def test_a_cancel_creates_no_revision_so_the_canceled_one_stays_the_latest():
    """After a canceled deployment the app runs its previous droplet again, but the latest
    revision is still the canceled deployment's: a rollback to the droplet the app now runs
    is accepted, one to the canceled droplet is 'the same as the deployed revision'."""
    variant = CAPI.variant("capi-safe")
    # cf push --strategy rolling of a droplet that crashes, canceled
    state = _state(variant, Push(1), Runtime(0), Deploy(new_droplet=False), Cancel(), Tick(), Tick())
    obs = CAPI.observe(state)
    assert obs["app"]["droplet"] == 0 and [d["state"] for d in obs["deployments"]] == ["CANCELED"]
    assert _refusal(variant, state, Deploy(revision=1)) == SAME
    assert not isinstance(variant.step(state, Deploy(revision=0)), Rejected)


def test_rollbacks_are_offered_only_with_their_bound_to_each_revision_but_the_latest():
    variant = CAPI.variant("capi-safe")
    plain = CAPI.default_config()
    on = attrs.evolve(plain, rollback=True)

    def rollbacks(obs, config, offer=CAPI.candidate_actions):
        return sorted(a.revision for a in offer(obs, config) if a.kind == "deploy" and a.revision is not None)

    before = CAPI.observe(CAPI.initial_state(on))
    assert rollbacks(before, on) == [] and rollbacks(before, on, CAPI.probe_actions) == [0]
    pushed = CAPI.observe(_state(variant, Push(1)))
    assert rollbacks(pushed, on) == [] and rollbacks(pushed, on, CAPI.probe_actions) == [0]
    two = CAPI.observe(_state(variant, Push(1), Stage(True), Deploy(), Stage(True), Deploy()))
    assert rollbacks(two, on) == [0, 1] and rollbacks(two, on, CAPI.probe_actions) == [2]
    assert rollbacks(two, plain) == [] and rollbacks(two, plain, CAPI.probe_actions) == []
    assert rollbacks(two, attrs.evolve(on, max_deployments=2)) == []  # a deploy past the bound
    # each offered one is accepted, each probe refused
    state = _state(variant, Push(1), Stage(True), Deploy(), Stage(True), Deploy())
    for action in CAPI.candidate_actions(two, on):
        if action.kind == "deploy" and action.revision is not None:
            assert not isinstance(variant.step(state, action), Rejected), action
    for action in CAPI.probe_actions(two, on):
        assert isinstance(variant.step(state, action), Rejected) or variant.step(state, action) == state, action


def test_the_field_is_sent_only_when_set():
    assert "revision" not in Deploy().to_json()
    assert Deploy(revision=0).to_json()["revision"] == 0
    for action in (Deploy(), Deploy(revision=0), Deploy(revision=2, max_in_flight=2)):
        assert CAPI.action(action.to_json()) == action
    assert str(Deploy(revision=1)) == "deploy(max_in_flight=1, revision=1)"
    assert CAPI.action({"type": "deploy", "revision": None}) == Deploy()
    with pytest.raises(ActionError, match="'revision' must be an integer or null"):
        CAPI.action({"type": "deploy", "revision": "0"})
    assert "rollback" not in CAPI.default_config().to_json()
    assert CAPI.config_from_json({"rollback": True}).rollback is True


def test_the_fixed_design_keeps_its_proof_with_rollbacks():
    """capi-safe holds cancel_restores_last_good over every state its exploration bounds
    reach with rollbacks offered (more states than without: the rollbacks are taken)."""
    base = explore_config(CAPI, CAPI.variant("capi-safe"))
    prop = CAPI.property("cancel_restores_last_good")

    def proof(config):
        r = search(CAPI, "capi-safe", prop, budget=300, seed=0, out_dir=None, config=config)
        assert r.verdict == "holds" and r.stats["complete"], r.message
        return r.stats["states"]

    assert proof(attrs.evolve(base, rollback=True)) > proof(base)
