"""A --python implementation that hangs or swallows its interruption: the timeout, a signal or the last resort ends the run."""

from __future__ import annotations

import os
import re
import subprocess
import sys
import time

import pytest

from deployspec import traces
from deployspec.cli import main

from .cli_runs import BUFFERED
from .fault_runs import FAKES


@pytest.fixture
def hangs(monkeypatch):
    monkeypatch.setattr(sys, "path", list(sys.path))
    monkeypatch.chdir(FAKES.parent)
    yield
    fakes = sys.modules.get("contract_fakes")
    if fakes is not None:
        fakes.Hangs.hung, fakes.Hangs.calls_after_hang = False, 0


def test_a_hanging_python_implementation_is_a_fault_and_is_not_called_again(capsys, hangs):
    import signal

    alarm = signal.getsignal(signal.SIGALRM)
    started = time.monotonic()
    status = main(["contract", "--python", "contract_fakes:hangs", "--model", "capi", "--examples", "5",
                   "--timeout", "0.3", "--property", "app_stays_available"])
    err = capsys.readouterr().err
    assert status == 3, err
    assert err.splitlines()[0] == ("deployspec: implementation fault at step 0 (deploy()) while checking "
                                   "app_stays_available: perform() did not return within 0.3 s (hung? see --timeout); "
                                   "steps since reset (deploy())")
    assert time.monotonic() - started < 5
    # no settle in the machine's teardown, no close(): a failed object is left alone
    assert sys.modules["contract_fakes"].Hangs.calls_after_hang == 0
    assert signal.getsignal(signal.SIGALRM) == alarm  # the timeout's SIGALRM handler is given back


def test_a_hang_is_saved_as_found_not_asked_again(capsys, hangs, tmp_path):
    """A --python call that does not return in time is a hang too (the object's adapter
    kept the error's words and dropped that): the interrupted call may have left the
    process's state broken, so the steps are saved as found, and nothing is asked after
    the hang (an --exec program's hang is shortened: each try runs in a new process)."""
    from deployspec import traces

    started = time.monotonic()
    status = main(["contract", "--python", "contract_fakes:hangs", "--model", "capi", "--examples", "5",
                   "--timeout", "0.3", "--property", "app_stays_available", "--out", str(tmp_path)])
    assert status == 3, capsys.readouterr().err
    (saved,) = tmp_path.glob("*--fault--*.json")
    extra = traces.load(saved)["extra"]
    assert extra["minimized_by_replay"] == "not tried: a hung call in deployspec's own process is not asked again"
    assert extra["implementation"]["timeout"] == 0.3  # (what its replay needs: a hang is a hang again)
    assert time.monotonic() - started < 5 and sys.modules["contract_fakes"].Hangs.calls_after_hang == 0


@pytest.mark.parametrize("sig", ["SIGTERM", "SIGINT"])
def test_the_first_signal_stops_a_run_whose_python_implementation_hangs(tmp_path, sig):
    import os
    import signal
    import subprocess

    hanging = tmp_path / "hanging"
    proc = subprocess.Popen(
        [sys.executable, "-m", "deployspec", "contract", "--python", "contract_fakes:hangs", "--model", "capi",
         "--timeout", "60", "--examples", "5"], cwd=FAKES.parent, stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE, text=True, env={**os.environ, "DEPLOYSPEC_FAKE_HANGING": str(hanging)})
    deadline = time.monotonic() + 60
    while not hanging.exists() and time.monotonic() < deadline:
        time.sleep(0.02)
    proc.send_signal(getattr(signal, sig))
    try:
        status = proc.wait(timeout=10)
    except subprocess.TimeoutExpired:
        proc.kill()
        raise AssertionError(f"one {sig} did not end the run") from None
    assert status == 130
    assert proc.stderr.read().strip() == "deployspec: interrupted"


