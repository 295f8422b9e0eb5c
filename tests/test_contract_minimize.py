"""A trace found on an implementation is shortened by replay on that implementation.

Hypothesis shrinks the choices it drew; the steps it leaves that do not matter
(and the probes it cannot delete, see ``machine._probe``) go by replaying the
trace less one or two steps on the implementation (``minimize`` with
``replay_on``), sending only what the search could have sent at each point. A
fault on a shorter replay is then the implementation's: the run reports it, and
keeps the violation found and the smallest trace so far.
"""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from deployspec import traces
from deployspec.cli import main
from deployspec.contract import harness
from deployspec.contract.guard import ImplementationFault
from deployspec.minimize import CannotReplay, minimize
from deployspec.models import get_model
from deployspec.replay import replay

SEED = Path(__file__).parent.parent / "counterexamples" / "capi" / "capi-2022--app_stays_available--a940739cf1.json"


@pytest.fixture
def beside_the_fakes(monkeypatch):
    """``--python contract_fakes:…`` finds the module in the current directory."""
    monkeypatch.setattr(sys, "path", list(sys.path))
    monkeypatch.chdir(Path(__file__).parent)


def _found(model: str, factory: str, reference: str, seed: int = 0, out_dir=None):
    run = harness.run(get_model(model), harness.Target("python", f"contract_fakes:{factory}"),
                      reference=reference, properties=[f"conforms_to_{reference}"], max_examples=100,
                      seed=seed, out_dir=out_dir)
    assert run.fault is None, run.fault.line()
    (r,) = run.results
    assert r.verdict == "violated", r.stats
    return r


@pytest.mark.parametrize("model, factory, reference", [
    # Hypothesis alone left 11 steps here (8 pushes; seed 0), and 2 for accepts_refused_cancel
    ("slots", "slots_refuses_no_op_crash_retry", "slots-pipeline-immutable"),
    ("capi", "accepts_refused_cancel", "capi-safe"),
    ("capi", "refuses_no_op_cancel", "capi-safe"),
    ("capi", "ignores_failed_steps", "capi-safe"),
])
def test_no_step_of_a_found_trace_can_go(beside_the_fakes, model, factory, reference):
    r = _found(model, factory, reference)
    trace = r.trace
    assert trace["extra"]["minimized_by_replay"] is True  # found by the sweep or by the search
    assert r.trace_length == len(trace["steps"])
    actions = [s["action"] for s in trace["steps"]]
    m = get_model(model)
    for i in range(len(actions)):
        shorter = dict(trace, steps=[{"action": a} for a in actions[:i] + actions[i + 1:]],
                       settle_from=len(actions) - 1)
        impl = harness.Connection(harness.Target("python", f"contract_fakes:{factory}"), m)
        with impl:
            assert not replay(shorter, adapter=impl.adapter()).reproduced, f"step {i} can go"


def test_shortening_sends_only_what_the_search_could_have_sent(beside_the_fakes):
    """Removing a deploy leaves ``runtime(P1)`` naming a process that is not there;
    ``strict_about_ids`` raises on such a request (so a run that sent it would end in
    a fault, exit 3). Every property it breaks is reported, shortened, without one."""
    run = harness.run(get_model("capi"), harness.Target("python", "contract_fakes:strict_about_ids"),
                      properties=["app_stays_available", "deployment_converges", "single_active_deployment"],
                      max_examples=100, seed=0)
    assert run.fault is None, run.fault.line()
    assert [r.verdict for r in run.results] == ["violated"] * 3
    assert all(r.trace["extra"]["minimized_by_replay"] is True for r in run.results)


