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
from deployspec.contract.guard import NOT_DETERMINISTIC, ImplementationFault
from deployspec.render_text import action_label

from .cli_runs import SEED, run, valid_json_output


@pytest.fixture(autouse=True)
def _fakes_importable(monkeypatch):
    monkeypatch.chdir(Path(__file__).parent)  # --python finds contract_fakes in the current folder


def _saved(out: str) -> str:
    """The file the text report names (stdout: the fault's line on stderr stays one line)."""
    (path,) = re.findall(r"^saved: (\S+) \((?:the \d+ steps? that led to the fault|the fault at the first step)"
                         r"(?:, shortened from \d+)?\); replay: ", out, re.MULTILINE)
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
    assert trace["steps"] == []  # any deploy fails: the run is shortened to the deploy alone
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
    status, out, _ = run(capsys, "show", str(path), "--format", "html")
    assert status == 0 and f"<td>{n}</td><td>deploy()</td><td colspan=\"2\">FAULT: " in out
    assert "violated</title>" not in out
    status, out, _ = run(capsys, "show", str(path), "--format", "svg")
    assert status == 0 and f">{n}: deploy() FAULT<" in out  # its column, after the steps
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
    assert f"\nsaved: {path} (the fault at the first step); replay: deployspec replay {path} " in error.text


def _fault_file(capsys, tmp_path, fake: str, *more: str) -> tuple[str, dict]:
    status, out, err = run(capsys, "contract", "--python", f"contract_fakes:{fake}", "--model", "capi",
                           "--out", str(tmp_path), *more)
    assert status == 3, err
    path = _saved(out)
    return path, traces.load(path)


@pytest.mark.parametrize(("fake", "examples"), [
    ("crashes_at_the_second_cancel", "30"),
    ("drifting", "30"),  # (its fault comes while recall brings it back to a step it answered)
    ("inconsistent", "30"),  # (a property cannot read the observation: the session's fault)
    ("fickle", "30"),
])
def test_a_saved_fault_ends_where_the_fault_line_says(capsys, tmp_path, fake, examples):
    """The file's steps are those the implementation was asked since its reset, and its
    action the one the fault names: a search's steps answered from memory (recall) are not
    what the implementation was asked last (the file had 33 steps and another action for a
    fault at step 31)."""
    _, trace = _fault_file(capsys, tmp_path, fake, "--examples", examples)
    n = len(trace["steps"])
    assert trace["fault"]["where"].startswith(f"step {n} ({action_label(trace['fault']['action'])}")
    assert trace["violation"]["message"].startswith(f"implementation fault at step {n} (")


def test_the_steps_saved_are_the_ones_answered(capsys, tmp_path):
    """A crash four steps in: the file holds push, deploy, cancel, deploy (what capi-safe
    answers, as the fake did until then) and then the cancel it failed at."""
    path, trace = _fault_file(capsys, tmp_path, "crashes_at_the_second_cancel", "--examples", "30")
    kinds = [s["action"]["type"] for s in trace["steps"]]
    assert kinds.count("cancel") == 1 and trace["fault"]["action"]["type"] == "cancel"
    assert len(kinds) >= 3
    # the recorded answers are capi-safe's: a replay on it parts from none of them
    status, out, _ = run(capsys, "replay", path, "--python", "deployspec.contract.examples:capi_safe")
    assert status == 0 and "parted" not in out
    status, out, err = run(capsys, "replay", path, "--python", "contract_fakes:crashes_at_the_second_cancel")
    assert status == 3 and f"at step {len(kinds)} (cancel())" in err
    status, out, _ = run(capsys, "show", path)
    lines = out.splitlines()
    assert lines[-1].startswith(f">>{len(kinds):>3}  cancel()  FAULT: perform() raised RuntimeError: cancel of ")
    assert sum(line.startswith(">>") for line in lines) == 1  # no step before it is marked


def test_a_fault_at_a_reset_saves_nothing(capsys, tmp_path):
    """A reset the search asks to bring the implementation back to a step it answered
    before: no step failed, so there is nothing to replay (it was saved as a fault at the
    search's step, whose replay then said "no fault")."""
    status, out, err = run(capsys, "contract", "--python", "contract_fakes:reset_dies_later", "--model", "capi",
                           "--examples", "100", "--out", str(tmp_path))
    assert status == 3 and "implementation fault at reset" in err
    assert not list(tmp_path.glob("*.json")) and "saved:" not in out


