"""The JUnit report in detail: the totals and times a CI viewer shows at its top, the
elements each outcome writes, and the names ``--junit`` refuses. Built from cases and
results made up here (no search runs)."""

from __future__ import annotations

import time
import xml.etree.ElementTree as ET

import pytest

from deployspec import junit, junit_cases
from deployspec.engines.result import Result
from deployspec.models import UsageError

from .junit_reports import totals_agree


def two_suites() -> list[junit.Suite]:
    a = junit.Suite("a", (junit.Case("k", "1", seconds=1.25), junit.Case("k", "2", junit.FAILURE, "no", seconds=0.5)))
    b = junit.Suite("b", (junit.Case("k", "3", junit.ERROR, "boom", seconds=2.0),
                          junit.Case("k", "4", junit.SKIPPED, "not run")))
    return [a, b]


def test_the_report_s_totals_and_time_add_up_every_suite(tmp_path):
    """GitLab and Jenkins show the top level's counts and time: the last suite's alone
    would hide the failures of the others."""
    path = tmp_path / "r.xml"
    path.write_text(junit.report("t", two_suites(), started=0.0))
    root = totals_agree(path)
    assert [root.get(k) for k in ("tests", "failures", "errors", "time")] == ["4", "1", "1", "3.750"]
    assert [s.get("skipped") for s in root.iter("testsuite")] == ["0", "1"]
    assert [s.get("time") for s in root.iter("testsuite")] == ["1.750", "2.000"]


def test_a_saved_report_s_time_is_the_run_s_wall_clock_not_its_suites_added_up(tmp_path):
    """With ``--jobs`` the suites' times overlap: added up they were more than the run took
    (the matrix's 52 s said as 108). A saved report's top level is the run's own time."""
    path = tmp_path / "r.xml"
    junit.save(path, str(path), "t", two_suites(), started=time.time() - 1.0)
    root = ET.parse(path).getroot()
    assert 1.0 <= float(root.get("time")) < 3.0  # not 3.750, the suites' added up
    assert [s.get("time") for s in root.iter("testsuite")] == ["1.750", "2.000"]


def test_a_skipped_case_has_no_type_and_a_passed_one_no_verdict_element():
    """``type`` belongs to failures and errors; a pass says its line in ``system-out``."""
    root = ET.fromstring(junit.report("t", [*two_suites(), junit.Suite("c", (junit.Case("k", "5", message="fine"),))]))
    cases = {c.get("name"): c for c in root.iter("testcase")}
    assert cases["2"].find("failure").get("type") == "failure" and cases["3"].find("error").get("type") == "error"
    assert cases["4"].find("skipped").attrib == {"message": "not run"}
    assert [e.tag for e in cases["5"]] == ["system-out"] and cases["5"].find("system-out").text == "fine"


@pytest.mark.parametrize("name", ["r.json", "r.JSON", "out/R.Json"])
def test_a_report_named_like_a_trace_is_refused_whatever_its_case(tmp_path, name):
    """A folder's ``*.json`` files are replayed as traces, on a case-insensitive disk too."""
    (tmp_path / "out").mkdir()
    with pytest.raises(UsageError, match=r"a \.json name, for an XML report"):
        junit.path_of(str(tmp_path / name))


def test_a_report_on_standard_output_beside_json_is_refused():
    with pytest.raises(UsageError, match="standard output carries --json"):
        junit.path_of("-", json_on_stdout=True)
    assert junit.path_of("-") is not None


def R(prop, verdict, engine="explore", **kw):
    return Result("capi", "capi-2022", prop, engine, verdict, **kw)


def test_a_violation_with_several_causes_names_them_all_in_its_one_line():
    """The line a viewer lists is all a reader may look at: two mechanisms, two bugs."""
    rs = [R("cancel_restores_last_good", "violated", message="kept d1", cause="superseded"),
          R("cancel_restores_last_good", "violated", message="kept d2", cause="raced")]
    (suite,) = junit_cases.check_suites(rs, declared=False)
    assert suite.cases[0].message == "VIOLATED: kept d1 (2 causes: raced, superseded)"
    (suite,) = junit_cases.check_suites(rs[:1], declared=False)
    assert suite.cases[0].message == "VIOLATED: kept d1"


