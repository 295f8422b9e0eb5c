"""``--junit`` of an interrupted run (Ctrl-C; SIGTERM: a CI job's timeout or cancel): what
it judged, judged; the rest skipped; one error case saying it was stopped."""

import functools
import xml.etree.ElementTree as ET

import pytest

from deployspec import junit, junit_cases

from .cli_runs import SEED, run
from .junit_reports import cases_of, outcome_of, totals_agree


def _interrupting(monkeypatch, module, name: str, after: int) -> None:
    """``module.name`` raises KeyboardInterrupt on its call number ``after + 1``."""
    real, calls = getattr(module, name), []

    @functools.wraps(real)  # (its signature too: check.causes asks whether it can skip causes)
    def call(*a, **k):
        calls.append(1)
        if len(calls) > after:
            raise KeyboardInterrupt
        return real(*a, **k)

    monkeypatch.setattr(module, name, call)


def _after_interruption(report, command: str, by: str = "Ctrl-C") -> dict[str, str]:
    """The outcome of each case of an interrupted run's report, once its totals and its
    one error case saying it was interrupted (``by``) are checked."""
    root = totals_agree(report)
    (suite,) = [s for s in root.iter("testsuite") if s.get("name") == f"deployspec {command}: interrupted"]
    (case,) = suite.iter("testcase")
    error = case.find("error")
    assert error is not None and f"interrupted ({by}) after" in error.get("message")
    return {name: outcome_of(c) for name, c in cases_of(report).items()}


def test_an_interrupted_check_reports_what_it_judged_and_skips_the_rest(capsys, tmp_path, monkeypatch):
    """The report an interrupted job still uploads: the cells judged before the interruption,
    judged; the others skipped; and an error saying the run was stopped, so the report
    fails as the run did, and a report of an earlier run does not pass for this one."""
    from deployspec import check

    report = tmp_path / "check.xml"
    report.write_text("<testsuites/>")  # an earlier run's
    _interrupting(monkeypatch, check, "judge", after=2)
    with pytest.raises(KeyboardInterrupt):
        run(capsys, "check", "--model", "capi", "--variant", "capi-2022", "--engine", "explore",
            "--property", "single_active_deployment", "--property", "capacity_within_bound",
            "--property", "app_stays_available", "--property", "user_scale_not_lost", "--junit", str(report))
    outcomes = _after_interruption(report, "check")
    # (in the model's order of properties: the first two ran)
    assert outcomes == {"single_active_deployment": junit.FAILURE, "app_stays_available": junit.FAILURE,
                        "user_scale_not_lost": junit.SKIPPED, "capacity_within_bound": junit.SKIPPED,
                        "interrupted": junit.ERROR}
    assert cases_of(report)["capacity_within_bound"].find("skipped").get("message") == \
        "not judged: the run was interrupted"
    # and said on stderr (it said only "interrupted", saved counterexamples and verdicts in)
    assert capsys.readouterr().err.splitlines()[-2:] == [(
        "deployspec: judged before the interruption: 2 of 4 searches; violated: capi-2022 · "
        "single_active_deployment, capi-2022 · app_stays_available"), "deployspec: interrupted"]


def test_a_violation_found_before_an_interruption_fails_its_case_though_another_engine_did_not_finish(
        capsys, tmp_path, monkeypatch):
    """A close look with ``--engine all``: the random search found the violation, the
    interruption came before the explorer's. The case fails with it (it was skipped, "not
    judged", and a CI job's timeout showed the bug it had found in grey); a property no
    engine finished is still skipped."""
    from deployspec import check

    report = tmp_path / "check.xml"
    _interrupting(monkeypatch, check, "judge", after=1)
    with pytest.raises(KeyboardInterrupt):
        run(capsys, "check", "--model", "capi", "--variant", "capi-2022", "--engine", "all", "--seed", "1",
            "--property", "single_active_deployment", "--property", "app_stays_available",
            "--junit", str(report))
    outcomes = _after_interruption(report, "check")
    assert outcomes == {"single_active_deployment": junit.FAILURE, "app_stays_available": junit.SKIPPED,
                        "interrupted": junit.ERROR}
    assert float(cases_of(report)["single_active_deployment"].get("time")) > 0


