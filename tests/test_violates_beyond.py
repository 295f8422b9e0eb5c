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
from deployspec.declarations import covers, matches, matches_declarations
from deployspec.engines.result import Result
from deployspec.models import get_model, model_names
from deployspec.replay import replay
from deployspec.report import matrix

ROOT = Path(__file__).parent.parent
ENTRIES = [(m, v.name, prop, where) for m in model_names() for v in get_model(m).variants.values()
           for prop, where in v.violates_beyond.items()]


def test_the_violations_beyond_are_declared_where_they_are_and_only_there():
    """The livelock of three deployments (PR #3072 and #3084), PR #3084's fallback to an
    original at 0 with three deployments (docs/properties.md), and capi-current's
    Finalize after the commit (findings 8-10, finding 9's late DEPLOYED, finding 12's undone
    cancel): the explorer finds them, the default random search does not."""
    declared = {(v, p) for _m, v, p, _w in ENTRIES}
    assert declared == {("capi-pr3072", "deployment_converges"), ("capi-pr3084", "deployment_converges"),
                        ("capi-pr3084", "cancel_restores_last_good"),
                        ("capi-current", "single_active_deployment"), ("capi-current", "deployment_converges"),
                        ("capi-current", "cancel_restores_last_good"), ("capi-current", "deployment_ships_its_droplet"),
                        ("capi-current", "deployment_never_resumes")}


@pytest.mark.parametrize("model, variant, prop, where", ENTRIES, ids=[f"{e[1]}-{e[2]}" for e in ENTRIES])
def test_each_entry_names_a_committed_trace_that_shows_it(model, variant, prop, where):
    assert prop not in get_model(model).variant(variant).declares  # one or the other
    trace = traces.load(ROOT / where.trace)
    assert (trace["model"], trace["variant"], trace["property"]) == (model, variant, prop)
    assert where.config == trace["config"]
    assert replay(trace).reproduced
    # the bounds it names are the trace's
    for bound, value in re.findall(r"(\w+)=(\d+)", where.why):
        assert trace["config"][bound] == int(value)


def test_a_property_is_declared_one_way_or_the_other():
    import attrs

    v = get_model("capi").variant("capi-pr3084")
    with pytest.raises(ValueError, match="deployment_converges both declared and violated beyond"):
        attrs.evolve(v, declares=v.declares | {"deployment_converges"})


def test_covers_compares_sizes_options_and_depth():
    config = {"max_deployments": 3, "max_in_flight": [1], "canary_plans": [], "max_depth": None}
    assert covers({"max_deployments": 3, "max_in_flight": [1, 2], "canary_plans": [[100]], "max_depth": None},
                  config)
    assert not covers({"max_deployments": 2, "max_in_flight": [1], "canary_plans": [], "max_depth": None},
                      config)
    assert not covers({"max_deployments": 3, "max_in_flight": [2], "canary_plans": [], "max_depth": None},
                      config)
    assert not covers({"max_deployments": 3, "max_in_flight": [1], "canary_plans": [], "max_depth": 20},
                      config)
    # a choice is covered only by the same choice (a start, a setting), never by "more"
    assert covers({"start": "release", "ci_sticky": True}, {"start": "release", "ci_sticky": True})
    assert not covers({"start": "empty"}, {"start": "release"})
    assert not covers({"ci_sticky": True}, {"ci_sticky": False})
    assert not covers({"start": "release"}, {})  # the default start, not saved
    assert covers({"finish_window": True}, {})  # an open window only adds behaviour


def _result(variant: str, prop: str, verdict: str, **stats) -> Result:
    return Result("capi", variant, prop, "explore", verdict, stats=stats)


def test_either_verdict_matches_beyond_the_default_search_and_only_there():
    capi = get_model("capi")
    assert matches(capi, "capi-pr3084", "deployment_converges", "violated")
    assert matches(capi, "capi-pr3084", "deployment_converges", "holds")
    assert not matches(capi, "capi-pr3084", "deployment_converges", "error")
    assert not matches(capi, "capi-safe", "deployment_converges", "violated")
    assert not matches(capi, "capi-pr3084", "app_stays_available", "holds")  # declared: must show


def test_the_matrix_marks_the_cell_and_says_where_it_shows():
    results = [_result("capi-pr3084", "deployment_converges", "holds"),
               _result("capi-safe", "deployment_converges", "holds")]
    text = matrix(results, declared=True)
    row = next(line for line in text.splitlines() if line.startswith("capi-pr3084"))
    assert "holds +" in row and "!" not in text
    assert ("+ capi-pr3084 violates deployment_converges beyond the default search: max_deployments=3"
            in text)
    wider = [_result("capi-pr3084", "deployment_converges", "violated"),
             _result("capi-safe", "deployment_converges", "violated")]
    assert "VIOLATED +" in matrix(wider, declared=True)
    assert not matches_declarations(wider)  # capi-safe has no such livelock
    assert matches_declarations(wider[:1])


def test_a_complete_proof_that_includes_the_trace_is_a_mismatch():
    """The explorer proving deployment_converges on capi-pr3084 within bounds that include
    the livelock's would mean the livelock is gone: the check must fail then."""
    capi = get_model("capi")
    where = capi.variant("capi-pr3084").violates_beyond["deployment_converges"]
    wide = dict(where.config, max_instances=3)
    narrow = dict(where.config, max_deployments=2)  # the default exploration bounds
    assert not matches(capi, "capi-pr3084", "deployment_converges", "holds", {"complete": True, "bounds": wide})
    assert matches(capi, "capi-pr3084", "deployment_converges", "holds", {"complete": True, "bounds": narrow})
    assert matches(capi, "capi-pr3084", "deployment_converges", "holds", {"complete": False, "bounds": wide})
    proof = _result("capi-pr3084", "deployment_converges", "holds", complete=True, bounds=wide)
    assert not matches_declarations([proof])
    assert "holds + !" in matrix([proof], declared=True)


def test_no_mark_on_a_cell_nobody_judged():
    results = [_result("capi-pr3084", "app_stays_available", "violated"),
               _result("capi-safe", "deployment_converges", "holds")]
    row = next(line for line in matrix(results, declared=True).splitlines() if line.startswith("capi-pr3084"))
    assert "+" not in row
