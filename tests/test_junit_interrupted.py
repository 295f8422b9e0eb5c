"""``--junit`` of an interrupted run (Ctrl-C; SIGTERM: a CI job's timeout or cancel): what
it judged, judged; the rest skipped; one error case saying it was stopped."""

import xml.etree.ElementTree as ET

import pytest

from deployspec import junit

from .cli_runs import SEED, run
from .junit_reports import cases_of, outcome_of, totals_agree


def _interrupting(monkeypatch, module, name: str, after: int) -> None:
    """``module.name`` raises KeyboardInterrupt on its call number ``after + 1``."""
    real, calls = getattr(module, name), []

    def call(*a, **k):
        calls.append(1)
        if len(calls) > after:
            raise KeyboardInterrupt
        return real(*a, **k)

    monkeypatch.setattr(module, name, call)


def _after_interruption(report, command: str) -> dict[str, str]:
    """The outcome of each case of an interrupted run's report, once its totals and its
    one error case saying it was interrupted are checked."""
    root = totals_agree(report)
    (suite,) = [s for s in root.iter("testsuite") if s.get("name") == f"deployspec {command}: interrupted"]
    (case,) = suite.iter("testcase")
    error = case.find("error")
    assert error is not None and "interrupted (Ctrl-C) after" in error.get("message")
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
    assert len(list(root.iter("testcase"))) == 6 + 1  # 3 variants x 2 properties, and the interruption


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


# --- a run stopped while it starts ---------------------------------------------------


def _start_holding_signals(*argv: str):
    """``deployspec ARGV`` as a program, returned once it catches SIGTERM: from then on a
    signal is held while its modules load (about 0.3 s) and its command plans its searches."""
    import signal
    import subprocess
    import time

    from .cli_runs import deployspec

    proc = deployspec(*argv, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        with open(f"/proc/{proc.pid}/status") as status:
            caught = next(int(line.split()[1], 16) for line in status if line.startswith("SigCgt:"))
        if caught >> (signal.SIGTERM - 1) & 1:
            return proc
        time.sleep(0.001)
    proc.kill()
    raise AssertionError("the program never caught SIGTERM")


def _stopped(proc, signum) -> tuple[int, str]:
    proc.send_signal(signum)
    status = proc.wait(60)
    err = proc.stderr.read()
    proc.stderr.close()
    return status, err


LINUX_PROC = pytest.mark.skipif(not __import__("os").path.exists("/proc/self/status"),
                                reason="sees when the program catches SIGTERM in /proc (Linux)")


@LINUX_PROC
def test_sigterm_while_the_program_starts_still_writes_the_report(tmp_path):
    """A CI job's timeout landing while the program loads its modules and engines: it
    ended the run without a report (an earlier run's could pass for it); now exit 130
    and a report of one error case saying the run was stopped before it judged anything."""
    import signal

    report = tmp_path / "check.xml"
    report.write_text("<testsuites/>")  # an earlier run's
    proc = _start_holding_signals("check", "--model", "capi", "--variant", "capi-safe", "--junit", str(report))
    status, err = _stopped(proc, signal.SIGTERM)
    assert (status, err) == (130, "deployspec: interrupted\n")
    outcomes = {name: outcome_of(c) for name, c in cases_of(report).items()}
    assert outcomes == {"interrupted": junit.ERROR}
    message = cases_of(report)["interrupted"].find("error").get("message")
    assert "interrupted (SIGTERM) after" in message and message.endswith("before it judged anything")


@LINUX_PROC
def test_ctrl_c_while_the_program_starts_is_one_line_not_a_traceback():
    import signal

    proc = _start_holding_signals("check", "--model", "capi", "--variant", "capi-safe")
    assert _stopped(proc, signal.SIGINT) == (130, "deployspec: interrupted\n")


def test_a_check_interrupted_while_it_plans_writes_a_report_saying_so(capsys, tmp_path, monkeypatch):
    from deployspec import check

    report = tmp_path / "check.xml"
    report.write_text("<testsuites/>")  # an earlier run's
    _interrupting(monkeypatch, check, "searches", after=0)
    with pytest.raises(KeyboardInterrupt):
        run(capsys, "check", "--model", "capi", "--junit", str(report))
    assert _after_interruption(report, "check") == {"interrupted": junit.ERROR}
    assert cases_of(report)["interrupted"].find("error").get("message").endswith("before it judged anything")


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


def test_an_interrupted_replay_never_writes_its_report_over_a_trace(capsys, tmp_path, monkeypatch):
    """``--junit`` naming a trace given to replay (a name not .json): interrupted while the
    traces load, the trace is kept and the report not written, said in one line."""
    from deployspec import traces

    trace = tmp_path / "finding.trace"
    trace.write_bytes(SEED.read_bytes())
    _interrupting(monkeypatch, traces, "load", after=0)
    with pytest.raises(KeyboardInterrupt):
        run(capsys, "replay", str(trace), "--junit", str(trace))
    assert trace.read_bytes() == SEED.read_bytes()
    assert "is a trace being replayed; no report written" in capsys.readouterr().err
