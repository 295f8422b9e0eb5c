"""Details of the verdicts and exit statuses CI relies on that hand-made mutants of
declarations.py, check.py, commands.py, session.py, replay.py and replay_command.py showed
unpinned: each test here fails on a plausible bug there (a condition dropped, a comparison
flipped, an order of precedence swapped) that the rest of the suite let through, and that
would let a job pass, or fail, for the wrong reason."""

import argparse
import time

import pytest

from deployspec import commands
from deployspec.declarations import matches_declarations, shown_verdict
from deployspec.engines.result import Result
from deployspec.models import get_model


def _r(variant: str, prop: str, engine: str, verdict: str, model: str = "capi", **stats) -> Result:
    return Result(model, variant, prop, engine, verdict, stats=stats)


def _conclude(capsys, results, *, variant=None, json=False, engines=("hypothesis", "z3", "explore")):
    """``check``'s ending on ``results`` as if its searches had given them: (status, stdout, stderr)."""
    args = argparse.Namespace(variant=variant, json=json, junit=None, out=None, bound=None, close_look=bool(variant),
                              declared=False)
    status = commands._conclude_check(args, list(engines), results, None, time.time())
    out = capsys.readouterr()
    return status, out.out, out.err


def test_a_declared_violation_missed_by_the_random_search_is_a_mismatch_even_beside_z3_unconfirmed():
    """The cell shows "holds" (judged) before "unconfirmed" (judged nothing): it differs from
    the declaration; taking "unconfirmed" first would wave it through as inconclusive."""
    cell = [_r("capi-2022", "single_active_deployment", "hypothesis", "holds"),
            _r("capi-2022", "single_active_deployment", "z3", "unconfirmed")]
    assert shown_verdict({r.verdict for r in cell}) == "holds"
    assert not matches_declarations(cell)


def _engine(*answers):
    """An engine function that answers each search in turn (it can skip causes, as the
    explorer and the random search can); ``calls`` keeps the causes each was told to skip."""
    answers = list(answers)

    def search(model, variant, prop, *, budget, skip_causes=frozenset(), **kwargs):
        search.calls.append(set(skip_causes))
        verdict, cause = answers.pop(0) if answers else ("violated", f"cause-{len(search.calls)}")
        return Result(model.name, variant, prop.name, "explore", verdict, cause=cause,
                      message=f"{verdict} {cause}")

    search.calls = []
    return search


def test_an_error_while_seeking_a_further_cause_is_a_result_of_its_own():
    """A close look whose second search failed must fail (exit 1 for an error): the error
    is kept as a result, not taken for the answer "no other cause"."""
    from deployspec import check

    capi = get_model("capi")
    fn = _engine(("violated", "scale-step"), ("error", None))
    found = check.causes(fn, capi, "capi-current", capi.property("app_stays_available"), limit=6,
                         budget=1, cause_budget=1)
    assert [(r.verdict, r.cause) for r in found] == [("violated", "scale-step"), ("error", None)]
    assert "other_causes" not in found[0].stats
    assert fn.calls == [set(), {"scale-step"}]


@pytest.mark.parametrize("raised, why", [(MemoryError(), "out of memory (tighter bounds"),
                                         (IndexError("rule"), "raised IndexError: rule")])
def test_a_search_for_a_further_cause_that_ends_in_memory_or_a_rule_s_fault_keeps_the_causes_found(
        monkeypatch, raised, why):
    """The first cause was found (and saved, with --out), the second search ran out of
    memory or met a raising rule of a design handed in: the first was dropped with it."""
    from deployspec import check, variant_plugins

    capi = get_model("capi")
    fn = _engine(("violated", "scale-step"))
    answer = fn

    def failing(model, variant, prop, *, budget, skip_causes=frozenset(), **kwargs):
        if skip_causes:
            raise raised
        return answer(model, variant, prop, budget=budget, skip_causes=skip_causes, **kwargs)

    monkeypatch.setattr(variant_plugins, "fault", lambda variant, exc: f"variant {variant} raised "
                        f"{type(exc).__name__}: {exc}")
    found = check.causes(failing, capi, "capi-current", capi.property("app_stays_available"), limit=6,
                         budget=1, cause_budget=1, engine="explore")
    assert [(r.engine, r.verdict, r.cause) for r in found] == [("explore", "violated", "scale-step"),
                                                               ("explore", "error", None)]
    assert why in found[1].message
    with pytest.raises(type(raised)):  # no engine named: the caller's to handle, as before
        check.causes(failing, capi, "capi-current", capi.property("app_stays_available"), limit=6,
                     budget=1, cause_budget=1)


