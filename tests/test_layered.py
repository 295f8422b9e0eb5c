"""The generic layered BFS on graphs whose answers are known by arithmetic.

Nodes are integers; from n the moves are to 2n and 2n + 1 below a limit (a
binary tree, node n at depth floor(log2 n)) and, to make revisits, back to
n // 2. Every count below follows from that shape, not from a run.
"""

from __future__ import annotations

import pytest

from deployspec.explorer import Layered, collision_bound

from .helpers import Tree


def test_an_exhausted_search_counts_every_node_and_the_deepest_layer():
    search = Layered(Tree(64))  # nodes 1..63: depths 0..5
    seen = {}
    assert search.run(lambda n, depth, number: seen.setdefault(n, depth) is None) is None
    assert search.exhausted and search.stopped is None
    assert search.states == 63 and search.depth == 5
    assert all(depth == n.bit_length() - 1 for n, depth in seen.items())
    # every node moves to its children (if below 64) and its parent (if not the root)
    assert search.transitions == 62 + 62


def test_the_path_to_a_node_is_its_binary_digits():
    search = Layered(Tree(1 << 12))
    goal = 0b101101
    number = search.run(lambda n, depth, number: n == goal)
    edges = search.path_to(number)
    assert edges == [int(b) for b in bin(goal)[3:]]  # left (0) or right (1) from the root
    assert len(edges) == goal.bit_length() - 1 == search.depth


def test_the_root_can_be_the_goal():
    search = Layered(Tree(64))
    assert search.run(lambda n, depth, number: n == 1) == 0
    assert search.path_to(0) == [] and search.states == 1 and search.depth == 0


@pytest.mark.parametrize("max_states", [1, 2, 10, 63])
def test_a_state_bound_stops_at_exactly_that_many_states(max_states):
    search = Layered(Tree(64), max_states=max_states)
    search.run(lambda n, depth, number: False)
    assert search.states == max_states  # (at 63 too: it stops before looking for a 64th)
    assert search.stopped == "max_states" and not search.exhausted


def test_a_depth_bound_keeps_the_layers_above_it():
    search = Layered(Tree(1 << 20), max_depth=3)
    search.run(lambda n, depth, number: False)
    assert search.stopped == "max_depth" and search.depth == 3 and search.states == 15


def test_the_collision_bound_is_the_birthday_bound():
    assert collision_bound(10_000) == pytest.approx(10_000**2 / 2**65)
    assert collision_bound(0) == 0.0


def test_bfs_over_a_model_is_complete_only_when_it_ran_out_of_states():
    from deployspec.engines.explore import explore_config
    from deployspec.explorer import bfs
    from deployspec.models import get_model

    model = get_model("slots")
    variant = model.variant("slots-pipeline-immutable")
    config = explore_config(model, variant)
    cut = bfs(model, variant, config, goal=lambda s, o: False, max_states=50)
    assert not cut.complete and cut.stopped == "max_states" and cut.states == 50
    whole = bfs(model, variant, config, goal=lambda s, o: False)
    assert whole.complete and whole.stopped is None and whole.states > 50


def test_memoised_settle_outcomes_equal_fresh_ones_when_the_bound_cuts():
    """The Settler reuses what a run from one state learnt about the states it passed;
    with a settle bound that cuts runs short, a remembered outcome is only valid
    if it fits in what is left of the bound."""
    import attrs

    from deployspec.engines.explore import explore_config
    from deployspec.engines.product import Settler
    from deployspec.explorer import bfs
    from deployspec.models import get_model

    model = get_model("capi")
    variant = model.variant("capi-2022")
    config = attrs.evolve(explore_config(model, variant), settle_steps=3, max_deployments=1)
    prop = model.property("deployment_converges")
    states = []
    bfs(model, variant, config, goal=lambda s, o: states.append(s))
    shared = Settler(model, variant, config, prop)
    outcomes = [shared.outcome(s) for s in states]
    fresh = [Settler(model, variant, config, prop).outcome(s) for s in states]
    assert outcomes == fresh
    assert any(m is not None for m, _ in fresh) and any(n == 3 for _, n in fresh)  # the bound cut some