def test_a_proof_a_bound_cut_short_says_what_stopped_it():
    """"holds" from a search that did not finish is not a proof: the details say which bound ended it."""
    rs = [R("single_active_deployment", "holds", message="no violation in 40 states",
            stats={"complete": False, "stopped": "max_depth"})]
    (suite,) = junit_cases.check_suites(rs, declared=False)
    assert suite.cases[0].details == "explore: holds: no violation in 40 states (incomplete: stopped by max_depth)"


def test_a_search_that_failed_is_not_said_cut_by_a_bound():
    """An error (a worker killed) has complete: false too; no bound stopped it."""
    rs = [R("single_active_deployment", "error", message="explore worker 2 of 2 stopped without answering "
            "(exit code -9) (killed: out of memory?)", stats={"complete": False, "stopped": None})]
    (suite,) = junit_cases.check_suites(rs, declared=False)
    assert "incomplete" not in suite.cases[0].details, suite.cases[0].details


def test_a_cell_s_time_is_that_of_all_its_searches():
    """CI shows the slow cases: a cell's time is what its engines took together."""
    rs = [R("single_active_deployment", "holds", stats={"seconds": 1.5}),
          R("single_active_deployment", "holds", engine="hypothesis", stats={"seconds": 2.0})]
    (suite,) = junit_cases.check_suites(rs, declared=False)
    assert suite.cases[0].seconds == 3.5


def test_an_interrupted_run_whose_report_cannot_be_saved_stays_interrupted(tmp_path, capsys, monkeypatch):
    """The interruption is the news (exit 130): a report that cannot be written is said, not raised instead."""
    import time

    monkeypatch.setattr(junit, "tried", False)
    monkeypatch.setattr(junit, "began", False)
    path = tmp_path / "gone" / "r.xml"
    with pytest.raises(KeyboardInterrupt), junit.saved_if_interrupted(path, "r.xml", "check", list, time.time()):
        raise KeyboardInterrupt
    assert capsys.readouterr().err.startswith("deployspec: error: --junit r.xml: cannot write")


def test_a_replay_case_carries_its_time_and_a_fault_before_any_file_is_a_case_of_its_own():
    """An implementation that fails at start replayed nothing: the report must fail
    (an error case), not list only skipped files, which CI reads as success."""
    loaded = [(name, {"model": "capi", "property": "single_active_deployment"}) for name in ("a.json", "b.json")]
    (suite,) = junit_cases.replay_suites([("a.json", 0, "does not reproduce", 0.5), ("b.json", 1, "reproduces", 1.25)],
                                   loaded, "the reference")
    assert [(c.outcome, c.seconds) for c in suite.cases] == [(junit.PASSED, 0.5), (junit.FAILURE, 1.25)]
    (suite,) = junit_cases.replay_suites([("", 3, "implementation fault at start", 0.0)], loaded, "mine")
    assert [(c.name, c.outcome) for c in suite.cases] == \
        [("start", junit.ERROR), ("a.json", junit.SKIPPED), ("b.json", junit.SKIPPED)]
    assert suite.cases[0].message == "implementation fault at start"


def test_a_run_error_is_a_case_of_a_dotted_class():
    """Readers split a class name at its dots: "deployspec check" would be one odd class."""
    (case,) = junit.run_error("deployspec check", "interrupted", "stopped").cases
    assert (case.classname, case.outcome, case.message) == ("deployspec.check", junit.ERROR,
                                                            "deployspec check: stopped")


def contract_run(results=(), fault=None):
    from types import SimpleNamespace

    target = SimpleNamespace(name="mine", kind="python", spec="pkg:impl")
    return SimpleNamespace(target=target, fault=fault, results=list(results), model="capi", fail_vacuous=False,
                           config=SimpleNamespace(to_json=lambda: {"max_instances": 2}))


