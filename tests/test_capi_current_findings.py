"""The committed capi-current findings still reproduce, and capi-safe avoids each.

Every ``counterexamples/capi/capi-current--*.json`` is replayed on the variant
it was found on (it must still break its property) and on ``capi-safe`` (it
must not); ``docs/findings.md`` explains each one.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from deployspec.reference.capi.actions import Cancel, Continue, Deploy, Push, Runtime, Tick

from deployspec import traces
from deployspec.adapter import ReferenceAdapter
from deployspec.models import get_model
from deployspec.replay import replay
from deployspec.session import Session

FINDINGS = sorted((Path(__file__).parent.parent / "counterexamples" / "capi").glob("capi-current--*.json"))


def test_the_findings_are_there() -> None:
    names = {traces.load(f).get("title", "") for f in FINDINGS}
    assert any("#563" in n for n in names), "docs-dev-guide #563 must be among the findings"
    assert {traces.load(f)["property"] for f in FINDINGS} >= {
        "app_stays_available", "user_scale_not_lost", "capacity_within_bound",
        "single_active_deployment", "deployment_converges"}


@pytest.mark.parametrize("path", FINDINGS, ids=lambda p: p.name)
def test_reproduces_on_capi_current_and_not_on_capi_safe(path: Path) -> None:
    trace = traces.load(path)
    assert replay(trace).reproduced
    assert not replay(trace, variant="capi-safe").reproduced


def _run(variant: str, prop: str, actions) -> Session:
    model = get_model("capi")
    v = model.variant(variant)
    session = Session(model, ReferenceAdapter(model, v), (model.property(prop),), model.default_config(v))
    for a in actions:
        session.perform(a)
    return session


def test_capi_safe_cancel_keeps_the_canary_until_the_original_is_back() -> None:
    """docs-dev-guide #563 on capi-safe: after cancel the canary's instance keeps
    serving until the original's instance is routable again."""
    s = _run("capi-safe", "app_stays_available",
             [Push(1), Runtime(0), Deploy(strategy="canary", canary_steps=(100,)), Runtime(1),
              Tick(), Cancel(), Tick()])
    assert [p["instances"] for p in s.obs["processes"]] == [["STARTING"], ["RUNNING"]]
    assert s.obs["deployments"][0]["state"] == "CANCELING"
    for a in (Runtime(0), Tick(), Tick()):
        s.perform(a)
    assert [p["instances"] for p in s.obs["processes"]] == [["RUNNING"]]
    assert s.obs["deployments"][0]["state"] == "CANCELED"
    assert s.violation is None


def test_capi_safe_cancel_does_not_wait_for_a_prior_that_cannot_start() -> None:
    """The original's droplet crashes (it was broken before the deployment that fixed
    it); canceling that deployment must not leave the app down (capi-current) nor
    CANCELING forever (a roll-back waiting for the original): capi-safe keeps the
    process that serves."""
    from deployspec.reference.capi.actions import Scale, Stage

    story = [Push(1), Runtime(0), Scale(0), Stage(False), Deploy(), Tick(), Scale(1), Runtime(1),
             Stage(True), Deploy(), Runtime(2), Cancel(), Tick()]
    current = _run("capi-current", "app_stays_available", story)
    assert current.violation is not None
    safe = _run("capi-safe", "deployment_converges", story)
    assert safe.settle() is None
    assert [p["instances"] for p in safe.obs["processes"]] == [["RUNNING"]]
    assert safe.obs["deployments"][-1]["state"] == "CANCELED"


def test_capi_safe_cancel_with_nothing_that_can_serve_ends_at_once() -> None:
    """The shortest trace the explorer found once deployment_converges judged every
    cancel (11 steps): the app's only droplet that ran is broken, a second deployment
    of it is canceled, and every instance crashes. The roll-back could only wait for
    the prior process to become routable, forever; with nothing routable or starting
    there is nothing to keep serving, so capi-safe cancels at once as upstream does."""
    from deployspec.reference.capi.actions import Scale, Stage

    story = [Push(1), Stage(False), Scale(0), Deploy(), Tick(), Scale(1), Deploy(), Cancel()]
    safe = _run("capi-safe", "deployment_converges", story)
    assert [p["droplet"] for p in safe.obs["processes"]] == [1, 1]
    assert safe.obs["deployments"][-1]["state"] == "CANCELING"
    assert safe.settle() is None
    assert safe.obs["deployments"][-1]["state"] == "CANCELED"
    assert [p["instances"] for p in safe.obs["processes"]] == [["CRASHED"]]


