"""A toy model for the explorer's tests: a graph written out as a table.

States are node names. ``moves`` gives, for each node, its candidate actions in
order, each with the node it leads to or a :class:`Rejected`; ``settle`` gives
what the platform does from a node when users stay away (none: nothing to do).
Every answer of a search over such a table can be worked out by hand, so the
tests can say exactly which trace is the shortest.
"""

from __future__ import annotations

from typing import Any

import attrs
from deployspec.reference.core import Action, Rejected

from deployspec.models import Model


@attrs.frozen
class Move(Action):
    """A user action, named by its label."""

    kind = "move"
    label: str = ""


@attrs.frozen
class Tick(Action):
    """The platform's step (the settle phase's idle-tick rule applies to ticks)."""

    kind = "tick"
    actor = "platform"


@attrs.frozen
class Run(Action):
    """Another platform step: not a tick."""

    kind = "run"
    actor = "platform"


@attrs.frozen
class ToyConfig:
    settle_steps: int = 10
    max_depth: int | None = None

    def to_json(self) -> dict[str, Any]:
        return attrs.asdict(self)

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> ToyConfig:
        return cls(**data)


@attrs.frozen(eq=False)  # compared by identity: the explorer shares moves per (model, variant, config)
class ToyVariant:
    moves: dict[str, list[tuple[Action, str | Rejected]]]
    settle: dict[str, tuple[Action, str | Rejected]]
    name: str = "toy"
    declares: frozenset[str] = frozenset()
    config: dict[str, Any] = attrs.field(factory=dict)
    explore: dict[str, Any] = attrs.field(factory=dict)

    def step(self, state: str, action: Action) -> str | Rejected:
        for a, after in self.moves.get(state, []):
            if a == action:
                return after
        a, after = self.settle[state]
        assert a == action, (state, action)
        return after


def toy_model(moves: dict, settle: dict | None = None, **config) -> tuple[Model, ToyConfig]:
    """A model whose one variant, ``toy``, follows the tables, starting at node ``start``;
    and its configuration (``settle_steps``, ``max_depth``)."""
    variant = ToyVariant(moves, settle or {})

    def observe(state: str) -> dict:
        return {"at": state}

    def candidate_actions(obs: dict, _config) -> list[Action]:
        return [a for a, _ in variant.moves.get(obs["at"], [])]

    def settle_action(obs: dict) -> Action | None:
        found = variant.settle.get(obs["at"])
        return found[0] if found else None

    return Model(
        name="toy",
        description="a graph written out as a table",
        vocabulary={"move": Move, "tick": Tick, "run": Run},
        variants={"toy": variant},
        properties=(),
        config_type=ToyConfig,
        initial_state=lambda _config: "start",
        observe=observe,
        candidate_actions=candidate_actions,
        settle_action=settle_action,
        schema_file="",
        lanes="node",
    ), ToyConfig(**config)


def canonical_toy() -> tuple[Model, ToyConfig]:
    """States `name~tag` are `name` in canonical form. The model starts at `start~0`;
    `a` and `b` lead to `mid~1` and `mid~2` (both `mid`); from `mid`, `go` leads to
    `end~1` and `back` to `start~0`. The table answers alike for every tag."""
    from_start = [(Move("a"), "mid~1"), (Move("b"), "mid~2")]
    from_mid = [(Move("go"), "end~1"), (Move("back"), "start~0")]
    model, config = toy_model({"start": from_start, "start~0": from_start, "mid": from_mid,
                               "mid~1": from_mid, "mid~2": from_mid})
    model = attrs.evolve(model, initial_state=lambda _config: "start~0",
                         canonical=lambda s: s.split("~")[0])
    return model, config
