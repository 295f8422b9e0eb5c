"""The properties judge observations; these sequences pin down their edges."""

from deployspec.spec import capi as spec
from deployspec.spec.core import Monitor, Step

from .helpers import app, dep, proc


def run(prop, observations, actions):
    m = Monitor((prop,))
    before = {"app": None, "droplets": [], "processes": [], "deployments": []}
    for i, (obs, (kind, args)) in enumerate(zip(observations, actions)):
        actor = "platform" if kind in ("tick", "runtime") else "user"
        v = m.advance(Step(i, {"type": kind, **args}, actor, None, before, obs))
        if v:
            return v
        before = obs
    return None


def test_single_active_deployment():
    two = app([proc(0, 1)], [dep(0, "CANCELING", "CANCELING", 0, 1), dep(1, "DEPLOYING", "DEPLOYING", 0, 1)])
    one = app([proc(0, 1)], [dep(0, "CANCELED", "SUPERSEDED", 0, 1), dep(1, "DEPLOYING", "DEPLOYING", 0, 1)])
    assert "2 active deployments" in spec.single_active_deployment.advance(None, Step(0, {"type": "deploy"}, "user", None, one, two))[1]
    assert spec.single_active_deployment.advance(None, Step(0, {"type": "deploy"}, "user", None, two, one))[1] is None


def test_availability_lost_after_serving():
    serving = app([proc(0, 1)], [])
    down = app([proc(0, 1, running=0, starting=1)], [])
    v = run(spec.app_stays_available, [serving, down], [("push", {"instances": 1}), ("tick", {})])
    assert v is not None and "no routable web instance" in v.message


def test_availability_not_required_before_serving_or_after_scale_to_zero():
    starting = app([proc(0, 1, running=0, starting=1)], [])
    serving = app([proc(0, 1)], [])
    zero = app([proc(0, 0)], [])
    assert run(spec.app_stays_available, [starting, starting], [("push", {"instances": 1}), ("tick", {})]) is None
    assert run(spec.app_stays_available, [serving, zero], [("push", {"instances": 1}), ("scale", {"instances": 0})]) is None


def test_cancel_restores_last_good_judged_when_runtime_settles():
    pushed = app([proc(0, 1)], [], droplets=(True, False))
    canceling = app([proc(0, 1), proc(1, 1, running=0, starting=1, droplet=1)],
                    [dep(0, "CANCELING", "CANCELING", 1, 1, droplet=1)], droplets=(True, False))
    canceled_bad = app([proc(1, 1, running=0, crashed=1, droplet=1)],
                       [dep(0, "CANCELED", "CANCELED", 1, 1, droplet=1)], droplets=(True, False))
    canceled_good = app([proc(0, 1)], [dep(0, "CANCELED", "CANCELED", 1, 1, droplet=1)], droplets=(True, False))
    steps = [("push", {"instances": 1}), ("deploy", {}), ("tick", {})]
    v = run(spec.cancel_restores_last_good, [pushed, canceling, canceled_bad], steps)
    assert v is not None and "not the healthy droplet 0 the app ran before" in v.message
    assert run(spec.cancel_restores_last_good, [pushed, canceling, canceled_good], steps) is None


def test_cancel_restores_a_healthy_droplet_the_app_ran():
    """The dead interim (PR #3072): the kept process ran before, but cannot start,
    while the app also ran a healthy droplet."""
    before = app([proc(0, 1, running=0, starting=1), proc(1, 1, running=0, crashed=1, droplet=1)],
                 [dep(0, "DEPLOYED", "SUPERSEDED", 1, 1, droplet=1)], droplets=(True, False))
    canceling = app(before["processes"] + [proc(2, 1, running=0, crashed=1, droplet=1)],
                    [dep(0, "DEPLOYED", "SUPERSEDED", 1, 1, droplet=1), dep(1, "CANCELING", "CANCELING", 2, 1, droplet=1)],
                    droplets=(True, False))
    canceled = app([proc(1, 1, running=0, crashed=1, droplet=1)],
                   [dep(0, "DEPLOYED", "SUPERSEDED", 1, 1, droplet=1), dep(1, "CANCELED", "CANCELED", 2, 1, droplet=1)],
                   droplets=(True, False))
    v = run(spec.cancel_restores_last_good, [before, canceling, canceled],
            [("push", {"instances": 1}), ("deploy", {}), ("tick", {})])
    assert v is not None and "not the healthy droplet 0 the app ran before" in v.message


def test_cancel_restores_owic():
    canceling = app([proc(0, 2), proc(1, 1)], [dep(0, "CANCELING", "CANCELING", 1, 3)])
    canceled = app([proc(0, 2)], [dep(0, "CANCELED", "CANCELED", 1, 3)])
    v = run(spec.cancel_restores_last_good, [canceling, canceled], [("cancel", {}), ("tick", {})])
    assert v is not None and "not the original 3" in v.message


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
    assert v.message.endswith("(the settle phase was cut at settle_steps=3: the platform was still busy)")
    assert settled_after(80)[0] is None  # given room, it converges
    _, needed = settled_after(80)
    v, steps = settled_after(needed)  # exactly enough: finished, not cut
    assert v is None and steps == needed
