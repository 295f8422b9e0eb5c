"""deployment_never_resumes: a canceled deployment only ends, and an ended one stays ended
(docs/findings.md, capi-current finding 12; capi-2022's snapshot race)."""

from pathlib import Path

import pytest
from deployspec.spec import capi as spec

from deployspec import traces
from deployspec.replay import replay

from .helpers import app, dep, proc
from .property_traces import DEPLOYING, SERVING, run

CANCELING = app([proc(0, 1), proc(1, 1)], [dep(0, "CANCELING", "CANCELING", 1, 1)])
COUNTEREXAMPLES = Path(__file__).parent.parent / "counterexamples" / "capi"


@pytest.mark.parametrize("state, reason, value", [("DEPLOYED", "DEPLOYED", None), ("PAUSED", "PAUSED", None),
                                                  ("DEPLOYING", "DEPLOYING", None)])
def test_a_canceling_deployment_written_over_is_a_cancel_undone(state, reason, value):
    after = app([proc(1, 1)], [dep(0, state, reason, 1, 1, value)])
    v = run(spec.deployment_never_resumes, [SERVING, DEPLOYING, CANCELING, after],
            [("push", {"instances": 1}), ("deploy", {}), ("cancel", {}), ("tick", {})])
    assert v is not None and v.step == 3 and v.cause == "cancel-undone"
    assert v.message == f"d0 was CANCELING and became {state} at step 3 (tick())"


def test_a_canceling_deployment_cleaned_up_as_degenerate_has_a_cause_of_its_own():
    """capi-2022: the seed's CANCELING deployment, left beside the new one, loses its process
    to the new one's Finalize, and the dispatcher's clean-up writes it DEPLOYED/DEGENERATE: a
    canceled deployment reported deployed, told apart from a cancel a late write undoes."""
    degenerate = app([proc(2, 1)], [dep(0, "DEPLOYED", "DEGENERATE", 1, 1), dep(1, "DEPLOYED", "DEPLOYED", 2, 1)])
    both = app([proc(2, 1)], [dep(0, "CANCELING", "CANCELING", 1, 1), dep(1, "DEPLOYED", "DEPLOYED", 2, 1)])
    v = run(spec.deployment_never_resumes, [SERVING, DEPLOYING, CANCELING, both, degenerate],
            [("push", {"instances": 1}), ("deploy", {}), ("cancel", {}), ("tick", {}), ("tick", {})])
    assert v is not None and (v.step, v.cause) == (4, "cancel-degenerate")


def test_a_cancel_that_ends_or_is_superseded_is_not_judged():
    canceled = app([proc(0, 1)], [dep(0, "CANCELED", "CANCELED", 1, 1)])
    superseded = app([proc(0, 1), proc(1, 1), proc(2, 1, running=0, starting=1)],
                     [dep(0, "CANCELED", "SUPERSEDED", 1, 1), dep(1, "DEPLOYING", "DEPLOYING", 2, 1)])
    steps = [("push", {"instances": 1}), ("deploy", {}), ("cancel", {}), ("tick", {}), ("tick", {})]
    assert run(spec.deployment_never_resumes, [SERVING, DEPLOYING, CANCELING, CANCELING, canceled], steps) is None
    assert run(spec.deployment_never_resumes, [SERVING, DEPLOYING, CANCELING, superseded, superseded],
               [*steps[:3], ("deploy", {}), ("tick", {})]) is None


@pytest.mark.parametrize("was, reason, became", [("CANCELED", "SUPERSEDED", "PAUSED"),
                                                 ("DEPLOYED", "SUPERSEDED", "DEPLOYING"),
                                                 ("DEPLOYED", "DEPLOYED", "CANCELING")])
def test_an_ended_deployment_written_over_is_an_end_undone(was, reason, became):
    """Finding 8's superseded canary PAUSED again; capi-2022's late scale step over a
    superseded deployment; a cancel that would reopen a finished one."""
    ended = app([proc(0, 1), proc(1, 1)], [dep(0, was, reason, 1, 1)])
    resumed = app([proc(0, 1), proc(1, 1)], [dep(0, became, became, 1, 1, "ACTIVE")])
    v = run(spec.deployment_never_resumes, [SERVING, DEPLOYING, ended, resumed],
            [("push", {"instances": 1}), ("deploy", {}), ("tick", {}), ("tick", {})])
    assert v is not None and v.step == 3 and v.cause == "end-undone"
    assert v.message == f"d0 was {was} and became {became} at step 3 (tick())"


def test_a_deployment_in_flight_may_move_on_and_a_new_one_is_not_judged():
    paused = app([proc(0, 1), proc(1, 1)], [dep(0, "PAUSED", "PAUSED", 1, 1, strategy="canary")])
    prepaused = app([proc(0, 1), proc(1, 1)], [dep(0, "PREPAUSED", "DEPLOYING", 1, 1, strategy="canary")])
    deployed = app([proc(1, 1)], [dep(0, "DEPLOYED", "DEPLOYED", 1, 1, strategy="canary")])
    assert run(spec.deployment_never_resumes, [SERVING, prepaused, paused, prepaused, paused, deployed],
               [("push", {"instances": 1}), ("deploy", {"strategy": "canary"}), ("tick", {}),
                ("continue", {}), ("tick", {}), ("tick", {})]) is None


@pytest.mark.parametrize("name, at, became", [
    ("capi-current--deployment_never_resumes--a0f43c7b40.json", 5, "DEPLOYED"),  # Finalize's write
    ("capi-current--deployment_never_resumes--a6cb37a593.json", 7, "PAUSED"),  # the PAUSED write
])
def test_capi_current_overwrites_a_cancel_and_capi_safe_does_not(name, at, became):
    """Finding 12: the write a finished step leaves for after its commit lands on a cancel
    committed since; capi-safe's change (8) writes inside the transaction."""
    trace = traces.load(COUNTEREXAMPLES / name)
    outcome = replay(trace, variant="capi-current")
    assert outcome.reproduced and outcome.violation.step == at
    assert outcome.violation.message == f"d0 was CANCELING and became {became} at step {at} (tick())"
    assert not replay(trace, variant="capi-safe").reproduced
