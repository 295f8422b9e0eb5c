"""How a run is interrupted: Ctrl-C and SIGTERM, from the program's first moments
until the command's last step.

- The ``deployspec`` program (:mod:`deployspec.program`) holds both signals while
  its modules load; :func:`take_over_signals` takes them over once the arguments
  are read, and a signal held so far interrupts the command there, where ``--junit``
  can say so.
- :func:`interrupt` unwinds a command as Ctrl-C does, remembering which signal it
  was (:data:`by`, for the report).
- Within :func:`sigterm_interrupts` the signals raise KeyboardInterrupt
  wherever the main thread is. Python cannot raise it from a garbage-collector
  callback (Hypothesis registers one to time its draws) or a ``__del__``: there it
  is printed as "Exception ignored" and dropped, and the search would run on until
  the last resort ended the process without its report. So the signal is also
  kept (:data:`pending`) until the block ends, and a search asks at each step
  (:func:`raise_if_pending`) whether it was stopped.
- In a host's process (pytest, a user's program calling ``cli.main``) the
  interruption is handed back (:func:`handed_back`). pytest's contract tests keep
  Ctrl-C the same way (:func:`kept`) while a check runs: dropped in the gc
  callback, it let the search run its whole budget and the test pass.
"""

from __future__ import annotations

import contextlib
import signal
import sys
import threading
import time
from collections.abc import Callable, Iterable, Iterator
from typing import NoReturn

#: True in the ``deployspec`` program (``cli.run``), whose process is deployspec's own:
#: its interruption ends it with a status, a last resort may end it, and it adopts the
#: implementation's children; False in pytest's process or a user's program
OWN_PROCESS = False
#: the signal that interrupted the command in progress (:func:`interrupt`), None: Ctrl-C
#: by Python's own handler, or none yet
by: int | None = None
#: the signal that stopped the command in progress, until ``sigterm_interrupts`` ends
pending: int | None = None
#: (the program only) the signals held since it started, the handlers found then and
#: when it started (``cli.run``), None in a host's process or once taken over
HELD: tuple[list[int], dict, float] | None = None


#: (the program only) whether the run is ending on a signal: its command unwound on one.
#: Its own handlers (``take_over_signals``, ``cli``'s for the exit handlers) then stop
#: nothing for ``GRACE`` seconds from ``ENDING_AT``: a second Ctrl-C, or a CI's SIGTERM after
#: the user's, cut short the interrupted run's report, and the previous run's stayed in its
#: place. After that a signal stops the run again: a report's write that blocks (a FIFO no
#: one reads, a stalled NFS) or an exit handler that hangs is not waited on for ever.
#: Set by a plain store where a call could raise first (``ENDING = True``), then ``ending()``.
ENDING = False
ENDING_AT: float | None = None
GRACE = 3.0


def ending() -> None:
    """The run is ending from now on (the first call's time stands)."""
    global ENDING, ENDING_AT
    ENDING = True
    if ENDING_AT is None:
        ENDING_AT = time.monotonic()


def patient() -> bool:
    """Whether a signal now stops nothing: the run is ending, for less than ``GRACE`` s."""
    return ENDING and (ENDING_AT is None or time.monotonic() - ENDING_AT < GRACE)


def exit_handlers_taken(entry: dict) -> None:
    """From here on (the exit handlers, which end the implementation's process groups), a
    signal ends the process by its default action, but in a run that is ending on a signal
    (:data:`ENDING`), where it stops nothing for :data:`GRACE` seconds (the program only:
    ``cli.run``).
    Python's Ctrl-C handler made a traceback of one there, and of one landing while the
    handlers were put back; an exit handler that hangs is not waited on for ever."""
    def later(signum, frame) -> None:
        if not patient():
            signal.signal(signum, signal.SIG_DFL)
            signal.raise_signal(signum)

    for sig in entry:
        signal.signal(sig, later)


def raise_if_pending() -> None:
    if pending is not None:
        raise KeyboardInterrupt


