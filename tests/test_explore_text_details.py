"""The explorer's text a mutation pass found unpinned (engines/explore_text.py): progress
lines, bounds, proofs, vacuity and the ``check`` statistics."""

from __future__ import annotations

import json

import pytest

from deployspec.cli import main
from deployspec.engines.explore_text import (
    bounds_text,
    progress_text,
    proof_text,
    summary,
    vacuity_text,
)
from deployspec.engines.result import Result

STATS = {"complete": True, "states": 1234, "transitions": 5678, "depth": 9, "seconds": 2.25,
         "states_per_second": 548, "bounds": {"max_depth": 9, "instances": 2}, "stopped": None, "vacuous": []}


def test_a_progress_line_shows_a_rate_from_half_a_second_on():
    """Before 0.5 s a rate is noise; from then on it is the speed the user watches, digits grouped."""
    assert progress_text(3, 12345, 0.49) == "depth 3 · 12,345 states"
    assert progress_text(3, 12345, 0.5) == "depth 3 · 12,345 states · 24,690/s"


def test_bounds_leave_out_what_is_off_or_empty_and_keep_zero():
    """False, None and empty lists are bounds not set; 0 is a bound and must be shown."""
    assert bounds_text({"a": 0, "b": False, "c": None, "d": [], "e": (), "f": True, "g": [1]}) == \
        "a=0, f=True, g=[1]"


def test_a_complete_proof_says_every_number():
    """The claim's extent: states, bounds, transitions, depth, time and speed, in that order."""
    assert proof_text(STATS) == ("holds for all 1,234 states reachable within bounds (max_depth=9, instances=2): "
                                 "5,678 transitions, depth 9, 2.2 s, 548 states/s")


@pytest.mark.parametrize("stopped, why", [
    ("time", "time budget spent"), ("memory", "memory budget spent"), ("max_depth", "depth bound reached"),
    ("max_states", "state bound reached"), ("interrupted", "interrupted"),
])
def test_an_incomplete_search_says_why_it_stopped(stopped, why):
    """An incomplete search is no proof: the text says so and why, an unknown reason as it is."""
    stats = {**STATS, "complete": False, "stopped": stopped}
    assert proof_text(stats) == (f"no violation within 1,234 states explored within bounds (max_depth=9, "
                                 f"instances=2) (incomplete: {why} at depth 9, 2.2 s)")


def test_a_search_the_memory_budget_stopped_says_the_budget_and_the_option_that_gives_more():
    stats = {**STATS, "complete": False, "stopped": "memory", "memory_budget_mb": 3072}
    assert "(incomplete: memory budget of 3,072 MiB spent (--memory MIB gives more) at depth 9" in proof_text(stats)


def test_an_incomplete_vacuous_search_says_both():
    """Vacuity is said of a bounded search too, after why it stopped."""
    stats = {**STATS, "complete": False, "stopped": "time", "vacuous": ["deploy", "cancel"]}
    assert proof_text(stats).endswith("2.2 s); vacuous: no deploy or cancel ever took effect within these "
                                      "bounds (every one was refused or changed nothing)")


@pytest.mark.parametrize("stats", [{}, {"vacuous": []}, {"vacuous": None}])
def test_no_vacuity_is_no_text(stats):
    """A proof where every essential action moved (or none was asked about) says nothing more."""
    assert vacuity_text(stats) == ""


def _result(verdict="violated", **kw) -> Result:
    stats = {"states": 1234, "transitions": 5678, "depth": 9, "seconds": 2.25, "states_per_second": 548,
             "peak_memory_mb": 40, "by_action": {"push": 3, "deploy": 0, "tick": 7}, "never_enabled": []}
    stats.update(kw.pop("stats", {}))
    return Result("capi", "capi-2022", "single_active_deployment", "explore", verdict, stats=stats, **kw)


def test_a_violations_summary_says_its_cause_length_and_statistics():
    """One line of verdict, one of counts, one of moves by action (those that never moved left out)."""
    text = summary(_result(cause="cancel_then_deploy", trace_length=6))
    assert text.splitlines() == [
        "capi-2022 · single_active_deployment · explore: violated (cause cancel_then_deploy), shortest trace 6 steps",
        "  1,234 states, 5,678 transitions, max depth 9, 2.2 s (548 states/s), process peak memory 40 MiB",
        "  transitions by action: push 3, tick 7",
    ]


def test_a_one_step_trace_is_one_step_and_no_cause_says_none():
    """Singular for one step; no '(cause None)'."""
    assert summary(_result(trace_length=1)).splitlines()[0].endswith("explore: violated, shortest trace 1 step")


def test_a_violation_found_before_a_budget_cut_is_not_called_the_shortest():
    """It said "shortest trace 12 steps" where --json said ``shortest: false`` (stopped at depth 5)."""
    text = summary(_result(trace_length=12, stats={"shortest": False, "stopped": "time", "depth": 5}))
    assert text.splitlines()[0].endswith("explore: violated, trace 12 steps (not known to be the shortest: "
                                         "time budget spent at depth 5)")
    assert "shortest trace 6 steps" in summary(_result(trace_length=6, stats={"shortest": True}))


def test_a_search_that_moved_nothing_says_none():
    assert summary(_result(trace_length=1, stats={"by_action": {"push": 0}})).splitlines()[2] == \
        "  transitions by action: none"


