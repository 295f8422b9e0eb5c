"""Breadth-first search over a model's reachable states: shortest paths, bounded proofs.

The search is generic over models: it only uses ``model.initial_state``,
``model.observe``, ``model.offered(variant)`` (the model's ``candidate_actions`` for
that design: capi asks ``variant.refusals()``, and offers everything to a stand-in
without it) and ``variant.step``, so the Cloud Foundry model and any other one
explore alike.

Visited states are stored compactly, as in TLC or SPIN's hash compaction: a set
of 64-bit fingerprints (Python's ``hash`` of the frozen attrs state), and two
flat arrays indexed by node number (the order of discovery) hold each node's
parent and the index of the action (in ``candidate_actions``) that reached it.
Only the current and next BFS layers keep whole states (the search's own storage; the
explore engine's graph also keeps up to ``MOVES_CAP`` states' moves, ``engines/product.py``). A path is rebuilt by
walking parent pointers back to the root and replaying the action indices
forward. Two distinct states sharing a fingerprint would make the second look
visited; with n states the chance of any such collision is about n**2 / 2**65
(reported as ``collision_bound``; about 3e-12 for 10,000 states). That bound takes
the hashes as random, which Python's are not everywhere: ``hash(-1) == hash(-2)``,
and so are the hashes of tuples and states differing only there (the shipped
models' states hold no negative numbers). Fingerprints are only compared within
one process or its forked workers (string hashes are salted per process).

Symmetry: none is applied. Observations number web processes and deployments
by creation order, and properties and actions (``runtime(P2)``) read those
numbers, so renumbering would change what is observed. It would also gain
nothing here: in the Cloud Foundry model every process is created by ``push``
or by one ``deploy``, so ids are already fixed by the number of deployments.
A model may supply ``Model.canonical(state) -> state`` to collapse states it
knows to be equivalent (it must keep every property's verdict); it is applied
to every state before fingerprinting.

One search can be split over several processes: :mod:`deployspec.partitioned`
runs the same layered search with each worker owning a share of the states.
"""

from __future__ import annotations

import gc
import sys
import time
from array import array
from collections.abc import Callable, Hashable, Iterable
from typing import Any

import attrs

from deployspec import interruption
from deployspec.memory import memory_stop
from deployspec.reference.core import Action, Rejected

#: how often (in expanded nodes) the time and memory budgets are looked at
CHECK_EVERY = 512


@attrs.define
class BfsResult:
    """What a breadth-first search found and how much it looked at."""

    #: the shortest action sequence from the initial state to a goal, or None
    path: list[Action] | None
    #: distinct (canonical) states visited
    states: int
    #: transitions taken (accepted actions that change the state, including into visited states)
    transitions: int
    #: BFS depth reached (the goal's depth when one was found)
    depth: int
    seconds: float
    #: False when a bound or budget stopped the search before it ran out of states
    complete: bool
    #: why the search stopped early ("max_depth", "max_states", "time", "memory",
    #: "address_space": near a ``ulimit -v``) or None
    stopped: str | None = None
    #: the goal state itself (the last state of ``path``)
    goal_state: Any = None
    #: accepted transitions per action kind
    by_kind: dict[str, int] = attrs.field(factory=dict)
    #: upper bound on the chance that a fingerprint collision hid a state
    collision_bound: float = 0.0


class Graph:
    """The nodes a search visits and how it moves between them.

    ``root()`` is the start node, ``expand(node)`` gives ``(edge, child, info, fp)``
    for every outgoing move, where ``edge`` is a small integer such that
    ``child_by_edge(node, edge)`` rebuilds the same child (used to rebuild a path
    from parent pointers, with ``layer`` set to the node's depth as when it was
    expanded) and ``fp`` is ``fingerprint(child)``; ``key(node)`` is what identifies
    a node as visited (the search stores its hash) and, unless ``owner_key`` is given,
    which worker of a partitioned search owns it. A subclass gives ``root``, ``key``,
    ``expand`` and ``child_by_edge``; the base's raise NotImplementedError, so one left
    out fails where it is called (a ``key`` returning None would fingerprint every node
    alike and end the search at the root, silently).
    """

    #: the depth of the nodes being expanded (set by the search before each layer)
    layer: int = 0
    #: node -> what decides which worker owns the node in a partitioned search
    #: (:mod:`deployspec.partitioned`); None: its key. Equal nodes must give equal owner keys.
    owner_key: Callable[[Any], Hashable] | None = None

    def root(self) -> Any:
        raise NotImplementedError

    def key(self, node: Any) -> Hashable:
        raise NotImplementedError

    def fingerprint(self, node: Any) -> int:
        """What the search stores for a visited node: its key's hash. ``expand`` gives it
        with each child: a graph that hashes its children anyway (``ModelGraph``, to
        spot self-loops) hands that hash on rather than having it worked out again."""
        return hash(self.key(node))

    def enter(self, child: Any) -> tuple[Any, Any]:
        """A newly found child as (what its expansion needs, what ``on_node`` sees)."""
        return child, child

    def expand(self, node: Any) -> Iterable[tuple[int, Any, Any, int]]:
        raise NotImplementedError

    def child_by_edge(self, node: Any, edge: int) -> tuple[Any, Any]:
        raise NotImplementedError


