"""Calls into a Python object under test, timed and fenced: what the object raises
(SystemExit too), prints or hangs on becomes an :class:`ImplementationError`.

A hung call can be interrupted only in process, by SIGALRM: the handler is
installed once and stays until :func:`release_alarm`. A call still running
``GRACE`` seconds after its timeout (it swallowed the interruption, blocked
SIGALRM, or waits in C code the signal does not reach) meets
:mod:`deployspec.contract.last_resort`, from a watchdog thread that needs no
signal. What the object prints goes to stderr (:func:`lending` for a whole run):
stdout is deployspec's.
"""

from __future__ import annotations

import contextlib
import os
import signal
import sys
import threading
import time
from collections.abc import Callable
from typing import Any

from deployspec import streams
from deployspec.adapter import ImplementationError
from deployspec.contract import guard, last_resort
from deployspec.user_code import (
    DescriptorsMoved,
    ExitCalled,
    at_user_line,
    borrowed,
    describe,
    guarded,
)


def call(fn: Callable, *args: Any, what: str, timeout: float | None = None,
         passing: type[BaseException] | tuple = ()) -> Any:
    """``fn(*args)`` on the implementation's behalf: anything it raises but
    KeyboardInterrupt (and ``passing``), or outliving ``timeout`` seconds, is an
    :class:`ImplementationError` saying so.

    A hung call can only be interrupted in process, by SIGALRM: so the timeout
    holds on POSIX, in the main thread, when nothing else has claimed SIGALRM
    (pytest-timeout does), and not while the call is stuck in C code that never
    returns to the interpreter. In the ``deployspec`` program, a call that still
    has not returned ``GRACE`` seconds after its timeout (it swallows the
    interruption with a bare ``except:``, blocks SIGALRM, or waits in C code)
    ends the process: one line on stderr, exit status 3
    (:mod:`deployspec.contract.last_resort`, from :func:`_watch`).

    What the call prints goes to stderr: stdout is deployspec's (``--json``).
    """
    global _armed, _running
    main = threading.current_thread() is threading.main_thread()
    timed = timeout is not None and main and _take_alarm()
    # watched even when SIGALRM is not ours to use (the object installed a handler of its own)
    watched = timeout is not None and main and last_resort.may_end()
    try:
        # streams lent for the call (lending(): stdout for a run), os._exit refused, descriptors kept
        with guarded():
            try:
                if watched:
                    _running = _Watched(what, timeout, time.monotonic() + timeout)
                    if _watchdog is None:
                        _start_watchdog()
                if timed:
                    _armed = True
                    signal.setitimer(signal.ITIMER_REAL, timeout)
                # what it raised is said here, still timed and guarded, and let go here: its
                # message is the object's code too (a __str__ that hangs or calls os._exit), and
                # so are the frames and the objects it holds (a __del__, os._exit's status)
                hung = False
                try:
                    return fn(*args)
                except KeyboardInterrupt:
                    raise
                except passing:
                    raise
                except _Overdue:
                    said, hung = _hung(what, timeout), True
                except ExitCalled as exc:
                    said = f"{what} called os._exit({exc.said})"
                except BaseException as exc:  # noqa: BLE001 - SystemExit, GeneratorExit...: the implementation failed
                    said = f"{what} raised {describe(exc)}{at_user_line(exc)}"
                raise _Raised(said, hung)  # (outside the except clauses: no context holding the exception)
            finally:  # disarmed before stdout is given back: no alarm can land in between
                if timed:
                    _armed = False  # an alarm handled until here is still caught below, a later one ignored
                    signal.setitimer(signal.ITIMER_REAL, 0)
                if watched:
                    _running = None
    except _Overdue:  # (landed after the call returned, before the timer was disarmed)
        raise ImplementationError.no_answer(_hung(what, timeout)) from None
    except KeyboardInterrupt:
        raise
    except passing:
        raise
    except DescriptorsMoved as exc:
        raise ImplementationError(f"{what} {exc}") from None
    except _Raised as exc:
        raise (ImplementationError.no_answer if exc.hung else ImplementationError)(exc.said) from None


def _hung(what: str, timeout: float | None) -> str:
    return f"{what} did not return within {timeout:g} s (hung? see --timeout)"


class _Raised(Exception):
    """What the call raised, said within it (:func:`call`)."""

    def __init__(self, said: str, hung: bool = False):
        super().__init__(said)
        self.said, self.hung = said, hung