def test_an_interrupted_matrix_with_jobs_reports_the_searches_that_ended(capsys, tmp_path, monkeypatch):
    """With --jobs the searches end out of order: each cell is judged once its searches ended."""
    from deployspec import check

    report = tmp_path / "matrix.xml"
    real, heard = check.run, []

    def run_then_interrupted(*a, on_found, **k):
        def found(task, results):
            on_found(task, results)
            heard.append(task)
            if len(heard) == 3:
                raise KeyboardInterrupt
        return real(*a, on_found=found, **k)

    monkeypatch.setattr(check, "run", run_then_interrupted)
    with pytest.raises(KeyboardInterrupt):
        run(capsys, "check", "--model", "slots", "--property", "push_does_not_touch_production",
            "--property", "slot_runs_one_version", "--budget", "1",
            "--jobs", "2", "--junit", str(report))
    _after_interruption(report, "check")
    root = ET.parse(report).getroot()
    judged = {(c.get("classname"), c.get("name")) for c in root.iter("testcase")
              if outcome_of(c) != junit.SKIPPED and c.get("name") != "interrupted"}
    assert judged == {(f"deployspec.check.{m}.{v}", p) for m, v, _e, p in heard}
    assert len(list(root.iter("testcase"))) == 4 * 2 + 1  # 4 variants x 2 properties, and the interruption


def test_an_interrupted_contract_run_reports_the_checks_it_ran(capsys, tmp_path, monkeypatch):
    from deployspec.contract import harness

    report = tmp_path / "contract.xml"
    _interrupting(monkeypatch, harness, "check_one", after=1)
    with pytest.raises(KeyboardInterrupt):
        run(capsys, "contract", "--python", "deployspec.contract.examples:capi_2022", "--model", "capi",
            "--property", "single_active_deployment", "--property", "capacity_within_bound",
            "--examples", "20", "--seed", "0", "--junit", str(report))
    outcomes = _after_interruption(report, "contract")
    assert outcomes == {"single_active_deployment": junit.FAILURE, "capacity_within_bound": junit.SKIPPED,
                        "interrupted": junit.ERROR}
    assert "not run: the run was interrupted" in \
        cases_of(report)["capacity_within_bound"].find("skipped").get("message")


def test_an_interrupted_replay_reports_the_files_it_replayed(capsys, tmp_path, monkeypatch):
    from deployspec import replay_command

    report = tmp_path / "replay.xml"
    monkeypatch.chdir(tmp_path)  # (the files lie outside it: their cases keep the names given)
    files = sorted(str(p) for p in SEED.parent.glob("*.json"))[:3]
    _interrupting(monkeypatch, replay_command, "_replay_one", after=1)
    with pytest.raises(KeyboardInterrupt):
        run(capsys, "replay", *files, "--junit", str(report))
    outcomes = _after_interruption(report, "replay")
    assert [outcomes[f] for f in files] == [junit.FAILURE, junit.SKIPPED, junit.SKIPPED]


