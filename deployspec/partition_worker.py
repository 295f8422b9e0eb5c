"""One worker of a partitioned search (:mod:`deployspec.partitioned`): the nodes
it owns, what it sends to the others and takes in from them, layer by layer.

Runs in a process forked by the parent's driver; what it finds reaches the
parent as a :class:`Report` after every phase.
"""

from __future__ import annotations

import gc
import hashlib
import os
import signal
import sys
import threading
import time
import traceback
from array import array
from typing import TYPE_CHECKING, Any

import attrs

from deployspec.batches import dumps as dump_batch
from deployspec.batches import loads as load_batch
from deployspec.contract import last_resort
from deployspec.explorer import CHECK_EVERY
from deployspec.memory import current_rss_mb, memory_stop, peak_rss_mb

if TYPE_CHECKING:
    from deployspec.partitioned import Partitioned

#: owner keys whose worker is remembered (the cache starts afresh when full)
OWNERS_CACHED = 1 << 16


def stable_hash(key: Any) -> int:
    """A hash of ``repr(key)`` that is the same in every process (Python's ``hash``
    salts strings per process) and mixes well (a CRC of 4, 5, 6 and 7 is even)."""
    return int.from_bytes(hashlib.blake2b(repr(key).encode(), digest_size=8).digest(), "little")


@attrs.define
class Report:
    """A worker's answer after each phase."""

    goal: int | None
    stopped: str | None
    #: after an expansion: one pickled batch (or None) per receiving worker
    batches: list[bytes | None] | None
    frontier: int
    states: int
    transitions: int
    shared: Any


