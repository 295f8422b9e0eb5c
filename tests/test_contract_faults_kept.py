"""What a run found before an implementation fault is kept: its violations are reported and saved."""

from __future__ import annotations

import json
import sys

from deployspec import traces
from deployspec.cli import main
from deployspec.contract import harness
from deployspec.models import get_model

from .fault_runs import fake


def test_counterexamples_found_before_a_fault_are_kept(tmp_path):
    """capi-2022 breaks single_active_deployment; then the next check's first reset fails."""
    from deployspec.contract import examples

    state = {"broken": False}

    class BreaksLater(examples.ReferenceImplementation):
        def reset(self, config):
            if state["broken"]:
                raise OSError("disk full")
            super().reset(config)

    sys.modules[__name__].breaks_later = lambda: BreaksLater("capi", "capi-2022")
    run = harness.run(get_model("capi"), harness.Target("python", f"{__name__}:breaks_later"),
                      properties=["single_active_deployment", "app_stays_available"],
                      max_examples=10, seed=2, out_dir=str(tmp_path),
                      on_result=lambda r: state.update(broken=True))
    assert run.exit_status == 3
    assert run.fault.line() == ("implementation fault at reset while checking app_stays_available: "
                                "reset() raised OSError: disk full")
    (result,) = run.results
    assert result.verdict == "violated"
    assert traces.load(result.counterexample)["property"] == "single_active_deployment"


def test_a_violation_seen_before_a_crash_while_shrinking_is_kept(capsys, tmp_path):
    """capi-2022 behind the protocol, crashing at its 150th action: while
    Hypothesis shrinks the violation it found. The fault ends the run (exit 3);
    the violation is reported and saved all the same, as it was found."""
    status = main(["contract", "--exec", fake("crash", tmp_path / "pids", variant="capi-2022", at=150),
                   "--model", "capi", "--timeout", "2", "--examples", "20", "--seed", "0",
                   "--property", "single_active_deployment", "--out", str(tmp_path / "found"), "--json"])
    out = json.loads(capsys.readouterr().out)
    assert status == 3 and "exited with status 1" in out["fault"]["cause"]
    (found,) = out["results"]
    assert found["verdict"] == "violated"
    trace = traces.load(found["counterexample"])
    assert trace["property"] == "single_active_deployment" and len(trace["steps"]) == found["trace_length"]
