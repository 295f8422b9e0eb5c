"""Details of one worker of a partitioned search (deployspec.partition_worker) that the
mutation pass found unpinned: how a worker leaves, what it ignores, when it stops, and
what it says it holds. Tiny graphs: every search here ends in well under a second."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
import time

import pytest

from deployspec import partition_worker, partitioned
from deployspec.memory import current_rss_mb
from deployspec.partition_worker import Worker
from deployspec.partitioned import Partitioned

from .helpers import Tree

pytestmark = [
    pytest.mark.skipif(not partitioned.available(), reason="partitioned searches need Linux (fork)"),
    pytest.mark.usefixtures("no_worker_left_behind"),
]

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


class Interrupted(Tree):
    """A tree whose worker owning node 37 gets a SIGINT (a Ctrl-C reaches the whole
    process group, workers too) while it expands it."""

    def expand(self, n):
        if n == 37:
            os.kill(os.getpid(), signal.SIGINT)
        yield from super().expand(n)


def test_a_ctrl_c_is_the_parent_s_to_handle_not_the_workers():
    """The parent stops the workers (after saying what the search found so far); a worker
    taking Ctrl-C itself would end the search with a KeyboardInterrupt from inside it."""
    search = Partitioned(Interrupted(1 << 7), 2)
    try:
        assert search.run(lambda n, d, k: False) is None
    except KeyboardInterrupt:  # (not left to end the test session)
        pytest.fail("a worker took the Ctrl-C")
    assert search.exhausted and search.states == (1 << 7) - 1


def python(script: str, **kwargs) -> subprocess.Popen:
    return subprocess.Popen([sys.executable, "-c", textwrap.dedent(script)], cwd=ROOT, text=True,
                            stdout=subprocess.PIPE, **kwargs)


def running(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().rsplit(")", 1)[1].split()[0] not in ("Z", "X")  # a zombie has ended
    except FileNotFoundError:
        return False


def test_workers_end_when_their_parent_is_killed():
    """``kill -9`` of a check (or the OOM killer) must not leave its workers running a
    search nobody will read, holding CPUs and memory (here: one sleeping in a move)."""
    proc = python("""
        import os, sys, time
        from deployspec.partitioned import Partitioned
        from tests.helpers import Tree

        class Stuck(Tree):
            def expand(self, n):
                time.sleep(60)
                yield from super().expand(n)

        def absorb(pids):
            print(*pids, flush=True)

        Partitioned(Stuck(64), 2).run(lambda n, d, k: False, share=os.getpid, absorb=absorb)
    """)
    pids = [int(p) for p in proc.stdout.readline().split()]
    try:
        assert len(pids) == 2 and all(running(p) for p in pids)
        proc.kill()
        proc.wait(10)
        deadline = time.monotonic() + 5
        while any(running(p) for p in pids) and time.monotonic() < deadline:
            time.sleep(0.05)
        assert not any(running(p) for p in pids)
    finally:
        for p in pids:  # (a worker left behind by a regression: not left to the machine)
            if running(p):
                os.kill(p, signal.SIGKILL)
        proc.stdout.close()


def worker(search: Partitioned, started: float | None = None, w: int = 0) -> Worker:
    """Worker ``w`` of ``search``, in this process (started ``started``, default now)."""
    return Worker(search, w, time.perf_counter() if started is None else started,
                  lambda view, depth, number: False, None, lambda: None)


def test_a_worker_is_over_its_time_budget_once_it_is_spent():
    search = Partitioned(Tree(64), 2, time_budget=0.5)
    assert not worker(search)._over_budget()
    late = worker(search, started=time.perf_counter() - 1.0)
    assert late._over_budget() and late.stopped == "time"


def test_a_worker_counts_against_its_memory_allowance_only_what_it_adds():
    """The pages it inherits from the parent are shared, not its own: counted, a search
    in a big process would stop at once for memory."""
    search = Partitioned(Tree(64), 2)
    search._allowance_mb = 1.0
    assert current_rss_mb() > 1.0 and not worker(search)._over_budget()
    w = worker(search)
    w.inherited_mb -= 2.0  # as if it had added 2 MiB since it started
    assert w._over_budget() and w.stopped == "memory"


class Wide(Tree):
    """A root with ``width`` children, none of which it owns."""

    def __init__(self, width: int):
        super().__init__(0)
        self.width = width

    def expand(self, n):
        if n == 0:
            root_s = partition_worker.stable_hash(0) % 2
            yield from ((0, c, None, hash(c)) for c in range(2, self.width + 2) if partition_worker.stable_hash(c) % 2 != root_s)

    def root(self):
        return 0


def test_a_budget_spent_while_taking_in_a_layer_stops_taking_it_in():
    """A worker handed a layer bigger than its budget allows stops within it, as when it
    expands one: a layer of millions of states must not be taken in whole."""
    width = 20 * partition_worker.CHECK_EVERY
    search = Partitioned(Wide(width), 2, time_budget=0.0)
    assert search.run(lambda n, d, k: False) is None
    assert search.stopped == "time" and search.states < width // 4


def test_the_owner_cache_stays_bounded(monkeypatch):
    """The worker of each owner key is remembered until the cache is full, then afresh:
    a model with a key per state must not grow it without end."""
    monkeypatch.setattr(partition_worker, "OWNERS_CACHED", 8)
    w = worker(Partitioned(Tree(64), 3))
    owners = [w._owner(n) for n in range(100)]
    assert len(w.owners) <= 8
    assert owners == [partition_worker.stable_hash(n) % 3 for n in range(100)]


class OneOwner(Tree):
    """A tree whose every node has one owner key: a model's partition that no move changes."""

    def owner_key(self, node):
        return "the app"