def serve(search: Partitioned, w: int, pipes, started: float, on_node, on_edge, share) -> None:
    """A worker's life: answer the parent until it says finish, then leave at once
    (``os._exit``: nothing inherited from the parent is flushed or cleaned up twice)."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # the parent stops the workers
    # not the parent's handler (interruption.kept), which would raise KeyboardInterrupt here and
    # hand it to the parent: a SIGTERM to this worker alone (earlyoom) is this search's end
    signal.signal(signal.SIGTERM, signal.SIG_DFL)
    # (both held since forked: Partitioned.run)
    signal.pthread_sigmask(signal.SIG_UNBLOCK, {signal.SIGINT, signal.SIGTERM})
    conn = Sending(pipes[w][1])
    for i, (parent_end, child_end) in enumerate(pipes):
        parent_end.close()
        if i != w:
            child_end.close()  # so the parent sees this worker's end close when it dies
    die_with_parent()
    # a rule (or an object) that will not let go ends the program, not the worker alone
    last_resort.relay = lambda line, status: conn.send(("ended", (line, status)), timeout=1.0)
    gc.disable()
    status = 0
    try:
        Worker(search, w, started, on_node, on_edge, share).serve(conn)
    except BaseException as exc:  # noqa: BLE001 - every failure goes to the parent
        # (one that cannot be told, out of memory again on the way, still ends the worker
        # as failed, and the parent says so: exit code 1, or 3 for a MemoryError)
        status = 3 if isinstance(exc, MemoryError) else 1
        _tell(conn, exc, w, search.workers)
        status = 0
    finally:
        os._exit(status)


def _tell(conn, exc: BaseException, w: int, workers: int) -> None:
    """Send the parent the failure ``exc``, with where it was raised."""
    exc.add_note(f"(in explore worker {w + 1} of {workers})\n"
                 + "".join(traceback.format_tb(exc.__traceback__)).rstrip())
    # where it was raised, which the parent's traceback no longer shows (the fault
    # of a design's rule names its file and line: variant_plugins); frames made
    # anew, with no code object in them (Python 3.14's FrameSummary keeps its
    # frame's, which does not pickle: the exception would come back a RuntimeError)
    exc.worker_frames = [traceback.FrameSummary(f.filename, f.lineno, f.name, lookup_line=False)
                         for f in traceback.extract_tb(exc.__traceback__)]
    try:
        try:
            conn.send(("error", exc))
        except Exception:  # noqa: BLE001 - an exception that does not pickle: its text, then
            conn.send(("error", RuntimeError(f"{type(exc).__name__}: {exc}")))
    except OSError:
        pass


class Sending:
    """A worker's end of its pipe, sending under a lock: the last resort's thread
    (``contract.last_resort.relay``) may send too, and two messages written at once
    would reach the parent as one unreadable one."""

    def __init__(self, conn):
        self.conn, self.lock = conn, threading.Lock()

    def send(self, message: Any, timeout: float = -1) -> None:
        """Send ``message``; with a ``timeout``, give up silently if another send holds
        the pipe that long (the parent then finds the worker lost)."""
        if self.lock.acquire(timeout=timeout):
            try:
                self.conn.send(message)
            finally:
                self.lock.release()

    def recv(self) -> Any:
        return self.conn.recv()


def die_with_parent() -> None:
    """Ask Linux to stop this worker when its parent dies (killed, not just interrupted)."""
    try:
        import ctypes

        ctypes.CDLL(None, use_errno=True).prctl(1, signal.SIGTERM)  # PR_SET_PDEATHSIG
    except (OSError, AttributeError):
        pass  # best effort: a worker also leaves when its pipe closes


class Worker:
    """One partition: the nodes whose owner is ``w``."""

    def __init__(self, search: Partitioned, w: int, started: float, on_node, on_edge, share):
        self.search, self.w, self.W = search, w, search.workers
        self.started, self.on_node, self.on_edge, self.share = started, on_node, on_edge, share
        graph = self.graph = search.graph
        self.owner_key = graph.key if graph.owner_key is None else graph.owner_key
        self.owners: dict[Any, int] = {}
        self.index: set[int] = set()
        self.sent: set[int] = set()
        self.parent = array("q")
        self.edge = array("i")
        self.frontier: list[tuple[int, Any]] = []
        self.transitions = 0
        self.goal: int | None = None
        self.stopped: str | None = None
        #: resident memory at the start: the parent's pages, shared until written
        self.inherited_mb = current_rss_mb()
        self.allowance_mb = search._allowance_mb
        self.expanded = 0

    def serve(self, conn) -> None:
        conn.send(("report", self._place_root()))
        while True:
            message = conn.recv()
            if message[0] == "expand":
                batches = self._expand(message[1])
                conn.send(("report", self._report(batches)))
            elif message[0] == "receive":
                self._receive(message[1], message[2])
                conn.send(("report", self._report(None)))
            else:  # finish
                held = (sys.getsizeof(self.index) + sys.getsizeof(self.sent)
                        + 32 * (len(self.index) + len(self.sent))  # the fingerprint int objects
                        + self.parent.itemsize * len(self.parent) + self.edge.itemsize * len(self.edge))
                added = max(peak_rss_mb() - self.inherited_mb, 0.0)
                conn.send(("final", (self.parent.tobytes(), self.edge.tobytes(), added, held)))
                return

    def _report(self, batches) -> Report:
        return Report(self.goal, self.stopped, batches, len(self.frontier), len(self.parent),
                       self.transitions, self.share())

    def _place_root(self) -> Report:
        graph = self.graph
        root = graph.root()
        fp = graph.fingerprint(root)
        if self._owner(root) == self.w:
            self._add(fp, -1, -1, root, 0)
        return self._report(None)

    def _owner(self, node: Any) -> int:
        """The worker that owns ``node``: :func:`stable_hash` of its owner key,
        the same in every process (computed once per key; a model's keys are few)."""
        key = self.owner_key(node)
        owner = self.owners.get(key)
        if owner is None:
            if len(self.owners) >= OWNERS_CACHED:
                self.owners.clear()
            owner = self.owners[key] = stable_hash(key) % self.W
        return owner

    def _add(self, fp: int, parent: int, edge: int, child: Any, depth: int) -> bool:
        """Record a new node of this partition; True when the search must stop here."""
        n = len(self.parent)
        self.index.add(fp)
        self.parent.append(parent)
        self.edge.append(edge)
        number = n * self.W + self.w
        item, view = self.graph.enter(child)
        if self.on_node(view, depth, number):
            self.goal = number
            return True
        self.frontier.append((number, item))
        return False

    def _expand(self, depth: int) -> list[bytes | None]:
        graph, on_edge, W, w = self.graph, self.on_edge, self.W, self.w
        index, sent, owner_of = self.index, self.sent, self._owner
        graph.layer = depth
        frontier, self.frontier = self.frontier, []
        out: list[list] = [[] for _ in range(W)]
        transitions = self.transitions
        try:
            for number, node in frontier:
                self.expanded += 1
                if self.expanded % CHECK_EVERY == 0 and self._over_budget():
                    break
                for e, child, info, fp in graph.expand(node):
                    transitions += 1
                    if on_edge is not None and on_edge(node, child, info):
                        n = len(self.parent)
                        self.parent.append(number)
                        self.edge.append(e)
                        self.goal = n * W + w
                        break
                    owner = owner_of(child)
                    if owner == w:
                        if fp not in index and self._add(fp, number, e, child, depth + 1):
                            break
                    elif fp not in sent:
                        sent.add(fp)
                        out[owner].append((fp, number, e, child))
                if self.goal is not None or self.stopped:
                    break
        finally:
            self.transitions = transitions
        return [dump_batch(batch) if batch else None for batch in out]

    def _receive(self, depth: int, batches: list[bytes]) -> None:
        index = self.index
        taken = 0
        for blob in batches:
            for fp, parent, e, child in load_batch(blob):
                if fp in index:
                    continue
                taken += 1
                if taken % CHECK_EVERY == 0 and self._over_budget():
                    return
                if self._add(fp, parent, e, child, depth + 1):
                    return

    def _over_budget(self) -> bool:
        s = self.search
        if s.time_budget is not None and time.perf_counter() - self.started > s.time_budget:
            self.stopped = "time"
        elif self.allowance_mb is not None:
            self.stopped = memory_stop(self.allowance_mb, self.inherited_mb)
        return self.stopped is not None
