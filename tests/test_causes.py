"""One counterexample per way a property breaks (``spec.core.Breach``).

The point of issue 3's finding: on capi-current the shortest availability loss
is a cancel that keeps an unstarted process, and the random search always shrinks
to it; docs-dev-guide #563 (a canary canceled after a 100 % step) is another
cause, which a close look (``check --variant``) must list with its own shortest trace.
"""

from __future__ import annotations

import json

from deployspec.reference.capi.actions import Cancel, Deploy, Push, Runtime, Scale, Stage, Tick
from deployspec.spec.core import (
    Breach,
    Monitor,
    Step,
    cause_of,
    settled_property,
    state_property,
    trace_property,
)

from deployspec import check, traces
from deployspec.adapter import ReferenceAdapter
from deployspec.cli import main
from deployspec.engines import explore, hypothesis_engine
from deployspec.minimize import minimize
from deployspec.models import get_model
from deployspec.replay import replay

CAPI = get_model("capi")
AVAILABLE = CAPI.property("app_stays_available")
CANARY_563 = [Push(1), Deploy(strategy="canary", canary_steps=(100,)), Runtime(1), Tick(), Cancel(), Tick()]


def _actions(trace: dict) -> list:
    end = trace.get("settle_from")
    return [CAPI.action(s["action"]) for s in trace["steps"][:end]]


# --- the monitor ---------------------------------------------------------------


@trace_property("toy", initial=0)
def counts_to_two(n, step: Step):
    """Breaks at every second step, for a cause named by the step's verb."""
    n += 1
    return n, (Breach(step.action["type"], f"step {step.index}") if n % 2 == 0 else None)


def _step(i: int, kind: str) -> Step:
    return Step(i, {"type": kind}, "user", None, {}, {})


def test_a_breach_is_its_message_with_a_cause():
    b = Breach("deploy", "raised above the bound")
    assert b == "raised above the bound" and cause_of(b) == "deploy"
    assert cause_of("plain") is None and cause_of(None) is None
    import copy
    import pickle

    for twin in (pickle.loads(pickle.dumps(b)), copy.deepcopy(b)):  # results cross processes
        assert twin == b and cause_of(twin) == "deploy"


def test_monitor_reports_the_cause_and_mutes_a_run_that_breaks_a_skipped_way():
    plain = Monitor((counts_to_two,))
    assert plain.advance(_step(0, "a")) is None
    v = plain.advance(_step(1, "b"))
    assert (v.property, v.step, v.cause) == ("counts_to_two", 1, "b")

    muted = Monitor((counts_to_two,), skip=frozenset({("counts_to_two", "b")}))
    muted.advance(_step(0, "a"))
    assert muted.advance(_step(1, "b")) is None and muted.muted
    # later breaks of another cause are not reported either: the run passed a known one
    muted.advance(_step(2, "c"))
    assert muted.advance(_step(3, "c")) is None

    # a cause is skipped for its own property only
    other = Monitor((counts_to_two,), skip=frozenset({("some_other_property", "b")}))
    other.advance(_step(0, "a"))
    v = other.advance(_step(1, "b"))
    assert v is not None and v.cause == "b" and not other.muted


@settled_property("test")
def judged_when_settled(obs):
    return None


@state_property("test")
def always_broken(obs):
    return "broken"


def test_monitor_judges_every_step_property_after_a_settled_one():
    """A settled property is judged only at rest; the properties after it are still
    judged at every step (capi lists deployment_converges before two of them)."""
    v = Monitor((judged_when_settled, always_broken)).advance(Step(0, {"type": "tick"}, "platform", None, {}, {}))
    assert v is not None and v.property == "always_broken"


@state_property("test")
def always_fine(obs):
    return None


def test_monitor_judges_every_property_at_every_step_not_only_the_first():
    """A property that holds does not stop the ones after it from being judged (a
    session, as the stateful machine's, judges all of a model's properties at once)."""
    v = Monitor((always_fine, always_broken)).advance(Step(0, {"type": "tick"}, "platform", None, {}, {}))
    assert v is not None and v.property == "always_broken"


