"""Fidelity of ``capi-current``: upstream scenarios as state fixtures.

Each fixture is an observation (the JSON an implementation would report), one
action (almost always one updater dispatch, ``tick``) and what upstream expects
after it. Sources: the rolling/canary scenarios of ``shared/domain/capi.md`` and
the unit specs of cloud_controller_ng at 3bbba9069894b1b74652c7b88fdfd4171136c8c4
(``spec/unit/lib/cloud_controller/deployment_updater/…``, ``spec/unit/actions/…``,
``spec/unit/models/runtime/deployment_model_spec.rb``), numbered F1…F47 as in
docs/upstream/cloud-controller.md. A fixture names its spec file and example; where the spec stubs
the instance reporter, the stubbed report is written as instance statuses
(R routable, S starting or running-not-routable, C crashed or down).
"""

from __future__ import annotations

import attrs
import pytest
from deployspec.reference.capi import VARIANTS, canary, from_observation, observe, rules, updater
from deployspec.reference.capi.actions import Cancel, Continue, Deploy, Tick

R, S, C = "RUNNING", "STARTING", "CRASHED"
CURRENT = VARIANTS["capi-current"]

UPDATER = "spec/unit/lib/cloud_controller/deployment_updater/"
SCALE_SPEC = UPDATER + "actions/scale_spec.rb"
CANCEL_SPEC = UPDATER + "actions/cancel_spec.rb"
UPDATER_SPEC = UPDATER + "updater_spec.rb"
DOWN_SPEC = UPDATER + "actions/down_scaler_spec.rb"
CREATE_SPEC = "spec/unit/actions/deployment_create_spec.rb"
CONTINUE_SPEC = "spec/unit/actions/deployment_continue_spec.rb"
DOMAIN = "shared/domain/capi.md"


def proc(pid: int, n: int = 0, *report: str) -> dict:
    """A web process with ``n`` instances; ``report`` gives the first statuses (default R)."""
    statuses = list(report) + [R] * (n - len(report))
    return {"id": pid, "droplet": 0, "instances": statuses[:n] if n else list(report)}


def dep(did: int, process: int, state: str = "DEPLOYING", value: str = "ACTIVE",
        reason: str = "DEPLOYING", owic: int = 6, **extra) -> dict:
    d = {"id": did, "state": state, "status_value": value, "status_reason": reason,
         "deploying_process": process, "droplet": 0, "previous_droplet": 0, "owic": owic}
    d.update(extra)
    return d


def interim(did: int, process: int) -> dict:
    return dep(did, process, "DEPLOYED", "FINALIZED", "SUPERSEDED")


def canceled_superseded(did: int, process: int) -> dict:
    return dep(did, process, "CANCELED", "FINALIZED", "SUPERSEDED")


def app(processes: list, deployments: list) -> dict:
    return {"app": {"droplet": 0, "started": True}, "droplets": [{"id": 0, "healthy": True}],
            "processes": processes, "deployments": deployments}


@attrs.frozen
class Fixture:
    source: str  # spec file (or the domain notes)
    example: str  # describe / context / it, as upstream names it
    before: dict
    expect_processes: dict  # process id -> desired instances; absent ids must be destroyed
    expect_deployments: dict = attrs.field(factory=dict)  # id -> (state, status_value, reason)
    action: object = Tick()

    @property
    def id(self) -> str:
        return self.example


def step(before: dict, action) -> dict:
    result = CURRENT.step(from_observation(before), action)
    assert not hasattr(result, "reason"), f"rejected: {result}"
    return observe(result)


