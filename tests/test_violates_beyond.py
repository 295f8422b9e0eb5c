"""Violations a design has beyond what the default search reaches (``violates_beyond``).

capi-pr3072 and capi-pr3084 livelock with three deployments (docs/explore-findings
#1): the 2-second Hypothesis search of ``deployspec check`` does not reach it, the
explorer at ``max_deployments=3`` does. Declared as ``violates_beyond``, the
matrix accepts either verdict there, says where it shows, and the committed trace
keeps it honest.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from deployspec import traces
from deployspec.check import matches, matches_declarations
from deployspec.engines.result import Result
from deployspec.models import get_model, model_names
from deployspec.replay import replay
from deployspec.report import matrix

ROOT = Path(__file__).parent.parent
ENTRIES = [(m, v.name, prop, where) for m in model_names() for v in get_model(m).variants.values()
           for prop, where in v.violates_beyond.items()]


def test_the_livelock_is_declared_where_it_is_and_only_there():
    declared = {(v, p) for _m, v, p, _w in ENTRIES}
    assert declared == {("capi-pr3072", "deployment_converges"), ("capi-pr3084", "deployment_converges")}


@pytest.mark.parametrize("model, variant, prop, where", ENTRIES, ids=[f"{e[1]}-{e[2]}" for e in ENTRIES])
def test_each_entry_names_a_committed_trace_that_shows_it(model, variant, prop, where):
    assert prop not in get_model(model).variant(variant).declares  # one or the other
    (name,) = re.findall(r"counterexamples/\S+\.json", where)
    trace = traces.load(ROOT / name)
    assert (trace["model"], trace["variant"], trace["property"]) == (model, variant, prop)
    outcome = replay(trace)
    assert outcome.reproduced
    # the bound it names is the one the trace needed
    for bound, value in re.findall(r"(\w+)=(\d+)", where):
        assert trace["config"][bound] == int(value)


def _result(variant: str, prop: str, verdict: str) -> Result:
    return Result("capi", variant, prop, "explore", verdict)


def test_either_verdict_matches_beyond_the_default_search_and_only_there():
    capi = get_model("capi")
    assert matches(capi, "capi-pr3084", "deployment_converges", "violated")
    assert matches(capi, "capi-pr3084", "deployment_converges", "holds")
    assert not matches(capi, "capi-pr3084", "deployment_converges", "error")
    assert not matches(capi, "capi-current", "deployment_converges", "violated")
    assert not matches(capi, "capi-pr3084", "app_stays_available", "holds")  # declared: must show


def test_the_matrix_marks_the_cell_and_says_where_it_shows():
    results = [_result("capi-pr3084", "deployment_converges", "holds"),
               _result("capi-current", "deployment_converges", "holds")]
    text = matrix(results, declared=True)
    row = next(line for line in text.splitlines() if line.startswith("capi-pr3084"))
    assert "holds +" in row and "!" not in text
    assert ("+ capi-pr3084 violates deployment_converges beyond the default search: max_deployments=3"
            in text)
    wider = [_result("capi-pr3084", "deployment_converges", "violated"),
             _result("capi-current", "deployment_converges", "violated")]
    assert "VIOLATED +" in matrix(wider, declared=True)
    assert not matches_declarations(wider)  # capi-current has no such livelock
    assert matches_declarations(wider[:1])