@settled_property("test")
def never_settles(obs):
    return "still busy"


def test_a_muted_run_reports_nothing_when_it_settles_either():
    """A run that broke a skipped way passed a known story first: its settle phase
    must not be saved as a counterexample of another property."""
    plain = Monitor((counts_to_two, never_settles))
    assert plain.settled({}, 0).property == "never_settles"
    muted = Monitor((counts_to_two, never_settles), skip=frozenset({("counts_to_two", "b")}))
    muted.advance(_step(0, "a"))
    assert muted.advance(_step(1, "b")) is None and muted.muted
    assert muted.settled({}, 1) is None


def test_app_stays_available_names_how_the_last_instance_went():
    def cause_after(variant: str, story: list) -> str | None:
        outcome = replay({"model": "capi", "variant": variant, "property": AVAILABLE.name,
                          "config": CAPI.default_config(CAPI.variant(variant)).to_json(),
                          "steps": [{"action": a.to_json()} for a in story], "settle_from": None})
        return outcome.violation and outcome.violation.cause

    assert cause_after("capi-current", CANARY_563) == "cancel-restarts-from-zero"
    assert cause_after("capi-current", [Push(1), Deploy(), Cancel(), Runtime(1), Tick()]) == "cancel-keeps-unstarted"
    assert cause_after("capi-current", [Push(1), Runtime(0), Deploy(), Deploy(), Tick()]) == "scale-step"
    assert cause_after("capi-safe", CANARY_563) is None
    # the cancel step scales a serving process down to the original count (0); and it
    # keeps a process whose instances crashed (an unhealthy droplet), destroying the serving one
    assert cause_after("capi-pr3084", [Push(1), Scale(0), Deploy(), Runtime(1), Deploy(), Cancel(), Scale(1),
                                       Tick()]) == "cancel-scales-down-serving"
    assert cause_after("capi-2022", [Push(1), Runtime(0), Stage(False), Deploy(), Runtime(1), Deploy(), Cancel(),
                                     Tick()]) == "cancel-keeps-crashed"


# --- the engines -----------------------------------------------------------------


def test_explore_lists_each_cause_with_its_shortest_trace():
    # BFS: the causes come shortest first; a fourth (cancel-scales-down-serving) needs 10 steps
    found = check.causes(explore.search, CAPI, "capi-current", AVAILABLE, limit=3, budget=20,
                         cause_budget=20, seed=0, out_dir=None)
    by_cause = {r.cause: r for r in found}
    assert set(by_cause) == {"scale-step", "cancel-keeps-unstarted", "cancel-restarts-from-zero"}
    assert [by_cause[c].trace_length for c in ("scale-step", "cancel-keeps-unstarted",
                                                "cancel-restarts-from-zero")] == [5, 5, 6]
    story = by_cause["cancel-restarts-from-zero"].trace
    assert _actions(story) == CANARY_563  # docs-dev-guide #563, shortest
    assert replay(story).reproduced and not replay(story, variant="capi-safe").reproduced
    # the list was cut at the limit, and the result says so
    assert "not searched" in found[-1].stats["other_causes"]
    assert found[0].to_json()["cause"] == found[0].cause  # in the --json report


def test_hypothesis_skips_the_causes_already_found():
    r = hypothesis_engine.search(CAPI, "capi-current", AVAILABLE, budget=20, seed=0, out_dir=None,
                                 skip_causes=frozenset({"cancel-keeps-unstarted"}))
    assert r.verdict == "violated" and r.cause not in (None, "cancel-keeps-unstarted")
    # the saved trace replays to the same cause (no earlier break of a skipped one)
    assert replay(r.trace).violation.cause == r.cause == r.trace["violation"]["cause"]