@attrs.define
class Layered:
    """The generic layered BFS over a :class:`Graph`, with compact storage.

    ``on_node(node, depth, number)`` is called once for each new node (the
    root included); returning True makes it the goal and stops the search.
    ``on_edge(node, child, info)`` sees every move before the child is looked
    up; returning True makes the move itself the goal (a violation judged on a
    transition), recorded as an extra node. ``stop_after_depth(depth)`` is
    asked after each complete layer; True ends the search there (used to stop
    once no deeper node can give a shorter answer).
    """

    graph: Graph
    max_depth: int | None = None
    max_states: int | None = None
    time_budget: float | None = None
    memory_budget_mb: float | None = None
    index: set = attrs.field(factory=set)
    parent: array = attrs.field(factory=lambda: array("q"))
    edge: array = attrs.field(factory=lambda: array("i"))
    transitions: int = 0
    depth: int = 0
    stopped: str | None = None
    exhausted: bool = False
    #: the node being expanded when an exception passed (a rule of a design raised), or None
    failed_at: int | None = None

    def run(
        self,
        on_node: Callable[[Any, int, int], bool],
        on_edge: Callable[[Any, Any, Any], bool] | None = None,
        stop_after_depth: Callable[[int], bool] | None = None,
        share: Callable[[], Any] | None = None,
        absorb: Callable[[list], None] | None = None,
    ) -> int | None:
        """Explore; return the node number of the goal, or None.

        ``share`` and ``absorb`` carry what the callbacks find out of the
        workers of a partitioned search; in one process it is already here, so
        they are not called.

        The cyclic garbage collector is paused meanwhile (and restored after):
        states are trees of frozen objects, so it finds nothing, but its passes
        over the ever larger heap of states cost about a fifth of a search."""
        enabled = gc.isenabled()
        gc.disable()
        try:
            return self._run(on_node, on_edge, stop_after_depth)
        finally:
            if enabled:
                gc.enable()

    def _run(self, on_node, on_edge, stop_after_depth) -> int | None:
        started = time.perf_counter()
        graph = self.graph
        index, parent, edge = self.index, self.parent, self.edge
        root = graph.root()
        index.add(graph.fingerprint(root))
        parent.append(-1)
        edge.append(-1)
        item, view = graph.enter(root)
        if on_node(view, 0, 0):
            return 0
        if self.max_states is not None and self.max_states <= 1:
            self.stopped = "max_states"
            return None
        frontier: list[tuple[int, Any]] = [(0, item)]
        expanded = 0
        number = 0
        transitions = self.transitions  # kept in a local in the loop: it runs per move
        max_states = self.max_states
        expand, enter = graph.expand, graph.enter
        add, append_parent, append_edge = index.add, parent.append, edge.append
        try:
            while frontier:
                # asked first: a goal provably shortest at the bound is no bound's cut
                if stop_after_depth is not None and stop_after_depth(self.depth):
                    return None
                if self.max_depth is not None and self.depth >= self.max_depth:
                    self.stopped = "max_depth"
                    return None
                self.depth += 1
                depth = self.depth
                graph.layer = depth - 1
                nxt: list[tuple[int, Any]] = []
                for number, node in frontier:
                    expanded += 1
                    if expanded % CHECK_EVERY == 0:
                        why = self._over_budget(started)
                        if why:
                            self.stopped = why
                            return None
                    for e, child, info, fp in expand(node):
                        transitions += 1
                        if on_edge is not None and on_edge(node, child, info):
                            n = len(parent)
                            append_parent(number)
                            append_edge(e)
                            return n
                        if fp in index:
                            continue
                        n = len(parent)
                        add(fp)
                        append_parent(number)
                        append_edge(e)
                        item, view = enter(child)
                        if on_node(view, depth, n):
                            return n
                        if max_states is not None and n + 1 >= max_states:
                            self.stopped = "max_states"
                            return None
                        nxt.append((n, item))
                frontier = nxt
            self.depth -= 1  # the last layer added nothing
            self.exhausted = True
            return None
        except (Exception, SystemExit):
            self.failed_at = number  # the node whose moves raised (a design's rule): its report names the path
            raise
        finally:
            self.transitions = transitions

    def _over_budget(self, started: float) -> str | None:
        interruption.raise_if_pending()  # dropped where Python could not raise it: a stop, not a budget
        if self.time_budget is not None and time.perf_counter() - started > self.time_budget:
            return "time"
        if self.memory_budget_mb is not None:
            return memory_stop(self.memory_budget_mb)
        return None

    def path_to(self, number: int) -> list[int]:
        """The edge indices from the root to node ``number``."""
        edges = []
        while number > 0:
            edges.append(self.edge[number])
            number = self.parent[number]
        return edges[::-1]

    @property
    def states(self) -> int:
        return len(self.parent)

    def storage_bytes(self) -> int:
        """Bytes held by the visited set (index and parent arrays, not the states)."""
        return (
            sys.getsizeof(self.index)
            + 32 * len(self.index)  # the fingerprint int objects
            + self.parent.itemsize * len(self.parent)
            + self.edge.itemsize * len(self.edge)
        )


