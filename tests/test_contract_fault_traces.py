"""An implementation's fault saved as a trace (``contract --out``) and replayed on it:
the fault comes back (exit 3) until it is fixed (exit 0), as a violation's trace does."""

from __future__ import annotations

import json
import re
from pathlib import Path
from xml.etree import ElementTree

import pytest

from deployspec import traces
from deployspec.contract import faults
from deployspec.contract.guard import NOT_DETERMINISTIC

from .cli_runs import SEED, run, valid_json_output


@pytest.fixture(autouse=True)
def _fakes_importable(monkeypatch):
    monkeypatch.chdir(Path(__file__).parent)  # --python finds contract_fakes in the current folder


def _saved(out: str) -> str:
    """The file the text report names (stdout: the fault's line on stderr stays one line)."""
    (path,) = re.findall(r"^saved: (\S+) \(the steps that led to the fault\); replay: ", out, re.MULTILINE)
    return path


def test_a_crash_is_saved_and_replays_until_fixed(capsys, tmp_path):
    """``raising`` raises at every deploy: the first deploy of a run is its fault."""
    status, out, err = run(capsys, "contract", "--python", "contract_fakes:raising", "--model", "capi",
                           "--examples", "5", "--out", str(tmp_path))
    assert status == 3 and len(err.strip().splitlines()) == 1  # the fault's line alone
    path = _saved(out)
    assert Path(path).name.startswith("implementation--fault--")
    # the replay line names the file and the implementation, as a violation's does
    assert f"replay: deployspec replay {path} --python contract_fakes:raising" in out
    trace = traces.load(path)  # (validated: a fault trace is a trace)
    assert trace["fault"]["action"]["type"] == "deploy"
    assert trace["fault"]["cause"].startswith("perform() raised KeyError")
    assert trace["violation"]["step"] == len(trace["steps"]) - 1
    assert all(s["action"]["type"] != "deploy" for s in trace["steps"])  # the deploy is the fault's, last
    # the same implementation fails at the same step again: exit 3
    status, out, err = run(capsys, "replay", path, "--python", "contract_fakes:raising")
    assert status == 3 and out == ""
    assert f"at step {len(trace['steps'])} (deploy())" in err and "KeyError" in err
    # a fixed one answers it: exit 0, said as the fault not coming back
    status, out, _ = run(capsys, "replay", path, "--python", "deployspec.contract.examples:capi_safe")
    assert status == 0
    assert f"no fault: --python 'deployspec.contract.examples:capi_safe' answered step {len(trace['steps'])} " \
           "(deploy())" in out
    # and on a reference design too
    status, out, _ = run(capsys, "replay", path, "--variant", "capi-safe")
    assert status == 0 and "no fault: capi-safe answered" in out


def test_a_fault_replayed_where_the_check_then_breaks_fails(capsys, tmp_path):
    """The seed trace made a fault trace (its last step the action an implementation
    failed at): replayed on capi-2022, that action breaks the property: exit 1, said as a
    violation once the fault did not come back."""
    seed = traces.load(SEED)
    *steps, last = seed["steps"]
    trace = traces.of_fault(model="capi", variant="mine", config=seed["config"], property=seed["property"],
                            seed=0, led_to={"initial": seed["initial"], "steps": steps, "action": last["action"]},
                            where=f"step {len(steps)} (tick())", cause="perform() raised KeyError: 'd'",
                            message="implementation fault at …", extra={"implementation": {"python": "m:f"}})
    path = traces.save(trace, tmp_path)
    assert path.name.startswith("mine--fault--")
    status, out, _ = run(capsys, "replay", str(path), "--variant", "capi-2022")
    assert status == 1
    assert f"no fault: capi-2022 answered step {len(steps)} (tick()), but app_stays_available is violated " \
           f"at step {len(steps)}" in out
    status, out, _ = run(capsys, "replay", str(path), "--variant", "capi-safe")
    assert status == 0 and "no fault: capi-safe answered step 5 (tick()) and app_stays_available holds" in out


def test_the_json_document_names_the_saved_file(capsys, tmp_path):
    status, out, _ = run(capsys, "contract", "--python", "contract_fakes:raising", "--model", "capi",
                         "--examples", "5", "--out", str(tmp_path), "--json")
    doc = valid_json_output(json.loads(out))
    assert status == 3 and doc["fault"]["counterexample"].startswith(str(tmp_path))
    assert traces.load(doc["fault"]["counterexample"])["fault"]["cause"] == doc["fault"]["cause"]