@contextlib.contextmanager
def lending(active: bool = True):
    """For a whole ``--python`` run: ``sys.stdout`` is the lender from here on, and
    the real stdout is yielded for deployspec's own output (verdicts, ``--json``).

    The object's threads may print at any time, even after the run, while the
    report is printed or the exit handlers run: so in the deployspec program
    the lender stays (stdout is deployspec's to the end); in pytest or a
    user's program, their stdout is theirs again when the block ends."""
    out = sys.stdout
    if not active:
        yield out
        return
    sys.stdout = borrowed(sys.stderr)
    streams.OWN_STDOUT = out  # (a report written to -: outputs.write_output)
    try:
        yield out
    except BaseException:
        sys.stdout, streams.OWN_STDOUT = out, None  # e.g. a closed pipe: what the caller does next is about the real stdout
        raise
    if not last_resort.own_process():
        sys.stdout, streams.OWN_STDOUT = out, None


class _Overdue(BaseException):
    """Raised by SIGALRM in a call that outlived its timeout (a BaseException, so
    an implementation's ``except Exception`` does not swallow it)."""


_armed = False
_previous: Any = signal.SIG_DFL
#: the call being timed, for the watchdog (only in the ``deployspec`` program)
_running: _Watched | None = None
_watchdog: threading.Thread | None = None
#: how often the watchdog looks
_EVERY = 0.5


class _Watched:
    """A timed call as the watchdog sees it: what it is, its timeout, when it is overdue,
    and whether the alarm reached it (its handler ran)."""

    __slots__ = ("interrupted", "overdue", "timeout", "what")

    def __init__(self, what: str, timeout: float, overdue: float):
        self.what, self.timeout, self.overdue, self.interrupted = what, timeout, overdue, False


def _overdue(signum, frame):
    if _armed:
        watched = _running
        if watched is not None:
            watched.interrupted = True
        raise _Overdue


def _start_watchdog() -> None:
    global _watchdog
    _watchdog = threading.Thread(target=_watch, name="deployspec timeout watchdog", daemon=True)
    _watchdog.start()


def _watch() -> None:
    """End the process once the call being timed has been seen overdue for ``GRACE``
    seconds of the watchdog's own looks (one every :data:`_EVERY` s). It needs no
    signal: a call that blocks SIGALRM, or sleeps in C code that retries on its own,
    gets no interruption at all. Counted in looks, not read off the clock: after the
    process was stopped (Ctrl-Z, SIGSTOP) or held the interpreter's lock in one long C
    call, the first look finds the call long overdue, and the alarm due with it still
    ends it as a plain timeout, with the run's report."""
    seen, looks, ended = None, 0, None
    while True:
        time.sleep(_EVERY)
        now = time.monotonic()  # (read first: a call registered after it is not yet overdue)
        this = _running
        if this is None or this is ended or now < this.overdue:  # (ended: where ``end`` is a test's)
            seen, looks = None, 0
            continue
        if this is not seen:
            seen, looks = this, 0
        looks += 1
        # (the first look saw it overdue at some moment of the look before: not counted)
        if (looks - 1) * _EVERY >= last_resort.GRACE and _running is this and last_resort.may_end():
            if this.interrupted:
                why = f"went on for {last_resort.GRACE:g} s more after being interrupted (does it catch every exception?)"
            else:
                why = (f"could not be interrupted for {last_resort.GRACE:g} s more (does it block or handle "
                       "SIGALRM, or wait in C code?)")
            ended = this
            last_resort.end(guard.located(f"{this.what} did not return within {this.timeout:g} s, and {why}"), 3)


def _take_alarm() -> bool:
    """Whether SIGALRM can time a call (asked in the main thread). The handler, once
    installed, stays until :func:`release_alarm` (installing it per call would cost
    ~6 us, more than the rest of a call's bookkeeping); it does nothing while no call
    is timed."""
    global _previous
    if not hasattr(signal, "setitimer"):
        return False
    handler = signal.getsignal(signal.SIGALRM)
    if handler is _overdue:
        return True
    if handler not in (signal.SIG_DFL, signal.SIG_IGN):
        return False  # someone else's (pytest-timeout): theirs to use
    _previous = signal.signal(signal.SIGALRM, _overdue)
    return True


def release_alarm() -> None:
    """Give SIGALRM back (when the implementation is closed)."""
    if threading.current_thread() is threading.main_thread() and signal.getsignal(signal.SIGALRM) is _overdue:
        signal.signal(signal.SIGALRM, _previous)


def _forgotten_in_child() -> None:
    """A forked child has none of its parent's threads: a timed call there starts its own watchdog."""
    global _watchdog, _running
    _watchdog, _running = None, None


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_forgotten_in_child)