FIXTURES = [
    # ---- shared/domain/capi.md: rolling steps, canary, cancel ----------------
    Fixture(DOMAIN, "Rolling steps: P0 6, Pd 1 routable, max_in_flight 1 -> P0 5, Pd 2",
            app([proc(0, 6), proc(1, 1)], [dep(0, 1)]), {0: 5, 1: 2}),
    Fixture(DOMAIN, "Rolling steps: max_in_flight 2, Pd at 0 -> Pd 2, P0 unchanged",
            app([proc(0, 6), proc(1, 0)], [dep(0, 1, max_in_flight=2)]), {0: 6, 1: 2}),
    Fixture(DOMAIN, "Cancel, simple: P0 2, Pd 0, CANCELING owic 6 -> only P0, with 6",
            app([proc(0, 2), proc(1, 0)], [dep(0, 1, "CANCELING", reason="CANCELING")]),
            {0: 6}, {0: ("CANCELED", "FINALIZED", "CANCELED")}),
    Fixture(DOMAIN, "create, create, cancel: the running interim P1 survives with owic",
            app([proc(0, 2), proc(1, 1), proc(2, 1)],
                [interim(0, 1), dep(1, 2, "CANCELING", reason="CANCELING")]),
            {1: 6}, {1: ("CANCELED", "FINALIZED", "CANCELED")}),
    Fixture(DOMAIN, "create, create, cancel, create, cancel: CANCELED/SUPERSEDED P2 is skipped",
            app([proc(0, 2), proc(1, 1), proc(2, 1), proc(3, 1)],
                [interim(0, 1), canceled_superseded(1, 2),
                 dep(2, 3, "CANCELING", reason="CANCELING")]),
            {1: 6}, {2: ("CANCELED", "FINALIZED", "CANCELED")}),
    Fixture(DOMAIN, "Canary: PREPAUSED -> PAUSED when the step target is reached",
            app([proc(0, 2), proc(1, 1)],
                [dep(0, 1, "PREPAUSED", strategy="canary", canary_step=1)]),
            {0: 2, 1: 1}, {0: ("PAUSED", "ACTIVE", "PAUSED")}),
    Fixture(DOMAIN, "Canary: continue moves a PAUSED deployment to its next step (PREPAUSED)",
            app([proc(0, 6), proc(1, 2)],
                [dep(0, 1, "PAUSED", reason="PAUSED", strategy="canary",
                     canary_steps=[20, 60], canary_step=1)]),
            {0: 6, 1: 2}, {0: ("PREPAUSED", "ACTIVE", "DEPLOYING")}, Continue()),
    Fixture(DOMAIN, "Canary canceled after a 100 % step: the new instances go, P0 restarts "
            "from 0 (docs-dev-guide #563)",
            app([proc(0, 0), proc(1, 2)],
                [dep(0, 1, "CANCELING", reason="CANCELING", owic=2, strategy="canary",
                     canary_steps=[100], canary_step=1)]),
            {0: 2}, {0: ("CANCELED", "FINALIZED", "CANCELED")}),
    # ---- scale_spec.rb (Scale with T = desired_web_instances) ------------------
    Fixture(SCALE_SPEC, "(top) it 'scales up the new web process by one'",
            app([proc(0, 6), proc(1, 0)], [dep(0, 1)]), {0: 6, 1: 1}),
    Fixture(SCALE_SPEC, "when max_in_flight is larger than the number of remaining desired "
            "instances / scales up the new web process by the maximum number",
            app([proc(0, 1), proc(1, 5)], [dep(0, 1, max_in_flight=5)]), {0: 1, 1: 6}),
    Fixture(SCALE_SPEC, "when the max_in_flight is more than the total number of process "
            "instances",
            app([proc(0, 6), proc(1, 0)], [dep(0, 1, max_in_flight=100)]), {0: 6, 1: 6}),
    Fixture(SCALE_SPEC, "when the (oldest) web process will be at zero instances and is type "
            "web / does not destroy the web process, but scales it to 0",
            app([proc(0, 1), proc(1, 3), proc(2, 3)], [interim(0, 1), dep(1, 2)]),
            {0: 0, 1: 3, 2: 4}),
    Fixture(SCALE_SPEC, "when the oldest web process will be at zero instances / destroys the "
            "oldest web process and ignores the original web process",
            app([proc(0, 0), proc(1, 1), proc(2, 10), proc(3, 3)],
                [interim(0, 1), interim(1, 2), dep(2, 3)]),
            {0: 0, 2: 3, 3: 4}),
    Fixture(SCALE_SPEC, "when there are more instances in interim processes than there should "
            "be / scales down interim proceses so all instances equal original instance "
            "count + max in flight",
            app([proc(0, 10), proc(1, 10), proc(2, 10), proc(3, 10)],
                [interim(0, 1), interim(1, 2), dep(2, 3, owic=20, max_in_flight=4)]),
            {0: 0, 2: 10, 3: 14}),
    Fixture(SCALE_SPEC, "... / when all in-flight instances are not up (6R 2S 1D 1F)",
            app([proc(0, 10), proc(1, 10), proc(2, 10), proc(3, 10, R, R, R, R, R, R, S, S, C, C)],
                [interim(0, 1), interim(1, 2), dep(2, 3, owic=20, max_in_flight=4)]),
            {0: 0, 1: 4, 2: 10, 3: 10}),
    Fixture(SCALE_SPEC, "when there are fewer instances in interim processes than there should "
            "be / doesnt try to scale up or down the iterim processes",
            app([proc(0, 1), proc(1, 1), proc(2, 1), proc(3, 10)],
                [interim(0, 1), interim(1, 2), dep(2, 3, owic=20, max_in_flight=4)]),
            {0: 1, 1: 1, 2: 1, 3: 14}),
    Fixture(SCALE_SPEC, "when some, but not all, instances have finished / scales more "
            "instances to match max_in_flight (R R S U S)",
            app([proc(0, 10), proc(1, 5, R, R, S, S, S)], [dep(0, 1, owic=10, max_in_flight=5)]),
            {0: 8, 1: 7}),
    Fixture(SCALE_SPEC, "when greater than or equal to max_in_flight of the "
            "deploying_web_process instances is starting (R S S)",
            app([proc(0, 6), proc(1, 3, R, S, S)], [dep(0, 1, max_in_flight=2)]),
            {0: 5, 1: 3}),
    Fixture(SCALE_SPEC, "... is failing (R F C)",
            app([proc(0, 6), proc(1, 3, R, C, C)], [dep(0, 1, max_in_flight=2)]),
            {0: 5, 1: 3}),
    Fixture(SCALE_SPEC, "when Diego is unavailable while checking instance status / does not "
            "scale the process",
            app([proc(0, 6), proc(1, 3)], [dep(0, 1)]), {0: 6, 1: 3},
            action=Tick(reports_unavailable=(0,))),
    Fixture(SCALE_SPEC, "when there is an interim deployment that has been SUPERSEDED "
            "(CANCELED) / scales the canceled web process to zero",
            # P1 0 is the spec's; P0 5 is derived: the down-scaler counts P1's instance
            # as it read it before the clean-up (docs/upstream/cloud-controller.md 4.3)
            app([proc(0, 6), proc(1, 1), proc(2, 0)], [canceled_superseded(0, 1), dep(1, 2)]),
            {0: 5, 1: 0, 2: 1}),
    # ---- updater_spec.rb (#scale with Finalize, #canary) ---------------------
    Fixture(UPDATER_SPEC, "#scale / when the deployment process has reached "
            "original_web_process_instance_count / finalizes the deployment",
            app([proc(0, 2), proc(1, 6)], [dep(0, 1)]),
            {1: 6}, {0: ("DEPLOYED", "FINALIZED", "DEPLOYED")}),
    Fixture(UPDATER_SPEC, "#canary / canary steps / when the current step instance count has "
            "been reached / transitions state to paused",
            app([proc(0, 8), proc(1, 5)],
                [dep(0, 1, "PREPAUSED", owic=10, strategy="canary", canary_steps=[50, 80],
                     canary_step=1)]),
            {0: 6, 1: 5}, {0: ("PAUSED", "ACTIVE", "PAUSED")}),
    Fixture(UPDATER_SPEC, "#canary / canary steps / when the current step instance count has "
            "not been reached",
            app([proc(0, 2), proc(1, 4)],
                [dep(0, 1, "PREPAUSED", owic=10, strategy="canary", canary_steps=[50, 80],
                     canary_step=1)]),
            {0: 2, 1: 5}, {0: ("PREPAUSED", "ACTIVE", "DEPLOYING")}),
    Fixture(UPDATER_SPEC, "#canary / canary steps / when there is a single unhealthy instance",
            app([proc(0, 2), proc(1, 5, R, R, R, R, S)],
                [dep(0, 1, "PREPAUSED", owic=10, strategy="canary", canary_steps=[50, 80],
                     canary_step=1)]),
            {0: 2, 1: 5}, {0: ("PREPAUSED", "ACTIVE", "DEPLOYING")}),
    Fixture(UPDATER_SPEC, "#canary / when the canary is not routable",
            app([proc(0, 2), proc(1, 1, S)],
                [dep(0, 1, "PREPAUSED", strategy="canary", canary_step=1)]),
            {0: 2, 1: 1}, {0: ("PREPAUSED", "ACTIVE", "DEPLOYING")}),
    Fixture(UPDATER_SPEC, "#scale / when the deployment process has reached "
            "interim_desired_instance_count / leaves the deployment in a deploying state "
            "(a canary step: owic 5, [60] -> c3/o3, T 6, I 3)",
            app([proc(0, 6), proc(1, 1), proc(2, 3)],
                [interim(0, 1), dep(1, 2, "PREPAUSED", owic=5, strategy="canary",
                                   canary_steps=[60], canary_step=1)]),
            {0: 2, 1: 1, 2: 3}, {1: ("PAUSED", "ACTIVE", "PAUSED")}),
    # ---- cancel_spec.rb -------------------------------------------------------
    Fixture(CANCEL_SPEC, "when there is an interim deployment that has no running web process "
            "instance",
            app([proc(0, 2), proc(1, 1), proc(2, 3, S, C, C), proc(3, 0)],
                [interim(0, 1), interim(1, 2), dep(2, 3, "CANCELING", reason="CANCELING")]),
            {1: 6}, {2: ("CANCELED", "FINALIZED", "CANCELED")}),
    Fixture(CANCEL_SPEC, "when the app is at a quota limit / can still be cancelled "
            "succesfully",
            app([proc(0, 1), proc(1, 6)], [dep(0, 1, "CANCELING", reason="CANCELING")]),
            {0: 6}, {0: ("CANCELED", "FINALIZED", "CANCELED")}),
    # ---- deployment_create_spec.rb / deployment_continue_spec.rb -------------
    Fixture(CREATE_SPEC, "when there is an existing deployment / when the existing deployment "
            "is DEPLOYING",
            app([proc(0, 5), proc(1, 1)], [dep(0, 1, owic=10)]),
            {0: 5, 1: 1, 2: 1},
            {0: ("DEPLOYED", "FINALIZED", "SUPERSEDED"), 1: ("DEPLOYING", "ACTIVE", "DEPLOYING")},
            Deploy()),
    Fixture(CREATE_SPEC, "when there is an existing deployment / when the existing deployment "
            "is CANCELING",
            app([proc(0, 5), proc(1, 1)], [dep(0, 1, "CANCELING", reason="CANCELING", owic=10)]),
            {0: 5, 1: 1, 2: 1},
            {0: ("CANCELED", "FINALIZED", "SUPERSEDED"), 1: ("DEPLOYING", "ACTIVE", "DEPLOYING")},
            Deploy()),
    Fixture(CREATE_SPEC, "strategy / when the strategy is rolling / creates a process with "
            "max_in_flight instances",
            app([proc(0, 3)], []), {0: 3, 1: 2}, {0: ("DEPLOYING", "ACTIVE", "DEPLOYING")},
            Deploy(max_in_flight=2)),
    Fixture(CREATE_SPEC, "... / when max_in_flight is more than desired instances",
            app([proc(0, 3)], []), {0: 3, 1: 3}, {}, Deploy(max_in_flight=100)),
    Fixture(CREATE_SPEC, "uses the web_instances from the message / when max_in_flight "
            "instances is higher than web_instances",
            app([proc(0, 5)], []), {0: 5, 1: 10}, {}, Deploy(max_in_flight=200, web_instances=10)),
    Fixture(CREATE_SPEC, "... / web_instances is lower than original_instances",
            app([proc(0, 10)], []), {0: 10, 1: 5}, {}, Deploy(max_in_flight=200, web_instances=5)),
    Fixture(CREATE_SPEC, "when the strategy is canary / and there are canary options with "
            "steps (33, 99)",
            app([proc(0, 3)], []), {0: 3, 1: 1}, {0: ("PREPAUSED", "ACTIVE", "DEPLOYING")},
            Deploy(max_in_flight=100, strategy="canary", canary_steps=(33, 99))),
    Fixture(CONTINUE_SPEC, "when the deployment is in the PAUSED state / and there are no "
            "remaining steps",
            app([proc(0, 2), proc(1, 1)],
                [dep(0, 1, "PAUSED", reason="PAUSED", strategy="canary", canary_steps=[10, 40],
                     canary_step=2)]),
            {0: 2, 1: 1}, {0: ("DEPLOYING", "ACTIVE", "DEPLOYING")}, Continue()),
]


