"""The graph the exhaustive engine searches: (model state, monitor memory) nodes,
and the settle phase from a state, both memoised.

A step function is pure, so a state's moves are computed once per (model,
variant, bounds) and shared by every property's search (as a model checker
explores once and judges every property).
"""

from __future__ import annotations

from typing import Any

from deployspec.explorer import Graph
from deployspec.reference.core import Rejected
from deployspec.spec.core import Step, cause_of

#: observations kept for re-use when a state is reached again (a trace property
#: judges every move, also into visited states); the cache starts afresh when full
CACHE_CAP = 100_000


#: states whose step results are kept (for the next search of the same variant
#: and bounds, and for states that recur with another monitor memory)
MOVES_CAP = 200_000
_MOVES: dict[Any, dict] = {}
#: a monitor's memory after a move that breaks the property a way already found
SKIPPED = object()


def _moves_memo(model, variant, config) -> dict:
    """``{state: [variant.step(state, a) for a in candidate actions]}``, shared
    by the searches of one (model, variant, bounds), as a model checker explores
    once and judges every property: the step functions are pure, so a second
    property's search replays the first one's moves instead of recomputing
    them. Only the latest (model, variant, bounds) is kept."""
    key = (model.name, variant, config)
    if key not in _MOVES:
        _MOVES.clear()
        _MOVES[key] = {}
    return _MOVES[key]


class ProductGraph(Graph):
    """Nodes are ``(state, memory)``; ``memory`` is None unless the property is a trace one."""

    #: whether the searches of one (model, variant, bounds) share this graph's moves (``_MOVES``)
    shares_moves = True

    def __init__(self, model, variant, config, prop, skip_causes=frozenset()):
        self.model, self.variant, self.config, self.prop = model, variant, config, prop
        #: causes already found: a move (trace) or state (state property) breaking
        #: the property that way ends its path, as ``Monitor`` mutes a run
        self.skip_causes = skip_causes
        self.trace = prop.kind == "trace"
        self.canonical = getattr(model, "canonical", None)
        partition = getattr(model, "partition", None)
        self.owner_key = (lambda node: partition(node[0])) if partition else None
        self._obs: dict[Any, dict] = {}
        self._json: dict[Any, dict] = {}
        self.by_kind: dict[str, int] = {}
        self.rejected_by_kind: dict[str, int] = {}
        self.moves = _moves_memo(model, variant, config) if self.shares_moves else {}
        self._candidates = model.offered(variant)

    # --- nodes ---------------------------------------------------------------
    def root(self):
        s = self.model.initial_state(self.config)
        if self.canonical:
            s = self.canonical(s)
        return (s, self.prop.initial if self.trace else None)

    def key(self, node):
        return node if self.trace else node[0]

    def observe(self, state) -> dict:
        obs = self._obs.get(state)
        if obs is None:
            obs = self.model.observe(state)
            if len(self._obs) >= CACHE_CAP:
                self._obs.clear()
            self._obs[state] = obs
        return obs

    def enter(self, node):
        """Observe a new node once: its candidate actions (and, for a trace
        property, its observation) wait in the frontier for its expansion."""
        obs = self.observe(node[0]) if self.trace else self.model.observe(node[0])
        actions = self._candidates(obs, self.config)
        if self.skip_causes and self.prop.kind == "state" and self.skipped(
                self.prop.advance(None, Step(0, {}, "user", None, obs, obs))[1]):
            actions = None  # a dead end: the path broke the property a known way
        return (node, obs if self.trace else None, actions), (node, obs)

    def skipped(self, message) -> bool:
        """Whether a complaint names a cause already found (``skip_causes``)."""
        return message is not None and cause_of(message) in self.skip_causes

    def action_json(self, action) -> dict:
        data = self._json.get(action)
        if data is None:
            data = self._json[action] = action.to_json()
        return data

    # --- moves ---------------------------------------------------------------
    def expand(self, item):
        """Yield ``(edge, child, (action, message), fingerprint)``; ``message`` is a
        trace property's complaint about this move, or None."""
        (state, memory), obs, actions = item
        if actions is None:
            return
        results = self.moves.get(state)
        if results is None:
            step = self.variant.step
            results = [step(state, action) for action in actions]
            if len(self.moves) < MOVES_CAP:
                self.moves[state] = results
        trace = self.trace
        for i, action in enumerate(actions):
            child, message = self._move(state, memory, obs, action, results[i], self.layer)
            if child is not None:
                yield i, child, (action, message), hash(child if trace else child[0])

    def _move(self, state, memory, obs, action, after, index):
        rejected = None
        if after.__class__ is Rejected:
            self.rejected_by_kind[action.kind] = self.rejected_by_kind.get(action.kind, 0) + 1
            if not self.trace:
                return None, None
            rejected, after = after.reason, state
        elif self.canonical:
            after = self.canonical(after)
        if not self.trace:
            if after is state or after == state:  # models return the same object for a no-op
                return None, None
            self.by_kind[action.kind] = self.by_kind.get(action.kind, 0) + 1
            return (after, None), None
        new_memory, message = self.advanced(memory, obs, action, rejected, after, index)
        if new_memory is SKIPPED:
            return None, None
        if message is None and (after is state or after == state) and new_memory == memory:
            return None, None  # a self-loop, also for the monitor
        if rejected is None:
            self.by_kind[action.kind] = self.by_kind.get(action.kind, 0) + 1
        return (after, new_memory), message

    def advanced(self, memory, obs, action, rejected, after, index):
        """A trace property's monitor over one move: ``(memory, complaint)``, or
        ``(SKIPPED, None)`` where the move breaks it a way already found (``skip_causes``)."""
        moved = Step(index, self.action_json(action), action.actor, rejected, obs, self.observe(after))
        new_memory, message = self.prop.advance(memory, moved)
        if self.skip_causes and self.skipped(message):
            return SKIPPED, None
        return new_memory, message

    def child_by_edge(self, node, e):
        """The move ``e`` from ``node``, at step ``self.layer`` (the node's depth): a
        property may remember a step's index, so the memory is rebuilt as the search saw it."""
        state, memory = node
        obs = self.model.observe(state)
        action = self._candidates(obs, self.config)[e]
        child, _ = self._move(state, memory, obs, action, self.variant.step(state, action), self.layer)
        return child, action


