"""Details of trace files and of shortening by replay that a bug would get wrong quietly.

Found missing by mutation testing of ``traces`` and ``minimize``: the cause and the
settle phase a saved file records, which file a save keeps when the name is taken,
what a file may say of its settle phase, and how far shortening by replay goes
(pairs, the last step, further rounds, user actions only, ``extra`` kept).
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from types import SimpleNamespace

import pytest
from deployspec.reference.capi.actions import Cancel, Deploy, Push, Tick
from deployspec.spec.core import Violation

from deployspec import traces
from deployspec.minimize import minimize
from deployspec.models import UsageError, get_model
from deployspec.replay import ReplayOutcome, replay
from deployspec.scenario import record

from .helpers import SEED_STORY

CAPI = get_model("capi")
SEED = Path(__file__).parent.parent / "counterexamples" / "capi" / "capi-2022--app_stays_available--a940739cf1.json"


# --- trace files -------------------------------------------------------------------------


def seed_trace() -> dict:
    prop = CAPI.property("app_stays_available")
    config = CAPI.default_config(CAPI.variant("capi-2022"))
    return record(CAPI, "capi-2022", config, prop, SEED_STORY, title="the seed")


def test_a_saved_trace_records_how_the_property_broke(tmp_path):
    # replay and shortening hold a file to its cause: a trace built without it would be
    # judged by property alone, and a shorter trace breaking it another way would pass
    trace = seed_trace()
    assert trace["violation"] == {"step": 5, "message": "no routable web instance left after step 5 (tick())",
                                  "cause": "cancel-keeps-unstarted"}
    assert traces.load(traces.save(trace, tmp_path))["violation"]["cause"] == "cancel-keeps-unstarted"


def test_a_settled_trace_records_where_the_platform_was_left_to_settle(tmp_path):
    # capi-2022's second cancel keeps the canceled deployment's process: 6 user actions,
    # then 2 steps of the platform settling; replay --variant settles the target from step 6
    prop = CAPI.property("deployment_converges")
    config = CAPI.default_config(CAPI.variant("capi-2022"))
    story = [Push(1), Deploy(), Cancel(), Deploy(), Cancel(), Tick()]
    trace = record(CAPI, "capi-2022", config, prop, story, title="two cancels")
    assert trace["settle_from"] == 6 and len(trace["steps"]) > 6
    assert traces.load(traces.save(trace, tmp_path))["settle_from"] == 6


@pytest.mark.parametrize("same", [True, False], ids=["same-finding", "another-trace"])
def test_a_name_taken_while_saving_keeps_a_same_finding_and_refuses_another(tmp_path, monkeypatch, same):
    # between the check and the hard link another process saved a file under that name:
    # the same finding is kept as the result; another trace there is an error, never
    # reported as this finding's file
    trace = seed_trace()
    there = trace if same else dict(trace, steps=trace["steps"][:-1])
    link = os.link

    def racing(src, dst):
        Path(dst).write_text(json.dumps(there))
        return link(src, dst)

    monkeypatch.setattr(os, "link", racing)
    final = tmp_path / f"capi-2022--app_stays_available--{traces.fingerprint(trace)}.json"
    if same:
        assert traces.save(trace, tmp_path) == final
    else:
        with pytest.raises(UsageError, match="the name was taken meanwhile"):
            traces.save(trace, tmp_path)
    assert json.loads(final.read_text()) == there
    assert [p.name for p in tmp_path.iterdir()] == [final.name]


def test_keep_without_a_folder_saves_nothing(tmp_path, monkeypatch):
    # an empty --out is no folder: nothing is written (not into the current folder)
    monkeypatch.chdir(tmp_path)
    nothing = {"counterexample": None, "unsaved": None, "kept": None, "replaced": None}
    assert traces.keep(seed_trace(), "") == traces.keep(seed_trace(), None) == nothing
    assert list(tmp_path.iterdir()) == []


def test_settle_from_may_be_the_trace_s_length_not_beyond(tmp_path):
    # settle_from == len(steps): the platform had nothing left to do after the last action
    trace = seed_trace()
    n = len(trace["steps"])
    ok = tmp_path / "ok.json"
    ok.write_text(json.dumps(dict(trace, settle_from=n)))
    assert traces.load(ok)["settle_from"] == n
    beyond = tmp_path / "beyond.json"
    beyond.write_text(json.dumps(dict(trace, settle_from=n + 1)))
    with pytest.raises(UsageError, match=f"settle_from {n + 1} is beyond the trace's {n} step"):
        traces.load(beyond)


def test_a_user_s_action_after_settle_from_is_refused_not_dropped(tmp_path):
    # a replay plays the steps before settle_from and lets the target settle alone: a
    # user's action after it would be dropped unsaid, and the verdict ("does not
    # reproduce", exit 0) read as a fix
    trace = seed_trace()  # push, runtime, deploy, cancel, deploy, tick
    moved = tmp_path / "moved.json"
    moved.write_text(json.dumps(dict(trace, settle_from=2)))
    with pytest.raises(UsageError, match=r"step 2: deploy\(\), at or after settle_from 2, where the platform "
                                         r"left alone had nothing left to do$"):
        traces.load(moved)
    ok = tmp_path / "ok.json"  # after the last step: nothing of the platform's recorded
    ok.write_text(json.dumps(dict(trace, settle_from=6)))
    assert traces.load(ok)["settle_from"] == 6


def test_a_settling_step_other_than_the_platform_s_own_is_refused(tmp_path):
    # a replay settles by the target's own rules: a recorded tick that fails (no step the
    # platform takes alone) was replaced by a plain tick without a word, and show drew it
    prop = CAPI.property("deployment_converges")
    config = CAPI.default_config(CAPI.variant("capi-2022"))
    trace = record(CAPI, "capi-2022", config, prop, [Push(1), Deploy(), Cancel(), Deploy(), Cancel(), Tick()],
                   title="two cancels")
    at = next(i for i in range(trace["settle_from"], len(trace["steps"]))
              if trace["steps"][i]["action"]["type"] == "tick")
    traces.load(traces.save(trace, tmp_path))  # as recorded: the platform's own steps
    trace = json.loads(json.dumps(trace))
    trace["steps"][at]["action"]["failed"] = [1]
    path = tmp_path / "t.json"
    path.write_text(json.dumps(trace))
    with pytest.raises(UsageError, match=rf"step {at}: tick\(failed=d1\), at or after settle_from "
                                         rf"{trace['settle_from']}, where the platform left alone does tick\(\)$"):
        traces.load(path)


def test_a_trace_judged_on_settling_without_settle_from_is_refused(tmp_path):
    # a settled property is judged by the settle phase alone: without one, a replay never
    # judges it and would say it holds
    prop = CAPI.property("deployment_converges")
    config = CAPI.default_config(CAPI.variant("capi-2022"))
    trace = record(CAPI, "capi-2022", config, prop, [Push(1), Deploy(), Cancel(), Deploy(), Cancel(), Tick()],
                   title="two cancels")
    path = tmp_path / "t.json"
    path.write_text(json.dumps(dict(trace, settle_from=None)))
    with pytest.raises(UsageError, match="is judged once the platform settles, and the trace has no settle_from"):
        traces.load(path)


@pytest.mark.parametrize("settle_from", [None, "end"])
def test_a_step_by_step_property_broken_before_any_step_is_refused(tmp_path, settle_from):
    # -1 is a settled check with no step before it; a property judged at each step breaks at one
    trace = seed_trace()
    path = tmp_path / "t.json"
    path.write_text(json.dumps(dict(trace, violation=dict(trace["violation"], step=-1),
                                    settle_from=len(trace["steps"]) if settle_from else None)))
    with pytest.raises(UsageError, match="violation.step -1: only a property judged once the platform settles "
                                         "breaks before any step, and app_stays_available is judged at each step"):
        traces.load(path)


@pytest.mark.parametrize("occupant", ["{}", "[1, 2]", '{"model": "capi", "variant": "v", "property": "p", "steps": [1]}'])
def test_json_that_is_no_trace_under_the_name_is_replaced(tmp_path, occupant):
    # readable JSON but not a trace (no fingerprint): like a truncated file, it is replaced
    trace = seed_trace()
    final = tmp_path / f"capi-2022--app_stays_available--{traces.fingerprint(trace)}.json"
    final.write_text(occupant)
    assert traces.save(trace, tmp_path) == final
    assert traces.load(final)["steps"] == json.loads(json.dumps(trace["steps"]))


def test_a_file_of_the_same_finding_that_does_not_load_is_replaced(tmp_path):
    # the same name and fingerprint, but a field edited out: replay refuses it, so saving the
    # finding again replaces it rather than keep it and say "saved"
    trace = seed_trace()
    final = traces.save(trace, tmp_path)
    broken = dict(json.loads(final.read_text()), version=2)
    del broken["initial"]
    final.write_text(json.dumps(broken))
    assert traces.fingerprint(broken) == traces.fingerprint(trace)
    kept = traces.keep(trace, tmp_path)
    assert kept == {"counterexample": str(final), "unsaved": None, "kept": None,
                    "replaced": "a file of that name that replay refused"}
    assert traces.load(final)["initial"] == json.loads(json.dumps(trace["initial"]))
    assert traces.keep(trace, tmp_path)["replaced"] is None  # what is there now loads: kept, nothing replaced


# --- shortening by replay ----------------------------------------------------------------


def test_shortening_keeps_the_cause_when_a_shorter_trace_breaks_the_property_another_way():
    # dropping the 4th action of this trace still breaks app_stays_available, but as the seed
    # does (cancel-keeps-unstarted): not the finding this file records
    trace = traces.load(SEED.parent / "capi-current--app_stays_available--310652b449.json")
    smaller = minimize(trace)
    assert smaller["violation"]["cause"] == "cancel-restarts-from-zero"
    assert replay(smaller).violation.cause == "cancel-restarts-from-zero"
    assert len(smaller["steps"]) == len(trace["steps"])


def _by_rule(reproduces, cause="it"):
    """A stand-in for replay: a candidate reproduces when ``reproduces(labels)`` says so;
    the candidates it was given are in its ``.seen``."""
    def replay_on(candidate):
        labels = [s["action"]["label"] for s in candidate["steps"]]
        replay_on.seen.append((labels, candidate["settle_from"]))
        steps = [{"action": s["action"], "rejected": None, "observation": {}} for s in candidate["steps"]]
        ok = reproduces(labels)
        v = Violation("p", len(steps) - 1, "broken", cause) if ok else None
        session = SimpleNamespace(violation=v, settle_from=len(steps), initial={}, steps=steps)
        return ReplayOutcome("toy", "p", v, session)

    replay_on.seen = []
    return replay_on


def _toy_trace(*labels, settle_from=None, extra=None):
    trace = {"model": "toy", "variant": "toy", "config": {}, "property": "p", "engine": "hypothesis",
             "seed": 0, "violation": {"step": len(labels) - 1, "message": "broken", "cause": "it"},
             "settle_from": settle_from, "initial": {},
             "steps": [{"action": {"type": "move", "label": x}, "rejected": None, "observation": {}}
                       for x in labels]}
    return trace | ({"extra": extra} if extra else {})


def _labels(trace):
    return [s["action"]["label"] for s in trace["steps"]]


def test_shortening_removes_a_pair_that_only_goes_together():
    # the x's must come in pairs: no single step can go, the pair can
    smaller = minimize(_toy_trace("k", "x", "x"), _by_rule(lambda ls: "k" in ls and ls.count("x") % 2 == 0))
    assert _labels(smaller) == ["k"] and smaller["extra"]["minimized_by_replay"] is True


def test_shortening_tries_the_last_step_too():
    smaller = minimize(_toy_trace("k", "z"), _by_rule(lambda ls: "k" in ls))
    assert _labels(smaller) == ["k"]


def test_shortening_goes_round_again_after_a_pair_went():
    # y can go only once the x's are gone, which takes the pass over pairs: a second round
    rule = lambda ls: "k" in ls and ls.count("x") % 2 == 0 and ("y" in ls or "x" not in ls)
    smaller = minimize(_toy_trace("k", "y", "x", "x"), _by_rule(rule))
    assert _labels(smaller) == ["k"]


def test_shortening_replays_only_the_user_actions_and_settles_after_them():
    # steps from settle_from on are the platform settling: never replayed as user actions
    replay_on = _by_rule(lambda ls: "k" in ls)
    smaller = minimize(_toy_trace("k", "z", "tick1", "tick2", settle_from=2), replay_on)
    assert _labels(smaller) == ["k"]
    assert replay_on.seen[0] == (["k", "z"], 2)
    assert all("tick1" not in labels and settle == len(labels) for labels, settle in replay_on.seen)


def test_shortening_keeps_what_the_trace_carried_under_extra():
    # a contract trace names its implementation there; shortening adds to it, drops nothing
    implementation = {"exec": "./impl", "name": "mine"}
    smaller = minimize(_toy_trace("k", "z", extra={"implementation": implementation}), _by_rule(lambda ls: "k" in ls))
    assert smaller["extra"] == {"implementation": implementation, "minimized_by_replay": True}


def test_a_contract_trace_is_said_found_with_its_seed():
    """T8: a contract run's seed draws its steps (as Hypothesis's does): said, so the run can be repeated."""
    assert traces.found_by({"engine": "contract", "seed": 7}) == "engine contract, seed 7"
    assert traces.found_by({"engine": "explore", "seed": 0}) == "engine explore"


def test_unsaved_counts_the_others_not_saved():
    """T11: three different reasons: the first said, and 2 more."""
    rs = [SimpleNamespace(unsaved=w) for w in ("a", None, "b", "a", "c")]
    assert traces.unsaved(rs) == "a (and 2 more not saved); the verdicts above stand"
    assert traces.unsaved([SimpleNamespace(unsaved="a")]) == "a; the verdicts above stand"


def test_of_several_schema_errors_the_one_first_by_path_is_said(tmp_path):
    """T18: a trace wrong in steps/0 and in violation: the error said is the first by
    path (steps/0/action), whatever order the validator finds them in."""
    seed = Path(__file__).parents[1] / "counterexamples" / "capi" / "capi-2022--app_stays_available--a940739cf1.json"
    t = json.loads(seed.read_text())
    t["steps"][0]["action"] = 5
    t["violation"] = {"step": "x", "message": "m"}
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps(t))
    with pytest.raises(UsageError, match=r"not a deployspec trace \(steps/0/action: "):
        traces.load(bad)


def test_as_given_names_the_folder_as_given_and_only_it():
    """T21: ``--out .`` names a saved file plainly (as save does), and a folder whose
    name merely begins with the real one's is left alone."""
    assert traces.as_given("saved: /w/out/a.json", "/w/out", ".") == "saved: a.json"
    assert traces.as_given("/w/out/a.json, not /w/out2/b.json", "/w/out", "res") == \
        "res/a.json, not /w/out2/b.json"


@pytest.mark.parametrize("edit, said", [
    # another version is said as such, not as the fields it adds or lacks
    ({"version": 2, "deployspec_version": "9.0", "new_field": 1},
     "trace format version 2, written by deployspec 9.0; this deployspec reads version 1"),
    ({"model": "kubernetes"}, "unknown model 'kubernetes' (known: capi, slots)"),
], ids=["version", "model"])
def test_a_trace_of_another_version_or_model_is_said_so(tmp_path, edit, said):
    path = tmp_path / "t.json"
    path.write_text(json.dumps(dict(seed_trace(), **edit)))
    with pytest.raises(UsageError) as caught:
        traces.load(path)
    assert str(caught.value) == f"{path}: {said}"