@pytest.mark.parametrize("fx", FIXTURES, ids=lambda fx: fx.id[:60])
def test_fixture(fx: Fixture) -> None:
    after = step(fx.before, fx.action)
    assert {p["id"]: len(p["instances"]) for p in after["processes"]} == fx.expect_processes, (
        f"{fx.source}: {fx.example}"
    )
    for did, want in fx.expect_deployments.items():
        d = after["deployments"][did]
        assert (d["state"], d["status_value"], d["status_reason"]) == want, (
            f"{fx.source}: {fx.example}"
        )


def test_fixture_count() -> None:
    """Every capi.md rolling/canary scenario, plus at least eight upstream examples."""
    assert sum(fx.source == DOMAIN for fx in FIXTURES) >= 8
    assert sum(fx.source != DOMAIN for fx in FIXTURES) >= 8


@pytest.mark.parametrize(
    "owic, web_instances, weights, plan",
    [
        # spec/unit/models/runtime/deployment_model_spec.rb, describe '#canary_step_plan'
        (10, None, (20, 40), ((2, 9), (4, 7))),
        (10, None, (80,), ((8, 3),)),
        (5, None, (20, 40), ((1, 5), (2, 4))),
        (3, None, (1,), ((1, 3),)),
        (1, None, (1, 20, 40, 80, 100), ((1, 1),) * 4 + ((1, 0),)),
        # 'when deployment is has a 100% step', and web_instances below / above owic
        (10, None, (1, 25, 50, 99, 100), ((1, 10), (3, 8), (5, 6), (10, 1), (10, 0))),
        (100, 10, (1, 25, 50, 99, 100), ((1, 10), (3, 8), (5, 6), (10, 1), (10, 0))),
        (10, 100, (1, 25, 50, 99, 100), ((1, 10), (3, 8), (5, 6), (10, 1), (10, 0))),
        # no steps: one canary beside every original
        (6, None, (), ((1, 6),)),
    ],
)
def test_canary_step_plan(owic, web_instances, weights, plan) -> None:
    assert canary.step_plan(owic, web_instances, weights) == plan


