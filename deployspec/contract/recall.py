"""Answers the implementation already gave, recalled instead of asked again.

A contract run searches each check with the same seed, so every check after the
first plays the examples of the one before it again before it reaches new ones;
Hypothesis also replays prefixes of examples while it shrinks. The protocol asks
an implementation to answer the same steps from a reset the same way
(docs/protocol.md), and every step it is asked is held to that
(:class:`~deployspec.contract.guard.FaultBox`). So a run of steps it answered once
is answered from here, and it is asked only from the first step not seen yet:
after a reset and the steps before that one, unless it already stands there. It
is never asked more steps than the same search without recall would ask.

Against capi-safe behind the protocol (``deployspec contract --exec "deployspec
serve --model capi --variant capi-safe" --model capi``): with ``--examples 300``
each check after the first took 2.3-2.6 s instead of 4.7-6.0 s; with ``--budget
3`` they ran 467-597 examples each instead of the first check's same 327
(docs/contract.md).
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

from deployspec.contract.guard import GuardedAdapter, config_key


class Answers:
    """The runs of steps answered so far, as a tree: a node is a run from a reset,
    its children the runs one step longer; and where the implementation stands.

    Nodes are only kept for runs the :class:`~deployspec.contract.guard.FaultBox` remembers too, so a run
    answered from here is one whose repeat the box checks when it is asked again."""

    def __init__(self, real: Callable[[str | None], GuardedAdapter], took_effect: dict[str, int]):
        #: makes the adapter that asks the implementation, for a check's name
        self._make_real = real
        #: the run's count of accepted actions that changed the observation (``GuardedAdapter``);
        #: a step asked again to bring the implementation somewhere counts again, as it did
        #: before recall (a check only reads whether the count grew)
        self.took_effect = took_effect
        self._real: GuardedAdapter | None = None
        #: the node the implementation stands at (None: unknown, or somebody else drove it)
        self.standing: int | None = None
        self._roots: dict[str, int] = {}
        self._children: dict[tuple[int, str], int] = {}
        #: per node: its parent, the step that led there (the configuration, for a root),
        #: the refusal's reason, the observation's JSON, and the action's kind when it changed
        #: the observation (what ``took_effect`` counts)
        self._parent: list[int] = []
        self._step: list[Any] = []
        self._reason: list[str | None] = []
        self._observation: list[str] = []
        self._effect: list[str | None] = []
        #: each observation's JSON once (most repeat from run to run)
        self._texts: dict[str, str] = {}
        #: steps answered from here, and asked of the implementation (resets and replays included)
        self.recalled = 0
        self.asked = 0

    def forget_standing(self) -> None:
        """The implementation was driven, or restarted, by somebody else."""
        self.standing = None

    def real(self, checking: str | None) -> GuardedAdapter:
        if self._real is None:
            self._real = self._make_real(checking)
        self._real.checking = checking
        return self._real

    def root(self, config: Any) -> int | None:
        return self._roots.get(config_key(config))

    def child(self, node: int, key: str) -> int | None:
        return self._children.get((node, key))

    def answer(self, node: int) -> tuple[str | None, dict, str | None]:
        """The node's refusal reason, a fresh copy of its observation, and the kind that took effect."""
        return self._reason[node], json.loads(self._observation[node]), self._effect[node]

    def add(self, parent: int | None, key: str, step: Any, reason: str | None, obs: dict,
            effect: str | None) -> int | None:
        """A new node (None when the box did not remember the run: it is not kept)."""
        if self._real is None or not self._real.remembered:
            return None
        text = json.dumps(obs)  # (in the implementation's order of keys: a saved trace shows it so)
        node = len(self._parent)
        self._parent.append(-1 if parent is None else parent)
        self._step.append(step)
        self._reason.append(reason)
        self._observation.append(self._texts.setdefault(text, text))
        self._effect.append(effect)
        if parent is None:
            self._roots[key] = node
        else:
            self._children[(parent, key)] = node
        return node

    def stand_at(self, node: int, checking: str | None) -> GuardedAdapter:
        """The implementation, brought to ``node`` (a reset and the steps to it, if it is elsewhere)."""
        real = self.real(checking)
        if self.standing == node:
            return real
        path = []
        while self._parent[node] != -1:
            path.append(self._step[node])
            node = self._parent[node]
        self.standing = None
        real.reset(self._step[node])
        real.observe()
        self.asked += 1
        for action in reversed(path):
            real.perform(action)
            real.observe()
            self.asked += 1
        return real


class RecallingAdapter:
    """One example's adapter: answers from :class:`Answers` while the steps are known,
    then from the implementation (brought to where the example is), learning as it goes."""

    def __init__(self, answers: Answers, checking: str | None = None):
        self.answers = answers
        self.checking = checking
        self._node: int | None = None  # where the example is in the tree (None: off it)
        self._observation: dict | None = None  # the observation to hand out next
        self._last: dict | None = None  # the last observation handed out
        #: a step asked of the implementation, whose observation is still to come
        self._asked: tuple[str, Any, str | None] | None = None

    def reset(self, config: Any) -> None:
        answers = self.answers
        self._asked = None
        node = answers.root(config)
        if node is not None:
            answers.recalled += 1
            self._node = node
            self._observation = answers.answer(node)[1]
            return
        real = answers.real(self.checking)
        answers.standing = None
        real.reset(config)
        obs = real.observe()
        answers.asked += 1
        self._node = answers.add(None, config_key(config), config, None, obs, None)
        answers.standing = self._node
        self._observation = obs

    def perform(self, action) -> str | None:
        answers = self.answers
        key = json.dumps(action.to_json(), sort_keys=True)
        if self._node is not None:
            node = answers.child(self._node, key)
            if node is not None:
                answers.recalled += 1
                reason, self._observation, effect = answers.answer(node)
                if effect is not None:
                    answers.took_effect[effect] = answers.took_effect.get(effect, 0) + 1
                self._node = node
                return reason
            real = answers.stand_at(self._node, self.checking)
        else:
            real = answers.real(self.checking)
        answers.standing = None
        reason = real.perform(action)
        self._asked = (key, action, reason)
        return reason

    def observe(self) -> dict:
        if self._asked is None:  # right after a reset or a recalled step
            obs, self._observation = self._observation, None
            if obs is None:  # asked again (never, in a Session): the same answer
                obs = self._last if self._node is None else self.answers.answer(self._node)[1]
            self._last = obs
            return obs
        answers = self.answers
        key, action, reason = self._asked
        self._asked = None
        obs = answers.real(self.checking).observe()
        answers.asked += 1
        effect = action.kind if reason is None and self._last is not None and obs != self._last else None
        if self._node is not None:
            self._node = answers.add(self._node, key, action, reason, obs, effect)
        answers.standing = self._node
        self._last = obs
        return obs

    def close(self) -> None:
        """The implementation stays where it is, for the next example."""
