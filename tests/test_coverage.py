"""Where a contract run took its steps: a count per situation, and the situations some
reference design reaches under the run's configuration where the run took none."""

from __future__ import annotations

import json

import pytest
from deployspec.spec import situations

from deployspec.cli import main
from deployspec.coverage import Coverage, coverage_lines
from deployspec.engines.explore import explore_config
from deployspec.explorer import bfs
from deployspec.models import get_model

from .cli_runs import valid_json_output

CANARIES = "canary_plans=[[],[50],[100],[50,100]]"


def contract(capsys, *argv: str) -> tuple[int, str]:
    status = main(["contract", *argv])
    return status, capsys.readouterr().out


def test_a_capi_situation_is_the_newest_deployments_state():
    deployment = {"id": 0, "state": "DEPLOYED"}
    assert situations.capi_situation({"deployments": []}) == "no deployment"
    assert situations.capi_situation({"deployments": [{"id": 1, "state": "PAUSED"}, deployment]}) == "PAUSED"


def test_a_slots_situation_is_what_a_swap_would_ship():
    def obs(staging, production, validated=()):
        slot = lambda ds: {"instances": [{"digest": d, "status": "running" if d is not None else "empty"}
                                         for d in ds]}
        return {"slots": {"staging": slot(staging), "production": slot(production)}, "validated": list(validated)}

    assert situations.slots_situation(obs([None], [0])) == situations.STAGING_EMPTY
    assert situations.slots_situation(obs([0, 0], [0])) == situations.ALIKE
    assert situations.slots_situation(obs([1, 0], [0], validated=[0, 1])) == situations.VALIDATED
    assert situations.slots_situation(obs([1, 2], [0], validated=[1])) == situations.UNVALIDATED


def reached(model, variant_name: str, bounds: dict) -> tuple[set[str], tuple[str, ...]]:
    """The situations of every state the variant reaches at the explorer's bounds (with
    ``bounds``), and those the model declares for that configuration."""
    m = get_model(model)
    variant = m.variant(variant_name)
    config = m.with_bounds(explore_config(m, variant), bounds)
    seen: set[str] = set()
    bfs(m, variant, config, goal=lambda state, obs: seen.add(m.situation(obs)))
    return seen, m.situations(config.to_json(), variant)


@pytest.mark.parametrize("model, variant, bounds", [
    ("capi", "capi-2022", {}),  # no canary plan: no pause
    ("capi", "capi-2022", {"canary_plans": [[], [100]]}),  # a design that refuses canaries: no pause
    ("capi", "capi-safe", {}),  # the explorer's plans [[], [100]]: PREPAUSED, PAUSED
    ("capi", "capi-safe", {"max_deployments": 0}),  # no deployment, ever
    ("slots", "slots-pipeline-immutable", {}),
    ("slots", "slots-webhook-tag", {}),  # start=webhook
    ("slots", "slots-pipeline-tag", {"start": "release"}),  # staging never runs nothing
    ("slots", "slots-pipeline-tag", {"start": "release", "max_pushes": 0}),  # the start's own only
    ("slots", "slots-pipeline-immutable", {"max_pushes": 0}),
])
def test_the_declared_situations_are_the_ones_a_reference_design_reaches(model, variant, bounds):
    """The note names a situation as reachable only if the design reaches it: each of these
    designs reaches exactly the declared ones (at the explorer's bounds)."""
    seen, declared = reached(model, variant, bounds)
    assert seen == set(declared)


def test_without_a_reference_the_declared_situations_are_any_designs():
    """No ``--reference``: the pauses count, as today's designs reach them."""
    m = get_model("capi")
    config = {**m.default_config().to_json(), "canary_plans": [[], [100]]}
    assert "PAUSED" in m.situations(config, None)
    assert "PAUSED" not in m.situations(config, m.variant("capi-2022"))