@pytest.mark.parametrize("action, reason", [
    (Deploy(canary_steps=(50,)), "only valid for Canary"),
    (Deploy(strategy="canary", canary_steps=(80, 20)), "ascending"),
    (Deploy(strategy="canary", canary_steps=(0,)), "between 1-100"),
])
def test_deployment_create_message_validation(action, reason) -> None:
    """spec/unit/messages/deployment_create_message_spec.rb: canary options and weights."""
    assert reason in rules.deployment_options(action)


def test_continue_rejects_a_deployment_that_is_not_paused() -> None:
    """deployment_continue_spec.rb: PREPAUSED (and every other state) -> InvalidStatus."""
    before = app([proc(0, 2), proc(1, 1)], [dep(0, 1, "PREPAUSED", strategy="canary")])
    result = CURRENT.step(from_observation(before), Continue())
    assert "Cannot continue" in result.reason


def test_scale_is_refused_while_paused_but_accepted_while_canceling() -> None:
    """process_scale.rb with AppModel#deploying? (PROGRESSING_STATES since #3892)."""
    from deployspec.reference.capi.actions import Scale

    paused = app([proc(0, 2), proc(1, 1)], [dep(0, 1, "PAUSED", reason="PAUSED")])
    assert hasattr(CURRENT.step(from_observation(paused), Scale(3)), "reason")
    canceling = app([proc(0, 2), proc(1, 1)], [dep(0, 1, "CANCELING", reason="CANCELING")])
    after = observe(CURRENT.step(from_observation(canceling), Scale(3)))
    assert [len(p["instances"]) for p in after["processes"]] == [2, 3]  # the newest one
    assert not hasattr(CURRENT.step(from_observation(canceling), Cancel()), "reason")