def test_workers_own_nodes_by_the_graph_s_owner_key():
    """A model's partition decides the owner (few moves then cross workers): here every
    node is one worker's, none the other's, and the search is the same."""
    search = Partitioned(OneOwner(1 << 7), 2)
    assert search.run(lambda n, d, k: False) is None
    assert search.exhausted and search.states == (1 << 7) - 1
    assert sorted(len(parents) for parents in search.parents) == [0, (1 << 7) - 1]


class Conn:
    """The worker's end of its pipe: the parent's messages, and what it sent back."""

    def __init__(self, *messages):
        self.messages, self.sent = list(messages), []

    def recv(self):
        return self.messages.pop(0)

    def send(self, message):
        self.sent.append(message)


def test_a_worker_s_held_bytes_count_what_it_sent_too():
    """``--workers`` reports the memory of the visited sets: the fingerprints a worker sent
    to others are held as those it owns are."""
    search = Partitioned(Tree(1 << 8), 2)
    w = worker(search, w=partition_worker.stable_hash(1) % 2)  # the root's
    conn = Conn(("expand", 0), ("expand", 1), ("finish",))
    w.serve(conn)
    kind, (_, _, _, held) = conn.sent[-1]
    assert kind == "final" and len(w.sent) > 0 and len(w.index) > 1
    assert held == (sys.getsizeof(w.index) + sys.getsizeof(w.sent) + 32 * (len(w.index) + len(w.sent))
                    + 8 * len(w.parent) + 4 * len(w.edge))


def test_a_node_reached_by_many_moves_is_sent_to_its_owner_once():
    """What crosses between workers is what a partition costs: a node found again (from
    its other children, a layer later) is not sent again, only the first time."""
    from deployspec.batches import loads

    search = Partitioned(Tree(1 << 8), 2)
    w = worker(search, w=partition_worker.stable_hash(1) % 2)  # the root's
    conn = Conn(*[("expand", depth) for depth in range(4)], ("finish",))
    w.serve(conn)
    sent = [fp for kind, report in conn.sent if kind == "report" and report.batches
            for blob in report.batches if blob is not None for fp, *_ in loads(blob)]
    assert len(sent) > 1 and len(sent) == len(set(sent)) == len(w.sent)


def test_the_first_goal_found_in_a_layer_is_the_one_kept():
    """Two goals at one depth: the search stops at the first, as one process's does (the
    same trace whatever ``--workers``), not at the last the layer reached."""
    search = Partitioned(Tree(64), 1)
    goal = search.run(lambda n, depth, number: n in (4, 5, 6))
    assert search.path_to(goal) == [0, 0]  # 1 -> 2 -> 4, not 1 -> 2 -> 5 nor 1 -> 3 -> 6