@pytest.mark.parametrize("silencing", [False, True])
def test_a_python_implementation_that_swallows_the_timeout_still_ends_the_run(tmp_path, silencing):
    """A bare ``except:`` swallows the timeout's interruption: GRACE seconds later
    the run ends anyway, one line, exit 3, instead of never. The line is said where
    stderr was, though the call pointed it at /dev/null (it was lost: exit 3, no word)."""
    from deployspec.contract.last_resort import GRACE

    started = time.monotonic()
    proc = subprocess.Popen(
        [sys.executable, "-m", "deployspec", "contract", "--python", "contract_fakes:swallows", "--model", "capi",
         "--examples", "5", "--timeout", "0.5", "--property", "app_stays_available"],
        cwd=FAKES.parent, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
        env={**os.environ, "DEPLOYSPEC_FAKE_SILENCE": "1" if silencing else ""})
    try:
        _out, err = proc.communicate(timeout=60)
    finally:
        proc.kill()  # (a no-op once it ended) never left running when the test fails
    assert proc.returncode == 3, err
    # at the step that hung, as every other fault says it (the watchdog's line said only "perform()")
    assert re.fullmatch(
        r"deployspec: implementation fault at step \d+ \(deploy\(\)\) while checking app_stays_available: "
        + re.escape(f"perform() did not return within 0.5 s, and went on for {GRACE:g} s more after being "
                    "interrupted (does it catch every exception?); steps since reset (")
        + r".*deploy\(\)\): stopping",
        err.strip().splitlines()[-1]), err
    assert "Traceback" not in err
    assert time.monotonic() - started < 0.5 + GRACE + 15


def test_a_run_its_last_resort_ends_keeps_the_fault_s_steps_and_its_json(tmp_path):
    """A user's CI found --out's folder empty and the --json document empty after a
    swallowed timeout: the steps that led to the hang are saved (as found: each shorter try
    would hang too), said on stderr, and the document names them, exit 3 as before."""
    import json

    out, report = tmp_path / "found", tmp_path / "r.xml"
    proc = subprocess.run(
        [sys.executable, "-m", "deployspec", "contract", "--python", "contract_fakes:swallows", "--model", "capi",
         "--examples", "5", "--timeout", "0.5", "--property", "app_stays_available", "--out", str(out), "--json",
         "--junit", str(report)], cwd=FAKES.parent, capture_output=True, text=True, timeout=60, check=False,
        env=BUFFERED)
    assert proc.returncode == 3, proc.stderr
    (saved,) = out.glob("*.json")
    doc = json.loads(proc.stdout)
    assert doc["exit_status"] == 3 and doc["fault"]["counterexample"] == str(saved)
    assert doc["fault"]["cause"].startswith("perform() did not return within 0.5 s, and went on for")
    trace = traces.load(saved)
    assert trace["fault"]["action"]["type"] == "deploy" and trace["extra"]["minimized_by_replay"].startswith("not tried")
    assert f"deployspec: saved: {saved} (" in proc.stderr and proc.stderr.rstrip().endswith(": stopping")
    assert report.exists() and "Traceback" not in proc.stderr


@pytest.mark.parametrize("sig", ["SIGTERM", "SIGINT"])
def test_a_signal_ends_the_run_even_when_the_implementation_swallows_it(tmp_path, sig):
    import signal

    hanging = tmp_path / "hanging"
    proc = subprocess.Popen(
        [sys.executable, "-m", "deployspec", "contract", "--python", "contract_fakes:swallows", "--model", "capi",
         "--examples", "5", "--timeout", "600", "--property", "app_stays_available"],
        cwd=FAKES.parent, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
        env={**os.environ, "DEPLOYSPEC_FAKE_HANGING": str(hanging)})
    deadline = time.monotonic() + 60
    while not hanging.exists() and time.monotonic() < deadline:
        time.sleep(0.05)
    proc.send_signal(getattr(signal, sig))
    try:
        _out, err = proc.communicate(timeout=60)
    finally:
        proc.kill()  # (a no-op once it ended) never left running when the test fails
    assert proc.returncode == 130, err
    assert err.strip().splitlines()[-1] == (
        "deployspec: interrupted, and the implementation did not let go: stopping")