@pytest.mark.parametrize("source, superseded, step", [
    (SCALE_SPEC, "DEPLOYED", lambda d, s: updater.scale_or_canary_step(CURRENT, s, d, True)),
    (CANCEL_SPEC, "CANCELED", lambda d, s: updater.cancel_step_destroy_then_scale(CURRENT, s, d, True)),
])
def test_a_superseded_deployment_skips_execution(source, superseded, step) -> None:
    """scale_spec.rb and cancel_spec.rb, 'deployment got superseded' / 'skips execution':
    the dispatcher's snapshot said DEPLOYING or CANCELING, but under the lock the
    deployment is superseded, so the step writes nothing."""
    before = from_observation(app([proc(0, 6), proc(1, 3), proc(2, 1)],
                                  [dep(0, 1, superseded, "FINALIZED", "SUPERSEDED"), dep(1, 2)]))
    assert step(before.deployments[0], before) == before, source


def test_capi_safe_canary_plan_is_the_plain_split() -> None:
    """capi-safe's change (4): canary + original = N, canary <= N."""
    assert canary.step_plan_without_extra(3, None, (50,)) == ((2, 1),)
    assert canary.step_plan_without_extra(1, None, (80, 100)) == ((1, 0), (1, 0))
    assert canary.step_plan_without_extra(0, None, ()) == ((0, 0),)
    assert canary.step_plan_without_extra(6, None, ()) == ((1, 5),)


