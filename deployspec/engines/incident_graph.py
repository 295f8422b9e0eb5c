"""The graph of an incident (``check --incident``): every interleaving of the platform's
actions with the users' actions the incident lists, in their order.

Nodes are ``(state, memory, index)``: the model state, the property's monitor memory
(trace properties) and how many of the incident's actions were taken. From a node the
moves are the platform's actions the design is offered there (the updater's ticks, with
their failures and windows; the instances' starts) and the incident's next action. A
user's call is taken whatever the design answers: the user made it, and a refusal is
part of what happened (a refused or idle call is a move to ``index + 1``). A pinned
platform action is taken only where the design can take it. At a ``settle`` only the
platform moves, in any order, and the marker is passed (no step) once it rests. A
settled property is judged once every action was taken, after the settle phase.

Within one index the platform's actions alone move, and the model's states are finite
within its bounds, so the search ends: a holding verdict is a proof over every timing of
the incident, not one guess at it.
"""

from __future__ import annotations

from deployspec.engines.product import SKIPPED, ProductGraph
from deployspec.incident import Settle
from deployspec.reference.core import Rejected


class IncidentGraph(ProductGraph):
    """``(state, memory, index)`` nodes: the product graph's, and how far the incident got."""

    shares_moves = False  # (its moves are other than a whole search's: the shared memo stays theirs)

    def __init__(self, model, variant, config, prop, incident, skip_causes=frozenset()):
        super().__init__(model, variant, config, prop, skip_causes)
        #: how often the call at each index of the incident was refused, over the moves searched
        self.refusals: dict[int, int] = {}
        #: how often each kind of the users' calls, accepted, came to nothing (``Model.failed_call``)
        self.failed: dict[str, int] = {}
        #: the incident's indices whose call some run made and the design took (refused or
        #: not): one refused and never taken was refused in every run (a file's calls in the
        #: wrong order, deploy before push, look like a proof otherwise)
        self.taken_at: set[int] = set()
        #: the incident's indices whose call, accepted, came to nothing in some run (said of
        #: each) and those whose call took effect in some run: one that never did failed in
        #: every run (a rollback swap that always aborts read "in some runs")
        self.failed_at: dict[int, str] = {}
        self.effect_at: set[int] = set()
        #: the first reason the design gave for refusing the incident's action at each index
        #: (an action never taken was "never could take it there", the model's own reason,
        #: "production instance 0 is not failing to start", unsaid)
        self.reasons: dict[int, str] = {}
        self.incident = incident.actions
        #: where the incident says ``settle`` (a pickled incident's marker is another object)
        self.rests = tuple(isinstance(a, Settle) for a in incident.actions)
        #: the most of the incident's actions any node took (a ``settle`` the design never
        #: reaches leaves the rest untaken: a proof would say nothing of them)
        self.reached = 0

    def root(self):
        return self._past_rest((*super().root(), 0))

    def _past_rest(self, node):
        """``node`` with each ``settle`` of the incident it stands at passed, if the
        platform is at rest there (nothing for the settle phase to do, or a tick that
        changes nothing): passing it takes no step."""
        state, memory, index = node
        n = index
        while n < len(self.incident) and self.rests[n] and self._at_rest(state):
            n += 1
        return node if n == index else (state, memory, n)

    def _at_rest(self, state) -> bool:
        """At rest as ``Session.platform_steps`` and ``Settler`` judge it: no settle action,
        or a tick that changes nothing observed."""
        obs = self.observe(state)
        action = self.model.settle_action(obs)
        if action is None:
            return True
        if action.kind != "tick":
            return False
        after = self.variant.step(state, action)
        return after.__class__ is Rejected or after is state or self.observe(after) == obs

    def key(self, node):
        return node if self.trace else (node[0], node[2])

    def settles(self, node) -> bool:
        return node[2] == len(self.incident)

    def offered_at(self, obs, index: int, actions) -> list | None:
        """The moves from a node: the platform's of ``actions`` (the design's candidates),
        then the incident's next action, if any is left and is not a ``settle``; None stays
        a dead end."""
        if actions is None:
            return None
        moves = [a for a in actions if a.actor == "platform"]
        if index < len(self.incident) and self.rests[index]:
            # any of the platform's actions, until it rests (then the marker was passed); the
            # settle phase's own one too, where the candidates leave it out
            own = self.model.settle_action(obs)
            if own is not None and own not in moves:
                moves.append(own)
        elif index < len(self.incident):
            pinned = self.incident[index]
            # a pinned platform action where the design offers it, or where the model lists
            # it as a stutter (a recycle that pulls the digest production runs changes nothing
            # and happened all the same); not where it names nothing real (a tick failing a
            # deployment that does not exist, which the step ignores)
            if pinned.actor != "platform" or pinned in moves or self._stutter(pinned, obs):
                moves.append(pinned)
        return moves

    def _stutter(self, action, obs) -> bool:
        probes = self.model.probe_actions
        return probes is not None and action in probes(obs, self.config)

    def _pins(self, index: int, actions: list) -> bool:
        """Whether the last of ``actions`` (from ``offered_at``) is the incident's next one."""
        return (index < len(self.incident) and not self.rests[index] and bool(actions)
                and actions[-1] is self.incident[index])

    def enter(self, node):
        self.reached = max(self.reached, node[2])
        (_, memo_obs, actions), (_, obs) = super().enter(node[:2])
        return (node, memo_obs, self.offered_at(obs, node[2], actions)), (node, obs)

    def expand(self, item):
        node, obs, actions = item
        if actions is None:
            return
        state, _memory, index = node
        step = self.variant.step
        pinned = len(actions) - 1 if self._pins(index, actions) else -1
        for i, action in enumerate(actions):
            child, message = self._moved(node, obs, action, step(state, action), i == pinned)
            if child is not None:
                yield i, child, (action, message), hash(self.key(child))

    def _moved(self, node, obs, action, after, pinned: bool):
        """A platform move as the product graph's, at the same index; the incident's next
        action (``pinned``) as the index's move: never a self-loop, and a refused call is
        kept (a refused platform action did not happen: no move)."""
        state, memory, index = node
        if not pinned:
            child, message = self._move(state, memory, obs, action, after, self.layer)
            return (None, None) if child is None else (self._past_rest((*child, index)), message)
        rejected = None
        if after.__class__ is Rejected:
            self.reasons.setdefault(index, after.reason)
            if action.actor == "platform":
                return None, None
            self.refusals[index] = self.refusals.get(index, 0) + 1
            rejected, after = after.reason, state
        else:
            self.taken_at.add(index)
            if self.model.failed_call is None or not self._note_failed(index, action, after):
                self.effect_at.add(index)
            if self.canonical:
                after = self.canonical(after)
        kinds = self.by_kind if rejected is None else self.rejected_by_kind
        kinds[action.kind] = kinds.get(action.kind, 0) + 1
        if not self.trace:
            return self._past_rest((after, None, index + 1)), None
        new_memory, message = self.advanced(memory, obs, action, rejected, after, self.layer)
        if new_memory is SKIPPED:
            return None, None
        return self._past_rest((after, new_memory, index + 1)), message

    def always_refused(self) -> list[int]:
        """The incident's actions (numbered from 1) the design refused in every run that made them."""
        return sorted(i + 1 for i in self.refusals if i not in self.taken_at)

    def refused(self, every_run: bool) -> dict[str, int]:
        """By kind, in how many states the design refused a call; of a search that saw every
        run, only the calls it took in other runs (those it never took: :meth:`always_refused`)."""
        out: dict[str, int] = {}
        for i, n in sorted(self.refusals.items()):
            if i in self.taken_at or not every_run:
                out[self.incident[i].kind] = out.get(self.incident[i].kind, 0) + n
        return out

    def always_failed(self) -> dict[int, str]:
        """The incident's actions (numbered from 1) that took effect in no run: where the
        design accepted them they came to nothing (how, as ``failed`` says it), and where it
        did not it refused them."""
        return {i + 1: said for i, said in sorted(self.failed_at.items()) if i not in self.effect_at}

    def _note_failed(self, index: int, action, after) -> bool:
        """Count the call at ``index`` if it came to nothing; whether it did."""
        why = self.model.failed_call(action, self.observe(after))
        if why is None:
            return False
        said = f"{action.kind} {why}"
        self.failed[said] = self.failed.get(said, 0) + 1
        self.failed_at.setdefault(index, said)
        return True

    def child_by_edge(self, node, e):
        state, _memory, index = node
        obs = self.model.observe(state)
        actions = self.offered_at(obs, index, self._candidates(obs, self.config))
        action = actions[e]
        pinned = self._pins(index, actions) and e == len(actions) - 1
        child, _ = self._moved(node, obs, action, self.variant.step(state, action), pinned)
        return child, action
