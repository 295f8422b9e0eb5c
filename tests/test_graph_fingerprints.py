"""Each graph hands the search its children's fingerprints (``Graph.expand``): the search
stores them instead of hashing the children again, so a fingerprint that is not the hash
of the child's key would make the search take two equal nodes for two, or two different
ones for one, and say nothing. Walked over the shipped graphs: the model graph of a
Cloud Foundry and a slots design, and the exhaustive engine's product graph for a state
property (nodes are (state, None), keyed by the state) and a trace property (keyed by the
pair, the monitor's memory included)."""

from __future__ import annotations

import pytest

from deployspec.engines.explore import explore_config
from deployspec.engines.product import ProductGraph
from deployspec.explorer import ModelGraph
from deployspec.models import get_model

#: nodes expanded per graph: a few layers of each
NODES = 400


def _walk(graph):
    """Every (child, fingerprint) the first ``NODES`` nodes of a breadth-first walk give."""
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
    return out


def _model_graph(model_name, variant_name):
    model = get_model(model_name)
    variant = model.variant(variant_name)
    return ModelGraph(model, variant, explore_config(model, variant))


def _product_graph(prop_name):
    model = get_model("capi")
    variant = model.variant("capi-2022")
    return ProductGraph(model, variant, explore_config(model, variant), model.property(prop_name))


@pytest.mark.parametrize("graph", [
    pytest.param(lambda: _model_graph("capi", "capi-safe"), id="capi-safe"),
    pytest.param(lambda: _model_graph("slots", "slots-webhook-tag"), id="slots-webhook-tag"),
    pytest.param(lambda: _product_graph("single_active_deployment"), id="product-state"),
    pytest.param(lambda: _product_graph("app_stays_available"), id="product-trace"),
])
def test_every_child_comes_with_the_hash_of_its_key(graph):
    graph = graph()
    moves = _walk(graph)
    assert len(moves) > NODES  # the walk went past the first layers
    for child, fp in moves:
        assert fp == hash(graph.key(child)) == graph.fingerprint(child), child
