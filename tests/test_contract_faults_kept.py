"""What a run found before an implementation fault is kept: its violations are reported and saved."""

from __future__ import annotations

import json
import re
import shlex
import sys

from deployspec import traces
from deployspec.cli import main
from deployspec.contract import harness
from deployspec.models import get_model

from .cli_runs import valid_json_output
from .fault_runs import FAKES, fake


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
                                "reset() raised OSError: disk full at test_contract_faults_kept.py:28")
    (result,) = run.results
    assert result.verdict == "violated"
    assert traces.load(result.counterexample)["property"] == "single_active_deployment"


def test_a_violation_seen_before_a_crash_while_shrinking_is_kept(capsys, tmp_path):
    """capi-2022 behind the protocol, crashing at its 150th action: while
    Hypothesis shrinks the violation it found (seen in example 3, the crash in example 6;
    single_active_deployment breaks in the first example, and its shrinking asks the
    implementation for nothing new). The fault ends the run (exit 3); the violation is
    reported and saved all the same, as it was found."""
    status = main(["contract", "--exec", fake("crash", tmp_path / "pids", variant="capi-2022", at=150),
                   "--model", "capi", "--timeout", "2", "--examples", "20", "--seed", "0",
                   "--property", "app_stays_available", "--out", str(tmp_path / "found"), "--json"])
    out = json.loads(capsys.readouterr().out)
    assert status == 3 and "exited with status 1" in out["fault"]["cause"]
    (found,) = out["results"]
    assert found["verdict"] == "violated"
    trace = traces.load(found["counterexample"])
    assert trace["property"] == "app_stays_available" and len(trace["steps"]) == found["trace_length"]
    assert found["stats"]["shrunk"] is False and trace["extra"]["shrunk"] is False  # the file says so too
    # the text report marks the trace it shows as not shrunk (and the summary says FAULT)
    status = main(["contract", "--exec", fake("crash", tmp_path / "pids", variant="capi-2022", at=150),
                   "--model", "capi", "--timeout", "2", "--examples", "20", "--seed", "0",
                   "--property", "app_stays_available"])
    out = capsys.readouterr().out.splitlines()
    assert status == 3
    assert out[out.index(harness.NOT_SHRUNK) - 1].startswith(">> ")  # right under the trace's last step


def test_a_repeat_that_answers_otherwise_is_a_fault_at_that_step_and_the_violation_before_it_kept(
        capsys, tmp_path):
    """``drifting`` behind the protocol is capi-2022 for its first 40 resets, capi-safe after:
    with seed 0 it breaks app_stays_available, and when the search runs the same steps again
    to shrink it, a step answers otherwise. The fault names that step, what differs and the
    steps since reset (enough to reproduce it by hand); the violation was real: printed and
    saved as it was seen, not shrunk."""
    impl = " ".join(shlex.quote(str(a)) for a in (sys.executable, FAKES, "--serve", "drifting"))
    status = main(["contract", "--exec", impl, "--model", "capi", "--examples", "30", "--seed", "0",
                   "--property", "app_stays_available", "--out", str(tmp_path), "--json"])
    out = valid_json_output(json.loads(capsys.readouterr().out))
    assert status == 3
    fault = out["fault"]
    assert re.fullmatch(r"step \d+ \(.+\)", fault["where"]), fault
    assert fault["cause"].startswith("non-deterministic behaviour: the same steps, run again from a reset, gave "
                                     "a different result: this step observed ")
    assert re.search(r"observed (deployments|processes)\[\d+\]\.\w+: before .+, this time ", fault["cause"]), fault
    # the steps that lead to it, as many as the step's number
    assert len(fault["steps"]) == int(fault["where"].split()[1]) + 1
    (found,) = out["results"]
    assert found["verdict"] == "violated" and found["stats"]["shrunk"] is False
    # the violation as seen, on a capi-2022 reset: the same steps break the property there every time
    assert main(["replay", found["counterexample"], "--variant", "capi-2022"]) == 1


