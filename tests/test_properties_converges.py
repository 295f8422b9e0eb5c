"""deployment_converges, judged once the platform has settled: what may and may not be left active."""

import pytest
from deployspec.spec import capi as spec

from .helpers import app, dep, proc
from .property_traces import NOTHING


def test_deployment_converges():
    stuck = app([proc(0, 1), proc(1, 1)], [dep(0, "DEPLOYING", "DEPLOYING", 1, 1)])
    stuck_bad = app([proc(0, 1), proc(1, 1, running=0, crashed=1, droplet=1)],
                    [dep(0, "DEPLOYING", "DEPLOYING", 1, 1, droplet=1)], droplets=(True, False))
    leftover = app([proc(0, 1), proc(1, 1)], [dep(0, "DEPLOYED", "DEPLOYED", 1, 1)])
    done = app([proc(1, 1)], [dep(0, "DEPLOYED", "DEPLOYED", 1, 1)])
    assert "still DEPLOYING" in spec.deployment_converges.at_settled(stuck)
    assert spec.deployment_converges.at_settled(stuck_bad) is None  # an unhealthy droplet never finishes
    assert "2 web processes remain" in spec.deployment_converges.at_settled(leftover)
    assert spec.deployment_converges.at_settled(done) is None


def test_deployment_converges_message_names_the_stuck_deployment():
    stuck = app([proc(0, 1), proc(1, 1, droplet=1)], [dep(0, "DEPLOYING", "DEPLOYING", 1, 1, droplet=1)],
                droplets=(True, True))
    assert spec.deployment_converges.at_settled(stuck) == (
        "d0 (healthy droplet 1) is still DEPLOYING after settling")


def test_a_paused_canary_waits_for_the_user_and_is_not_stuck():
    paused = app([proc(0, 1), proc(1, 1)], [dep(0, "PAUSED", "PAUSED", 1, 1)])
    assert spec.deployment_converges.at_settled(paused) is None


def test_a_prepaused_deployment_of_a_healthy_droplet_is_stuck():
    obs = app([proc(0, 1), proc(1, 1)], [dep(0, "PREPAUSED", "PAUSED", 1, 1)])
    assert spec.deployment_converges.at_settled(obs) == "d0 (healthy droplet 0) is still PREPAUSED after settling"


@pytest.mark.parametrize("healthy", [True, False])
def test_a_cancel_must_complete_whatever_the_health_of_the_canceled_droplet(healthy):
    """Upstream keeps a deployment of a droplet that cannot start DEPLOYING, but
    canceling it restores the previous process: nothing excuses a cancel that never ends
    (capi-safe's graceful roll-back once waited forever for a prior process whose
    instances crash)."""
    obs = app([proc(0, 1, running=0, crashed=1, droplet=1), proc(1, 1, running=0, crashed=1, droplet=1)],
              [dep(0, "CANCELING", "CANCELING", 1, 1, droplet=1)], droplets=(True, healthy))
    assert spec.deployment_converges.at_settled(obs) == "d0 is still CANCELING after settling"


def test_every_active_deployment_is_judged_not_only_the_newest():
    """Two active deployments (before PR #3072): a PAUSED canary created while d0 was
    CANCELING does not excuse d0's cancel that never ends."""
    obs = app([proc(0, 1), proc(1, 1), proc(2, 1)],
              [dep(0, "CANCELING", "CANCELING", 1, 1), dep(1, "PAUSED", "PAUSED", 2, 1)])
    assert spec.deployment_converges.at_settled(obs) == "d0 is still CANCELING after settling"


def test_with_no_deployment_active_exactly_one_web_process_remains():
    assert spec.deployment_converges.at_settled(app([], [])) == "0 web processes remain with no deployment active"
    assert spec.deployment_converges.at_settled(app([proc(0, 1)], [])) is None


def test_an_app_not_pushed_yet_has_nothing_to_converge():
    assert spec.deployment_converges.at_settled(NOTHING) is None


def test_a_settle_phase_cut_by_its_bound_says_so():
    """deployment_converges is bounded liveness: when the bound, not the platform,
    ends the settle phase, the complaint says which bound to raise."""
    import attrs
    from deployspec.reference.capi.actions import Deploy, Push, Runtime, Stage

    from deployspec.adapter import ReferenceAdapter
    from deployspec.models import get_model
    from deployspec.session import Session

    model = get_model("capi")
    prop = model.property("deployment_converges")

    def settled_after(settle_steps):
        config = attrs.evolve(model.default_config(), settle_steps=settle_steps)
        session = Session(model, ReferenceAdapter(model, model.variant("capi-safe")), (prop,), config)
        for action in (Push(2), Runtime(0), Runtime(0), Stage(True), Deploy()):
            assert session.perform(action) is None
        return session.settle(), len(session.steps) - session.settle_from

    v, steps = settled_after(3)
    assert steps == 3 and v is not None
    assert v.message.endswith("(the settle phase was cut at settle_steps=3: the platform had not come to rest)")
    assert settled_after(80)[0] is None  # given room, it converges
    _, needed = settled_after(80)
    v, steps = settled_after(needed)  # exactly enough: finished, not cut
    assert v is None and steps == needed