def test_a_replay_that_parts_from_the_recorded_answers_says_so(capsys, tmp_path):
    _, trace = _fault_file(capsys, tmp_path, "crashes_at_the_second_cancel", "--examples", "30")
    trace["steps"][1]["observation"]["deployments"] = []  # (as if the deploy had been refused)
    edited = tmp_path / "edited.json"
    edited.write_text(json.dumps(trace))
    status, out, _ = run(capsys, "replay", str(edited), "--python", "deployspec.contract.examples:capi_safe")
    n = len(trace["steps"])
    assert status == 0
    assert f"(the replay parted from the recorded answers at step 1, so step {n} (cancel()) was not asked " \
           "where it failed)" in out


def test_a_differing_answer_not_seen_again_is_said_as_such(capsys, tmp_path):
    path, _ = _fault_file(capsys, tmp_path, "moody", "--examples", "20")
    status, out, _ = run(capsys, "replay", path, "--python", "deployspec.contract.examples:capi_safe", "--json")
    (entry,) = valid_json_output(json.loads(out))["files"]
    assert status == 0 and entry["outcome"] == "fault_gone"
    assert "the fault was an answer differing from the first time; the answers did not differ in 2 runs" \
        in entry["message"]


def test_a_check_that_breaks_before_the_failing_action_is_said_so(capsys, tmp_path):
    """The seed trace's first steps, then an action after the break: replayed on capi-2022
    the check breaks on the way, and the action the implementation failed at is never asked."""
    seed = traces.load(SEED)
    trace = traces.of_fault(model="capi", variant="mine", config=seed["config"], property=seed["property"],
                            seed=0, led_to={"initial": seed["initial"], "steps": seed["steps"],
                                            "action": {"type": "scale", "instances": 2}},
                            where=f"step {len(seed['steps'])} (scale(instances=2))", cause="perform() raised",
                            message="implementation fault at …", extra={"implementation": {"python": "m:f"}})
    path = traces.save(trace, tmp_path)
    status, out, _ = run(capsys, "replay", str(path), "--variant", "capi-2022", "--json")
    (entry,) = valid_json_output(json.loads(out))["files"]
    assert status == 1 and entry["outcome"] == "check_breaks"
    assert f"capi-2022 did not reach step {len(seed['steps'])} (scale(instances=2)): app_stays_available is " \
           f"violated at step {seed['violation']['step']}" in entry["message"]


def test_a_fault_while_the_platform_settles_judges_a_settled_check(capsys, tmp_path):
    """A check judged once the platform settles (deployment_converges), its fault at the first
    settling tick: the replay settles after that action, as the search did, and judges it."""
    seed = traces.load(Path(SEED).parent / "capi-2022--deployment_converges--2cffbe2128.json")
    end = seed["settle_from"]
    trace = traces.of_fault(model="capi", variant="mine", config=seed["config"], property=seed["property"],
                            seed=0, led_to={"initial": seed["initial"], "steps": seed["steps"][:end],
                                            "action": seed["steps"][end]["action"]},
                            where=f"step {end} (settling)", cause="perform() raised",
                            message="implementation fault at …", extra={"implementation": {"python": "m:f"}})
    path = traces.save(trace, tmp_path)
    status, out, _ = run(capsys, "replay", str(path), "--variant", "capi-2022")
    label = action_label(seed["steps"][end]["action"])
    assert status == 1 and f"no fault: capi-2022 answered step {end} ({label}), but deployment_converges is " \
                           "violated" in out
    status, out, _ = run(capsys, "replay", str(path), "--variant", "capi-safe")
    assert status == 0 and "deployment_converges holds" in out


def test_another_fault_at_the_same_steps_is_another_file(tmp_path):
    seed = traces.load(SEED)
    made = [traces.of_fault(model="capi", variant="mine", config=seed["config"], property=seed["property"],
                            seed=0, led_to={"initial": seed["initial"], "steps": seed["steps"][:2],
                                            "action": {"type": "cancel"}},
                            where="step 2 (cancel())", cause=cause, message="…") for cause in ("crash", "hang")]
    assert traces.name_of(made[0]) != traces.name_of(made[1])


def test_a_fault_trace_that_cannot_be_saved_is_said_on_stderr(capsys, tmp_path):
    path, _ = _fault_file(capsys, tmp_path, "crashes_at_the_second_cancel", "--examples", "30")
    Path(path).unlink()
    Path(path).mkdir()  # a folder takes the file's name
    status, out, err = run(capsys, "contract", "--python", "contract_fakes:crashes_at_the_second_cancel",
                           "--model", "capi", "--examples", "30", "--out", str(tmp_path))
    assert status == 3 and "saved:" not in out
    assert err.splitlines()[-1].startswith(f"deployspec: error: cannot save {path}")


