"""The benchmark's measuring functions still run against the model as it is now: section 1
of ``explore_bench.py`` built a named-tuple Deployment from a hand-written field list and
broke with a TypeError when the model gained ``rolls_back_to``, unnoticed until the next
time someone ran it. Run here on a small bound, so the suite notices the next such drift."""

from __future__ import annotations

import sys
from pathlib import Path

import attrs

sys.path.insert(0, str(Path(__file__).parent.parent / "benchmarks"))

import explore_bench

from deployspec.engines.explore import explore_config
from deployspec.explorer import bfs
from deployspec.models import get_model


def test_representation_cost_runs_and_counts_the_states_the_search_holds():
    over = {"max_deployments": 1}
    model = get_model("capi")
    v = model.variant("capi-safe")
    expected = bfs(model, v, attrs.evolve(explore_config(model, v), **over), goal=lambda s, o: False).states
    c = explore_bench.representation_cost("capi-safe", over)
    assert c["states"] == expected
    for name in ("CapiState", "Process", "Deployment"):
        assert c[name]["attrs_us"] > 0 and c[name]["tuple_us"] > 0, c[name]
    assert c["CapiState"]["per_state"] >= 1, c  # every new state is built once at least