def test_a_violation_the_same_steps_do_not_repeat_is_kept_and_called_non_determinism(
        capsys, tmp_path, monkeypatch):
    """``moody`` behind the protocol is capi-2022 on odd resets, capi-safe on even ones:
    with seed 1 it breaks app_stays_available once, and Hypothesis, running the same
    steps again to shrink it, sees them pass (its "Inconsistent results" or "Inconsistent
    data generation"). The violation was real: it is printed and saved as it was seen
    (not shrunk), and the run exits 3, not 0, with the cause in the user's terms.
    (Past ``FaultBox.REMEMBERED`` runs of steps the guard no longer compares answers, and
    Hypothesis's check of its repeated examples is what notices; here none is remembered.)"""
    from deployspec.contract.guard import FaultBox

    monkeypatch.setattr(FaultBox, "REMEMBERED", 0)
    impl = " ".join(shlex.quote(str(a)) for a in (sys.executable, FAKES, "--serve", "moody"))
    argv = ["contract", "--exec", impl, "--model", "capi", "--examples", "30", "--seed", "1",
            "--property", "app_stays_available"]
    status = main([*argv, "--out", str(tmp_path / "found"), "--json"])
    out = valid_json_output(json.loads(capsys.readouterr().out))
    assert status == 3 and out["exit_status"] == 3
    assert out["fault"]["where"] == "a repeated example"
    cause = out["fault"]["cause"]
    assert cause.startswith("non-deterministic behaviour: the same steps, run again from a reset, gave a "
                            "different result: the implementation is not deterministic")
    assert "Inconsistent" not in cause and "data generation" not in cause
    (found,) = out["results"]
    assert found["verdict"] == "violated" and found["stats"]["shrunk"] is False
    assert found["stats"]["examples"] >= 1 and found["stats"]["seed"] == 1  # the search's, for the summary
    assert found["stats"]["seconds"] > 0  # the progress line, steps/s and the JUnit case's time
    trace = traces.load(found["counterexample"])
    assert trace["extra"]["shrunk"] is False
    assert trace["property"] == "app_stays_available" and len(trace["steps"]) == found["trace_length"]
    # seen on a capi-2022 reset: the same steps break the property there every time
    assert main(["replay", found["counterexample"], "--variant", "capi-2022"]) == 1
    capsys.readouterr()
    # the text report shows it as a violation too, beside the fault; so does a JUnit report,
    # with the fault an error of its own (as the exit status)
    import xml.etree.ElementTree as ET

    report = tmp_path / "r.xml"
    assert main([*argv, "--junit", str(report)]) == 3
    text = capsys.readouterr()
    cases = {c.get("name"): c for c in ET.parse(report).getroot().iter("testcase")}
    assert cases["app_stays_available"].find("failure") is not None
    assert "is not deterministic" in cases["app_stays_available: implementation fault"].find("error").get("message")
    assert "capi / implementation: app_stays_available violated (engine contract, seed 1)" in text.out
    assert "app_stays_available  VIOLATED" in text.out and "app_stays_available  FAULT" in text.out
    assert "is not deterministic" in text.err
    # marked where the trace is shown: not the minimal trace a reader would expect
    assert harness.NOT_SHRUNK in text.out.splitlines()


def test_replaying_traces_of_two_starts_on_one_implementation_is_no_incomplete_reset(capsys):
    """Each file resets with its own configuration (slots: where Terraform leaves the app):
    the initial observations differ by design, and only one reset with the same
    configuration must come back to the first one's."""
    from pathlib import Path

    slots = Path(__file__).parent.parent / "counterexamples" / "slots"
    files = [str(slots / "slots-pipeline-tag--no_latent_drift--e647166d76.json"),  # empty start
             str(slots / "slots-webhook-tag--no_latent_drift--068fa48ff9.json")]  # webhook start
    status = main(["replay", *files, "--python", "deployspec.contract.examples:slots_webhook_tag"])
    out, err = capsys.readouterr()
    assert status == 1 and err == "", err
    assert out.count("reproduces on") == 2


def test_a_replay_a_fault_ends_names_the_files_it_left_unreplayed(capsys):
    """The fault ends the run (exit 3); the files after it were not judged, and stderr
    says which, as the JUnit report skips them (a folder of 17 said nothing of 9)."""
    from pathlib import Path

    capi = Path(__file__).parent.parent / "counterexamples" / "capi"
    files = sorted(str(p) for p in capi.glob("capi-2022--*.json"))[:5]
    status = main(["replay", *files, "--exec", "exit 7"])
    out, err = capsys.readouterr()
    assert status == 3 and out == ""
    lines = err.splitlines()
    assert lines[0].startswith(f"deployspec: {files[0]}: implementation fault at reset")
    assert lines[1] == (f"deployspec: not replayed after the fault: 4 file(s): {files[1]}, {files[2]}, {files[3]} "
                        "and 1 more")