def test_a_contract_pass_says_how_much_was_tried_and_a_fault_at_start_fails_the_report():
    """"holds" after 3 examples is not "holds" after 3000: the count is the evidence.
    A fault before any check is an error case, and the checks, never run, say why
    (not "interrupted", even when the run was stopped afterwards)."""
    from types import SimpleNamespace

    checks = [SimpleNamespace(name="single_active_deployment"), SimpleNamespace(name="app_stays_available")]
    held = Result("capi", "mine", "single_active_deployment", "hypothesis", "holds", stats={"examples": 3, "steps": 40})
    (suite,) = junit_cases.contract_suites(contract_run([held]), checks[:1], timeout=1.0)
    assert suite.cases[0].details == "holds: 3 examples, 40 steps"
    fault = SimpleNamespace(checking=None, line=lambda: "implementation fault at start: boom",
                            with_history=lambda: "boom, after reset", seconds=0.0)
    (suite,) = junit_cases.contract_suites(contract_run(fault=fault), checks, timeout=1.0, interrupted=True)
    assert [(c.name, c.outcome) for c in suite.cases] == [
        ("start", junit.ERROR), ("single_active_deployment", junit.SKIPPED), ("app_stays_available", junit.SKIPPED)]
    assert suite.cases[1].message == "not run: the implementation failed first (at start)"


def test_an_interruption_says_by_what_and_after_how_long(monkeypatch):
    import re
    import signal
    import time

    from deployspec import interruption

    monkeypatch.setattr(interruption, "by", signal.SIGTERM)
    (case,) = junit.interrupted("deployspec check", time.time() - 2.0).cases
    assert re.fullmatch(r"deployspec check: interrupted \(SIGTERM\) after 2\.\d s; what it had not judged is skipped",
                        case.message)


def test_a_case_shows_the_shortest_trace_of_each_cause_once():
    """As the terminal report: the longer trace of a cause already shown is noise in CI."""
    def found(engine, n):
        steps = [{"action": {"type": "tick"}, "rejected": None,
                  "observation": {"processes": [], "deployments": []}}] * n
        trace = {"model": "capi", "variant": "capi-2022", "property": "p", "engine": engine, "seed": 0,
                 "violation": {"step": n - 1, "message": f"after {n}"}, "initial": {"processes": [], "deployments": []}, "steps": steps}
        return R("single_active_deployment", "violated", engine=engine, message=f"after {n}", cause="c",
                 trace=trace, trace_length=n)

    (suite,) = junit_cases.check_suites([found("hypothesis", 5), found("explore", 2)], declared=False)
    details = suite.cases[0].details
    assert details.count("  after 2") == 1 and "  after 5" not in details


def test_a_violation_followed_by_a_fault_says_both():
    """The violation stands (a failure with its trace) and the fault that followed is
    said in it and as an error case of its own, as the exit status 3 says."""
    from types import SimpleNamespace

    steps = [{"action": {"type": "tick"}, "rejected": None, "observation": {"processes": [], "deployments": []}}]
    trace = {"model": "capi", "variant": "mine", "property": "single_active_deployment", "engine": "hypothesis",
             "seed": 0, "violation": {"step": 0, "message": "two active"}, "initial": {"processes": [], "deployments": []}, "steps": steps}
    r = Result("capi", "mine", "single_active_deployment", "hypothesis", "violated", message="two active",
               trace=trace)
    fault = SimpleNamespace(checking="single_active_deployment", line=lambda: "implementation fault: hung",
                            with_history=lambda: "hung after tick()", seconds=1.0, counterexample=None,
                            unsaved=None, led_to=None)
    (suite,) = junit_cases.contract_suites(contract_run([r], fault), [SimpleNamespace(name=r.property)], timeout=1.0)
    failed, faulted = suite.cases
    assert (failed.outcome, failed.message) == (junit.FAILURE, "VIOLATED: two active")
    assert failed.details.endswith("\nthen: hung after tick()") and "  two active" in failed.details
    assert (faulted.name, faulted.outcome) == ("single_active_deployment: implementation fault", junit.ERROR)