def test_the_last_resort_ends_the_run_though_no_one_reads_its_stderr(tmp_path):
    """Its line to a pipe whose reader is gone raised in the timer thread, which died
    before ending the process: the run went on for ever (seen when a test runner that
    started it had gone)."""
    import signal

    from deployspec.contract.last_resort import GRACE

    hanging = tmp_path / "hanging"
    proc = subprocess.Popen(
        [sys.executable, "-m", "deployspec", "contract", "--python", "contract_fakes:swallows", "--model", "capi",
         "--examples", "5", "--timeout", "600", "--property", "app_stays_available"],
        cwd=FAKES.parent, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
        env={**os.environ, "DEPLOYSPEC_FAKE_HANGING": str(hanging)})
    deadline = time.monotonic() + 60
    while not hanging.exists() and time.monotonic() < deadline:
        time.sleep(0.05)
    proc.stderr.close()  # no one reads it any more
    proc.send_signal(signal.SIGTERM)
    try:
        assert proc.wait(timeout=GRACE + 30) == 130
    finally:
        proc.kill()


def test_verdicts_printed_before_a_last_resort_are_not_lost(tmp_path):
    """replay A B on an object that swallows its timeout in B: A's verdict, already
    printed, reaches stdout (which the object's call had borrowed) before the end; its
    --junit report has A's verdict, the line as its error and B skipped as ended (not
    "interrupted": nothing interrupted it)."""
    import xml.etree.ElementTree as ET

    from deployspec.contract.last_resort import GRACE

    seed = FAKES.parents[1] / "counterexamples" / "capi" / "capi-2022--app_stays_available--a940739cf1.json"
    steps = len(traces.load(seed)["steps"])
    report = tmp_path / "r.xml"
    proc = subprocess.run(
        [sys.executable, "-m", "deployspec", "replay", str(seed), str(seed), "--python", "contract_fakes:swallows",
         "--timeout", "0.5", "--junit", str(report)], cwd=FAKES.parent, capture_output=True, text=True, timeout=60,
        check=False, env={**BUFFERED, "DEPLOYSPEC_FAKE_SWALLOW_AFTER": str(steps + 2)})
    assert proc.returncode == 3, proc.stderr
    assert proc.stdout.count(str(seed)) == 1 and "stopping" in proc.stderr
    cases = list(ET.parse(report).getroot().iter("testcase"))
    assert [len(c) for c in cases[:1]] == [1] and cases[0][0].tag == "system-out"  # A: judged (passed)
    assert [c.find("skipped").get("message") for c in cases[1:2]] == ["not replayed: the run was ended"]
    assert cases[2].find("error").text.endswith(f"did not return within 0.5 s, and went on for {GRACE:g} s more "
                                                "after being interrupted (does it catch every exception?); what "
                                                "it had not judged is skipped")


def test_a_python_implementation_that_blocks_the_alarm_still_ends_the_run(tmp_path):
    """It blocks SIGALRM and sleeps: no interruption ever reaches it, and it hung for
    ever. The watchdog ends the run GRACE seconds after the timeout, one line, exit 3."""
    from deployspec.contract.last_resort import GRACE

    started = time.monotonic()
    proc = subprocess.run(
        [sys.executable, "-m", "deployspec", "contract", "--python", "contract_fakes:blocks_the_alarm", "--model",
         "capi", "--examples", "5", "--timeout", "0.5", "--property", "app_stays_available"],
        cwd=FAKES.parent, capture_output=True, text=True, timeout=60, check=False)
    assert proc.returncode == 3, proc.stderr
    assert re.fullmatch(
        r"deployspec: implementation fault at step \d+ \(deploy\(\)\) while checking app_stays_available: "
        + re.escape(f"perform() did not return within 0.5 s, and could not be interrupted for {GRACE:g} s more "
                    "(does it block or handle SIGALRM, or wait in C code?); steps since reset (")
        + r".*deploy\(\)\): stopping",
        proc.stderr.strip().splitlines()[-1]), proc.stderr
    assert time.monotonic() - started < 0.5 + GRACE + 15