def test_a_proof_without_a_depth_bound_covers_a_trace_found_within_one():
    """A complete proof with no depth bound (max_depth None) reaches every state a search
    bounded at depth 12 does: beyond the default search, such a proof is a mismatch."""
    from deployspec.declarations import covers

    assert covers({"max_deployments": 3, "max_depth": None}, {"max_deployments": 3, "max_depth": 12})
    capi = get_model("capi")
    where = capi.variant("capi-pr3084").violates_beyond["deployment_converges"]
    bounds = dict(where.config, max_depth=None)
    with_depth = dict(where.config, max_depth=12)
    assert covers(bounds, with_depth) and not covers(with_depth, bounds)


def test_a_close_look_that_shows_no_trace_gives_no_hint_to_save_one(capsys):
    results = [_r("capi-safe", "single_active_deployment", "explore", "holds", complete=True)]
    status, out, _ = _conclude(capsys, results, variant=["capi-safe"])
    assert status == 0 and "--out DIR" not in out


def test_a_close_look_says_an_n_a_of_z3_once_under_the_table_not_as_a_verdict_line(capsys):
    """z3's own line is for a bounded proof or an unconfirmed selection; an n/a is said once, by
    the note on cells no engine judged."""
    why = "the selection rule does not bear on capacity_within_bound"
    results = [Result("capi", "capi-safe", "capacity_within_bound", "z3", "n/a", message=why),
               _r("capi-safe", "single_active_deployment", "explore", "holds", complete=True)]
    status, out, _ = _conclude(capsys, results, variant=["capi-safe"])
    assert status == 0
    assert "(z3): n/a" not in out
    assert out.count(why) == 1 and f"capi-safe: n/a (z3) for capacity_within_bound: {why}" in out


def test_a_search_that_ended_in_error_fails_the_matrix_even_where_another_showed_the_declared_violation(capsys):
    cell = [_r("capi-2022", "app_stays_available", "hypothesis", "violated"),
            Result("capi", "capi-2022", "app_stays_available", "explore", "error", message="boom")]
    assert not matches_declarations(cell)
    status, out, _ = _conclude(capsys, cell)
    assert status == 1 and "MISMATCH" in out


def _replay_line(capsys, tmp_path, edit=None, *more):
    """``replay`` of the shipped capi-2022 trace (edited by ``edit``): (status, stdout)."""
    import json

    from .cli_runs import SEED, run

    path = SEED
    if edit is not None:
        data = json.loads(SEED.read_text())
        edit(data)
        path = tmp_path / "edited.json"
        path.write_text(json.dumps(data))
    status, out, _ = run(capsys, "replay", str(path), *more)
    return status, out


def test_a_replay_says_when_the_violation_comes_before_the_recorded_step(capsys, tmp_path):
    def later(data):  # recorded one step later, after one more action
        data["steps"].append(data["steps"][-1])
        data["violation"]["step"] = 6

    status, out = _replay_line(capsys, tmp_path, later)
    assert status == 1 and "at step 5 (cause cancel-keeps-unstarted), not at the recorded step 6: " in out


def test_a_bound_the_close_look_s_explorer_cannot_take_is_refused_before_any_search(capsys, tmp_path):
    """A close look with the random search also runs the explorer (from its own, smaller
    bounds): `instances=3` fits the random search's configuration but not the explorer's
    (max_instances 2), so it is a usage error before anything runs or is saved."""
    from .cli_runs import run

    out_dir = tmp_path / "found"
    status, out, err = run(capsys, "check", "--model", "slots", "--variant", "slots-pipeline-tag", "--engine",
                           "hypothesis", "--property", "slot_runs_one_version", "--bound", "instances=3", "--bound", "max_instances=2",
                           "--budget", "0.1", "--out", str(out_dir))
    assert (status, out, err) == (2, "", "deployspec: error: --bound: need 1 <= instances <= max_instances, got instances=3, max_instances=2\n")
    assert not out_dir.exists()


