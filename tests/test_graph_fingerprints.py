"""Each graph hands the search its children's fingerprints (``Graph.expand``): the search
stores them instead of hashing the children again, so a fingerprint that is not the hash
of the child's key would make the search take two equal nodes for two, or two different
ones for one, and say nothing. Walked over the shipped graphs: the model graph of a
Cloud Foundry and a slots design and of a model with a canonical form (the hash is of the
canonical child), and the exhaustive engine's product graph for a state property (nodes
are (state, None), keyed by the state) and a trace property (keyed by the pair, the
monitor's memory included)."""

from __future__ import annotations

import pytest

from deployspec.engines.explore import explore_config
from deployspec.engines.product import ProductGraph
from deployspec.explorer import ModelGraph
from deployspec.models import get_model

from .toy import canonical_toy

#: a breadth-first walk stops expanding once it has found this many nodes: a few layers
NODES = 400


def _walk(graph):
    """Every (child, fingerprint) a breadth-first walk is given until it has found
    ``NODES`` nodes or no more, and how many it found."""
    seen, out = set(), []
    frontier = [graph.enter(graph.root())[0]]
    while frontier and len(seen) < NODES:
        item = frontier.pop(0)
        for _edge, child, _info, fp in graph.expand(item):
            out.append((child, fp))
            key = graph.key(child)
            if key not in seen:
                seen.add(key)
                frontier.append(graph.enter(child)[0])
    return out, len(seen)


def _model_graph(model_name, variant_name):
    model = get_model(model_name)
    variant = model.variant(variant_name)
    return ModelGraph(model, variant, explore_config(model, variant))


def _canonical_graph():
    model, config = canonical_toy()
    return ModelGraph(model, model.variant("toy"), config)


def _product_graph(prop_name):
    model = get_model("capi")
    variant = model.variant("capi-2022")
    return ProductGraph(model, variant, explore_config(model, variant), model.property(prop_name))


@pytest.mark.parametrize("graph", [
    pytest.param(lambda: _model_graph("capi", "capi-safe"), id="capi-safe"),
    pytest.param(lambda: _model_graph("slots", "slots-webhook-tag"), id="slots-webhook-tag"),
    pytest.param(_canonical_graph, id="canonical"),
    pytest.param(lambda: _product_graph("single_active_deployment"), id="product-state"),
    pytest.param(lambda: _product_graph("app_stays_available"), id="product-trace"),
])
def test_every_child_comes_with_the_hash_of_its_key(graph):
    graph = graph()
    moves, found = _walk(graph)
    assert found >= min(NODES, 3)  # past the first layers (the canonical toy has 3 states)
    for child, fp in moves:
        assert fp == hash(graph.key(child)) == graph.fingerprint(child), child