def test_a_fault_while_shortening_is_reported_and_the_violation_kept(beside_the_fakes, monkeypatch, tmp_path):
    calls = []
    real = harness.replay

    def fails_on_the_second(trace, **kwargs):
        calls.append(len(trace["steps"]))
        if len(calls) == 2:
            raise ImplementationFault("it crashed", where="step 0 (push(instances=1))", checking="x")
        return real(trace, **kwargs)

    monkeypatch.setattr(harness, "replay", fails_on_the_second)
    run = harness.run(get_model("capi"), harness.Target("python", "contract_fakes:refuses_idle_ticks"),
                      reference="capi-safe", properties=["conforms_to_capi-safe"], max_examples=100,
                      out_dir=str(tmp_path))
    assert len(calls) == 2
    assert run.fault is not None and "it crashed" in run.fault.line()
    assert run.exit_status == harness.FAULT
    (r,) = run.results
    assert r.verdict == "violated" and r.counterexample
    saved = traces.load(r.counterexample)
    assert len(saved["steps"]) == calls[0]  # the trace found, as the first (full) replay saw it
    assert saved["extra"]["minimized_by_replay"] == (
        "stopped early: implementation fault at step 0 (push(instances=1)) while checking x: it crashed")
    assert saved["extra"]["implementation"]["python"] == "contract_fakes:refuses_idle_ticks"


def test_the_cli_shows_the_violation_then_the_fault(beside_the_fakes, monkeypatch, tmp_path, capsys):
    calls = []
    real = harness.replay

    def fails_on_the_second(trace, **kwargs):
        calls.append(1)
        if len(calls) == 2:
            raise ImplementationFault("it crashed", where="step 1 (tick())")
        return real(trace, **kwargs)

    monkeypatch.setattr(harness, "replay", fails_on_the_second)
    status = main(["contract", "--python", "contract_fakes:refuses_idle_ticks", "--model", "capi",
                   "--reference", "capi-safe", "--examples", "30", "--out", str(tmp_path)])
    out, err = capsys.readouterr()
    assert status == 3
    assert "conforms_to_capi-safe violated (engine contract" in out and "saved: " in out
    assert "FAULT" in out
    assert "deployspec: implementation fault at step 1 (tick()): it crashed" in err.splitlines()
    assert len(list(tmp_path.glob("implementation--conforms_to_capi-safe--*.json"))) == 1


def _padded() -> dict:
    """The seed counterexample after three ticks before the push (each refused: no app)."""
    trace = traces.load(SEED)
    tick = {"action": {"type": "tick", "failed": [], "reports_unavailable": []}}
    steps = [tick] * 3 + trace["steps"][: trace["settle_from"]]
    padded = dict(trace, settle_from=len(steps), steps=steps)
    assert replay(padded).reproduced
    return padded


def test_minimize_keeps_the_smallest_trace_found_when_replay_cannot_go_on():
    padded = _padded()
    attempts = []

    def gives_up_after_five(candidate):
        attempts.append(len(candidate["steps"]))
        if len(attempts) > 5:
            raise CannotReplay("the implementation failed")
        return replay(candidate)

    smaller = minimize(padded, gives_up_after_five)
    assert len(attempts) == 6
    assert 0 < len(smaller["steps"][: smaller["settle_from"]]) < len(padded["steps"])
    assert smaller["extra"]["minimized_by_replay"] == "stopped early: the implementation failed"
    assert replay(smaller).reproduced
    # the first replay cannot go on: the trace is kept as it is

    def fails_at_once(candidate):
        raise CannotReplay("no")

    assert minimize(padded, fails_at_once) is padded


def test_minimize_stops_at_its_deadline():
    padded = _padded()
    attempts = []

    def counted(candidate):
        attempts.append(1)
        return replay(candidate)

    same = minimize(padded, counted, seconds=0)
    assert len(attempts) == 1  # the full trace only
    assert len(same["steps"][: same["settle_from"]]) == len(padded["steps"])
    assert same["extra"]["minimized_by_replay"] == "stopped early: out of time"
    smaller = minimize(padded, seconds=None)
    assert len(smaller["steps"][: smaller["settle_from"]]) == len(padded["steps"]) - 3
