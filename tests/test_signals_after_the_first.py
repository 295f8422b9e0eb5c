"""Signals after the first: the run is ending on the first, and what it writes as it ends is
written whole for a while (a robustness hunt held Ctrl-C down: the previous run's JUnit report
stayed in place, and tracebacks were printed); after ``interruption.GRACE`` seconds a signal
stops it again (a report's write that blocks is not waited on for ever: a review's finding)."""

from __future__ import annotations

import os
import signal
import sys
import time

import pytest

from deployspec import interruption, junit


def _signal_self(sig: int) -> None:
    os.kill(os.getpid(), sig)
    time.sleep(0.01)  # (delivered, and its Python handler run, before this returns)


@pytest.fixture
def program_handlers(monkeypatch):
    """The deployspec program's handlers (``take_over_signals``), put back after."""
    entry = {sig: signal.getsignal(sig) for sig in (signal.SIGTERM, signal.SIGINT)}
    monkeypatch.setattr(interruption, "HELD", ([], dict(entry), time.time()))
    monkeypatch.setattr(interruption, "ENDING", False)
    monkeypatch.setattr(interruption, "ENDING_AT", None)
    monkeypatch.setattr(interruption, "by", None)
    interruption.take_over_signals()
    yield
    for sig, handler in entry.items():
        signal.signal(sig, handler)


def test_a_run_is_patient_only_while_it_ends_and_for_a_while(monkeypatch):
    monkeypatch.setattr(interruption, "ENDING", False)
    monkeypatch.setattr(interruption, "ENDING_AT", None)
    assert not interruption.patient()
    interruption.ending()
    assert interruption.patient()
    monkeypatch.setattr(interruption, "GRACE", 0.0)
    assert not interruption.patient()


def _report(tmp_path, monkeypatch):
    monkeypatch.setattr(junit, "tried", False)
    monkeypatch.setattr(junit, "began", False)
    path = tmp_path / "r.xml"
    path.write_text("<testsuites name='previous green run'/>")

    def so_far():
        _signal_self(signal.SIGINT)  # a second Ctrl-C as the report is made
        return []

    with pytest.raises(KeyboardInterrupt), junit.saved_if_interrupted(path, "r.xml", "deployspec check", so_far,
                                                                       time.time()):
        raise KeyboardInterrupt
    return path.read_text()


def test_an_interrupted_run_s_report_is_written_whatever_signals_follow(tmp_path, monkeypatch, program_handlers):
    written = _report(tmp_path, monkeypatch)
    assert "previous green run" not in written and "interrupted (Ctrl-C)" in written


def test_after_the_grace_a_signal_stops_the_report_and_leaves_the_old_one_whole(tmp_path, monkeypatch,
                                                                               program_handlers):
    monkeypatch.setattr(interruption, "GRACE", 0.0)
    assert _report(tmp_path, monkeypatch) == "<testsuites name='previous green run'/>"


def test_a_signal_while_the_unraisable_hook_runs_is_kept_not_raised_inside_it(monkeypatch):
    """Python printed one there as "Exception ignored in sys.unraisablehook"; a search asks
    for it at its next step (raise_if_pending)."""
    calls = []

    def hook(unraisable):
        calls.append(unraisable)
        _signal_self(signal.SIGINT)

    monkeypatch.setattr(sys, "unraisablehook", hook)
    with interruption.kept([signal.SIGINT]):
        sys.unraisablehook(type("U", (), {"exc_value": ValueError("x")})())  # (raised nothing)
        assert calls and interruption.pending == signal.SIGINT
        with pytest.raises(KeyboardInterrupt):
            interruption.raise_if_pending()


def test_once_the_program_ends_a_signal_waits_then_ends_it_by_its_default_action(monkeypatch):
    """The exit handlers end the implementation's process groups: Python's Ctrl-C handler made
    a traceback of a signal there, and the process's end by SIGINT, its handlers unrun; an
    exit handler that hangs is still ended, after the grace."""
    entry = {sig: signal.getsignal(sig) for sig in (signal.SIGTERM, signal.SIGINT)}
    raised = []
    monkeypatch.setattr(signal, "raise_signal", raised.append)
    monkeypatch.setattr(interruption, "ENDING", False)
    monkeypatch.setattr(interruption, "ENDING_AT", None)
    try:
        interruption.exit_handlers_taken(entry)  # a run that ended by itself: a signal ends it at once
        _signal_self(signal.SIGTERM)
        assert raised == [signal.SIGTERM] and signal.getsignal(signal.SIGTERM) is signal.SIG_DFL
        raised.clear()
        interruption.ending()  # one that is ending on a signal: the next ones wait, for a while
        interruption.exit_handlers_taken(entry)
        _signal_self(signal.SIGINT)
        assert raised == [] and signal.getsignal(signal.SIGINT) not in (signal.SIG_DFL, signal.default_int_handler)
        monkeypatch.setattr(interruption, "GRACE", 0.0)
        _signal_self(signal.SIGTERM)
        assert raised == [signal.SIGTERM] and signal.getsignal(signal.SIGTERM) is signal.SIG_DFL
    finally:
        for sig, handler in entry.items():
            signal.signal(sig, handler)