@contextlib.contextmanager
def kept(signals: Iterable[int], on_signal: Callable[[int], None] = lambda signum: None, *,
         once: bool = False) -> Iterator[None]:
    """Within (the main thread only): each of ``signals`` not ignored on entry calls
    ``on_signal`` and raises KeyboardInterrupt, and is kept :data:`pending` until the
    block ends, so a search raises it again at its next step
    (:func:`raise_if_pending`) if Python dropped it where it cannot raise (a gc
    callback, a ``__del__``); that drop is not printed as "Exception ignored".
    With ``once``, a signal after the first only calls ``on_signal``: a second
    KeyboardInterrupt would cut short the unwinding of the first, and what the stopped
    search hands back with it (a ``--jobs`` process gets SIGTERM from a CI's timeout,
    then SIGUSR1 from its parent)."""
    global pending
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    raised = []

    hooked = []  # (the unraisable hook runs: a signal there is kept, not raised inside it)

    def stop(signum, frame):
        global pending
        on_signal(signum)
        if once and raised:
            return
        raised.append(signum)
        pending = signum
        if hooked:  # (Python printed it as "Exception ignored in sys.unraisablehook")
            return
        raise KeyboardInterrupt

    def swallowed(unraisable) -> None:
        hooked.append(True)
        try:
            if not (isinstance(unraisable.exc_value, KeyboardInterrupt) and pending is not None):
                hook(unraisable)
        finally:
            hooked.clear()

    # a signal ignored on entry (SIGINT of a command started with & in a script) stays ignored
    previous = {sig: signal.signal(sig, stop) for sig in signals if signal.getsignal(sig) is not signal.SIG_IGN}
    hook, sys.unraisablehook = sys.unraisablehook, swallowed
    before = pending  # (an enclosing block's, if any)
    try:
        yield
    finally:
        pending = before
        sys.unraisablehook = hook
        for sig, handler in previous.items():
            signal.signal(sig, handler)


@contextlib.contextmanager
def held_while_starting(signals: Iterable[int]) -> Iterator[None]:
    """``signals`` blocked in this thread while it starts processes; its mask restored after.
    The processes inherit the mask, so a signal sent before one installed its handlers
    waits until it unblocks them, instead of meeting the parent's handler or the default
    (a Ctrl-C printed a KeyboardInterrupt traceback from a process still importing; a stop
    killed it). Here, such a signal waits for the block's end, unless the kernel hands it
    to another thread, which blocks nothing (then Python raises it at once, as before).
    No-op without signal masks."""
    if not hasattr(signal, "pthread_sigmask"):
        yield
        return
    before = signal.pthread_sigmask(signal.SIG_BLOCK, set(signals))
    try:
        yield
    finally:
        signal.pthread_sigmask(signal.SIG_SETMASK, before)


def interrupt(signum: int) -> NoReturn:
    """Unwind the command as Ctrl-C does (the implementation and search processes are
    ended on the way), remembering which signal it was."""
    global by
    by = signum
    raise KeyboardInterrupt


def take_over_signals() -> int | None:
    """Once the arguments are read (the program only): SIGTERM (a CI timeout, ``kill``)
    stops any command as Ctrl-C does, "interrupted", status 130, and Ctrl-C is Python's
    again. ``check`` and ``contract`` add to this while they run (their search processes,
    or the implementation, are ended too: ``sigterm_interrupts``). One
    ignored on entry stays ignored. Returns the signal held since the start, if any:
    it interrupts the command now, where ``--junit`` can say so."""
    global HELD
    if HELD is None:
        return None
    (held, entry, _), HELD = HELD, None

    def stop(signum, frame):
        if not patient():
            interrupt(signum)

    def ctrl_c(signum, frame):  # Python's own, but patient while the run ends
        if not patient():
            raise KeyboardInterrupt

    for sig, handler in entry.items():
        signal.signal(sig, stop if sig == signal.SIGTERM else ctrl_c if handler is signal.default_int_handler
                      else handler)
    return held[0] if held else None


def handed_back() -> bool:
    """In a host's process (pytest, a user's program calling ``cli.main``), the
    interruption is the host's: the signal goes to the host's own handler for it
    (SIGTERM's default ends the process), as if deployspec had not been there,
    instead of ending as a status the host would carry on after (a CI job's timeout
    would not stop the job). False: Python's own Ctrl-C handler is the host's, or no
    signal of ours was behind it: the caller re-raises the KeyboardInterrupt."""
    if by is None:
        return False
    handler = signal.getsignal(by)
    if handler is signal.default_int_handler:
        return False
    if handler is not signal.SIG_IGN:
        signal.raise_signal(by)
    return True  # the host's handler let it pass (or ignores it): the status stands


@contextlib.contextmanager
def sigterm_interrupts(active: bool = True, holdout: str = "the implementation"):
    """Within: SIGTERM (a CI timeout, ``kill``) unwinds like Ctrl-C, so the
    program under test is ended too instead of being orphaned; and neither waits
    for ever on a Python implementation that swallows the interruption."""
    if not active:
        yield
        return

    from deployspec.contract.last_resort import last_resort, own_process

    timers = []

    def remembered(signum: int) -> None:
        # a Python implementation may swallow the KeyboardInterrupt (a bare except):
        # then the deployspec program ends anyway, GRACE seconds later
        if not timers and own_process():
            timers.append(last_resort(f"interrupted, and {holdout} did not let go", 130))
        global by
        by = signum

    try:
        with kept((signal.SIGTERM, signal.SIGINT), remembered):
            yield
    finally:
        for timer in timers:  # it unwound: nothing to force
            timer.cancel()
