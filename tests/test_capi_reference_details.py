"""Details of the capi reference designs that no committed counterexample or property
verdict pins: what upstream writes, refuses or keeps in states the model reaches.
Each was found by a hand-made mutant of ``reference/capi`` that the rest of the suite let
through; each test asserts the upstream behaviour (or capi-safe's documented rule) it cites."""

from __future__ import annotations

import pytest
from deployspec.reference.capi import VARIANTS, from_observation, observe
from deployspec.reference.capi.actions import (
    Cancel,
    Continue,
    Deploy,
    Push,
    Runtime,
    Scale,
    Stage,
    Tick,
)
from deployspec.reference.capi.state import CapiState

from .helpers import app, dep, proc, run_capi, shape, tick

PRE_CANARY = ["capi-2022", "capi-pr3072", "capi-pr3084"]


def row(d) -> tuple[str, str, str]:
    return d.state, d.status_value, d.status_reason


# --- user actions ----------------------------------------------------------


@pytest.mark.parametrize("variant", sorted(VARIANTS))
def test_cancel_writes_canceling_active_canceling(variant):
    """``DeploymentCancel.cancel`` (app/actions/deployment_cancel.rb): the deployment is
    updated to state CANCELING, status value ACTIVE, status reason CANCELING."""
    state = run_capi(variant, [Push(1), Runtime(0), Stage(), Deploy(), Cancel()])
    assert row(state.deployments[0]) == ("CANCELING", "ACTIVE", "CANCELING")


@pytest.mark.parametrize("variant", PRE_CANARY)
def test_before_pr_3907_a_deployment_takes_no_max_in_flight(variant):
    """max_in_flight came with PR #3907 (2024): the designs before it deploy one instance at
    a time and refuse the option, so a deployment never records another in-flight bound."""
    state = run_capi(variant, [Push(2), Runtime(0), Runtime(0)])
    refused = VARIANTS[variant].step(state, Deploy(max_in_flight=2))
    assert "max_in_flight" in getattr(refused, "reason", "")
    assert VARIANTS["capi-current"].step(state, Deploy(max_in_flight=2)).deployments[0].max_in_flight == 2


def test_a_canary_starts_at_step_one_and_continue_walks_the_steps_once_each():
    """DeploymentCreate's ``before_create`` sets ``canary_current_step`` to 1 (PR #4219,
    78d93d458d); DeploymentContinue moves a PAUSED canary to the next step (PREPAUSED) and,
    after the last one, to DEPLOYING: two steps take two continues, not three."""
    v = VARIANTS["capi-current"]
    state = run_capi("capi-current", [Push(2), Runtime(0), Runtime(0), Deploy(strategy="canary", canary_steps=(50, 100))])
    assert (state.deployments[0].state, state.deployments[0].canary_step) == ("PREPAUSED", 1)

    def to_pause(state):
        for _ in range(10):
            if state.deployments[0].state == "PAUSED":
                return state
            for p in state.processes:
                while "STARTING" in p.instances:
                    state = v.step(state, Runtime(p.id))
                    p = state.process(p.id)
            state = v.step(state, Tick())
        raise AssertionError(f"the canary step did not end PAUSED: {state.deployments[0]}")

    state = v.step(to_pause(state), Continue())
    assert (state.deployments[0].state, state.deployments[0].canary_step) == ("PREPAUSED", 2)
    state = v.step(to_pause(state), Continue())
    assert state.deployments[0].state == "DEPLOYING"


# --- the historic scale step (updater.rb at 4528366a and 545fb700) -----------


@pytest.mark.parametrize("variant", PRE_CANARY)
def test_an_unavailable_instance_report_is_not_ready(variant):
    """``scale_deployment`` asks Diego whether every deploying instance runs; a report
    failure (InstancesUnavailable, re-raised as ApiError) counts as not ready: nothing moves."""
    obs = app([proc(0, 6), proc(1, 1)], [dep(0, "DEPLOYING", "DEPLOYING", 1, 6)])
    assert tick(variant, obs, reports_unavailable=(0,)) == observe(from_observation(obs))
    assert shape(tick(variant, obs)) == {0: 5, 1: 2}


@pytest.mark.parametrize("variant", PRE_CANARY)
def test_an_interim_donor_at_its_last_instance_is_destroyed(variant):
    """``scale_deployment`` before 2024 (shared/domain/capi.md, design 1; updater.rb at
    4528366a and 545fb700): the donor is the oldest web process with instances; an interim
    one taken to 0 is destroyed (only the app's oldest web process is kept at 0)."""
    obs = app([proc(0, 0), proc(1, 1), proc(2, 2)],
              [dep(0, "DEPLOYED", "SUPERSEDED", 1, 6), dep(1, "DEPLOYING", "DEPLOYING", 2, 6)])
    assert shape(tick(variant, obs)) == {0: 0, 2: 3}


# --- today's scale action (3bbba90) ------------------------------------------


