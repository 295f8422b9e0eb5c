"""A rule handed in that never returns (a ``while`` whose condition stays true).

A search's budget is checked between steps, so a rule looping inside one step would
hold ``check`` past ``--budget`` (and ``replay`` for ever) saying nothing. Each call of
a design's own rule (``rule_results``) is timed; a watcher thread, started in a process
the first time a rule handed in runs there, raises :class:`RuleHung` in the thread of a
call that has run :data:`LIMIT` seconds, at whatever line it loops on (and again every
half second, should the rule catch it), and the rule's wrapper says so in one line. A
rule that swallows every exception in its loop (``except BaseException``, a bare
``except:``; Ctrl-C cannot stop it either) ends the ``deployspec`` program ``GRACE``
seconds later with one line and status 2, as an implementation under test that will not
let go does (``contract.last_resort``); so does a rule blocked in a system call (a sleep, a
read, a lock), where Python delivers no exception. In a worker of a partitioned search
(``--workers``) the worker hands its line to the parent, which ends the program with it,
once. In a host's process (pytest) it is raised on. The
thread costs nothing while no rule runs long, and no signal handler of the host's
(pytest's, a ``--python`` object's ``SIGALRM``) is touched.

The exception is asynchronous, so where it lands is guarded. The watcher raises,
holding :data:`lock`, only for a :class:`Call` not left whose wrapper frame is on its
thread's stack. Once the rule is left, the wrapper, holding the lock, marks the call
left (a store, where Python delivers no asynchronous exception); one raised before is
delivered at the latest as :func:`forget` is entered, still within: nothing lands in
what the wrapper does after.
"""

from __future__ import annotations

import ctypes
import os
import sys
import threading
import time
from types import FrameType

from deployspec.contract import last_resort

#: seconds one call of a rule handed in may run (the shipped rules take microseconds)
LIMIT = 10.0
#: how often the watcher looks
_EVERY = 0.5

#: thread ident -> its outermost running rule call
running: dict[int, Call] = {}
#: held by the watcher while it raises, by a wrapper while it marks its call left
lock = threading.Lock()
_watcher: threading.Thread | None = None


class RuleHung(BaseException):
    """Raised in a rule's thread once its call has run :data:`LIMIT` seconds (not an
    ``Exception``: a rule's ``except Exception`` inside its loop must not swallow it)."""


class Call:
    """One call of a rule handed in, ``rule`` its words (name, where written), ``design``
    the words naming its design (``variant x (DEPLOYSPEC_VARIANTS module m): ``), its
    wrapper running in ``frame``. The wrapper sets ``left`` holding :data:`lock` once
    the rule is left, then calls :func:`forget`."""

    __slots__ = ("design", "frame", "left", "looks", "raised", "rule")

    def __init__(self, frame: FrameType, rule: str, design: str = ""):
        self.design = design
        self.frame: FrameType | None = frame
        self.left = False
        self.looks = 0  # the watcher's looks that found it running
        self.raised: int | None = None  # at which of them the watcher first raised in it
        self.rule = rule


def enter(ident: int, this: Call) -> None:
    """``this`` call begins in thread ``ident``: timed unless the thread is in a rule
    call already (one rule calling another)."""
    if _watcher is None:
        _start()
    with lock:
        current = running.get(ident)
        if current is None or current.left:
            running[ident] = this


def forget(ident: int, this: Call) -> None:
    """``this`` call in thread ``ident`` has ended (call it holding :data:`lock`, having
    set ``this.left``): it is forgotten, with its frame (which holds its thread's stack
    of frames and their variables: a test's, a caller's). A RuleHung raised and not
    delivered yet is delivered as this function is entered (Python checks for one
    there), so in the wrapper's ``try``. (Not taken back with ``SetAsyncExc(id, NULL)``:
    with none pending, that leaves CPython 3.11's eval breaker set for good, and a later
    Hypothesis search spun at 100 % CPU.)"""
    if running.get(ident) is this:
        del running[ident]
    this.frame = None


def _start() -> None:
    global _watcher
    with lock:
        if _watcher is None:
            _watcher = threading.Thread(target=_watch, name="deployspec rule watcher", daemon=True)
            _watcher.start()


def _watch() -> None:
    while True:
        time.sleep(_EVERY)
        if running:
            _look()


def _look() -> None:
    """One look at the calls running (a function of its own: the frames it holds, every
    thread's stack, are let go when it returns, not kept while the watcher sleeps).

    Time is counted in looks, not read off the clock: after the process was stopped
    (Ctrl-Z) the first look would find a rule that began just before the stop "running"
    for as long as the stop lasted. (The first look that finds a call may come at any
    moment after it began: not counted.)"""
    with lock:
        tops = sys._current_frames()
        for ident, this in list(running.items()):
            if this.left or not _on_stack(this.frame, tops.get(ident)):
                del running[ident]  # (off the stack: its thread ended)
                continue
            due = _due(this)
            if due == "end" and last_resort.own_process():
                last_resort.end(f"error: {this.design}its rule {this.rule} did not return within {LIMIT:g} s and "
                                "could not be interrupted (it swallows every exception, or waits in a "
                                "system call)", 2)
            if due is not None:
                ctypes.pythonapi.PyThreadState_SetAsyncExc(ctypes.c_ulong(ident), ctypes.py_object(RuleHung))


def _due(this: Call) -> str | None:
    """What one more look finding ``this`` running calls for: nothing yet, ``"raise"``
    (RuleHung: it has run LIMIT seconds of looks) or ``"end"`` (raised GRACE seconds of
    looks ago, and running still)."""
    this.looks += 1
    if (this.looks - 1) * _EVERY < LIMIT:
        return None
    if this.raised is None:
        this.raised = this.looks
    return "end" if (this.looks - this.raised) * _EVERY >= last_resort.GRACE else "raise"


def _on_stack(frame: FrameType | None, top: FrameType | None) -> bool:
    while top is not None:
        if top is frame:
            return True
        top = top.f_back
    return False


def _forgotten_in_child() -> None:
    """A forked child has none of its parent's threads, and perhaps the lock held: it
    starts afresh."""
    global _watcher, lock
    _watcher = None
    lock = threading.Lock()
    running.clear()


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_forgotten_in_child)