class Settler:
    """The settle phase of ``Session.settle`` on bare states, memoised.

    ``outcome(state) -> (message, steps)``: the settled property's complaint
    once the platform is left alone from ``state``, and how many steps the
    settle phase records. A run that ends before the bound tells the outcome
    of every state it passed through, so those are memoised too.
    """

    def __init__(self, model, variant, config, prop):
        self.model, self.variant, self.config, self.prop = model, variant, config, prop
        self.memo: dict[int, tuple[str | None, int]] = {}
        self.steps_taken = 0
        #: whether the last outcome was cut at the bound with the platform still busy: no
        #: state of its run came back (the settle phase is one sequence, so a run that has
        #: gone round a loop would have met a state again by the bound: a livelock)
        self.cut_busy = False

    def outcome(self, state) -> tuple[str | None, int]:
        memo, model, bound = self.memo, self.model, self.config.settle_steps
        self.cut_busy = False
        seen: list[int] = []
        obs = model.observe(state)
        n = 0
        result = None
        while True:
            fp = hash(state)
            known = memo.get(fp)
            if known is not None and n + known[1] <= bound:
                result = (known[0], n + known[1])
                break
            seen.append(fp)
            action = model.settle_action(obs)
            if action is None:  # finished, at the bound too
                result = (self.prop.at_settled(obs), n)
                break
            if n >= bound:
                self.cut_busy = fp not in seen[:-1]
                return self.prop.at_settled(obs), n  # the bound cut it: not memoised
            after = self.variant.step(state, action)
            n += 1
            self.steps_taken += 1
            if after.__class__ is Rejected:
                after, new_obs = state, obs
            else:
                new_obs = model.observe(after)
            if action.kind == "tick" and new_obs == obs:
                result = (self.prop.at_settled(new_obs), n)
                break
            state, obs = after, new_obs
        message, total = result
        for i, fp in enumerate(seen):
            if fp not in memo:
                memo[fp] = (message, total - i)
        return result
