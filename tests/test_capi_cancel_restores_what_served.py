"""A cancel restores what the app served when the canceled deployment was created.

``cancel_restores_last_good`` demands a droplet of a web process that had instances
then (not one the app ran on no instance), and capi-safe meets it by recording,
at creation, the newest process that serves and keeping it (at 0 if a step takes
every instance) until the deployment ends. The two shortest ways the design broke
the property before (docs/properties.md), replayed here on capi-safe and on capi-safe
without each half of the change: each half is needed.
"""

from __future__ import annotations

import sys

import attrs
import pytest
from deployspec.reference.capi import rules, scaling
from deployspec.reference.capi.actions import Cancel, Deploy, Push, Runtime, Stage, Tick
from deployspec.reference.capi.state import CANCELING, RUNNING
from deployspec.spec import capi as spec
from deployspec.spec import capi_cancel
from deployspec.spec import selection as sel

from deployspec.adapter import ReferenceAdapter
from deployspec.models import get_model
from deployspec.session import Session

from .wrapped_reference import WrappedReference

MODEL = get_model("capi")
SAFE = MODEL.variant("capi-safe")
#: capi-safe as it was: nothing recorded, PR #3084's rule that gives way when crashing
UNRECORDED = attrs.evolve(SAFE, name="capi-safe-unrecorded",
                          select_prior=rules.running_interim_or_oldest_that_can_serve,
                          rollback_process=rules.no_rollback_recorded)


def _not_kept(state, deploying, keep):
    """capi-safe's down-scaler without keeping the recorded process: it goes at 0."""
    old = sorted(scaling.old_processes(state, deploying), key=lambda p: p.count(RUNNING) > 0)
    return scaling._scale_down_in_order(state, old, keep)


NOT_KEPT = attrs.evolve(SAFE, name="capi-safe-not-kept", scale_down=_not_kept)

CANARY = Deploy(strategy="canary")  # no steps: one step at 100 %
#: a canary's 100 % step (P0 at 0, P1 serving), then a rolling deploy canceled at once
SUPERSEDED_CANARY = (Push(1), Stage(True), CANARY, Runtime(1), Tick(), Deploy(), Cancel(), Tick(),
                     Runtime(0), Tick())
#: two canaries' 100 % steps (the second destroys P1 unless kept), the second canceled
TWO_CANARIES = (Push(1), Stage(True), CANARY, Runtime(1), Tick(), CANARY, Runtime(2), Tick(), Cancel(),
                Tick(), Runtime(0), Runtime(1), Tick())


def run(variant, actions, settle: bool = True) -> Session:
    """The actions on ``variant``, every property of the model watching; then settled."""
    s = Session(MODEL, ReferenceAdapter(MODEL, variant), MODEL.properties, MODEL.default_config(variant))
    for action in actions:
        if s.perform(action) is not None:
            return s
    for _ in range(50 if settle else 0):
        action = MODEL.settle_action(s.obs)
        if action is None or s.perform(action) is not None:
            break
    return s


@pytest.mark.parametrize("actions", [SUPERSEDED_CANARY, TWO_CANARIES], ids=["superseded-canary", "two-canaries"])
def test_capi_safe_rolls_back_to_the_canary_that_served(actions):
    s = run(SAFE, actions)
    assert s.violation is None, s.violation
    [p] = s.obs["processes"]
    assert (p["id"], p["droplet"], p["instances"]) == (1, 1, [RUNNING])
    assert s.obs["deployments"][-1]["state"] == "CANCELED"


@pytest.mark.parametrize("variant, actions, steps", [
    (UNRECORDED, SUPERSEDED_CANARY, 10),
    (UNRECORDED, TWO_CANARIES, 13),
    (NOT_KEPT, TWO_CANARIES, 13),
], ids=["unrecorded-superseded-canary", "unrecorded-two-canaries", "not-kept-two-canaries"])
def test_without_either_half_the_cancel_rolls_back_past_what_served(variant, actions, steps):
    s = run(variant, actions)
    assert s.violation is not None and s.violation.property == "cancel_restores_last_good"
    assert "running droplet 0, not the healthy droplet 1" in s.violation.message
    assert len(s.steps) <= steps + 5  # found while settling, not in some later story