def test_without_out_the_run_says_how_to_save_it(capsys):
    status, out, _ = run(capsys, "contract", "--python", "contract_fakes:raising", "--model", "capi",
                         "--examples", "5")
    assert status == 3
    assert out.endswith("\n(use --out DIR to save the steps that led to the fault, to replay them)\n")


def test_a_fault_at_no_step_saves_nothing(capsys, tmp_path):
    """A program that answers no reset failed at start: there are no steps to replay."""
    status, out, _ = run(capsys, "contract", "--exec", "echo garbage", "--model", "capi",
                         "--out", str(tmp_path / "out"))
    assert status == 3
    assert "saved:" not in out and "use --out" not in out
    assert not list((tmp_path / "out").glob("*.json"))


def test_a_fault_trace_shows_its_failing_action(capsys, tmp_path):
    run(capsys, "contract", "--python", "contract_fakes:raising", "--model", "capi", "--examples", "5",
        "--out", str(tmp_path))
    (path,) = tmp_path.glob("*--fault--*.json")
    n = len(traces.load(path)["steps"])
    status, out, _ = run(capsys, "show", str(path))
    assert status == 0
    lines = out.splitlines()
    assert lines[0].startswith("capi / implementation: implementation fault while checking ")
    assert lines[-1].startswith(f">>{n:>3}  deploy()  FAULT: perform() raised KeyError")
    assert not any(line.startswith(">>") for line in lines[:-1])  # no step before it is marked
    status, out, _ = run(capsys, "show", str(path), "--format", "html")
    assert status == 0 and f"<td>{n}</td><td>deploy()</td><td colspan=\"2\">FAULT: " in out
    assert "violated</title>" not in out
    status, out, _ = run(capsys, "show", str(path), "--format", "itf")
    assert json.loads(out)["#meta"]["description"].startswith("implementation fault at step")


@pytest.mark.parametrize(("change", "said"), [
    (lambda t: t["violation"].update(step=len(t["steps"])), "a fault trace's is its last step"),
    (lambda t: t.update(settle_from=0), "a fault trace replays every step as recorded"),
    (lambda t: t["fault"].update(action={"type": "launch"}), "fault/action:"),
    (lambda t: t["fault"].pop("cause"), "not a deployspec trace (fault: "),
])
def test_a_damaged_fault_trace_is_refused(capsys, tmp_path, change, said):
    run(capsys, "contract", "--python", "contract_fakes:raising", "--model", "capi", "--examples", "5",
        "--out", str(tmp_path))
    (path,) = tmp_path.glob("*--fault--*.json")
    trace = json.loads(path.read_text())
    change(trace)
    damaged = tmp_path / "damaged.json"
    damaged.write_text(json.dumps(trace))
    status, _, err = run(capsys, "replay", str(damaged), "--variant", "capi-safe")
    assert status == 2 and said in err and len(err.strip().splitlines()) == 1


def test_an_answer_that_differs_is_asked_twice_on_replay(capsys, tmp_path):
    """``moody`` is capi-2022 after odd resets and capi-safe after even ones: one run of the
    steps cannot show that; the replay asks them twice, and the fault comes back."""
    status, out, err = run(capsys, "contract", "--python", "contract_fakes:moody", "--model", "capi",
                           "--examples", "20", "--out", str(tmp_path))
    assert status == 3 and NOT_DETERMINISTIC in err
    path = _saved(out)
    trace = traces.load(path)
    assert faults.repeats(trace) == 2
    status, _, err = run(capsys, "replay", path, "--python", "contract_fakes:moody")
    assert status == 3 and NOT_DETERMINISTIC in err
    # a deterministic implementation gives the same answers both times
    status, out, _ = run(capsys, "replay", path, "--python", "deployspec.contract.examples:capi_safe")
    assert status == 0 and "no fault:" in out


def test_only_a_differing_answer_is_asked_twice():
    trace = {"fault": {"action": {"type": "deploy"}, "where": "step 0 (deploy())", "cause": "perform() raised"}}
    assert faults.repeats(trace) == 1
    assert faults.repeats({}) == 1


def test_the_junit_case_of_the_fault_names_the_saved_file(capsys, tmp_path):
    report = tmp_path / "report.xml"
    status, out, _ = run(capsys, "contract", "--python", "contract_fakes:raising", "--model", "capi",
                         "--examples", "5", "--out", str(tmp_path / "found"), "--junit", str(report))
    assert status == 3
    path = _saved(out)
    (error,) = ElementTree.parse(report).getroot().iter("error")
    assert f"\nsaved: {path} (the steps that led to the fault); replay: deployspec replay {path} " in error.text