def test_coverage_counts_steps_and_effects_by_situation_in_the_declared_order():
    coverage = Coverage(situations.capi_situation)
    paused = {"deployments": [{"id": 0, "state": "PAUSED"}]}
    coverage.note({"deployments": []}, "push", True)
    coverage.note(paused, "continue_", True)
    coverage.note(paused, "scale", False)
    coverage.note({"deployments": [{"id": 0, "state": "ODD"}]}, "tick", False)
    out = coverage.to_json(("no deployment", "DEPLOYING", "PAUSED"))
    assert list(out) == ["no deployment", "DEPLOYING", "PAUSED", "ODD"]
    assert out["PAUSED"] == {"steps": 2, "took_effect": {"continue_": 1}}
    assert out["DEPLOYING"] == {"steps": 0, "took_effect": {}}
    lines = coverage_lines(out)
    assert lines[0] == "steps by situation (before the step): no deployment 1 · PAUSED 2 · ODD 1"
    assert lines[1].startswith("no step taken in: DEPLOYING (some reference design reaches it ")
    assert coverage_lines(out, "capi-safe")[1].startswith("no step taken in: DEPLOYING (capi-safe reaches it ")
    assert coverage_lines(Coverage(situations.capi_situation).to_json(("DEPLOYING",))) == []
    # ten checks' searches add up; a violated check's search ended short of its examples
    over = coverage_lines(out, checks=10, stopped=True)
    assert over[0].startswith("steps by situation (before the step, over 10 checks): no deployment 1 ")
    assert over[1].endswith("no check judged it; a violated check's search stopped at its violation)")
    assert not lines[1].endswith("at its violation)")


def test_a_run_of_a_design_without_canaries_names_the_pauses_it_never_acted_in(capsys):
    """capi-2022 refuses a canary deployment, so under canary plans it never pauses;
    capi-safe's reference does, and the note says where the run never looked."""
    status, out = contract(capsys, "--python", "deployspec.contract.examples:capi_2022", "--model", "capi",
                           "--examples", "20", "--property", "single_active_deployment", "--bound", CANARIES)
    assert status == 1, out  # (capi-2022 breaks it: the note comes with a violation too)
    (line,) = [x for x in out.splitlines() if x.startswith("no step taken in:")]
    missed = line.removeprefix("no step taken in: ").split(" (")[0].split(", ")
    assert missed[:2] == ["PREPAUSED", "PAUSED"] and "(some reference design reaches them" in line, line
    assert "DEPLOYING " in next(x for x in out.splitlines() if x.startswith("steps by situation"))


def test_json_gives_steps_and_effects_by_situation(capsys):
    status, out = contract(capsys, "--python", "deployspec.contract.examples:capi_safe", "--model", "capi",
                           "--reference", "capi-safe", "--examples", "50", "--property", "conforms_to_capi-safe",
                           "--bound", CANARIES, "--json")
    assert status == 0
    report = valid_json_output(json.loads(out))
    where = report["situations"]
    assert list(where) == list(situations.CAPI_ORDER)
    assert where["PAUSED"]["steps"] > 0 and where["PAUSED"]["took_effect"].get("continue_", 0) > 0, where
    assert sum(s["steps"] for s in where.values()) <= sum(r["stats"]["steps"] for r in report["results"])


def test_a_conformance_run_names_only_what_its_reference_reaches(capsys):
    """capi-2022 refuses canary deployments: its own object conforming to it is not told
    it never paused (a reviewer's finding)."""
    status, out = contract(capsys, "--python", "deployspec.contract.examples:capi_2022", "--model", "capi",
                           "--reference", "capi-2022", "--examples", "20", "--property", "conforms_to_capi-2022",
                           "--bound", CANARIES)
    assert status == 0, out
    assert "steps by situation" in out and "no step taken in" not in out


def test_the_shrinking_of_a_violation_is_not_counted():
    """Shrinking repeats the steps that found a violation (about a hundred examples
    after twenty): counted, it would swell the situations where the bug is."""
    from deployspec.engines import hypothesis_engine

    m = get_model("capi")
    prop = m.property("single_active_deployment")
    coverage = Coverage(m.situation)
    r = hypothesis_engine.check_property(m, "capi-2022", prop, max_examples=20, seed=0, coverage=coverage)
    counted = sum(coverage.steps.values())  # (the search's steps, shrinking's included, are stats["steps"])
    assert r.verdict == "violated" and 0 < counted < r.stats["steps"] / 2, (counted, r.stats)