def test_a_fault_is_saved_as_the_shortest_run_that_still_ends_in_it(tmp_path, monkeypatch):
    """A crash reached by a long run (scales and ticks on the way) is saved as the run with
    every step that can go removed, each shorter run asked of the implementation again."""
    from deployspec.contract import harness
    from deployspec.models import get_model
    from deployspec.session import Session

    monkeypatch.syspath_prepend(str(Path(__file__).parent))
    model = get_model("capi")
    config = harness.config_for(model, None)
    conn = harness.Connection(harness.Target("python", "contract_fakes:crashes_at_the_second_cancel"), model)
    long_run = [{"type": "push", "instances": 1}, {"type": "scale", "instances": 2}, {"type": "tick"},
                {"type": "deploy"}, {"type": "tick"}, {"type": "cancel"}, {"type": "tick"}, {"type": "deploy"},
                {"type": "cancel"}]
    with conn:
        session = Session(model, conn.adapter("app_stays_available"), (), config)
        with pytest.raises(ImplementationFault) as caught:
            for data in long_run:
                session.perform(model.action(data))
        fault = caught.value
        assert len(fault.led_to["steps"]) == 8
        faults.keep_fault(fault, conn, str(tmp_path), seed=0)
    trace = traces.load(fault.counterexample)
    assert [s["action"]["type"] for s in trace["steps"]] == ["push", "deploy", "cancel", "deploy"]
    assert trace["fault"]["action"]["type"] == "cancel" and trace["fault"]["cause"] == fault.cause
    assert trace["extra"]["minimized_by_replay"] is True
    said = faults.saved_text(fault, conn.target, 10.0, "--out DIR")
    assert said.startswith(f"saved: {fault.counterexample} (the 4 steps that led to the fault, shortened from 8); ")


def _fault(cause: str, steps: list[str], action: str) -> ImplementationFault:
    fault = ImplementationFault(cause, where=f"step {len(steps)} ({action}())", checking="app_stays_available")
    fault.led_to = {"steps": [{"action": {"type": kind}} for kind in steps], "action": {"type": action}}
    return fault


def test_a_shorter_run_counts_only_if_it_ends_in_the_same_fault():
    """The same error from another action, or at an earlier step, is another fault: the
    shortened run must fail at the failing action's kind, at its end, for the same cause
    but for the last line the program wrote to stderr (a time, a pid)."""
    fault = _fault("exited with status 1; its stderr ends with: 12:00:01 dying", ["push", "deploy", "tick"], "tick")
    assert faults.same(_fault("exited with status 1; its stderr ends with: 12:00:07 dying", ["push"], "tick"),
                       fault, 1)
    assert not faults.same(_fault("exited with status 1", ["push"], "scale"), fault, 1)  # another action
    assert not faults.same(_fault("exited with status 1", [], "tick"), fault, 1)  # before the run's end
    assert not faults.same(_fault("exited with status 2", ["push"], "tick"), fault, 1)  # another cause
    # a hang found with one --timeout and met again with another is the same hang (a user's replay
    # with --timeout 2 of one found at 3 s was told it was not the recorded fault)
    hang = _fault("no reply to action tick within 3 s (hung? see --timeout)", ["push"], "tick")
    assert faults.same(_fault("no reply to action tick within 2 s (hung? see --timeout)", [], "tick"), hang, 0)
    assert faults.same(_fault("perform() did not return within 0.5 s", [], "tick"),
                       _fault("perform() did not return within 30 s", ["push"], "tick"), 0)
    assert not faults.same(_fault("no reply to action tick within 2 s (hung? see --timeout)", [], "tick"),
                           _fault("perform() did not return within 2 s", ["push"], "tick"), 0)
    # (the seconds of deployspec's own words for a hang only: the implementation's are its cause)
    assert not faults.same(_fault("reported an error on action tick: lease not renewed within 5 s", [], "tick"),
                           _fault("reported an error on action tick: lease not renewed within 30 s", ["push"],
                                  "tick"), 0)

    def again(actions):  # "boom" at a scale right after a runtime, and at a tick after a deploy
        kinds = [a["type"] for a in actions]
        for i, kind in enumerate(kinds):
            if (kind == "scale" and i and kinds[i - 1] == "runtime") or (kind == "tick" and "deploy" in kinds[:i]):
                return _fault("boom", kinds[:i], kind)
        return None

    # found at the tick; without the deploy, the scale follows the runtime and fails first
    found = _fault("boom", ["push", "runtime", "deploy", "scale", "stage"], "tick")
    shortest, done = faults.shortened(found, again, 10.0)
    assert done is True and [s["action"]["type"] for s in shortest.led_to["steps"]] == ["deploy"]
    assert shortest.led_to["action"] == {"type": "tick"}


