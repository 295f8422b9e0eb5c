"""The layered BFS of :mod:`deployspec.explorer`, split over forked worker processes.

Hash partitioning, as in distributed explicit-state checkers (Stern and Dill's
parallel Murphi; Lerda and Sisto's distributed SPIN): worker ``w`` of ``W`` owns
every node whose owner key (``graph.owner_key``, else the node's key) has a
:func:`~deployspec.partition_worker.stable_hash` (of its ``repr``) equal to ``w`` modulo ``W``. A model's ``partition`` names the
part of a state few moves change, so that most moves stay inside one worker.
The owner alone keeps the fingerprints, parent pointers and action indices of
its nodes, judges them (``on_node``) and expands them. A child owned by another
worker is handed to that worker, once per sender (each worker remembers the
fingerprints it has sent), in one pickled batch per pair of workers and layer:
sub-objects shared by the states of a batch are sent once, and attrs states are
rebuilt by their constructors (:mod:`deployspec.batches`).

The workers move in lockstep, one layer at a time (expand, then take in what the
others sent), so the search stays breadth first: a goal is found in the first
layer that holds one, and its path is a shortest one. Each layer has two phases
(the workers expand it; then each takes in the children the others sent it), and of
the goals found in the same phase the lowest worker's first wins: a goal some worker
finds among children it owns itself comes before one a lower worker is sent. Both are
equally short. Owners come from a stable hash, not from Python's
``hash`` (whose string hashes are salted per process), so which worker owns what,
and so the whole run, is the same in every process for a given ``W``: the same
trace every time. Another ``W`` may give another trace of the same length. An
owner key must therefore have the same ``repr`` in every process (attrs classes,
tuples, numbers, strings and None do; a set of strings does not). Node numbers
are global: ``local index * W + w``.

The graph and the callbacks reach the workers by ``fork`` (they may be closures),
so this runs where ``fork`` exists (Linux; see :func:`available`). Fingerprints
are Python hashes: the forked workers share their parent's salt, so their
fingerprints agree. What the callbacks find in a worker reaches the parent
through ``share`` (called in each worker after every phase; its result is
pickled) and ``absorb`` (called in the parent with every worker's latest share,
in worker order), which is also where ``stop_after_depth`` is asked.

Bounds and budgets: ``max_depth`` is exact; ``max_states`` is checked on the
total between phases (a search may go past it by up to a layer, but never stops
below it, so its verdicts are one process's); the memory budget, less what the
parent holds, is split evenly over what the workers add to the memory they
inherit; the time budget is shared.
A worker that raises has its exception raised in the parent; a worker that
dies (killed, out of memory) is reported as a :class:`WorkerLost`.
"""

from __future__ import annotations

import multiprocessing as mp
import signal
import sys
import time
from array import array
from collections.abc import Callable
from multiprocessing.connection import wait
from typing import Any

import attrs

from deployspec import interruption
from deployspec.explorer import Graph
from deployspec.memory import current_rss_mb
from deployspec.partition_worker import Report, serve

#: the most workers one search may use (a typo should not fork a thousand processes)
MAX_WORKERS = 64


class WorkerLost(RuntimeError):
    """A worker process ended without answering (killed, or out of memory)."""


def available() -> bool:
    """Whether searches can be partitioned here: they fork their workers without
    exec, which only Linux does safely (macOS has ``fork`` but not that safety)."""
    return sys.platform.startswith("linux") and "fork" in mp.get_all_start_methods()


