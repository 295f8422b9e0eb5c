"""The last resort against an implementation under test that will not let go.

A Python object under test runs in deployspec's own process. When it swallows
every interruption (a bare ``except:`` in a retry loop: the timeout's, Ctrl-C's,
SIGTERM's), nothing in the process can stop it; a timer thread then ends the
whole process ``GRACE`` seconds later, with one line on stderr. Only in the
``deployspec`` program itself (:func:`own_process`).
"""

from __future__ import annotations

import contextlib
import os
import sys
import threading
import time
from collections.abc import Callable

from deployspec.text import ESCAPE, escaped
from deployspec.user_code import standard_fds_put_back

#: how long an interrupted call may go on ignoring it before the process ends
GRACE = 5.0


#: set by the pytest plugin for a session that checks an implementation: a call that will
#: not let go ends that pytest process (a worker, under pytest-xdist, which reports it lost)
#: rather than hang it for ever with Ctrl-C swallowed too (a user trial killed it with -9)
IN_PYTEST = False


def may_end() -> bool:
    """Whether a call that will not let go may end this process: the ``deployspec``
    program's, or a pytest session's checking an implementation (:data:`IN_PYTEST`)."""
    return own_process() or IN_PYTEST


def own_process() -> bool:
    """Whether this process is the ``deployspec`` program's (``cli.run``): only then
    may a last resort end it. In pytest or a user's program, ending the process
    would take their results with it; there a swallowed interruption waits, as
    any hung test does, for pytest-timeout or its user."""
    from deployspec import interruption

    return interruption.OWN_PROCESS


@contextlib.contextmanager
def doing_first(then: Callable[[str], None]):
    """``then`` first of :data:`before_end` while the block runs."""
    before_end.insert(0, then)
    try:
        yield
    finally:
        if then in before_end:
            before_end.remove(then)


def last_resort(line: str, status: int) -> threading.Timer:
    """Unless cancelled within ``GRACE`` seconds (the interrupted call returned),
    print ``deployspec: LINE`` on stderr and end the process with ``status``: the
    only way out of a call that swallows every exception. Nothing saved is half
    written (files are written whole, then renamed). For the ``deployspec``
    program only (:func:`own_process`)."""
    timer = threading.Timer(GRACE, end, args=(line, status))
    timer.daemon = True
    timer.start()
    return timer


#: in a worker of a partitioned search (``partition_worker.serve``): hands the line and
#: status to the parent, which ends the program with them, once, as it would end alone
relay: Callable[[str, int], None] | None = None
#: what the program does with the line before it ends, in order: ``contract``'s (the fault's
#: trace under --out, the --json document) and ``junit.saved_if_interrupted``'s (the report
#: of what was judged, so an earlier run's is not taken for this one's); each adds its own
#: and takes it away when its run is over
before_end: list[Callable[[str], None]] = []
#: held by the one ending the process: a second (the SIGTERM timer beside the watchdog)
#: waits for the first to end it, rather than write its reports and line again
_ending = threading.Lock()


def end(line: str, status: int) -> None:
    """Print ``deployspec: LINE: stopping`` on stderr and end the process with ``status``
    (in a worker with a :data:`relay`, hand them to the parent instead, then end). Once:
    a second caller waits for the first to end the process."""
    if not _ending.acquire(blocking=False):
        while True:
            time.sleep(60)
    if relay is not None:
        try:
            relay(line, status)
        except Exception:  # noqa: BLE001, S110 - the parent then finds the worker lost
            pass
        os._exit(status)
    # the code still running may have moved them (dup2 of /dev/null): the line is for the user
    standard_fds_put_back()
    for stream in (sys.__stdout__, sys.stdout):  # the real stdout: sys.stdout may be lent out
        try:
            stream.flush()
        except Exception:  # noqa: BLE001, S110 - leaving anyway
            pass
    from deployspec.contract import leftovers

    leftovers.end_object_children()  # (a child it forked would hold stdout's pipe)
    for then in before_end:
        try:
            then(line)
        except Exception:  # noqa: BLE001, S110 - leaving anyway: the line below is the news
            pass
    try:
        # (escaped: the line may name what others wrote, a design's module, a file)
        os.write(2, f"deployspec: {escaped(line)}: stopping\n".encode(errors=ESCAPE))
    except OSError:  # stderr closed, or a pipe no one reads: the timer thread must not die here
        pass
    os._exit(status)
