"""Details of the standard streams and of how a run is interrupted that a mutation pass
over deployspec.streams and deployspec.interruption found unpinned. Nothing here sends a
real signal or touches the real descriptors 1 and 2: both are stood in for."""

from __future__ import annotations

import os
import signal

import pytest

from deployspec import interruption, streams

# --- streams -------------------------------------------------------------------------


@pytest.mark.parametrize("path, name", [
    ("/dev/stdout", "stdout"), ("/dev/fd/1", "stdout"), ("/proc/self/fd/1", "stdout"),
    ("/dev/stderr", "stderr"), ("/dev/fd/2", "stderr"), ("/proc/self/fd/2", "stderr"),
    ("/dev/./stdout", "stdout"), ("/dev/fd/3", None), ("stdout", None),
])
def test_every_name_of_a_standard_stream_is_known(path, name):
    """-o /proc/self/fd/2 or /dev/./stdout is the stream, never a file replaced by rename."""
    assert streams.standard_stream_named(path) == name


def test_a_relative_name_of_a_standard_stream_is_known(monkeypatch):
    """From /dev, -o stdout names the standard output too."""
    monkeypatch.chdir("/dev")
    assert streams.standard_stream_named("stdout") == "stdout"


def test_only_a_stream_closed_at_the_start_is_named_closed(monkeypatch):
    """An open stdout is written to; one closed at the start is refused (it is /dev/null)."""
    monkeypatch.setattr(streams, "CLOSED_AT_START", set())
    assert streams.closed_stream_named("/dev/stdout") is None
    monkeypatch.setattr(streams, "CLOSED_AT_START", {"stderr"})
    assert streams.closed_stream_named("/dev/stdout") is None
    assert streams.closed_stream_named("/dev/fd/2") == "stderr"


@pytest.mark.parametrize("non_blocking, changed", [((), []), ((2,), [2]), ((1, 2), [1, 2])])
def test_only_non_blocking_streams_are_made_blocking_and_reported(monkeypatch, non_blocking, changed):
    """The descriptors changed are exactly those the parent left non-blocking (and later restored)."""
    made = []
    monkeypatch.setattr(os, "get_blocking", lambda fd: fd not in non_blocking)
    monkeypatch.setattr(os, "set_blocking", lambda fd, b: made.append((fd, b)))
    assert streams.blocking_streams() == changed
    assert made == [(fd, True) for fd in changed]


class _Stream:
    def __init__(self, error=None):
        self.error, self.flushed = error, 0

    def flush(self):
        self.flushed += 1
        if self.error:
            raise self.error

    def fileno(self):
        return self.fd


@pytest.mark.parametrize("error", [ValueError("I/O operation on closed file"), OSError(28, "full")])
def test_flush_flushes_both_streams_and_never_fails(monkeypatch, error):
    """The final flush of a closed or full stdout says nothing more and stderr is still flushed."""
    out, err = _Stream(error), _Stream()
    monkeypatch.setattr("sys.stdout", out)
    monkeypatch.setattr("sys.stderr", err)
    streams.flush()
    assert (out.flushed, err.flushed) == (1, 1)


def test_dropped_stdout_can_still_be_written(monkeypatch, tmp_path):
    """After drop_stdout the descriptor takes writes (into /dev/null), so the last flush cannot fail."""
    target = tmp_path / "out"
    fake = _Stream()
    fake.fd = os.open(target, os.O_WRONLY | os.O_CREAT)
    monkeypatch.setattr("sys.stdout", fake)
    try:
        streams.drop_stdout()
        assert os.write(fake.fd, b"lost") == 4
    finally:
        os.close(fake.fd)
    assert target.read_bytes() == b""


# --- interruption --------------------------------------------------------------------


def test_a_search_stops_only_once_a_signal_is_pending(monkeypatch):
    """A search asks at each step: it runs on with none pending and stops with one."""
    monkeypatch.setattr(interruption, "pending", None)
    interruption.raise_if_pending()
    monkeypatch.setattr(interruption, "pending", signal.SIGTERM)
    with pytest.raises(KeyboardInterrupt):
        interruption.raise_if_pending()


def test_an_interrupt_remembers_its_signal(monkeypatch):
    """The report says which signal stopped the run (SIGTERM: a CI timeout)."""
    monkeypatch.setattr(interruption, "by", None)
    with pytest.raises(KeyboardInterrupt):
        interruption.interrupt(signal.SIGTERM)
    assert interruption.by == signal.SIGTERM


def test_taking_over_makes_sigterm_interrupt_and_gives_ctrl_c_back(monkeypatch):
    """SIGTERM becomes the command's interruption, Ctrl-C gets its handler back, the first signal held is returned, once."""
    installed = {}
    monkeypatch.setattr(signal, "signal", lambda sig, handler: installed.__setitem__(sig, handler))
    monkeypatch.setattr(interruption, "by", None)
    monkeypatch.setattr(interruption, "HELD", ([signal.SIGINT, signal.SIGTERM],
                                               {signal.SIGTERM: signal.SIG_DFL,
                                                signal.SIGINT: signal.default_int_handler}, 0.0))
    assert interruption.take_over_signals() == signal.SIGINT
    assert interruption.HELD is None and interruption.take_over_signals() is None
    monkeypatch.setattr(interruption, "ENDING", False)
    monkeypatch.setattr(interruption, "ENDING_AT", None)
    with pytest.raises(KeyboardInterrupt):  # Ctrl-C as Python's own handler has it
        installed[signal.SIGINT](signal.SIGINT, None)
    assert interruption.by is None
    with pytest.raises(KeyboardInterrupt):
        installed[signal.SIGTERM](signal.SIGTERM, None)
    assert interruption.by == signal.SIGTERM
    interruption.ending()  # (a run ending on a signal: the next ones wait, for a while)
    assert installed[signal.SIGINT](signal.SIGINT, None) is None
    assert installed[signal.SIGTERM](signal.SIGTERM, None) is None


def test_nothing_held_is_no_interruption(monkeypatch):
    """A program started without a signal held runs its command."""
    monkeypatch.setattr(signal, "signal", lambda sig, handler: None)
    monkeypatch.setattr(interruption, "HELD", ([], {signal.SIGTERM: signal.SIG_DFL}, 0.0))
    assert interruption.take_over_signals() is None


@pytest.mark.parametrize("by, handler, handed, raised", [
    (None, signal.SIG_DFL, False, []),  # Python's own Ctrl-C: the caller re-raises
    (signal.SIGINT, signal.default_int_handler, False, []),
    (signal.SIGTERM, signal.SIG_IGN, True, []),  # the host ignores it: the status stands
    (signal.SIGTERM, signal.SIG_DFL, True, [signal.SIGTERM]),  # the host's default ends it
    (signal.SIGINT, print, True, [signal.SIGINT]),
])
def test_an_interruption_goes_to_the_host_s_own_handler(monkeypatch, by, handler, handed, raised):
    """In a host's process (a CI job running pytest), a SIGTERM still ends the host as it would have."""
    sent = []
    monkeypatch.setattr(interruption, "by", by)
    monkeypatch.setattr(signal, "getsignal", lambda sig: handler)
    monkeypatch.setattr(signal, "raise_signal", sent.append)
    assert interruption.handed_back() is handed
    assert sent == raised
