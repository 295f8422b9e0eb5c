"""How a contract run holds SIGTERM and Ctrl-C while it runs (``deployspec.interruption``)
and the last resort that ends a run an implementation will not let go of
(``contract.last_resort``): moved from the contract command's details, another idea."""

from __future__ import annotations

import signal
import sys
import threading

import pytest

from deployspec import interruption
from deployspec.contract import last_resort


@pytest.fixture
def signals(monkeypatch):
    """Which signal interrupted (``interruption.by``) is put back after the test."""
    monkeypatch.setattr(interruption, "by", None)


def test_sigterm_and_ctrl_c_interrupt_within_and_are_given_back_after(signals):
    before = {sig: signal.getsignal(sig) for sig in (signal.SIGTERM, signal.SIGINT)}
    with interruption.sigterm_interrupts():
        for sig in (signal.SIGTERM, signal.SIGINT):
            with pytest.raises(KeyboardInterrupt):
                signal.raise_signal(sig)
            assert interruption.pending == sig
    assert interruption.pending is None
    assert {sig: signal.getsignal(sig) for sig in before} == before


def test_a_signal_ignored_on_entry_stays_ignored(signals):
    previous = signal.signal(signal.SIGTERM, signal.SIG_IGN)
    try:
        with interruption.sigterm_interrupts():
            assert signal.getsignal(signal.SIGTERM) is signal.SIG_IGN
            signal.raise_signal(signal.SIGTERM)  # nothing happens
        assert signal.getsignal(signal.SIGTERM) is signal.SIG_IGN
    finally:
        signal.signal(signal.SIGTERM, previous)


def test_inactive_or_off_the_main_thread_nothing_is_taken_over():
    before = signal.getsignal(signal.SIGTERM)
    with interruption.sigterm_interrupts(active=False):
        assert signal.getsignal(signal.SIGTERM) is before
    seen = []

    def other():
        with interruption.sigterm_interrupts():
            seen.append(signal.getsignal(signal.SIGTERM))

    thread = threading.Thread(target=other)
    thread.start()
    thread.join()
    assert seen == [before]


def test_the_interruption_raised_where_python_cannot_raise_it_is_not_reported(monkeypatch, signals):
    reported = []
    monkeypatch.setattr(sys, "unraisablehook", reported.append)

    class Unraisable:
        exc_value = KeyboardInterrupt()

    class Other:
        exc_value = ValueError("x")

    with interruption.sigterm_interrupts():
        with pytest.raises(KeyboardInterrupt):
            signal.raise_signal(signal.SIGINT)
        sys.unraisablehook(Unraisable)  # pending: swallowed
        sys.unraisablehook(Other)  # anything else: reported
    assert reported == [Other]
    assert sys.unraisablehook == reported.append  # given back


def test_the_last_resort_is_armed_once_only_in_the_deployspec_program(monkeypatch, signals):
    armed = []

    class Timer:
        def __init__(self, line, status):
            armed.append(self)
            self.said, self.cancelled = (line, status), False

        def cancel(self):
            self.cancelled = True

    monkeypatch.setattr(last_resort, "last_resort", Timer)
    with interruption.sigterm_interrupts(holdout="X"):
        for _ in range(2):
            with pytest.raises(KeyboardInterrupt):
                signal.raise_signal(signal.SIGTERM)
    assert armed == [] and interruption.by == signal.SIGTERM  # pytest's process is not to be ended
    monkeypatch.setattr(interruption, "OWN_PROCESS", True)
    with interruption.sigterm_interrupts(holdout="X"):
        for _ in range(2):
            with pytest.raises(KeyboardInterrupt):
                signal.raise_signal(signal.SIGTERM)
        (timer,) = armed
        assert timer.said == ("interrupted, and X did not let go", 130) and not timer.cancelled
    assert timer.cancelled  # it unwound: nothing to force
