"""``deployspec check --bound NAME=VALUE``: bounds changed for one run, bad input refused."""

from __future__ import annotations

import json

import pytest

from deployspec import check
from deployspec.cli import main
from deployspec.models import UsageError, get_model


@pytest.mark.parametrize("bound", [
    "max_deployments", "=1", "nope=1", "max_in_flight=[]", 'max_in_flight="x"', "max_in_flight={bad",
    "canary_plans=[[50,20]]", "canary_plans=[[0]]", "max_instances=0",
])
def test_bad_bound_is_a_usage_error(bound: str, capsys) -> None:
    assert main(["check", "--model", "capi", "--variant", "capi-current", "--bound", bound]) == 2
    err = capsys.readouterr().err
    assert err.startswith("deployspec: error:") and len(err.strip().splitlines()) == 1


def test_canary_plans_are_refused_in_the_words_of_the_rule_they_break(capsys) -> None:
    """Upstream's DeploymentCreateMessage wants the weights sorted, so equal neighbours
    pass; the message said "ascending", which [[50, 50]] (accepted) is not."""
    assert main(["check", "--model", "capi", "--variant", "capi-current", "--bound", "canary_plans=[[50,20]]"]) == 2
    assert capsys.readouterr().err == ("deployspec: error: --bound: canary_plans must be lists of non-decreasing "
                                       "weights 1..100, as DeploymentCreateMessage requires, got [[50, 20]]\n")
    config = check.configure(get_model("capi"), "capi-current", "hypothesis", {"canary_plans": [[50, 50], [1, 100]]})
    assert config.canary_plans == ((50, 50), (1, 100))


@pytest.mark.parametrize("bound, said", [
    ("settle_steps=null", "settle_steps must be a non-negative integer, got null"),
    ("max_depth=true", "max_depth must be a non-negative integer or null, got true"),
    ('max_depth={"a": 1}', 'max_depth must be a non-negative integer or null, got {"a": 1}'),
    ("max_in_flight=[null]", "max_in_flight must be a non-empty list of integers >= 1, got [null]"),
])
def test_a_bad_bound_is_quoted_as_json_spells_it(bound: str, said: str, capsys) -> None:
    """The value as the user wrote it (``null``, ``true``), not Python's ``None``, ``True``."""
    assert main(["check", "--model", "capi", "--variant", "capi-safe", "--engine", "explore", "--bound", bound]) == 2
    assert capsys.readouterr().err == f"deployspec: error: --bound: {said}\n"


def test_bounds_apply_on_top_of_the_variant_config() -> None:
    model = get_model("capi")
    config = check.configure(model, "capi-current", "hypothesis", {"max_deployments": 1})
    assert config.max_deployments == 1
    assert config.max_in_flight == (1, 2)  # capi-current's own bound is kept


@pytest.mark.parametrize("bounds, settle", [
    ({"max_instances": 64}, 640),  # 80 cut the settle phase: capi-safe VIOLATED deployment_converges
    ({"max_instances": 3}, 80),  # never below the default
    ({"max_instances": 64, "settle_steps": 5}, 5),  # given: as given
    ({"max_deployments": 3}, 80),
])
def test_the_settle_phase_grows_with_the_instances_unless_given(bounds, settle) -> None:
    model = get_model("capi")
    for engine in ("explore", "hypothesis"):
        assert check.configure(model, "capi-safe", engine, bounds).settle_steps == settle


@pytest.mark.parametrize("bounds, most", [
    ({"instances": 3}, 3),  # (an App Service user's --bound instances=3 was refused: max_instances was 2)
    ({"instances": 1}, 2),  # never below the design's own
])
def test_the_plan_s_largest_size_follows_the_instances_given_alone(bounds, most) -> None:
    model = get_model("slots")
    for engine in ("explore", "hypothesis"):
        assert check.configure(model, "slots-pipeline-tag", engine, bounds).max_instances >= most
    assert check.configure(model, "slots-pipeline-tag", "explore", bounds).max_instances == most
    with pytest.raises(UsageError, match="need 1 <= instances <= max_instances"):  # (both given: as given)
        check.configure(model, "slots-pipeline-tag", "explore", bounds | {"instances": 3, "max_instances": 2})


def test_a_fixed_design_holds_at_64_instances_where_the_settle_bound_had_cut_it(capsys) -> None:
    """`--bound max_instances=64` gave capi-safe an 82-step "counterexample": push, deploy, 80 settle steps."""
    status = main(["check", "--model", "capi", "--variant", "capi-safe", "--engine", "explore",
                   "--property", "deployment_converges", "--bound", "max_instances=64", "--bound", "max_depth=2"])
    out = capsys.readouterr().out
    assert status == 0 and "settle_steps=640" in out, out


def test_a_bound_of_one_model_in_a_run_of_both_names_both(capsys) -> None:
    """``check --bound max_deployments=3`` (README's example, without ``--model``) checks
    slots too, which has no such bound: the refusal said only slots' known bounds, as if
    max_deployments were no bound at all."""
    assert main(["check", "--bound", "max_deployments=3"]) == 2
    assert capsys.readouterr().err == ("deployspec: error: --bound max_deployments: a bound of capi, not of slots, "
                                       "which this run checks too; add --model capi to check capi only\n")
    assert main(["check", "--variant", "capi-safe", "--variant", "slots-pipeline-tag", "--bound", "start=release"]) == 2
    assert capsys.readouterr().err == ("deployspec: error: --bound start: a bound of slots, not of capi, which this "
                                       "run checks too; check capi's variants (capi-safe) in another run\n")
    # (--model capi would refuse no_latent_drift: the hint names what to leave out instead)
    assert main(["check", "--property", "single_active_deployment", "--property", "no_latent_drift",
                 "--bound", "max_deployments=3"]) == 2
    assert capsys.readouterr().err == ("deployspec: error: --bound max_deployments: a bound of capi, not of slots, "
                                       "which this run checks too; check slots's properties (no_latent_drift) in "
                                       "another run\n")


def test_a_bound_is_held_only_to_the_models_property_leaves_in(capsys, monkeypatch) -> None:
    """``--property single_active_deployment`` checks capi only, so capi's bound is no
    error there (it was refused for slots, which the run does not check)."""
    seen = []
    real = check.configure
    monkeypatch.setattr(check, "configure", lambda model, *a: seen.append(model.name) or real(model, *a))
    code = main(["check", "--bound", "max_deployments=2", "--property", "single_active_deployment",
                 "--budget", "0.05", "--json"])
    assert code in (0, 1), capsys.readouterr().err
    assert set(seen) == {"capi"}
    assert {r["model"] for r in json.loads(capsys.readouterr().out)["results"]} == {"capi"}