def test_a_fault_that_does_not_come_back_is_saved_as_found():
    found = _fault("boom", ["push", "deploy"], "tick")
    assert faults.shortened(found, lambda actions: None, 10.0) == (
        found, "not shortened: the same steps, asked again, did not end in the same fault")


def test_a_hang_is_shortened_halves_first_within_the_time_of_a_few_hangs():
    """A hang of 41 steps was saved as found ("each try waits for the timeout"), where a push
    and the scale did it: halves go first, so few tries hang (each waits for the timeout)."""
    kinds = ["push", *["tick", "deploy", "runtime", "cancel"] * 10]
    hang = _fault("no reply to action scale within 2 s", kinds, "scale")
    hang.hung, hangs = True, []

    def again(actions):  # it hangs at the scale whenever the push came before it
        if [a["type"] for a in actions[:-1]].count("push"):
            hangs.append(len(actions))
            return _fault("no reply to action scale within 2 s", [a["type"] for a in actions[:-1]], "scale")
        return None

    shortest, done = faults.shortened(hang, again, 60.0)
    assert done is True and [s["action"]["type"] for s in shortest.led_to["steps"]] == ["push"]
    assert len(hangs) <= faults.HANG_TRIES  # (one at a time, each removal of the 40 would hang: 41 tries)
    assert faults.shortening_seconds(hang, 2.0) == 16.0 and faults.shortening_seconds(hang, 30.0) == 60.0
    hang.hung = False
    assert faults.shortening_seconds(hang, 30.0) == 10.0


def test_a_replay_that_fails_otherwise_says_it_is_not_the_recorded_fault(capsys, tmp_path):
    """The file's fault is a cancel four steps in; ``raising`` fails at the first deploy:
    exit 3 all the same, and the line says which fault the file recorded."""
    path, trace = _fault_file(capsys, tmp_path, "crashes_at_the_second_cancel", "--examples", "30")
    status, _, err = run(capsys, "replay", path, "--python", "contract_fakes:raising")
    assert status == 3
    assert err.strip().endswith(f"(not the recorded fault, at step {len(trace['steps'])} (cancel()): "
                                f"{trace['fault']['cause']})")
    status, _, err = run(capsys, "replay", path, "--python", "contract_fakes:crashes_at_the_second_cancel")
    assert status == 3 and "not the recorded fault" not in err


def test_a_stop_while_shortening_saves_the_shortest_run_so_far_and_stops(tmp_path, monkeypatch):
    """Ctrl-C (or SIGTERM) during the shortening: the shortest run found so far is saved,
    said as stopped early, and the stop goes on (it was dropped, and the shortening ran
    its whole budget)."""
    from deployspec.contract import harness
    from deployspec.models import get_model
    from deployspec.session import Session

    monkeypatch.syspath_prepend(str(Path(__file__).parent))
    asked, real = [], faults._fault_again

    def stopped_at_the_third(conn, fault, actions):
        asked.append(actions)
        if len(asked) == 3:
            raise KeyboardInterrupt
        return real(conn, fault, actions)

    monkeypatch.setattr(faults, "_fault_again", stopped_at_the_third)
    model = get_model("capi")
    conn = harness.Connection(harness.Target("python", "contract_fakes:crashes_at_the_second_cancel"), model)
    long_run = [{"type": "push", "instances": 1}, {"type": "tick"}, {"type": "deploy"}, {"type": "cancel"},
                {"type": "deploy"}, {"type": "cancel"}]
    with conn:
        session = Session(model, conn.adapter("app_stays_available"), (), harness.config_for(model, None))
        with pytest.raises(ImplementationFault) as caught:
            for data in long_run:
                session.perform(model.action(data))
        with pytest.raises(KeyboardInterrupt):
            faults.keep_fault(caught.value, conn, str(tmp_path), seed=0)
    trace = traces.load(caught.value.counterexample)
    assert trace["extra"]["minimized_by_replay"] == "stopped early: interrupted"
    # the first try (the whole run) ended in the fault, the second (without the push) did not
    assert len(asked) == 3 and [s["action"]["type"] for s in trace["steps"]] == \
        ["push", "tick", "deploy", "cancel", "deploy"]
