"""How a design of the user's own is judged: the matrix's exhaustive search of what it
claims (its fixes proven, its declared violations shown), and the replay of traces
found on it, or on an implementation checked against it, on other designs."""

import json
from pathlib import Path

from deployspec import models

from .cli_runs import run
from .designs_handed_in import MINE


def _recorded_on(tmp_path, variant: str, implementation: bool) -> Path:
    """The seed as if found on ``variant``, a design or (``implementation``) a contract run's."""
    from .cli_runs import SEED

    trace = json.loads(SEED.read_text())
    trace["variant"] = variant
    if implementation:
        trace.setdefault("extra", {})["implementation"] = {"name": variant}
    path = tmp_path / f"{variant}.json"
    path.write_text(json.dumps(trace))
    return path


def test_a_trace_of_a_design_not_handed_in_says_so(capsys, tmp_path):
    path = _recorded_on(tmp_path, "yours", implementation=False)
    status, _, err = run(capsys, "replay", str(path))
    assert (status, err) == (2, (f"deployspec: error: {path}: found on variant 'yours', which is not known here "
                                "(a design of your own? hand it in again: DEPLOYSPEC_VARIANTS or its entry point, "
                                "docs/variants.md)\n"))


def test_a_trace_whose_variant_is_another_model_s_says_so(capsys, tmp_path):
    """An edited file: capi's model, slots' variant. It was said to be a design not handed in."""
    path = _recorded_on(tmp_path, "slots-webhook-tag", implementation=False)
    why = "found on variant 'slots-webhook-tag', a variant of model slots, not of the file's model capi"
    for on in ([], ["--variant", "capi-safe"]):
        status, _, err = run(capsys, "replay", str(path), *on)
        assert (status, err) == (2, f"deployspec: error: {path}: {why}\n"), on


def test_a_trace_of_a_design_not_handed_in_is_not_replayed_on_another_from_a_guessed_start(capsys, tmp_path):
    """Which of its configuration's values were bounds chosen on purpose (kept) and which the
    design's own (the target's instead) only the design tells: replayed from the model's
    default instead, a slots trace of a design whose start is `release` gave the opposite
    verdict on slots-pipeline-immutable to the one it gets with the design handed in."""
    path = _recorded_on(tmp_path, "yours", implementation=False)
    status, _, err = run(capsys, "replay", str(path), "--variant", "capi-safe")
    assert (status, err) == (2, (f"deployspec: error: {path}: found on variant 'yours', which is not known here: "
                                "its own configuration decides what the trace replays with on capi-safe (a design "
                                "of your own? hand it in again: DEPLOYSPEC_VARIANTS or its entry point, "
                                "docs/variants.md)\n"))


def test_an_implementation_s_trace_against_a_design_not_handed_in_names_that_design(capsys, tmp_path):
    """Its run started from its --reference's configuration: that design is what is missing."""
    path = _recorded_on(tmp_path, "impl", implementation=True)
    trace = json.loads(path.read_text())
    trace["extra"]["implementation"]["reference"] = "yours"
    path.write_text(json.dumps(trace))
    status, _, err = run(capsys, "replay", str(path), "--variant", "capi-safe")
    assert status == 2 and err.startswith(f"deployspec: error: {path}: found on implementation 'impl' run with "
                                          "--reference 'yours', which is not known here"), err


def test_a_trace_of_another_model_names_the_file_and_the_mismatch(capsys):
    from .cli_runs import SEED

    slots = min((SEED.parent.parent / "slots").glob("*.json"))
    status, _, err = run(capsys, "replay", str(SEED), str(slots), "--variant", "capi-safe")
    assert (status, err) == (2, (f"deployspec: error: {slots}: a slots trace; --variant capi-safe is a design of "
                                "another model (replay each model's traces on one of its own)\n"))


def test_a_trace_of_an_implementation_says_how_to_replay_it(capsys, tmp_path):
    path = _recorded_on(tmp_path, "mine", implementation=True)
    status, _, err = run(capsys, "replay", str(path))
    assert (status, err) == (2, (f"deployspec: error: {path}: found on implementation 'mine'; replay it with "
                                "--exec/--python, or on a reference with --variant\n"))
    assert run(capsys, "replay", str(path), "--variant", "capi-2022")[0] == 1


def test_the_matrix_explores_what_a_design_of_ones_own_claims_to_fix(outside):
    """Its properties get an exhaustive search too, those it declares to hold and those it
    declares violated (the random search's later rounds depend on the load); a shipped
    design's do not."""
    from deployspec.check import plan, searches

    outside("finalize_in_txn")
    pairs = [(m, v) for m, v in plan("capi", None) if v in (MINE, "capi-current")]
    tasks = searches(pairs, ("hypothesis",), distinct=False, properties=None)
    explored = sorted(p for _, v, e, p in tasks if e == "explore")
    assert explored == sorted(p.name for p in models.get_model("capi").properties)
    assert all(v == MINE for _, v, e, _ in tasks if e == "explore")
    assert not [t for t in searches(pairs, ("hypothesis",), distinct=True, properties=None) if t[2] == "explore"]