def test_a_report_that_is_the_file_stdout_goes_to_is_refused_beside_json(tmp_path, monkeypatch):
    """Not only the names of standard output: a link to it, or the very file the shell
    sends stdout to (``--json --junit r.xml > r.xml``); /dev/null takes both."""
    import os

    target = tmp_path / "r.xml"
    target.write_text("")
    link = tmp_path / "so.xml"
    link.symlink_to(target)
    fd = os.open(target, os.O_WRONLY)
    saved = os.dup(1)
    try:
        os.dup2(fd, 1)
        for named in (str(target), str(link)):
            with pytest.raises(UsageError, match="standard output carries --json"):
                junit.path_of(named, json_on_stdout=True)
        assert junit.path_of(str(tmp_path / "other.xml"), json_on_stdout=True) is not None
        assert junit.path_of(str(target)) is not None  # without --json: XML alone on stdout
        null = os.open(os.devnull, os.O_WRONLY)
        os.dup2(null, 1)
        os.close(null)
        assert junit.path_of(os.devnull, json_on_stdout=True) is not None
    finally:
        os.dup2(saved, 1)
        os.close(saved)
        os.close(fd)


def test_replay_files_after_a_fault_are_skipped_for_the_fault_not_an_interruption():
    """J18: a file left unreplayed by a fault says so; only an interrupted run says it was interrupted."""
    t = {"model": "capi", "property": "app_stays_available"}
    verdicts = [("a.json", 3, "a.json: the implementation crashed", 0.5)]
    loaded = [("a.json", t), ("b.json", t)]
    (suite,) = junit_cases.replay_suites(verdicts, loaded, "python m:f")
    assert [(c.name, c.outcome, c.message) for c in suite.cases][1] == \
        ("b.json", junit.SKIPPED, "not replayed: the implementation failed first")
    (suite,) = junit_cases.replay_suites(verdicts[:0], loaded, "python m:f", interrupted=True)
    assert suite.cases[0].message == f"not replayed: {junit.INTERRUPTED}"


def test_a_proof_cut_short_whose_message_says_so_says_it_once():
    """The explorer's own message names the budget that stopped it; no second "(incomplete: …)"."""
    rs = [R("app_stays_available", "holds",
            message="no violation within 30947 states explored (incomplete: time budget spent at depth 11, 1.0 s)",
            stats={"complete": False, "stopped": "time"})]
    (suite,) = junit_cases.check_suites(rs, declared=False)
    assert suite.cases[0].details.count("(incomplete:") == 1


def test_a_host_name_with_a_control_character_still_makes_well_formed_xml(tmp_path, monkeypatch):
    """Linux allows any byte but NUL in a host name (``sethostname``); it went into the
    report as it was, and a \\x01 made the whole file unreadable to every CI reader."""
    import socket

    monkeypatch.setattr(socket, "gethostname", lambda: "ci\x01box")
    path = tmp_path / "r.xml"
    path.write_text(junit.report("t", two_suites(), started=0.0))
    assert {s.get("hostname") for s in totals_agree(path).iter("testsuite")} == {"ci\\x01box"}


@pytest.mark.parametrize("stopped, said", [
    ("time", "the time budget"), ("memory", "the memory budget"),
    ("address_space", "the address-space limit (ulimit -v)")])
def test_a_proof_a_budget_cut_short_is_skipped_not_passed(stopped, said):
    """The table's ``holds*``: a CI's test view showed a 1-second proof of a third of the
    states as passed, beside a vacuous one shown skipped."""
    rs = [R("app_stays_available", "holds", message="no violation within 21350 states explored",
            stats={"complete": False, "stopped": stopped, "states": 21350})]
    (suite,) = junit_cases.check_suites(rs, declared=False)
    assert (suite.cases[0].outcome, suite.cases[0].message) == (
        junit.SKIPPED, f"holds*: incomplete: {said} stopped the exhaustive search after 21,350 states")


def test_a_proof_within_a_depth_bound_passes():
    """A depth the design or --bound sets is part of what is proven, not a budget's cut."""
    rs = [R("single_active_deployment", "holds", message="no violation in 40 states",
            stats={"complete": False, "stopped": "max_depth", "states": 40})]
    (suite,) = junit_cases.check_suites(rs, declared=False)
    assert suite.cases[0].outcome == junit.PASSED