@attrs.define
class Partitioned:
    """:class:`deployspec.explorer.Layered` over ``workers`` processes; same results
    (states, transitions, depth, shortest goals), see the module's docstring."""

    graph: Graph
    workers: int
    max_depth: int | None = None
    max_states: int | None = None
    time_budget: float | None = None
    memory_budget_mb: float | None = None
    transitions: int = 0
    depth: int = 0
    stopped: str | None = None
    exhausted: bool = False
    #: per worker, gathered at the end: parent numbers and action indices of its nodes
    parents: list[array] = attrs.field(factory=list)
    edges: list[array] = attrs.field(factory=list)
    #: per worker: the most memory (MiB) it added to what it inherited, and the
    #: bytes held by its visited set
    worker_added_mb: list[float] = attrs.field(factory=list)
    worker_bytes: list[int] = attrs.field(factory=list)
    _states: int = 0
    _allowance_mb: float | None = None

    def __attrs_post_init__(self) -> None:
        if not 1 <= self.workers <= MAX_WORKERS:
            raise ValueError(f"workers must be between 1 and {MAX_WORKERS}, got {self.workers}")

    # --- what Layered offers ---------------------------------------------------
    @property
    def states(self) -> int:
        return self._states

    def path_to(self, number: int) -> list[int]:
        """The edge indices from the root to node ``number`` (a global number)."""
        w, out = self.workers, []
        while True:
            owner, local = number % w, number // w
            parent = self.parents[owner][local]
            if parent < 0:
                return out[::-1]
            out.append(self.edges[owner][local])
            number = parent

    def storage_bytes(self) -> int:
        return sum(self.worker_bytes)

    # --- the search ------------------------------------------------------------
    def run(
        self,
        on_node: Callable[[Any, int, int], bool],
        on_edge: Callable[[Any, Any, Any], bool] | None = None,
        stop_after_depth: Callable[[int], bool] | None = None,
        share: Callable[[], Any] = lambda: None,
        absorb: Callable[[list], None] = lambda shares: None,
    ) -> int | None:
        """Explore; return the global number of the goal, or None (as ``Layered.run``).

        ``share()`` runs in each worker after each phase, ``absorb(shares)`` in
        this process with the latest share of every worker, before
        ``stop_after_depth`` is asked."""
        if not available():
            raise RuntimeError("a partitioned search needs Linux (it forks its workers)")
        if mp.current_process().daemon:
            raise RuntimeError("a partitioned search cannot start from a daemon process")
        ctx = mp.get_context("fork")
        pipes = [ctx.Pipe() for _ in range(self.workers)]
        started = time.perf_counter()
        #: what each worker may add to the memory it inherits (the parent's, shared)
        self._allowance_mb = None if self.memory_budget_mb is None else \
            max(self.memory_budget_mb - current_rss_mb(), 0.0) / self.workers
        procs = []
        finished = False
        try:
            with interruption.held_while_starting({signal.SIGINT, signal.SIGTERM}):  # until each takes them (serve)
                for w in range(self.workers):
                    p = ctx.Process(target=serve, daemon=True, name=f"deployspec-explore-{w}",
                                    args=(self, w, pipes, started, on_node, on_edge, share))
                    p.start()
                    procs.append(p)
            for _, child_end in pipes:
                child_end.close()
            driver = _Driver(self, [parent_end for parent_end, _ in pipes], procs, absorb)
            goal = driver.drive(stop_after_depth)
            driver.finish()
            finished = True
            return goal
        finally:  # after a finish the workers leave by themselves; else they are stopped
            for parent_end, child_end in pipes:
                parent_end.close()
                child_end.close()
            if not finished:  # interrupted or failed: nothing more to hear from them, and the
                for p in procs:  # program's last resort ends it 5 s after a signal (a SIGTERM
                    if p.is_alive():  # waits while a worker is stopped): killed at once
                        p.kill()
            for p in procs:
                p.join(5 if finished else 1)
                if p.is_alive():
                    p.kill()
                    p.join(1)