def test_a_claimed_fix_the_explorer_breaks_is_marked_with_the_command_to_look(outside):
    from deployspec.engines.result import Result
    from deployspec.report import matrix

    outside("finalize_in_txn")
    results = [Result("capi", MINE, "single_active_deployment", "hypothesis", "holds"),
               Result("capi", MINE, "single_active_deployment", "explore", "violated")]
    text = matrix(results, declared=True)
    assert "VIOLATED !" in text
    assert (f"! {MINE} · single_active_deployment: VIOLATED (explore), declared to hold; a close look: "
            f"DEPLOYSPEC_VARIANTS=finalize_in_txn deployspec check --model capi --variant {MINE} "
            "--property single_active_deployment") in text


def test_a_claimed_fix_whose_proof_did_not_finish_is_no_agreement(outside):
    """A slow runner, or a short budget, cuts the exhaustive search short: the random search's
    word is all that is left, and a design of one's own must not pass on it. (A shipped
    design's proofs are the test suite's: there an unfinished one stays holds*.)"""
    from deployspec.declarations import matches_declarations
    from deployspec.engines.result import Result
    from deployspec.report import matrix

    outside("finalize_in_txn")
    cut = {"complete": False, "stopped": "time"}
    for variant, agrees in ((MINE, False), ("capi-safe", True)):
        results = [Result("capi", variant, "single_active_deployment", "hypothesis", "holds"),
                   Result("capi", variant, "single_active_deployment", "explore", "holds", stats=cut)]
        assert matches_declarations(results) is agrees, variant
        text = matrix(results, declared=True)
        assert ("holds* !" in text) is not agrees, text
        note = (f"! {variant} · single_active_deployment: holds (explore, hypothesis), but not proven: the "
                f"exhaustive search did not finish")
        assert (note in text) is not agrees, text


def test_an_unfinished_proof_is_no_disagreement_where_the_design_declares_a_violation_beyond_it(hand_in):
    """Only a budget makes a proof unfinished: a violation the design declares beyond the
    default search may hold within it (as for the shipped design it copies), and a depth
    the design's own bounds set is part of what is proven."""
    import attrs

    from deployspec.declarations import matches_declarations
    from deployspec.engines.result import Result

    hand_in("beyondcopy", "import attrs\nfrom deployspec.reference.capi.variants import CAPI_PR3072\n"
                          "VARIANTS = [attrs.evolve(CAPI_PR3072, name='pr3072-copy')]\n")
    for variant in ("pr3072-copy", "capi-pr3072"):
        results = [Result("capi", variant, "deployment_converges", "explore", "holds",
                          stats={"complete": False, "stopped": "time"})]
        assert matches_declarations(results), variant
    depth = [Result("capi", "pr3072-copy", "single_active_deployment", "explore", "holds",
                    stats={"complete": False, "stopped": "max_depth"})]
    assert matches_declarations(depth)
    assert not matches_declarations([attrs.evolve(depth[0], stats={"complete": False, "stopped": "memory"})])


def test_the_proof_of_a_design_of_ones_own_is_not_cut_by_the_random_search_s_budget(outside, monkeypatch):
    """`--budget 0.001` (a first round alone, the same verdicts on every runner: docs/ci.md)
    gives a design's proof in the matrix the explorer's own time, not a millisecond."""
    from deployspec import check

    outside("finalize_in_txn")
    given = []
    monkeypatch.setattr(check, "causes", lambda fn, model, variant, prop, *, budget, **k: given.append(budget) or [])
    check._judge("capi", MINE, "explore", "single_active_deployment", budget=0.001, seed=0, out_dir=None,
                 bounds=None, distinct=False, engines=("hypothesis",), on_start=None, workers=1, on_progress=None)
    check._judge("capi", MINE, "hypothesis", "single_active_deployment", budget=0.001, seed=0, out_dir=None,
                 bounds=None, distinct=False, engines=("hypothesis",), on_start=None, workers=1, on_progress=None)
    check._judge("capi", MINE, "explore", "single_active_deployment", budget=0.001, seed=0, out_dir=None,
                 bounds=None, distinct=False, engines=("explore",), on_start=None, workers=1, on_progress=None)
    assert given == [check.DEFAULT_BUDGET["explore"], 0.001, 0.001]  # --engine explore: the user's budget


def test_a_declared_violation_the_random_search_missed_is_the_explorer_s_to_show(outside):
    """On a loaded machine the two-second search may miss it; the explorer's trace stands."""
    from deployspec.declarations import matches_declarations
    from deployspec.engines.result import Result
    from deployspec.report import matrix

    outside("finalize_in_txn")
    results = [Result("capi", MINE, "user_scale_not_lost", "hypothesis", "holds"),
               Result("capi", MINE, "user_scale_not_lost", "explore", "violated")]
    assert "VIOLATED" in matrix(results, declared=True) and "!" not in matrix(results, declared=True)
    assert matches_declarations(results)