def test_sigterm_stops_check_with_its_report_written(tmp_path):
    """What a CI job's timeout does: SIGTERM, exit 130, and the report the job keeps
    `when: always` says what was judged and that the run was stopped."""
    import signal
    import subprocess

    from .cli_runs import deployspec

    report = tmp_path / "check.xml"
    proc = deployspec("check", "--model", "capi", "--seed", str(0), "--junit", str(report),
                      stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    line = proc.stderr.readline()  # the first search ended: "[1/N] …"
    proc.send_signal(signal.SIGTERM)
    status = proc.wait(60)
    err = proc.stderr.read()
    proc.stderr.close()
    assert line.startswith("[1/") and status == 130, (line, status, err)
    root = totals_agree(report)
    (suite,) = [s for s in root.iter("testsuite") if s.get("name") == "deployspec check: interrupted"]
    assert "interrupted (SIGTERM)" in next(suite.iter("testcase")).find("error").get("message")
    outcomes = [outcome_of(c) for c in root.iter("testcase")]
    assert outcomes.count(junit.SKIPPED) >= 1 and len(outcomes) - outcomes.count(junit.SKIPPED) >= 2


def test_sigterm_to_the_whole_group_of_a_jobs_run_keeps_what_its_processes_found(tmp_path):
    """A CI job's timeout signals the whole process group: the --jobs processes got SIGTERM
    with the parent and died by it (or, stopped by it, a second signal cut their answer
    short), and their violations, saved under --out, were "not judged" in the report."""
    import os
    import re
    import signal
    import subprocess
    import sys
    import time

    out, report = tmp_path / "found", tmp_path / "check.xml"
    proc = subprocess.Popen([sys.executable, "-m", "deployspec", "check", "--model", "capi", "--variant",
                             "capi-current", "--engine", "explore", "--jobs", "2", "--out", str(out),
                             "--junit", str(report)], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                            text=True, start_new_session=True)
    line = proc.stderr.readline()  # the first search ended: "[1/6] …"; the others run on
    time.sleep(1.0)
    os.killpg(proc.pid, signal.SIGTERM)
    status = proc.wait(60)
    err = proc.stderr.read()
    proc.stderr.close()
    assert line.startswith("[1/") and status == 130, (line, status, err)
    said = re.search(r"(\d+) counterexamples? saved under", err)
    files = sorted(out.rglob("*.json"))
    # every file on disk is reported: a search the signal cut after it saved its trace and
    # before it returned it had left one unreported (8 said, 9 on disk, twice under CI's
    # load): deployspec.save_log, tests/test_interrupted_after_saving.py
    assert said is not None and int(said.group(1)) == len(files), err
    failed = {c.get("name") for c in cases_of(report).values() if outcome_of(c) == junit.FAILURE}
    judged = [f for f in files if f.name.split("--")[1] in failed]  # each reported file's property: violated
    assert len(judged) >= int(said.group(1)) and len(failed) >= 1, (failed, files)


# --- a run stopped while it starts ---------------------------------------------------

#: the program (``python -m deployspec``'s entry), sent a signal from within while it
#: loads deployspec.commands (as a CI timeout might land); with SECOND, a second signal
#: as the report of the first is being saved
PROGRAM = """
import os, signal, sys
first, second, argv = int(sys.argv[1]), int(sys.argv[2]), sys.argv[3:]

class SignalAtImport:
    def find_spec(self, name, path=None, target=None):
        if name == "deployspec.commands":
            sys.meta_path.remove(self)
            os.kill(os.getpid(), first)

sys.meta_path.insert(0, SignalAtImport())
if second:
    import deployspec.junit as junit
    real = junit.save
    def save(*a, **k):
        os.kill(os.getpid(), second)
        return real(*a, **k)
    junit.save = save
sys.argv = ["deployspec", *argv]
from deployspec.program import run
run()
"""


def _program(*argv: str, first, second=0) -> tuple[int, str, str]:
    import subprocess
    import sys

    done = subprocess.run([sys.executable, "-c", PROGRAM, str(int(first)), str(int(second)), *argv],
                          check=False, capture_output=True, text=True, timeout=120)
    return done.returncode, done.stdout, done.stderr


def test_sigterm_while_the_program_starts_still_writes_the_report(tmp_path):
    """A CI job's timeout landing while the program loads its modules: it ended the run
    without a report (an earlier run's could pass for it); now exit 130 and a report of
    one error case saying the run was stopped before it judged anything."""
    import signal

    report = tmp_path / "check.xml"
    report.write_text("<testsuites/>")  # an earlier run's
    status, _out, err = _program("check", "--model", "capi", "--junit", str(report), first=signal.SIGTERM)
    assert (status, err) == (130, "deployspec: interrupted\n")
    assert _after_interruption(report, "check", by="SIGTERM") == {"interrupted": junit.ERROR}
    assert cases_of(report)["interrupted"].find("error").get("message").endswith("before it judged anything")


def test_a_report_in_the_out_folder_not_made_yet_is_still_written_when_the_start_is_cut(tmp_path):
    """``--out found --junit found/check.xml`` in a fresh checkout, a SIGTERM while the
    program loads: the report of the stop was refused ("cannot write: No such file or
    directory"), the --out folder being made only by the command that never ran. The
    folder is made, as the command would have (found by a mutation probe of cli.py)."""
    import signal

    found = tmp_path / "found"
    status, _out, err = _program("check", "--model", "capi", "--out", str(found),
                                 "--junit", str(found / "check.xml"), first=signal.SIGTERM)
    assert (status, err) == (130, "deployspec: interrupted\n")
    assert _after_interruption(found / "check.xml", "check", by="SIGTERM") == {"interrupted": junit.ERROR}


def test_ctrl_c_while_the_program_starts_is_one_line_not_a_traceback():
    import signal

    status, out, err = _program("check", "--model", "capi", first=signal.SIGINT)
    assert (status, out, err) == (130, "", "deployspec: interrupted\n")


def test_a_second_signal_while_the_report_is_saved_is_no_traceback(tmp_path):
    import signal

    report = tmp_path / "check.xml"
    status, _out, err = _program("check", "--model", "capi", "--junit", str(report),
                                 first=signal.SIGTERM, second=signal.SIGINT)
    assert (status, err) == (130, "deployspec: interrupted\n")


def test_sigterm_while_serve_starts_is_a_normal_stop():
    """``serve`` ends with 0 on SIGTERM, quietly, also before it served."""
    import signal

    assert _program("serve", "--model", "capi", "--variant", "capi-safe", first=signal.SIGTERM) == (0, "", "")


def test_a_signal_held_while_the_program_starts_is_not_lost_when_it_prints_its_version():
    import signal

    from deployspec import __version__

    status, out, err = _program("--version", first=signal.SIGTERM)
    assert (status, out, err) == (130, f"deployspec {__version__}\n", "deployspec: interrupted\n")


def test_a_check_interrupted_while_it_plans_writes_a_report_saying_so(capsys, tmp_path, monkeypatch):
    from deployspec import check

    report = tmp_path / "check.xml"
    report.write_text("<testsuites/>")  # an earlier run's
    _interrupting(monkeypatch, check, "searches", after=0)
    with pytest.raises(KeyboardInterrupt):
        run(capsys, "check", "--model", "capi", "--junit", str(report))
    assert _after_interruption(report, "check") == {"interrupted": junit.ERROR}
    assert cases_of(report)["interrupted"].find("error").get("message").endswith("before it judged anything")


def test_a_replay_interrupted_after_its_verdicts_does_not_say_it_judged_nothing(capsys, tmp_path, monkeypatch):
    report = tmp_path / "replay.xml"
    real = junit_cases.replay_suites

    def interrupted_once_judged(*a, **k):
        if not k.get("interrupted"):
            raise KeyboardInterrupt  # between the verdicts and the report
        return real(*a, **k)

    monkeypatch.setattr(junit_cases, "replay_suites", interrupted_once_judged)
    with pytest.raises(KeyboardInterrupt):
        run(capsys, "replay", str(SEED), "--junit", str(report))
    assert _after_interruption(report, "replay") == {"interrupted": junit.ERROR}
    assert cases_of(report)["interrupted"].find("error").get("message").endswith("before its report was written")


def test_a_report_written_is_not_replaced_by_an_interruption_after_it(capsys, tmp_path, monkeypatch):
    """The verdicts' report saved, then a signal: the verdicts stay in the report, beside
    the error saying the run was stopped (its status is 130), not replaced by a report
    of a run stopped before it judged anything."""
    report = tmp_path / "check.xml"
    real = junit.save

    def save_then_interrupted(*a, **k):
        real(*a, **k)
        raise KeyboardInterrupt

    monkeypatch.setattr(junit, "save", save_then_interrupted)
    with pytest.raises(KeyboardInterrupt):
        run(capsys, "check", "--model", "capi", "--variant", "capi-2022", "--engine", "explore",
            "--property", "single_active_deployment", "--junit", str(report))
    assert _after_interruption(report, "check") == \
        {"single_active_deployment": junit.FAILURE, "interrupted": junit.ERROR}
    assert "what it had not judged is skipped" in cases_of(report)["interrupted"].find("error").get("message")


@pytest.mark.parametrize("in_a_folder", [False, True])
def test_an_interrupted_replay_never_writes_its_report_over_a_trace(capsys, tmp_path, monkeypatch, in_a_folder):
    """``--junit`` naming a trace to replay (a name not .json; or, through a link, one a
    folder holds): interrupted while the traces load, the trace is kept, the report not
    written, said in one line."""
    from deployspec import traces

    trace = tmp_path / "finding.trace"
    trace.write_bytes(SEED.read_bytes())
    given = trace
    if in_a_folder:
        given = tmp_path / "suite"
        given.mkdir()
        (given / "finding.json").symlink_to(trace)
    _interrupting(monkeypatch, traces, "load", after=0)
    with pytest.raises(KeyboardInterrupt):
        run(capsys, "replay", str(given), "--junit", str(trace))
    assert trace.read_bytes() == SEED.read_bytes()
    assert "is a trace being replayed; no report written" in capsys.readouterr().err


def test_a_violation_found_before_the_search_for_another_cause_was_interrupted_is_judged(
        capsys, tmp_path, monkeypatch):
    """A close look searches again for each further cause; interrupted there, the
    violations it had found (saved under --out) are its verdict: failed, not skipped."""
    from deployspec.engines import explore

    report, out = tmp_path / "check.xml", tmp_path / "found"
    _interrupting(monkeypatch, explore, "search", after=1)  # the first search ends, the next is stopped
    with pytest.raises(KeyboardInterrupt):
        run(capsys, "check", "--model", "capi", "--variant", "capi-2022", "--engine", "explore",
            "--property", "app_stays_available", "--out", str(out), "--junit", str(report))
    outcomes = _after_interruption(report, "check")
    assert outcomes == {"app_stays_available": junit.FAILURE, "interrupted": junit.ERROR}
    (saved,) = out.glob("capi-2022--app_stays_available--*.json")
    assert saved.name in cases_of(report)["app_stays_available"].find("failure").text


def test_a_stop_a_search_swallowed_still_keeps_the_violations_it_found(monkeypatch):
    """A signal whose KeyboardInterrupt was swallowed on the way (a __del__) is noted as
    pending and raised after the search: its violations are verdicts all the same."""
    import signal

    from deployspec import check, interruption
    from deployspec.engines.result import Result

    def judge(model, variant, engine, prop, **kwargs):
        monkeypatch.setattr(interruption, "pending", signal.SIGTERM)  # the swallowed stop
        return [Result(model, variant, prop, engine, "violated", message="found"),
                Result(model, variant, prop, engine, "holds")]

    monkeypatch.setattr(check, "judge", judge)
    heard = []
    with pytest.raises(KeyboardInterrupt):
        check.run(check.plan("capi", ["capi-2022"]), ("explore",), budget=1, seed=0, out_dir=None,
                  properties=["app_stays_available"], on_found=lambda task, found: heard.append(found))
    assert [[r.verdict for r in found] for found in heard] == [["violated"]]