class _Driver:
    """The parent's side of a partitioned search: one round of messages per phase."""

    def __init__(self, search: Partitioned, conns, procs, absorb):
        self.search, self.conns, self.procs, self.absorb = search, conns, procs, absorb
        self.shared: list[Any] = [None] * len(conns)

    def drive(self, stop_after_depth) -> int | None:
        s = self.search
        reports = self._round(None)  # each worker placed the root or not
        goal = self._settle(reports)
        if goal is not None or s.stopped:
            return goal
        depth = 0
        while True:
            interruption.raise_if_pending()  # dropped in a callback: a stop, at the next layer
            # asked first: a goal provably shortest at the bound is no bound's cut
            if stop_after_depth is not None and stop_after_depth(depth):
                return None
            if s.max_depth is not None and depth >= s.max_depth:
                s.stopped = "max_depth"
                return None
            s.depth = depth + 1
            reports = self._round([("expand", depth)] * len(self.conns))
            goal = self._settle(reports)
            if goal is not None or s.stopped:
                return goal
            inboxes = [[r.batches[o] for r in reports if r.batches[o] is not None]
                       for o in range(len(self.conns))]
            reports = self._round([("receive", depth, inbox) for inbox in inboxes])
            goal = self._settle(reports)
            if goal is not None or s.stopped:
                return goal
            if sum(r.frontier for r in reports) == 0:
                s.depth = depth  # the last layer added nothing
                s.exhausted = True
                return None
            depth += 1

    def _settle(self, reports: list[Report]) -> int | None:
        """Take in one round of reports: counts, shares, the first goal, a stop.

        ``max_states`` is checked here, on the total, between phases: a phase may
        go past it (by up to a layer), but a search never stops while the
        total is below it, so it gives the verdicts of one process."""
        s = self.search
        s._states = sum(r.states for r in reports)
        s.transitions = sum(r.transitions for r in reports)
        self.shared = [r.shared for r in reports]
        self.absorb(self.shared)
        for r in reports:
            if r.goal is not None:
                return r.goal
        for r in reports:
            if r.stopped:
                s.stopped = r.stopped
                break
        if not s.stopped and s.max_states is not None and s.states >= s.max_states:
            s.stopped = "max_states"
        return None

    def _round(self, messages: list | None) -> list[Any]:
        """Send each worker its message, then take their answers as they come: a
        worker that fails is reported at once, not after the others' layer."""
        n = len(self.conns)
        if messages is not None:
            for w, (conn, message) in enumerate(zip(self.conns, messages)):
                try:
                    conn.send(message)
                except OSError:  # its end is closed: it died while waiting
                    self._lost(w)
        answers: list[Any] = [None] * n
        pending = set(range(n))
        while pending:
            ready = set(wait([self.conns[w] for w in pending] + [self.procs[w].sentinel for w in pending]))
            for w in sorted(pending):
                conn, proc = self.conns[w], self.procs[w]
                if conn in ready or (proc.sentinel in ready and conn.poll()):
                    answers[w] = self._read(w)
                    pending.discard(w)
                elif proc.sentinel in ready:
                    self._lost(w)
        return answers

    def _read(self, w: int) -> Any:
        try:
            kind, payload = self.conns[w].recv()
        except (EOFError, OSError):
            self._lost(w)
        except Exception as exc:  # noqa: BLE001 - an answer that does not unpickle here
            raise WorkerLost(f"explore worker {w + 1} of {len(self.conns)} sent an unreadable "
                             f"answer: {type(exc).__name__}: {exc}") from None
        if kind == "error":
            raise payload
        if kind == "ended":  # a worker's last resort (``contract.last_resort``): the program's
            from deployspec.contract import last_resort

            last_resort.end(*payload)
        return payload

    def _lost(self, w: int):
        proc = self.procs[w]
        proc.join(1)
        code = proc.exitcode
        why = {-signal.SIGKILL: " (killed: out of memory?)", -signal.SIGTERM: " (stopped by SIGTERM)",
               3: " (out of memory)"}.get(code, "")
        raise WorkerLost(f"explore worker {w + 1} of {len(self.conns)} stopped without answering "
                         f"(exit code {code}){why}")

    def finish(self) -> None:
        """Gather every worker's arrays (for paths) and its memory figures."""
        s = self.search
        for parents, edges, added, held in self._round([("finish",)] * len(self.conns)):
            s.parents.append(array("q", parents))
            s.edges.append(array("i", edges))
            s.worker_added_mb.append(added)
            s.worker_bytes.append(held)