def test_an_error_is_said_as_one():
    """An engine error is not dressed as a violation with a trace length of None."""
    first = summary(_result("error", message="out of memory")).splitlines()[0]
    assert first == "capi-2022 · single_active_deployment · explore: error: out of memory"


def test_a_search_that_never_ran_is_one_line():
    """Its process was lost: no statistics to show, and no KeyError either."""
    r = Result("capi", "capi-2022", "p", "explore", "error", message="lost", stats={})
    assert summary(r) == "capi-2022 · p · explore: error: lost"


def test_a_search_that_ended_in_error_does_not_say_what_never_took_effect():
    """A worker lost, or a replay that did not match: the search was cut short, so what it had
    not taken was not "refused wherever tried"."""
    text = summary(_result("error", message="a worker was lost", stats={"never_enabled": ["cancel"]}))
    assert text.splitlines()[3] == "  not taken before the search ended: cancel"


def test_workers_memory_and_actions_never_taking_effect_are_said():
    """A partitioned search's memory per worker, and the actions the bounds never let move."""
    text = summary(_result("holds", message="holds for all", stats={
        "worker_added_memory_mb": [5, 7], "workers": 2, "never_enabled": ["cancel", "rollback"]}))
    lines = text.splitlines()
    assert lines[1].endswith("peak memory 40 MiB (+ 5 + 7 MiB added by 2 workers)")
    assert lines[3] == ("  never took effect: cancel, rollback (wherever the search went, each was refused or "
                        "would change nothing: the search stopped before it saw every state)")
    complete = summary(_result("holds", message="holds for all", stats={"complete": True,
                                                                         "never_enabled": ["cancel"]}))
    assert complete.splitlines()[-1] == ("  never took effect: cancel (wherever the search went, each was refused "
                                         "or would change nothing: within these bounds none of them changes "
                                         "anything on this design)")


def test_a_complete_proof_s_counts_are_said_once():
    """A proof's line gives states, transitions, depth, seconds and states/s; the line
    under it said them all again (a user's report): it gives the memory alone. An
    unfinished search's line has no transitions or rate, so its counts stay."""
    proved = summary(_result("holds", message=proof_text(STATS), stats={"complete": True})).splitlines()
    assert proved[0].endswith("2.2 s, 548 states/s") and proved[1] == "  process peak memory 40 MiB"
    cut = {"complete": False, "stopped": "time"}
    unfinished = summary(_result("holds", message=proof_text({**STATS, **cut}), stats=cut)).splitlines()
    assert unfinished[1].startswith("  1,234 states, 5,678 transitions, max depth 9, 2.2 s (548 states/s)")


def test_a_complete_but_vacuous_proof_says_so():
    """'holds for all states' is hollow when no deploy ever moved: the proof must say it."""
    text = proof_text({**STATS, "vacuous": ["deploy"]})
    assert text.startswith("holds for all 1,234 states") and text.endswith(
        "548 states/s; vacuous: no deploy ever took effect within these bounds "
        "(every one was refused or changed nothing)")


def test_a_violation_says_what_it_did_not_take_before_it_not_what_never_took_effect(capsys):
    """The search stops at its first violation: the actions it had not come to were said
    to be "refused wherever tried" (slots-webhook-tag's drift, 2 states, listed eight
    actions never tried), and ``--json`` called the property vacuous on a violation."""
    code = main(["check", "--model", "slots", "--variant", "slots-webhook-tag", "--engine", "explore",
                 "--property", "no_latent_drift", "--json"])
    assert code == 1
    [r] = json.loads(capsys.readouterr().out)["results"]
    assert r["verdict"] == "violated" and r["stats"]["vacuous"] == [] and "swap" in r["stats"]["never_enabled"]
    lines = summary(Result(**{k: r[k] for k in ("model", "variant", "property", "engine", "verdict", "message",
                                                 "stats", "cause", "trace_length")})).splitlines()
    assert lines[3].startswith("  not taken before the violation: ") and "swap" in lines[3]
    assert not any("never took effect" in line for line in lines)


def test_what_a_proof_s_states_are_is_said_where_they_are_not_the_model_s_alone():
    """A user read 68,908 states for one property and 50,963 for another of the same design
    within the same bounds, and a further cause's 21,149: all three are right, said so."""
    from deployspec.engines.explore_text import states_said

    assert states_said({}) == ""
    assert states_said({"with_memory": True}) == " (with what the property remembers)"
    assert states_said({"with_memory": True, "past_causes": ["a", "b"]}) == \
        " (with what the property remembers; none past a or b)"
    assert states_said({"past_causes": ["a", "b", "c"]}) == " (none past the 3 ways found)"


def test_one_state_is_one_state():
    stats = {"complete": False, "states": 1, "stopped": "max_depth", "bounds": {}, "depth": 0, "seconds": 0.0}
    assert proof_text(stats).startswith("no violation within 1 state explored within bounds ()")


def test_a_proof_of_one_state_says_one_state():
    stats = {"complete": True, "states": 1, "bounds": {}, "transitions": 0, "depth": 0, "seconds": 0.0,
             "states_per_second": 0}
    assert proof_text(stats).startswith("holds for the 1 state reachable within bounds")