def test_the_second_canary_keeps_the_recorded_process_at_zero():
    s = run(SAFE, TWO_CANARIES[:8], settle=False)  # up to the second canary's 100 % step
    d1 = s.obs["deployments"][1]
    assert d1["state"] == "PAUSED"
    assert [(p["id"], len(p["instances"])) for p in s.obs["processes"]] == [(0, 0), (1, 0), (2, 1)]
    state = s.adapter.state
    assert state.deployments[1].rolls_back_to == 1
    n = run(NOT_KEPT, TWO_CANARIES[:8], settle=False)
    assert [p["id"] for p in n.obs["processes"]] == [0, 2]


def test_what_a_deployment_records():
    s = run(SAFE, (Push(2), Runtime(0)), settle=False)
    state = s.adapter.state
    assert rules.newest_serving_process(state) is None  # the oldest: kept and fallen back to anyway
    s = run(SAFE, (Push(1), Runtime(0), Stage(True), CANARY, Runtime(1), Tick()), settle=False)
    state = s.adapter.state
    assert rules.newest_serving_process(state) == 1
    canceling = s.adapter.state.with_deployment(state.deployments[0].moved_to(CANCELING, "ACTIVE", CANCELING))
    assert rules.newest_serving_process(canceling) is None  # a cancel is taking P1 away


def test_an_ended_deployment_forgets_what_it_recorded():
    s = run(SAFE, (Push(1), Runtime(0), Stage(True), CANARY, Runtime(1), Tick(), Deploy()), settle=False)
    d = s.adapter.state.deployments[1]
    assert d.rolls_back_to == 1
    assert d.moved_to("DEPLOYED", "FINALIZED", "DEPLOYED").rolls_back_to is None
    assert d.moved_to(CANCELING, "ACTIVE", CANCELING).rolls_back_to == 1


def test_the_cancel_step_view_shows_the_recorded_process_and_z3_agrees():
    s = run(SAFE, SUPERSEDED_CANARY[:7], settle=False)  # canceled, its cancel step next
    state = s.adapter.state
    view = sel.SelectionView.of(state, state.deployments[1], True)
    assert view.recorded == 1 and "d1 rolls back to P1" in view.describe()
    assert view.to_state().deployments[1].rolls_back_to == 1
    sym = sel.Symbolic(3, 3)
    encoding = sel.VARIANTS["capi-safe"]
    assert sym.evaluate(encoding.rule.encode(sym), view) == view.select(SAFE.select_prior) == 1
    traits = sel.traits(SAFE, encoding)
    assert sel.RECORDS_SERVING in traits and sel.RECORDS_SERVING not in sel.traits(UNRECORDED, encoding)
    assert all(sym.evaluate(c.build(sym), view) for c in sel.WELLFORMED if c.needs <= traits)
    # PR #3084's rule on the same view keeps the original, at 0: what the cancel got wrong
    assert view.select(rules.running_interim_or_oldest) == 0


RAN = capi_cancel._ran_when_created


def _obs(processes, deployments=()):
    """Processes (id, droplet, instances as a string of R and s), deployments (state, process)."""
    status = {"R": "RUNNING", "s": "STARTING"}
    return {"processes": [{"id": i, "droplet": dr, "instances": [status[c] for c in n]} for i, dr, n in processes],
            "deployments": [{"id": j, "state": st, "deploying_process": p} for j, (st, p) in enumerate(deployments)]}