def layered(graph: Graph, workers: int = 1, max_depth: int | None = None,
            max_states: int | None = None, time_budget: float | None = None,
            memory_budget_mb: float | None = None):
    """The layered search of ``graph``: in this process, or split over ``workers``
    processes (:class:`deployspec.partitioned.Partitioned`, same ``run``)."""
    if workers > 1:
        from deployspec.partitioned import Partitioned

        return Partitioned(graph, workers, max_depth, max_states, time_budget, memory_budget_mb)
    return Layered(graph, max_depth, max_states, time_budget, memory_budget_mb)


def merged_counts(counts: list[dict[str, int] | None]) -> dict[str, int]:
    """Counts per key summed over the workers of a search (keys in the order first seen)."""
    out: dict[str, int] = {}
    for c in counts:
        for k, n in (c or {}).items():
            out[k] = out.get(k, 0) + n
    return out


def collision_bound(states: int) -> float:
    return states * states / 2.0**65


# ---------------------------------------------------------------------------
# The model graph: states of one variant, moves = accepted state-changing actions
# ---------------------------------------------------------------------------


class ModelGraph(Graph):
    """Reachable states of a variant. Observations and candidate actions are
    computed once per state; rejected actions and self-loops are not moves."""

    def __init__(self, model, variant, config):
        self.model, self.variant, self.config = model, variant, config
        self.canonical = getattr(model, "canonical", None)
        self.owner_key = getattr(model, "partition", None)
        self._observe, self._candidates = model.observe, model.offered(variant)
        #: moves per action kind (counted here: a callback per move costs more)
        self.by_kind: dict[str, int] = {}

    def root(self):
        s = self.model.initial_state(self.config)
        return self.canonical(s) if self.canonical else s

    def key(self, node):
        return node

    def fingerprint(self, node):
        return hash(node)

    def enter(self, state):
        """Observe a new state once: its candidate actions wait in the frontier
        for its expansion, the observation goes to ``on_node`` and is dropped."""
        obs = self._observe(state)
        return (state, self._candidates(obs, self.config)), (state, obs)

    def expand(self, item):
        state, actions = item
        step = self.variant.step
        canonical = self.canonical
        by_kind = self.by_kind
        fp = hash(state)
        # (a generator, not a list: a search that stops at a move neither steps past it
        # nor counts the moves after it in by_kind)
        for i, action in enumerate(actions):
            after = step(state, action)
            if after.__class__ is Rejected:
                continue
            if canonical:
                after = canonical(after)
            # a self-loop? Models return the same object for a no-op; otherwise the
            # hashes settle most cases, and the child's goes on to the search.
            if after is state:
                continue
            h = hash(after)
            if h == fp and after == state:
                continue
            kind = action.kind
            by_kind[kind] = by_kind.get(kind, 0) + 1
            yield i, after, action, h

    def child_by_edge(self, state, e):
        action = self._candidates(self.model.observe(state), self.config)[e]
        after = self.variant.step(state, action)
        return (self.canonical(after) if self.canonical else after), action


def actions_to(graph: ModelGraph, search: Layered, number: int) -> tuple[list[Action], Any]:
    """The actions from the root to node ``number`` of a finished search, and its state."""
    path, state = [], graph.root()
    for depth, e in enumerate(search.path_to(number)):
        graph.layer = depth
        state, action = graph.child_by_edge(state, e)
        path.append(action)
    return path, state


def bfs(
    model,
    variant,
    config,
    *,
    goal: Callable[[Any, dict], bool],
    max_depth: int | None = None,
    max_states: int | None = None,
    time_budget: float | None = None,
    memory_budget_mb: float | None = None,
    workers: int = 1,
) -> BfsResult:
    """The shortest action sequence from ``model.initial_state(config)`` to a
    state where ``goal(state, observation)`` holds, exploring breadth-first.

    ``path`` is None when no goal state is reachable within the bounds; then
    ``complete`` says whether every reachable state was seen (a proof that no
    goal state is reachable) or a bound or budget cut the search short.
    ``workers`` > 1 splits the search over that many processes
    (:mod:`deployspec.partitioned`; ``goal`` then runs in them).
    """
    started = time.perf_counter()
    graph = ModelGraph(model, variant, config)

    def on_node(view, depth, n):
        return bool(goal(*view))

    def absorb(shares):
        graph.by_kind = merged_counts(shares)

    search = layered(graph, workers, max_depth, max_states, time_budget, memory_budget_mb)
    found = search.run(on_node, share=lambda: graph.by_kind, absorb=absorb)
    path = goal_state = None
    if found is not None:
        path, goal_state = actions_to(graph, search, found)
    return BfsResult(
        path=path,
        states=search.states,
        transitions=search.transitions,
        depth=search.depth,
        seconds=time.perf_counter() - started,
        complete=found is not None or search.exhausted,
        stopped=search.stopped,
        goal_state=goal_state,
        by_kind=graph.by_kind,
        collision_bound=collision_bound(search.states),
    )
