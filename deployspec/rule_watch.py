"""A rule handed in that never returns (a ``while`` whose condition stays true).

A search's budget is checked between steps, so a rule looping inside one step would
hold ``check`` past ``--budget`` (and ``replay`` for ever) saying nothing. Each call of
a design's own rule (``rule_results``) is timed; a watcher thread, started in a process
the first time a rule handed in runs there, raises :class:`RuleHung` in the thread of a
call that has run :data:`LIMIT` seconds, at whatever line it loops on, and the rule's
wrapper says so in one line. The thread costs nothing while no rule runs long, and no
signal handler of the host's (pytest's, a ``--python`` object's ``SIGALRM``) is touched.
What Python cannot interrupt, a rule blocked in a system call (``time.sleep``, a read),
is not stopped: Ctrl-C or SIGTERM ends that run as ever.
"""

from __future__ import annotations

import ctypes
import os
import threading
import time

#: seconds one call of a rule handed in may run (the shipped rules take microseconds)
LIMIT = 10.0
#: how often the watcher looks
_EVERY = 0.5

#: thread ident -> when its outermost running rule call began (time.monotonic)
_running: dict[int, float] = {}
_watcher: threading.Thread | None = None
_lock = threading.Lock()


class RuleHung(BaseException):
    """Raised in a rule's thread once its call has run :data:`LIMIT` seconds (not an
    ``Exception``: a rule's ``except Exception`` inside its loop must not swallow it)."""


def enter() -> bool:
    """A rule call begins in this thread; True when it is the outermost (the one timed),
    to be given to :func:`leave`."""
    ident = threading.get_ident()
    if ident in _running:
        return False
    if _watcher is None:
        _start()
    _running[ident] = time.monotonic()
    return True


def leave(outermost: bool) -> None:
    """The call :func:`enter` began has ended. Under the watcher's lock: once this has
    returned, no :class:`RuleHung` is raised for that call; one raised before it is
    raised at the latest here, inside the wrapper's ``try``."""
    if outermost:
        _lock.acquire()
        _running.pop(threading.get_ident(), None)
        _lock.release()


def _start() -> None:
    global _watcher
    with _lock:
        if _watcher is None:
            _watcher = threading.Thread(target=_watch, name="deployspec rule watcher", daemon=True)
            _watcher.start()


def _watch() -> None:
    raised: dict[int, float] = {}  # ident -> the call it was raised in (once per call)
    while True:
        time.sleep(_EVERY)
        now = time.monotonic()
        with _lock:
            for ident, began in list(_running.items()):
                if now - began >= LIMIT and raised.get(ident) != began:
                    raised[ident] = began
                    ctypes.pythonapi.PyThreadState_SetAsyncExc(ctypes.c_ulong(ident), ctypes.py_object(RuleHung))


def _forgotten_in_child() -> None:
    """A forked child has none of its parent's threads: it starts its own watcher."""
    global _watcher
    _watcher = None
    _running.clear()


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_forgotten_in_child)