def test_the_matrix_as_json_says_what_each_variant_declares_not_what_was_found(capsys):
    """Two mismatches: a declared violation found holding, a violation on a design that
    declares none; `declared_violated` is the declaration, whatever the verdict."""
    import json

    results = [_r("capi-2022", "single_active_deployment", "hypothesis", "holds"),
               _r("capi-safe", "single_active_deployment", "explore", "violated", complete=True)]
    status, out, _ = _conclude(capsys, results, json=True)
    doc = json.loads(out)
    assert status == doc["exit_status"] == 1 and doc["matches_declarations"] is False
    assert [(e["declared_violated"], e["matches_declaration"]) for e in doc["results"]] == [(True, False),
                                                                                          (False, False)]


def test_a_trace_that_breaks_while_settling_right_after_reset_still_reproduces():
    """settle_from 0: an implementation whose reset leaves it busy (here capi-2022 with a
    rolling deployment already under way) and never converging: the replay settles and
    judges, though no action comes first (0 is a settle phase, not "none")."""
    import json

    from deployspec.adapter import ReferenceAdapter
    from deployspec.replay import replay

    from .cli_runs import SEED

    trace = json.loads((SEED.parent / "capi-2022--deployment_converges--757eafacc0.json").read_text())
    capi = get_model("capi")
    before, after = trace["steps"][:trace["settle_from"]], trace["steps"][trace["settle_from"]:]

    class UnderWay(ReferenceAdapter):
        def reset(self, config):
            super().reset(config)
            for step in before:
                self.perform(capi.action(step["action"]))

    adapter = UnderWay(capi, capi.variant("capi-2022"))
    adapter.reset(capi.config_from_json(trace["config"]))
    left_busy = dict(trace, steps=after, settle_from=0, initial=adapter.observe())
    outcome = replay(left_busy, adapter=adapter, target="implementation")
    assert outcome.reproduced and outcome.violation.property == "deployment_converges"
    assert outcome.session.settle_from == 0


def test_the_matrix_explores_a_design_handed_in_once_whichever_engines_run(outside):
    """Its exhaustive search is added to the random search's (so no claim rests on that
    alone), not run twice where the explorer runs anyway; a shipped design gets none."""
    from deployspec import check

    from .designs_handed_in import MINE

    outside("finalize_in_txn")
    capi = get_model("capi")
    props = [p.name for p in capi.properties]
    mine = check.searches([(capi, MINE)], ("hypothesis",), False, None)
    assert mine == [("capi", MINE, e, p) for e in ("hypothesis", "explore") for p in props]
    every = check.searches([(capi, MINE)], check.ENGINES, False, None)
    assert len(every) == len(set(every)) == 3 * len(props)
    assert check.searches([(capi, "capi-safe")], ("hypothesis",), False, None) == [
        ("capi", "capi-safe", "hypothesis", p) for p in props]


def test_the_matrix_explores_a_design_handed_in_where_it_declares_a_violation_beyond_too(hand_in):
    """There the default search cannot show it; the exhaustive search looks within the
    bounds the declaration names (``check._judge``), where it must show: inherited, it is
    the base's, which the design may have fixed."""
    from deployspec import check

    hand_in("mine_pr3084", "import attrs\nfrom deployspec.reference.capi.variants import CAPI_PR3084\n"
                           "VARIANTS = [attrs.evolve(CAPI_PR3084, name='mine-pr3084')]\n")
    capi = get_model("capi")
    assert "deployment_converges" in capi.variant("mine-pr3084").violates_beyond
    explored = [t[3] for t in check.searches([(capi, "mine-pr3084")], ("hypothesis",), False, None)
                if t[2] == "explore"]
    assert explored == [p.name for p in capi.properties]


