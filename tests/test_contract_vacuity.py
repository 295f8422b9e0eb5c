"""A check is vacuous when none of the actions *it* is about took effect: a pipeline that
never swaps leaves the two swap checks with nothing judged, not every check (a user's
pipeline without swap was told "VACUOUS: every check", though pipeline_ships_latest_build
found its planted set_image bug)."""

from __future__ import annotations

import json

from deployspec.cli import main
from deployspec.contract.examples import ReferenceImplementation
from deployspec.models import get_model


class NoSwap(ReferenceImplementation):
    """slots-pipeline-immutable, refusing every swap."""

    def __init__(self):
        super().__init__("slots", "slots-pipeline-immutable")

    def perform(self, action):
        return "no swaps here" if action["type"] == "swap" else super().perform(action)


def test_a_pipeline_without_swap_leaves_only_the_swap_checks_vacuous(capsys):
    status = main(["contract", "--python", "tests.test_contract_vacuity:NoSwap", "--model", "slots",
                   "--examples", "30", "--json"])
    report = json.loads(capsys.readouterr().out)
    assert status == 0 and report["took_effect"]["swap"] == 0
    vacuous = {r["property"]: r["stats"]["vacuous"] for r in report["results"]}
    assert {p for p, v in vacuous.items() if v} == {"rollback_restores_previous", "swap_keeps_production_serving"}
    assert vacuous["rollback_restores_previous"] == ["swap"]


def test_the_progress_line_says_the_verdict_as_the_table_does(capsys):
    """``holds ?`` and ``VIOLATED`` as the summary's table, not ``holds`` and ``violated``.
    (One check a run: a run of a second or less says only its last line, and on a fast
    machine two checks took less.)"""
    for prop, said in (("rollback_restores_previous", "holds ?"), ("no_latent_drift", "holds")):
        main(["contract", "--python", "tests.test_contract_vacuity:NoSwap", "--model", "slots", "--examples", "30",
              "--property", prop])
        assert f"· {prop} · contract: {said} (" in capsys.readouterr().err
    main(["contract", "--python", "deployspec.contract.examples:capi_2022", "--model", "capi", "--examples", "30",
          "--property", "single_active_deployment"])
    assert "· single_active_deployment · contract: VIOLATED (" in capsys.readouterr().err


def test_a_property_names_its_own_essentials_else_the_models():
    model = get_model("slots")
    moved = lambda kind: kind in ("push", "deliver_webhook")  # (no set_image, no swap)
    assert model.vacuous(moved, model.property("pipeline_ships_latest_build")) == ["set_image"]
    assert model.vacuous(moved, model.property("no_latent_drift")) == []
    assert model.vacuous(moved, model.property("swap_keeps_production_serving")) == ["swap"]
    assert model.vacuous(moved) == ["swap"]


def test_the_canary_check_without_canary_plans_judges_nothing_and_says_so(capsys):
    """The default configuration offers no canary deploy: canary_pauses_at_every_step
    held plainly, and passed a --fail-vacuous gate that never tested it (a user's report).
    With canary plans given, a continue_ takes effect and it holds for real."""
    safe = ["--python", "deployspec.contract.examples:capi_safe", "--model", "capi",
            "--property", "canary_pauses_at_every_step", "--fail-vacuous", "--json"]
    status = main(["contract", *safe, "--examples", "30"])
    (r,) = json.loads(capsys.readouterr().out)["results"]
    assert (status, r["verdict"], r["stats"]["vacuous"]) == (1, "holds", ["continue_"])
    status = main(["contract", *safe, "--examples", "60", "--bound", "canary_plans=[[],[50],[100],[50,100]]"])
    (r,) = json.loads(capsys.readouterr().out)["results"]
    assert (status, r["verdict"], r["stats"]["vacuous"]) == (0, "holds", [])


def test_a_check_vacuous_for_want_of_a_bound_is_told_the_bound(capsys):
    """Its note said "--reference VARIANT asks what they must do" while the line under it
    named the bound that gives continue_ something to do (the review's finding): the
    configuration is the reason, said as it stands (suggested, chosen, or impossible)."""
    base = ["contract", "--python", "deployspec.contract.examples:capi_safe", "--model", "capi",
            "--examples", "20", "--property", "canary_pauses_at_every_step"]
    tails = {(): "this configuration gives them nothing to do: --bound 'canary_plans=[[],[50],[100],[50,100]]' does",
             ("--bound", "canary_plans=[]"): "the --bound canary_plans given leaves them nothing to do",
             ("--reference", "capi-2022"): ("capi-2022 gives them nothing to do under any bounds (it has no canary "
                                            "deployments)")}
    for extra, tail in tails.items():
        assert main([*base, *extra]) == 0
        (note,) = [line for line in capsys.readouterr().out.splitlines() if line.startswith("? ")]
        assert note == ("? canary_pauses_at_every_step: vacuous, no continue_ took effect in any example (each was "
                        f"refused or changed nothing), so nothing they do was judged; {tail}")