@pytest.fixture
def watched(monkeypatch):
    """The watchdog with a short GRACE, and its ending recorded instead of ending pytest."""
    from deployspec.contract import last_resort, timed_call

    ended = []
    monkeypatch.setattr(last_resort, "GRACE", 0.2)
    monkeypatch.setattr(timed_call, "_EVERY", 0.05)
    monkeypatch.setattr(last_resort, "end", lambda line, status: ended.append((line, status)))
    return ended


def _blocks_the_alarm_for(seconds):
    import signal

    signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGALRM})
    try:
        time.sleep(seconds)
    finally:
        signal.pthread_sigmask(signal.SIG_UNBLOCK, {signal.SIGALRM})  # the alarm pending lands now
    return "returned"


def _swallows_for(seconds):
    ends = time.monotonic() + seconds
    while time.monotonic() < ends:
        try:
            time.sleep(0.01)
        except BaseException:  # noqa: BLE001, S110 - swallowed, as the implementation under test does
            pass
    return "returned"


def test_only_the_deployspec_program_ends_itself_as_a_last_resort(monkeypatch, watched):
    """In a user's program (``interruption.OWN_PROCESS`` False), an overdue call that
    swallows the interruption is not met with ``os._exit``: that would end their process.
    (A pytest session checking an implementation is: ``last_resort.IN_PYTEST``, below.)"""
    from deployspec import interruption
    from deployspec.adapter import ImplementationError
    from deployspec.contract import timed_call

    assert timed_call.call(_swallows_for, 1.0, what="perform()", timeout=0.05) == "returned"
    with pytest.raises(ImplementationError, match=r"^perform\(\) did not return within 0.05 s"):
        timed_call.call(_blocks_the_alarm_for, 1.0, what="perform()", timeout=0.05)
    assert watched == []
    monkeypatch.setattr(interruption, "OWN_PROCESS", True)
    assert timed_call.call(_swallows_for, 1.0, what="perform()", timeout=0.05) == "returned"
    with pytest.raises(ImplementationError, match=r"^observe\(\) did not return within 0.05 s"):
        timed_call.call(_blocks_the_alarm_for, 1.0, what="observe()", timeout=0.05)
    swallowed = ("implementation fault: perform() did not return within 0.05 s, and went on for 0.2 s more after "
                 "being interrupted (does it catch every exception?)")
    blocked = ("implementation fault: observe() did not return within 0.05 s, and could not be interrupted for 0.2 s "
               "more (does it block or handle SIGALRM, or wait in C code?)")
    assert watched == [(swallowed, 3), (blocked, 3)]
    assert timed_call._running is None  # nothing left for the watchdog once the call returned
    time.sleep(0.3)
    assert len(watched) == 2


def test_a_pytest_session_checking_an_implementation_ends_where_a_call_will_not_let_go(tmp_path):
    """The plugin's session with an object that swallows its timeout hung for ever, Ctrl-C
    swallowed too (a user trial killed it with -9): GRACE seconds later it ends, the fault's
    line on stderr, exit 3, as the deployspec program does."""
    from deployspec.contract.last_resort import GRACE

    started = time.monotonic()
    proc = subprocess.Popen(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "--pyargs",
         "deployspec.stateful_tests.test_contract", "-k", "app_stays_available",
         "--deployspec-python", "contract_fakes:swallows", "--deployspec-model", "capi",
         "--deployspec-examples", "5", "--deployspec-timeout", "0.5"],
        cwd=FAKES.parent, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
        env={**os.environ, "PYTHONPATH": str(FAKES.parent)})
    try:
        _out, err = proc.communicate(timeout=90)
    finally:
        proc.kill()
    assert proc.returncode == 3, err[-800:]
    assert re.search(re.escape(f"perform() did not return within 0.5 s, and went on for {GRACE:g} s more after "
                               "being interrupted (does it catch every exception?)") + r".*: stopping$",
                     err.strip().splitlines()[-1]), err[-800:]
    assert time.monotonic() - started < 0.5 + GRACE + 60