def test_capi_safe_cancel_waits_while_an_instance_is_starting() -> None:
    """The at-once fallback is only for nothing left to serve: while the canceled
    deployment's own instance may still start, the roll-back waits for it (and the
    selection then keeps the process that serves)."""
    from deployspec.reference.capi.actions import Scale, Stage

    s = _run("capi-safe", "deployment_converges",
             [Push(1), Stage(False), Scale(0), Deploy(), Tick(), Scale(1), Runtime(1), Stage(True),
              Deploy(), Cancel(), Tick()])
    assert s.obs["deployments"][-1]["state"] == "CANCELING"
    assert [p["instances"] for p in s.obs["processes"]] == [["CRASHED"], ["STARTING"]]
    assert s.settle() is None
    assert s.obs["deployments"][-1]["state"] == "CANCELED"
    assert [p["instances"] for p in s.obs["processes"]] == [["RUNNING"]]


def _canary_finished_later():
    """A canary whose step finished with its PAUSED write still to come, then superseded."""
    from deployspec.reference.capi import VARIANTS

    v = VARIANTS["capi-current"]
    state = v.step(get_model("capi").initial_state(None), Push(1))
    for action in (Deploy(strategy="canary"), Runtime(1), Tick(finish_later=(0,))):
        state = v.step(state, action)
    return v, state


def test_a_finish_left_for_later_runs_first_at_the_next_tick_and_keeps_the_status_value():
    v, state = _canary_finished_later()
    assert state.pending == ((0, "PAUSED", None),) and state.deployments[0].state == "PREPAUSED"
    state = v.step(state, Deploy())
    assert (state.deployments[0].state, state.deployments[0].status_value) == ("CANCELED", "FINALIZED")
    after = v.step(state, Tick(failed=(1,)))  # d1's own step fails: only the finish shows
    d0, d1 = after.deployments
    assert (d0.state, d0.status_value, d0.status_reason) == ("PAUSED", "FINALIZED", "PAUSED")
    assert after.pending == () and d1.state == "DEPLOYING" and after.processes == state.processes


def test_designs_that_finish_inside_the_transaction_treat_finish_later_as_a_plain_tick():
    from deployspec.reference.capi import VARIANTS

    state = VARIANTS["capi-current"].step(get_model("capi").initial_state(None), Push(1))
    state = VARIANTS["capi-current"].step(state, Deploy(strategy="canary"))
    state = VARIANTS["capi-current"].step(state, Runtime(1))
    for name in ("capi-safe", "capi-pr3084", "capi-2022"):
        v = VARIANTS[name]
        assert v.step(state, Tick(finish_later=(0,))) == v.step(state, Tick())
    assert VARIANTS["capi-current"].step(state, Tick(finish_later=(0,))) != VARIANTS["capi-current"].step(
        state, Tick())


def test_finish_later_is_offered_only_where_the_bounds_open_the_window():
    import attrs

    model = get_model("capi")
    _, state = _canary_finished_later()
    obs = model.observe(state)
    current = model.default_config(model.variant("capi-current"))
    assert current.finish_window and Tick(finish_later=(0,)) in model.candidate_actions(obs, current)
    closed = attrs.evolve(current, finish_window=False)
    assert not any(getattr(a, "finish_later", ()) for a in model.candidate_actions(obs, closed))
    assert not model.default_config(model.variant("capi-safe")).finish_window


def test_the_down_scaler_counts_a_zeroed_canary_and_takes_the_original_instead():
    """[reading] actions/scale.rb at 3bbba90: the down-scaler works on the web
    processes as loaded before the superseded canary's process was zeroed, so it
    takes the instance it thinks the canary gives up from the serving original."""
    from deployspec.reference.capi import VARIANTS

    def run(name):
        v = VARIANTS[name]
        state = get_model("capi").initial_state(None)
        for action in (Push(1), Runtime(0), Deploy(strategy="canary"), Runtime(1), Tick(), Deploy(), Tick()):
            state = v.step(state, action)
        return {p.id: p.instances for p in state.processes}

    assert run("capi-current") == {0: (), 1: (), 2: ("STARTING",)}  # nothing routable
    assert any("RUNNING" in instances for instances in run("capi-safe").values())