def test_the_stale_down_scaler_destroys_an_interim_it_passes_and_revives_a_zeroed_one():
    """``DownScaler#scale_down`` over the copies read before the clean-up: an interim
    it takes to 0 is destroyed whatever the clean-up did; a count it writes that
    differs from its copy lands over the clean-up's 0 (save_changes)."""
    from deployspec.reference.capi import from_observation
    from deployspec.reference.capi.scaling import scale_down_with_stale_counts

    before = from_observation(app([proc(0, 2), proc(1, 0), proc(2, 3), proc(3, 0)],
                                  [canceled_superseded(0, 2), dep(1, 3)]))
    cleaned = before.with_process(before.process(2).scaled_to(0))  # ScaleDownCanceledProcesses
    read = [before.process(0), before.process(1), before.process(2)]
    # reduce = 5 - 1 = 4: P0 (2) to 0, kept (the original); P1 (0) passed: an interim, destroyed;
    # P2 absorbs the rest: 3 - 2 = 1 written over the 0
    after = scale_down_with_stale_counts(cleaned, read, keep=1)
    assert {p.id: p.desired for p in after.processes} == {0: 0, 2: 1, 3: 0}


def test_a_late_scale_step_is_one_of_a_deployment_rolling_out_not_of_a_canary_about_to_pause():
    """``tick(late=…)`` defers a DEPLOYING deployment's scale step past the dispatcher's
    snapshot (capi-2022's window); a PREPAUSED canary's step is not deferred by it: the
    tick is the plain tick, nothing left pending (a replayed or contract trace may hold it,
    though the search offers it for DEPLOYING deployments only)."""
    v = VARIANTS["capi-current"]
    state = from_observation(app([proc(0, 2), proc(1, 1)],
                                 [dep(0, 1, "PREPAUSED", strategy="canary", canary_step=1)]))
    late = v.step(state, Tick(late=(0,)))
    assert late == v.step(state, Tick()) and late.pending == ()
    assert observe(late)["deployments"][0]["state"] == "PAUSED"