def test_minimize_keeps_the_cause():
    trace = check.causes(explore.search, CAPI, "capi-current", AVAILABLE, limit=1, budget=20,
                         cause_budget=1.0, seed=0, out_dir=None)[0].trace
    padded = dict(trace, steps=[{"action": Runtime(0).to_json()}] + trace["steps"], settle_from=None)
    smaller = minimize(padded)
    assert replay(smaller).violation.cause == trace["violation"]["cause"]


def test_close_look_at_capi_current_shows_the_canary_cancel(tmp_path, capsys):
    code = main(["check", "--model", "capi", "--variant", "capi-current", "--property", "app_stays_available",
                 "--budget", "1", "--out", str(tmp_path)])
    out = capsys.readouterr().out
    assert code == 1
    assert "cause: cancel-restarts-from-zero" in out and "cause: cancel-keeps-unstarted" in out
    saved = [traces.load(p) for p in tmp_path.glob("capi-current--app_stays_available--*.json")]
    stories = [_actions(t) for t in saved if t["violation"].get("cause") == "cancel-restarts-from-zero"]
    assert CANARY_563 in stories
    # the explore statistics and the closing line say whether any other cause was seen
    # (with 1 s per search, the 10-step cancel-scales-down-serving may or may not be reached)
    line = next(x for x in out.splitlines() if x.startswith("capi-current / app_stays_available: causes found"))
    # (cancel-keeps-zero, 7 steps, is at the edge of what 1 s reaches on a loaded machine)
    causes = line.split("causes found ", 1)[1].split(";")[0].split(", ")
    assert {"cancel-keeps-unstarted", "cancel-restarts-from-zero"} <= set(causes), line
    assert causes == sorted(causes) and "any other (explore):" in line
    # 1 s cannot prove that no other cause exists (43,000 states in 5 s did not): how to finish it
    assert "(incomplete: time budget spent" in line
    assert line.endswith("; to finish it, --budget longer than 1 s (it sets every search's time)")


def test_a_close_look_proves_with_the_explorer_s_own_budget_where_the_random_search_found_nothing(monkeypatch):
    """The explorer's search after a random search that found nothing is the proof: it gets what
    --engine explore gives (120 s), not the 5 s of a search for a further cause."""
    budgets = []

    def search(model, variant, prop, *, budget, **kwargs):
        budgets.append(budget)
        return explore_search(model, variant, prop, budget=budget, **kwargs)

    explore_search = explore.search
    monkeypatch.setattr(explore, "search", search)
    found = check.judge("capi", "capi-safe", "hypothesis", "single_active_deployment", budget=None, seed=0,
                        out_dir=None, bounds={"max_deployments": 1}, distinct=True, engines=("hypothesis",))
    assert [r.engine for r in found] == ["hypothesis", "explore"] and found[1].verdict == "holds"
    assert budgets == [check.DEFAULT_BUDGET["explore"]]


@trace_property("capi", initial=None)
def always_breaks(memory, step: Step):
    """Breaks on every step, always the same way."""
    return memory, Breach("always", f"step {step.index}")


def test_a_search_where_every_run_breaks_a_known_way_finds_nothing_new():
    # every run is muted at its first step, so Hypothesis sees no valid run at all
    def search(**kw):
        adapter = lambda: ReferenceAdapter(CAPI, CAPI.variant("capi-current"))
        return hypothesis_engine.check_property(CAPI, "capi-current", always_breaks, max_examples=20,
                                                seed=0, adapter_factory=adapter, **kw)

    assert search(skip_causes=frozenset({"always"})).verdict == "holds"
    assert search().cause == "always"


@state_property("capi")
def at_most_one_process(obs):
    """Breaks with two web processes (cause "two") or more ("more")."""
    n = len(obs["processes"])
    return None if n < 2 else Breach("two" if n == 2 else "more", f"{n} web processes")