def test_a_canary_left_paused_and_finalized_is_never_superseded() -> None:
    """DeploymentCreate finds the previous deployment by status value ACTIVE, oldest first
    (deployment_create.rb at 3bbba90; ORDER BY id since #5039), not by state: the canary
    that the single_active_deployment finding leaves PAUSED/FINALIZED is not found by a
    later deploy, which supersedes nothing, and it stays PAUSED (a rule by state, newest
    first, superseded it: CANCELED/SUPERSEDED)."""
    import attrs
    from deployspec.reference.capi.actions import Deploy, Runtime, Scale, Tick

    model = get_model("capi")
    trace = traces.load(next(f for f in FINDINGS if "single_active_deployment" in f.name))
    v = model.variant("capi-current")
    config = attrs.evolve(model.config_from_json(trace["config"]), max_deployments=3)
    s = Session(model, ReferenceAdapter(model, v), (model.property("single_active_deployment"),), config)
    for step in trace["steps"]:
        s.perform(model.action(step["action"]))
    for a in (Runtime(2), Tick(), Tick()):  # the second deployment finishes
        s.perform(a)

    def rows():
        return [(d["state"], d["status_value"], d["status_reason"]) for d in s.obs["deployments"]]

    assert rows() == [("PAUSED", "FINALIZED", "PAUSED"), ("DEPLOYED", "FINALIZED", "DEPLOYED")]
    # cf cancel-deployment / continue-deployment find no deployment with status value ACTIVE
    # (cloudfoundry/cli, GetLatestActiveDeploymentForApp): neither is offered, both refused
    offered = {a.kind for a in model.candidate_actions(s.obs, config)}
    assert not offered & {"cancel", "continue"}
    for a in (Cancel(), Continue()):
        s.perform(a)
        assert s.steps[-1]["rejected"].startswith("no active deployment")
    s.perform(Deploy())
    assert rows() == [("PAUSED", "FINALIZED", "PAUSED"), ("DEPLOYED", "FINALIZED", "DEPLOYED"),
                      ("DEPLOYING", "ACTIVE", "DEPLOYING")]
    for a in (Runtime(3), Tick(), Tick(), Scale(2)):  # the third finishes; d0 still blocks scaling
        s.perform(a)
    assert rows()[0] == ("PAUSED", "FINALIZED", "PAUSED") and rows()[2][0] == "DEPLOYED"
    assert s.steps[-1]["rejected"] == "Cannot scale this process while a deployment is in flight."


def test_of_two_active_deployments_the_oldest_is_the_previous_one() -> None:
    """``DeploymentModel.find`` returns the first row, which the default ORDER BY id of #5039
    makes the oldest (no design from PR #3072 on reaches two ACTIVE rows; the rule still
    says which)."""
    from deployspec.reference.capi import rules
    from deployspec.reference.capi.state import (
        ACTIVE,
        DEPLOYING,
        PAUSED,
        App,
        CapiState,
        Deployment,
    )

    d0 = Deployment(0, PAUSED, ACTIVE, PAUSED, 1, 1, 0, 1)
    d1 = Deployment(1, DEPLOYING, ACTIVE, DEPLOYING, 2, 1, 0, 1)
    assert rules.previous_active(CapiState(App(1), (True, True), (), (d0, d1))) is d0


def test_of_two_deploying_deployments_capi_2022_supersedes_the_oldest() -> None:
    """Before PR #3072, ``DeploymentModel.find(app:, state: DEPLOYING)`` with no ORDER BY:
    the database's first row (MySQL's primary-key order), as for ACTIVE rows above. Two
    DEPLOYING rows arise only through the dispatcher's snapshot window (a late scale step
    rewrites a canceled deployment DEPLOYING)."""
    from deployspec.reference.capi import rules
    from deployspec.reference.capi.state import ACTIVE, DEPLOYING, App, CapiState, Deployment

    d0 = Deployment(0, DEPLOYING, ACTIVE, DEPLOYING, 1, 1, 0, 1)
    d1 = Deployment(1, DEPLOYING, ACTIVE, DEPLOYING, 2, 1, 0, 1)
    assert rules.previous_deploying(CapiState(App(1), (True, True), (), (d0, d1))) is d0