def test_a_search_process_killed_mid_run_is_an_error_and_spares_the_verdicts_already_in(monkeypatch):
    """--jobs: when a process dies (killed: out of memory?) and it keeps happening, each search
    without an answer is an error (exit 1, never a quiet n/a), and those that answered keep
    their verdicts.
    The pool is stood in for: searches answer in the order submitted, the second kills it."""
    import concurrent.futures as cf

    from deployspec import check

    class Pool:
        def __init__(self, *args, **kwargs):
            pass

        def submit(self, fn, at, model, variant, engine, prop, **options):
            future = cf.Future()
            if variant == "capi-2022":
                future.set_exception(cf.process.BrokenProcessPool("a process died"))
            else:
                future.set_result([Result(model, variant, prop, engine, "holds")])
            return future

        def shutdown(self, *args, **kwargs):
            pass

    monkeypatch.setattr(cf, "ProcessPoolExecutor", Pool)
    monkeypatch.setattr(cf, "as_completed", lambda futures: list(futures))
    found = {}
    results = check.run(check.plan("capi", ["capi-safe", "capi-2022"]), ["hypothesis"], budget=1, seed=0,
                        out_dir=None, jobs=2, properties=["single_active_deployment"],
                        on_found=lambda task, rs: found.setdefault(task[1], rs))
    assert [(r.variant, r.verdict) for r in results] == [("capi-safe", "holds"), ("capi-2022", "error")]
    # (no process of the stand-in to blame it on: begun again in new pools, as many rounds as
    # there are searches, then the error)
    assert results[1].message == "not judged: its search processes kept dying"
    assert found["capi-2022"] == [results[1]] and not matches_declarations(results)


def test_a_close_look_s_random_search_finds_one_cause_and_the_explorer_the_rest_once(monkeypatch):
    """`check --variant` with the random search alone: its first violation, then the explorer
    for every cause (or for the proof, where the random search found none). With every
    engine, the random search lists the causes itself and the explorer runs as its own
    search, not a second time after it."""
    from deployspec import check
    from deployspec.engines import explore, hypothesis_engine

    def judge(engines, *hypothesis_says):
        hypothesis, explorer = _engine(*hypothesis_says), _engine(("holds", None))
        monkeypatch.setattr(hypothesis_engine, "search", hypothesis)
        monkeypatch.setattr(explore, "search", explorer)
        found = check.judge("capi", "capi-2022", "hypothesis", "app_stays_available", budget=1, seed=0,
                            out_dir=None, bounds=None, distinct=True, engines=engines)
        return [r.verdict for r in found], len(hypothesis.calls), len(explorer.calls)

    assert judge(("hypothesis",)) == (["violated", "holds"], 1, 1)  # a new cause each time; the explorer's none
    assert judge(("hypothesis",), ("holds", None)) == (["holds", "holds"], 1, 1)
    assert judge(check.ENGINES) == (["violated"] * check.MAX_CAUSES, check.MAX_CAUSES, 0)


def test_a_close_look_shows_the_shortest_trace_of_each_cause():
    """Hypothesis and the explorer may both break a property the same way: the shorter trace
    is the one shown (the first of equals), the other only named as saved."""
    from deployspec.commands import shortest_of_its_cause

    def violated(engine, length, cause="scale-step"):
        return Result("capi", "capi-current", "app_stays_available", engine, "violated", trace_length=length,
                      cause=cause)

    long, short, other = violated("hypothesis", 9), violated("explore", 5), violated("explore", 12, "other")
    results = [long, short, other]
    assert [shortest_of_its_cause(r, results) for r in results] == [False, True, True]
    tie = [violated("hypothesis", 5), violated("explore", 5)]
    assert [shortest_of_its_cause(r, tie) for r in tie] == [True, False]


def test_a_close_look_explains_only_cells_no_engine_judged(capsys):
    """z3 is n/a on capacity_within_bound, the explorer proves it: the cell is judged, and no
    note says why it was not."""
    why = "the selection rule does not bear on capacity_within_bound"
    results = [Result("capi", "capi-safe", "capacity_within_bound", "z3", "n/a", message=why),
               _r("capi-safe", "capacity_within_bound", "explore", "holds", complete=True)]
    status, out, _ = _conclude(capsys, results, variant=["capi-safe"])
    assert status == 0 and why not in out and "n/a (z3) for" not in out