def test_what_the_app_ran_is_what_had_instances_once_something_served():
    assert RAN(_obs([(0, 0, ""), (1, 1, "RR")])) == {1}  # the original at 0 ran nothing
    assert RAN(_obs([(0, 0, "R"), (1, 1, "R")])) == {0, 1}
    assert RAN(_obs([(0, 0, "R"), (1, 1, "s"), (2, 2, "")])) == {0, 1}  # starting counts, 0 does not
    # a CANCELING deployment's process is left out: its cancel is taking it away
    assert RAN(_obs([(0, 0, "R"), (1, 1, "R")], [("CANCELING", 1)])) == {0}
    # nothing (but the canceled one's) served: every other process counts, at 0 or not
    assert RAN(_obs([(0, 0, ""), (1, 1, "R")], [("CANCELING", 1)])) == {0}
    assert RAN(_obs([(0, 0, ""), (1, 1, "s"), (2, 1, "s")])) == {0, 1}
    assert RAN(_obs([(0, 0, "")])) == {0}
    # only the canceled one's process: nothing to demand (the property then judges no droplet)
    assert RAN(_obs([(1, 1, "R")], [("CANCELING", 1)])) == frozenset()


def test_deployments_equal_but_for_their_record_keep_their_own_when_they_move():
    """What a deployment recorded is part of the interned value's key: two deployments
    that differ only there stay apart when a cancel moves them."""
    s = run(SAFE, (Push(1), Runtime(0), Stage(True), CANARY, Runtime(1), Tick(), Deploy()), settle=False)
    d = s.adapter.state.deployments[1]
    other = attrs.evolve(d, rolls_back_to=None)
    assert d.moved_to(CANCELING, "ACTIVE", CANCELING).rolls_back_to == 1
    assert other.moved_to(CANCELING, "ACTIVE", CANCELING).rolls_back_to is None
    assert d.moved_to(CANCELING, "ACTIVE", CANCELING).rolls_back_to == 1  # after the other was interned


class CancelKeepsTheDroplet(WrappedReference):
    """An implementation whose DeploymentCancel forgets to assign the previous droplet
    back (a soundness review's mutation of ``api.cancel``: no property caught it, and a
    restart after the cancel deploys the canceled, crashing droplet again)."""

    name = "capi-safe, its cancel keeping the current droplet"

    def perform(self, action):
        kept = self.inner.state.app
        reason = self.inner.perform(action)
        if action["type"] == "cancel" and reason is None:
            self.inner.state = attrs.evolve(self.inner.state, app=kept)
        return reason


def test_a_cancel_that_leaves_the_canceled_droplet_current_breaks_cancel_restores_last_good():
    """DeploymentCancel assigns ``previous_droplet`` back before it writes CANCELING
    (``deployment_cancel.rb`` at 3bbba90); judged at the cancel, whatever the user does next."""
    from .helpers import app, dep, proc
    from .property_traces import run

    deploying = app([proc(0, 1), proc(1, 0, starting=1, droplet=1)],
                    [dep(0, "DEPLOYING", "DEPLOYING", 1, 1, droplet=1, previous_droplet=0)], droplets=(True, False))
    deploying["app"]["droplet"] = 1
    canceling = app([proc(0, 1), proc(1, 0, starting=1, droplet=1)],
                    [dep(0, "CANCELING", "CANCELING", 1, 1, droplet=1, previous_droplet=0)], droplets=(True, False))
    forgot = {**canceling, "app": {"droplet": 1, "started": True}}
    steps = [("push", {"instances": 1}), ("stage", {"healthy": False}), ("deploy", {}), ("cancel", {})]
    pushed = app([proc(0, 1)], [], droplets=(True,))
    staged = {**app([proc(0, 1)], [], droplets=(True, False))}
    v = run(spec.cancel_restores_last_good, [pushed, staged, deploying, forgot], steps)
    assert v is not None and v.step == 3 and "left the app's current droplet 1, not droplet 0" in v.message, v
    assert run(spec.cancel_restores_last_good, [pushed, staged, deploying, canceling], steps) is None


def test_a_contract_run_finds_the_implementation_whose_cancel_keeps_the_canceled_droplet(capsys, monkeypatch):
    from .cli_runs import run

    monkeypatch.setattr(sys.modules[__name__], "forgetful", CancelKeepsTheDroplet, raising=False)
    status, out, _ = run(capsys, "contract", "--python", f"{__name__}:forgetful", "--model", "capi",
                         "--property", "cancel_restores_last_good", "--examples", "200")
    assert status == 1 and "left the app's current droplet" in out, out