def test_an_unhealthy_deploying_instance_blocks_up_scaling():
    """``UpScaler#can_scale?`` (3bbba90, up_scaler.rb): nothing unhealthy among the deploying instances, even with
    room in flight; the down-scaler still keeps ``old + routable new = T``."""
    obs = app([proc(0, 5), proc(1, 2, running=1, crashed=1)],
              [dep(0, "DEPLOYING", "DEPLOYING", 1, 6, max_in_flight=2)])
    assert shape(tick("capi-current", obs)) == {0: 5, 1: 2}
    healthy = app([proc(0, 5), proc(1, 2, running=1, starting=1)],
                  [dep(0, "DEPLOYING", "DEPLOYING", 1, 6, max_in_flight=2)])
    assert shape(tick("capi-current", healthy)) == {0: 5, 1: 3}


def test_finalize_after_the_commit_destroys_only_what_the_step_listed_when_it_zeroed_the_original():
    """[reading] 3bbba90 ``updater.rb``/``actions/finalize.rb``: a step whose down-scaler takes
    the oldest web process to 0 (exactly its instances) loads the app's web processes there,
    and the Finalize run after the commit destroys those, not a process a deployment created
    in between (a step that zeroes nothing lists nothing, and Finalize loads them itself:
    the deployment_converges finding)."""
    state = run_capi("capi-current", [Push(1), Runtime(0), Deploy(), Runtime(1), Tick(finish_later=(0,))])
    assert {p.id: p.desired for p in state.processes} == {0: 0, 1: 1}
    state = run_capi("capi-current", [Deploy(), Tick()], state)
    assert [p.id for p in state.processes] == [1, 2]
    assert row(state.deployments[0]) == ("DEPLOYED", "FINALIZED", "DEPLOYED")
    assert state.deployments[1].deploying_process == 2


@pytest.mark.parametrize("variant", PRE_CANARY)
def test_a_degenerate_deployment_is_chosen_by_its_status_value_not_its_state(variant):
    """``Dispatcher#finalize_degenerate_deployments`` (dispatcher.rb at 4528366a) selects the
    rows with status value ACTIVE whose deploying process is gone. A row whose state still
    reads active but whose status value is FINALIZED is left alone, and one with status
    value ACTIVE is finalized whatever its state (no design here writes the two apart: the
    rule as upstream wrote it)."""
    final = app([proc(0, 1)], [dep(0, "DEPLOYING", "DEPLOYING", 5, 1, value="FINALIZED")])
    assert tick(variant, final)["deployments"][0]["status_reason"] == "DEPLOYING"
    active = app([proc(0, 1)], [dep(0, "DEPLOYED", "DEPLOYED", 5, 1, value="ACTIVE")])
    assert [tick(variant, active)["deployments"][0][k] for k in ("state", "status_value", "status_reason")] == [
        "DEPLOYED", "FINALIZED", "DEGENERATE"]


#: capi-current, plain ticks: D1 finishes but Finalize stops on P1 (the interim the step
#: destroyed), so D1 stays DEPLOYING with P2 alone; cancel; a new deployment supersedes it
#: (D1 CANCELED/SUPERSEDED, P2 its process and now the app's oldest); P3 grows
ZEROED_ORIGINAL = [Push(1), Runtime(0), Stage(), Deploy(), Stage(), Deploy(), Runtime(2), Tick(), Cancel(),
                   Deploy(new_droplet=True), Tick(), Runtime(3)]


def test_an_oldest_process_the_clean_up_zeroed_is_destroyed_as_an_interim():
    """[reading] 3bbba90 ``actions/scale_down_old_process.rb``: "the original" is
    ``process == app.oldest_web_process``, and Sequel's ``Model#==`` compares every value.
    The down-scaler's copy of P2 was read before ``ScaleDownCanceledProcesses`` zeroed it,
    the app's list after, so the two differ and P2 is destroyed, not kept at 0. Finalize,
    over the list loaded there, then stops on the row already gone: D2 stays DEPLOYING,
    a cancel is taken, a scale refused; the cancel then keeps P3 on the new droplet."""
    state = run_capi("capi-current", ZEROED_ORIGINAL)
    assert {p.id: p.desired for p in state.processes} == {2: 1, 3: 1}
    assert row(state.deployments[1]) == ("CANCELED", "FINALIZED", "SUPERSEDED")
    state = run_capi("capi-current", [Tick()], state)
    assert [p.id for p in state.processes] == [3]  # P2 destroyed (the model kept it at 0, then finalized)
    assert row(state.deployments[2]) == ("DEPLOYING", "ACTIVE", "DEPLOYING")
    assert VARIANTS["capi-current"].step(state, Scale(2)).__class__ is not CapiState  # refused while DEPLOYING
    state = run_capi("capi-current", [Cancel(), Tick()], state)
    assert [(p.id, p.droplet) for p in state.processes] == [(3, 3)] and state.app.droplet == 2


