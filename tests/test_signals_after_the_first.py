"""Signals after the first: the run is ending on the first, and what it writes as it ends is
written whole (a robustness hunt held Ctrl-C down: the previous run's JUnit report stayed in
place, and tracebacks were printed)."""

from __future__ import annotations

import os
import signal
import sys
import time

import pytest

from deployspec import cli, interruption, junit


def _signal_self(sig: int) -> None:
    os.kill(os.getpid(), sig)
    time.sleep(0.01)  # (delivered, and its Python handler run, before this returns)


@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGTERM])
def test_within_deferred_a_signal_stops_nothing_and_the_handlers_come_back(sig):
    before = signal.getsignal(sig)
    with interruption.deferred():
        _signal_self(sig)
        done = True
    assert done and signal.getsignal(sig) is before


def test_an_interrupted_run_s_report_is_written_whatever_signals_follow(tmp_path, monkeypatch):
    """The suites are gathered while a second Ctrl-C lands: the report of this run is still
    written over the previous run's."""
    monkeypatch.setattr(junit, "tried", False)
    monkeypatch.setattr(junit, "began", False)
    monkeypatch.setattr(interruption, "by", None)  # (Ctrl-C: what the report names)
    path = tmp_path / "r.xml"
    path.write_text("<testsuites name='previous green run'/>")

    def so_far():
        _signal_self(signal.SIGINT)
        return []

    with pytest.raises(KeyboardInterrupt), junit.saved_if_interrupted(path, "r.xml", "deployspec check", so_far,
                                                                       time.time()):
        raise KeyboardInterrupt
    assert "previous green run" not in path.read_text()
    assert "interrupted (Ctrl-C)" in path.read_text()


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


def test_once_the_program_ends_a_signal_stops_nothing(monkeypatch):
    """The exit handlers end the implementation's process groups: Python's Ctrl-C handler made
    a traceback of a signal there, and the process's end by SIGINT, its handlers unrun."""
    entry = {sig: signal.getsignal(sig) for sig in (signal.SIGTERM, signal.SIGINT)}
    try:
        cli._ending(entry)
        for sig in entry:
            _signal_self(sig)
    finally:
        for sig, handler in entry.items():
            signal.signal(sig, handler)