def test_explore_does_not_go_on_from_a_state_that_breaks_a_skipped_way():
    config = explore.explore_config(CAPI, CAPI.variant("capi-2022"))
    first = explore.search(CAPI, "capi-2022", at_most_one_process, budget=30, seed=0, out_dir=None,
                           config=config)
    assert (first.cause, first.trace_length) == ("two", 2)  # push, deploy
    # a third process only comes after a second one, where every path is now cut
    again = explore.search(CAPI, "capi-2022", at_most_one_process, budget=30, seed=0, out_dir=None,
                           config=config, skip_causes=frozenset({"two"}))
    assert again.verdict == "holds" and again.stats["complete"]


def test_a_cut_state_does_not_spoil_the_moves_shared_with_the_next_search():
    config = explore.explore_config(CAPI, CAPI.variant("capi-2022"))
    explore.search(CAPI, "capi-2022", at_most_one_process, budget=30, seed=0, out_dir=None, config=config,
                   skip_causes=frozenset({"two"}))
    after = explore.search(CAPI, "capi-2022", AVAILABLE, budget=30, seed=0, out_dir=None, config=config)
    assert after.verdict == "violated"  # not an IndexError from an emptied move list


def test_close_look_explores_what_the_random_search_found_holding(monkeypatch):
    # the random search is made to miss the loss (it does in a 1 s budget on this
    # machine, but finds it in a later round on a faster one: not a thing to test on);
    # the explorer finds it within the same bounds, and proves the rest
    from deployspec.engines import hypothesis_engine
    from deployspec.engines.result import Result

    real = hypothesis_engine.search

    def misses_the_loss(model, variant, prop, **kw):
        if prop.name == "app_stays_available" and not kw.get("skip_causes"):
            return Result(model.name, variant, prop.name, "hypothesis", "holds", message="stubbed")
        return real(model, variant, prop, **kw)

    monkeypatch.setattr(hypothesis_engine, "search", misses_the_loss)
    # 1 s for each random search, but the explorer's time as without --budget: its proofs take
    # about 1 s here, and did not finish within 1 s on a loaded machine (load average 5)
    real_budgets = check.budgets
    monkeypatch.setattr(check, "budgets", lambda engine, budget: real_budgets(
        engine, None if engine == "explore" else budget))
    results = check.run(check.plan("capi", ["capi-current"]), ["hypothesis"], budget=1, seed=0, out_dir=None,
                        bounds={"max_deployments": 1}, distinct=True)
    explored = {r.property: r for r in results if r.engine == "explore"}
    held = {r.property for r in results if r.engine == "hypothesis" and r.verdict == "holds"}
    assert "app_stays_available" in held and held <= set(explored)  # every "holds" was explored
    assert explored["app_stays_available"].verdict == "violated"
    assert explored["single_active_deployment"].verdict == "holds"
    assert explored["single_active_deployment"].stats["complete"]


def test_a_close_look_at_a_property_without_causes_shows_the_shortest_story(capsys):
    """The random search's trace of a property that names no cause was shown as it was (six
    steps, two webhook deliveries that changed nothing), the explorer not asked; now it is,
    and the shorter trace is the one shown."""
    from .cli_runs import run

    status, out, _ = run(capsys, "check", "--model", "slots", "--variant", "slots-webhook-staging-tag",
                         "--property", "slot_runs_one_version", "--budget", "1", "--json")
    results = json.loads(out)["results"]
    by = {r["engine"]: r for r in results if r["verdict"] == "violated"}
    assert status == 1 and set(by) == {"hypothesis", "explore"}
    assert by["explore"]["trace_length"] <= by["hypothesis"]["trace_length"]
    assert by["explore"]["stats"]["complete"] and by["explore"]["stats"]["shortest"]
    status, out, _ = run(capsys, "check", "--model", "slots", "--variant", "slots-webhook-staging-tag",
                         "--property", "slot_runs_one_version", "--budget", "1")
    heads = [ln for ln in out.splitlines() if ln.startswith("slots / slots-webhook-staging-tag: slot_runs_one_version")]
    shown = "(engine explore)" if by["explore"]["trace_length"] < by["hypothesis"]["trace_length"] else "(engine hyp"
    assert len(heads) == 1 and shown in heads[0]