def test_an_oldest_process_the_clean_up_left_alone_stays_at_zero():
    """The same comparison when the clean-up wrote nothing to the oldest process: its copy
    and the app's agree, so it is the original and stays, at 0 (here P0, while the
    clean-up zeroes P1, the process of a canceled, superseded deployment; Finalize left for
    later, so the step's own result shows)."""
    state = run_capi("capi-current", [Push(1), Runtime(0), Stage(), Deploy(), Cancel(), Stage(), Deploy(new_droplet=True),
                                 Runtime(2), Tick(finish_later=(1,))])
    assert {p.id: p.desired for p in state.processes} == {0: 0, 2: 1}
    assert row(state.deployments[0]) == ("CANCELED", "FINALIZED", "SUPERSEDED")
    state = run_capi("capi-current", [Tick()], state)  # the finish: Finalize over the list, P0 there
    assert [p.id for p in state.processes] == [2]
    assert row(state.deployments[1]) == ("DEPLOYED", "FINALIZED", "DEPLOYED")


# --- capi-safe's documented rules ---------------------------------------------


def test_capi_safe_rolls_back_with_the_deployments_max_in_flight():
    """capi-safe (1): the prior process is scaled up by at most max_in_flight in flight, the
    canceled deployment's own bound, not one at a time."""
    obs = app([proc(0, 2), proc(1, 0)], [dep(0, "CANCELING", "CANCELING", 1, 6, max_in_flight=2)])
    assert shape(tick("capi-safe", obs)) == {0: 4, 1: 0}


def test_capi_safe_scales_a_canceled_superseded_process_down_with_the_others():
    """capi-safe (3): the serving process of a deployment canceled by being superseded is not
    zeroed at once (PR #3072's clean-up); it gives up instances with the other older
    processes, oldest first, as the new process becomes routable."""
    state = run_capi("capi-safe", [Push(2), Runtime(0), Runtime(0), Deploy(), Runtime(1), Tick(), Runtime(1),
                              Cancel(), Deploy()])
    assert [row(d)[0] for d in state.deployments] == ["CANCELED", "DEPLOYING"]
    assert {p.id: p.desired for p in state.processes} == {0: 1, 1: 2, 2: 0}
    state = run_capi("capi-safe", [Tick()], state)
    assert {p.id: p.desired for p in state.processes} == {0: 0, 1: 2, 2: 1}
    assert state.process(1).instances == ("RUNNING", "RUNNING")


def test_capi_safe_gives_way_to_the_newest_serving_process():
    """capi-safe (6): a prior whose instances crash gives way to the newest web process
    with a routable instance."""
    from deployspec.reference.capi import rules

    obs = app([proc(0, 1, running=0, crashed=1), proc(1, 1), proc(2, 1)],
              [dep(0, "CANCELED", "SUPERSEDED", 1, 1), dep(1, "CANCELING", "CANCELING", 2, 1)])
    state = from_observation(obs)
    assert rules.running_interim_or_oldest_that_can_serve(state, state.deployments[1], True).id == 2


# --- the platform and observations ---------------------------------------------


def test_runtime_settles_the_lowest_index_starting_instance():
    """The ``runtime`` action (actions.py): the lowest-index STARTING instance settles, so a
    later scale-down (which stops the highest indices, as Diego does) stops one that starts."""
    state = run_capi("capi-current", [Push(2), Runtime(0)])
    assert state.process(0).instances == ("RUNNING", "STARTING")


def test_a_state_built_from_an_observation_never_reuses_a_gone_process_id():
    """Process ids are the creation order and never reused: a deployment naming a deploying
    process that is gone (destroyed by another's Finalize) keeps its id taken."""
    obs = app([proc(0, 1), proc(1, 1)],
              [dep(0, "DEPLOYED", "DEPLOYED", 1, 1), dep(1, "DEPLOYING", "DEPLOYING", 2, 1)])
    state = from_observation(obs)
    assert state.next_process_id == 3


def test_a_step_past_its_target_with_no_old_instances_left_scales_nothing_down():
    """``DownScaler``: old processes keep ``max(T - routable, 0)`` instances, so a deploying
    process already past its target (a canary continued on an app scaled to 0) with no old
    instances left takes nothing down, and ``ScaleDownOldProcess`` never loads the web
    processes: the Finalize after the commit loads them itself, and a deployment created
    in between loses its new process (the deployment_converges finding, 3bbba90)."""
    from deployspec.reference.capi.actions import Scale

    state = run_capi("capi-current", [Push(1), Runtime(0), Scale(0), Deploy(strategy="canary"), Runtime(1), Tick(),
                                 Continue(), Tick(finish_later=(0,))])
    assert {p.id: p.desired for p in state.processes} == {0: 0, 1: 1}
    state = run_capi("capi-current", [Deploy(), Tick()], state)
    assert [p.id for p in state.processes] == [1]
    assert row(state.deployments[1]) == ("DEPLOYING", "ACTIVE", "DEPLOYING")