def test_z3_judges_no_design_handed_in_and_says_what_does(capsys, hand_in):
    """Even an unchanged copy of capi-safe: the well-formedness constraints were checked
    against the shipped designs' reachable states only. The line says why and what judges it."""
    hand_in("safecopy", "import attrs\nfrom deployspec.reference.capi.variants import CAPI_SAFE\n"
                        "VARIANTS = [attrs.evolve(CAPI_SAFE, name='safe-copy')]\n")
    status, out, err = run(capsys, "check", "--model", "capi", "--variant", "safe-copy", "--engine", "z3",
                           "--property", "cancel_restores_last_good")
    assert (status, out) == (2, ""), (out, err)  # nothing it could judge: refused before it searched
    assert err.startswith("deployspec: error: no Z3 encoding of safe-copy's selection rule") and err.count("\n") == 1
    assert "the shipped capi variants" in err and "--engine explore judges a design of your own" in err


FINALIZE_FIXED = ("import attrs\nfrom deployspec.reference.capi.variants import CAPI_CURRENT\n"
                  "VARIANTS = [attrs.evolve(CAPI_CURRENT, name='finalize-fixed', finish_after_commit=False)]\n")


def test_a_violation_declared_beyond_the_default_search_is_explored_within_the_bounds_it_names(hand_in, monkeypatch):
    """The matrix explored every property of a design but those it declares violated beyond
    the default search: one inherited with attrs.evolve (its base's, which the design may
    have fixed) was taken on its word, its base's trace printed under the table."""
    from deployspec import check

    hand_in("beyondcopy", "import attrs\nfrom deployspec.reference.capi.variants import CAPI_PR3072\n"
                          "VARIANTS = [attrs.evolve(CAPI_PR3072, name='pr3072-copy')]\n")
    pairs = [(m, v) for m, v in check.plan("capi", None) if v == "pr3072-copy"]
    assert ("capi", "pr3072-copy", "explore", "deployment_converges") in check.searches(
        pairs, ("hypothesis",), distinct=False, properties=None)
    given = []
    monkeypatch.setattr(check, "causes", lambda fn, model, variant, prop, **k: given.append(k.get("config")) or [])
    for bounds in (None, {"max_instances": 16}):
        check._judge("capi", "pr3072-copy", "explore", "deployment_converges", budget=None, seed=0, out_dir=None,
                     bounds=bounds, distinct=False, engines=("hypothesis",), on_start=None, workers=1,
                     on_progress=None)
    # with --bound, within its bounds as every other search (settle_steps sized by max_instances, as
    # --bound alone sizes it: the declaration's 80 would have cut a long settle phase to a false violation)
    assert [(c.max_deployments, c.max_instances, c.settle_steps) for c in given] == [(3, 2, 80), (2, 16, 160)]


def test_a_design_that_fixed_what_it_inherited_as_violated_beyond_is_marked(capsys, hand_in):
    """capi-current with Finalize inside the transaction, its violates_beyond left as
    capi-current's: the explorer proves single_active_deployment within the bounds of the
    declaration, which the cell showed as 'holds +' (exit 0) and --engine explore as
    'declared to hold'."""
    hand_in("finalizefixed", FINALIZE_FIXED)
    status, out, _ = run(capsys, "check", "--model", "capi", "--property", "single_active_deployment",
                         "--budget", "0.2")
    assert status == 1, out
    note = ("! finalize-fixed · single_active_deployment: holds (explore, hypothesis), declared violated beyond "
            "the default search, within bounds this proof covers; a close look")
    assert note in out, out


def test_the_close_look_at_a_proof_within_a_declaration_s_bounds_runs_it_within_them(hand_in):
    """The close look it printed explored within the default bounds, where pr3072's livelock
    (max_deployments=3) is out of reach: not the search that gave the mark."""
    from deployspec.engines.result import Result
    from deployspec.report import matrix

    hand_in("beyondcopy", "import attrs\nfrom deployspec.reference.capi.variants import CAPI_PR3072\n"
                          "VARIANTS = [attrs.evolve(CAPI_PR3072, name='pr3072-copy')]\n")
    where = models.get_model("capi").variant("pr3072-copy").violates_beyond["deployment_converges"]
    proof = {"complete": True, "bounds": where.config | {"max_depth": None}}
    text = matrix([Result("capi", "pr3072-copy", "deployment_converges", "hypothesis", "holds"),
                   Result("capi", "pr3072-copy", "deployment_converges", "explore", "holds", stats=proof)],
                  declared=True)
    assert ("a close look: DEPLOYSPEC_VARIANTS=beyondcopy deployspec check --model capi --variant pr3072-copy "
            "--property deployment_converges --engine explore --bound max_deployments=3\n") in text + "\n", text