def test_a_call_is_watched_though_the_implementation_took_sigalrm_for_itself(monkeypatch, watched):
    """An object that installed its own SIGALRM handler (a library's alarm) in an earlier
    call: the call cannot be timed by the signal, and hung for ever; the watchdog ends it."""
    import signal

    from deployspec import interruption
    from deployspec.contract import timed_call

    monkeypatch.setattr(interruption, "OWN_PROCESS", True)
    timed_call.call(signal.signal, signal.SIGALRM, lambda *_: None, what="reset()", timeout=1.0)
    try:
        assert timed_call.call(time.sleep, 1.0, what="perform()", timeout=0.05) is None
    finally:
        signal.signal(signal.SIGALRM, signal.SIG_DFL)
    line = ("implementation fault: perform() did not return within 0.05 s, and could not be interrupted for 0.2 s "
            "more (does it block or handle SIGALRM, or wait in C code?)")
    assert watched == [(line, 3)]


def test_a_call_that_returns_in_time_is_not_ended(monkeypatch, watched):
    """A call within its timeout is let be, though it runs longer than GRACE."""
    from deployspec import interruption
    from deployspec.contract import timed_call

    monkeypatch.setattr(interruption, "OWN_PROCESS", True)
    for _ in range(2):
        assert timed_call.call(time.sleep, 0.5, what="perform()", timeout=1.0) is None
    assert watched == []


def test_a_call_found_long_overdue_at_one_look_is_not_ended_at_once(monkeypatch, watched):
    """After the process was stopped (Ctrl-Z) or held the interpreter's lock in one long C
    call, the watchdog's first look finds the call long overdue: it ended the run as a last
    resort, with no report, where the alarm due with it ends the call as a plain timeout.
    The grace is counted in the watchdog's own looks."""
    import types

    from deployspec import interruption
    from deployspec.contract import last_resort, timed_call

    monkeypatch.setattr(interruption, "OWN_PROCESS", True)
    monkeypatch.setattr(last_resort, "GRACE", 0.5)
    jump = [0.0]
    clock = types.SimpleNamespace(sleep=time.sleep, monotonic=lambda: time.monotonic() + jump[0])
    monkeypatch.setattr(timed_call, "time", clock)

    def stopped_for_a_minute():
        jump[0] = 60.0  # as the clock reads after a stop of a minute
        return _swallows_for(0.1)

    assert timed_call.call(stopped_for_a_minute, what="perform()", timeout=0.05) == "returned"
    assert watched == []


def test_the_watchdogs_line_says_a_hang_at_start_and_in_which_file_a_replay_hung(monkeypatch):
    """The watchdog's last word is said as the fault would be: ``at start`` for the import
    and the factory (it said "implementation fault: xf:factory() did not return", where a
    plain timeout there says "at start"), and with the file a replay hung in (two files of
    one property could not be told apart)."""
    from deployspec import replay_command
    from deployspec.contract import guard, harness

    seen = []
    real_instantiate, real_replay_one = harness.instantiate, replay_command._replay_one

    def instantiate(*args, **kw):
        seen.append(guard.located("factory() did not return"))
        return real_instantiate(*args, **kw)

    def replay_one(*args, **kw):
        seen.append(guard.located("perform() did not return"))
        return real_replay_one(*args, **kw)

    monkeypatch.setattr(harness, "instantiate", instantiate)
    monkeypatch.setattr(replay_command, "_replay_one", replay_one)
    seed = FAKES.parents[1] / "counterexamples" / "capi" / "capi-2022--app_stays_available--a940739cf1.json"
    assert main(["replay", str(seed), "--python", "deployspec.contract.examples:capi_2022"]) == 1
    assert seen == ["implementation fault at start: factory() did not return",
                    f"{seed}: implementation fault: perform() did not return"]
    assert guard.located("x") == "implementation fault: x"  # nothing said of what has ended