def test_a_replay_stops_at_the_violation_and_sends_nothing_after_it():
    """What follows the breaking step is not performed (on an implementation, a later
    action that crashed it would turn the verdict into a fault)."""
    import json

    from deployspec.replay import replay

    from .cli_runs import SEED

    trace = json.loads(SEED.read_text())
    trace["steps"] += [trace["steps"][-1]] * 3  # more actions recorded after the violation
    outcome = replay(trace)
    assert outcome.reproduced and outcome.violation.step == 5
    assert len(outcome.session.steps) == 6


def test_an_implementation_s_trace_with_a_reference_that_is_no_name_replays_from_the_model_s_default(
        capsys, tmp_path):
    def edited(data):
        data["variant"] = "implementation"
        data["extra"] = {"implementation": {"exec": "my-server", "reference": 5}}

    status, out = _replay_line(capsys, tmp_path, edited, "--variant", "capi-2022")
    assert status == 1 and "reproduces on capi-2022" in out


def test_a_violation_on_a_settle_step_is_what_settling_answers():
    """The random search's machine and z3's confirmation take settle()'s answer: a step property
    broken by a tick of the settle phase is that answer, not lost under the settled judgement."""
    import json

    from deployspec.adapter import ReferenceAdapter
    from deployspec.session import Session

    from .cli_runs import SEED

    # user_scale_not_lost on capi-current: the settle phase's second step (5) breaks it
    trace = json.loads((SEED.parent / "capi-current--user_scale_not_lost--61f698f80d.json").read_text())
    capi = get_model("capi")
    config = capi.config_from_json(trace["config"])
    prop = capi.property(trace["property"], config, subject="capi-current")
    session = Session(capi, ReferenceAdapter(capi, capi.variant("capi-current")), (prop,), config)
    for step in trace["steps"][:trace["settle_from"]]:
        assert session.perform(capi.action(step["action"])) is None
    v = session.settle()
    assert v is not None and v is session.violation
    assert v.step == trace["violation"]["step"] == 5 and len(session.steps) == 6


def test_a_bound_the_matrix_s_proof_of_a_design_handed_in_cannot_take_is_a_usage_error(capsys, hand_in, tmp_path):
    """The matrix explores a design handed in (check.searches) from its own exploration bounds:
    `instances=3` fits the random search's configuration, not that one (max_instances 2). It
    is refused before any search, not blamed on the design as an error of its rules (exit 1,
    after every search ran)."""
    from .cli_runs import run

    hand_in("mine_slots", "import attrs\nfrom deployspec.reference.slots.variants import SLOTS_PIPELINE_IMMUTABLE\n"
                          "VARIANTS = [attrs.evolve(SLOTS_PIPELINE_IMMUTABLE, name='mine-slots')]\n")
    out_dir = tmp_path / "found"
    status, out, err = run(capsys, "check", "--model", "slots", "--engine", "hypothesis", "--bound", "instances=3", "--bound", "max_instances=2",
                           "--property", "slot_runs_one_version", "--budget", "0.001", "--out", str(out_dir))
    assert (status, out, err) == (2, "", "deployspec: error: --bound: need 1 <= instances <= max_instances, got instances=3, max_instances=2\n")
    assert not out_dir.exists()


def test_the_matrix_as_json_says_which_violations_are_declared_beyond_the_default_search(capsys):
    """A `+` cell had no mark in --json: capi-current's violated single_active_deployment read
    `declared_violated: false, matches_declaration: true`, and a script had to ask `variants`."""
    import json

    results = [_r("capi-current", "single_active_deployment", "hypothesis", "violated"),
               _r("capi-safe", "app_stays_available", "hypothesis", "holds"),
               _r("capi-2022", "single_active_deployment", "hypothesis", "violated")]
    status, out, _ = _conclude(capsys, results, json=True)
    doc = json.loads(out)
    assert status == doc["exit_status"] == 0 and doc["matches_declarations"] is True
    assert [(e["declared_violated"], e["declared_beyond"], e["matches_declaration"]) for e in doc["results"]] == [
        (False, True, True), (False, False, True), (True, False, True)]
