"""The explorer on toy models (``toy.py``) whose shortest traces are known by hand.

What the product of states and a trace property's memory must hold: a state
reached with two memories is two nodes; a move that changes only the memory,
and a refused action the property sees, are moves; and the settle phase of a
settled property (nothing to do, an idle tick, the settle bound) as the
explorer's :class:`Settler` and the replaying :class:`Session` both count it.
"""

from __future__ import annotations

import pytest
from deployspec.reference.core import Rejected
from deployspec.spec.core import settled_property, trace_property

from deployspec.engines.explore import search
from deployspec.engines.product import Settler

from .toy import Move, Run, Tick, toy_model


def explore(model, config, prop):
    return search(model, "toy", prop, budget=60, seed=0, out_dir=None, config=config)


def story(result) -> list[tuple[str, str | None]]:
    """The trace's steps as (action label or kind, refusal)."""
    return [(s["action"].get("label", s["action"]["type"]), s["rejected"]) for s in result.trace["steps"]]


# --- one state, two memories ---------------------------------------------------------


@trace_property("toy", initial=None)
def no_go_from_the_right(began, step):
    """``go`` must not come after a start on the right (memory: the first move's side)."""
    label = step.action.get("label", "")
    began = began or ("right" if label.startswith("right") else "left")
    return began, (f"go at step {step.index} after a start on the right"
                   if label == "go" and began == "right" else None)


@pytest.mark.parametrize("detour", [False, True], ids=["missed", "longer"])
def test_a_state_reached_with_two_memories_is_two_nodes(detour):
    # `left` and `right` both lead to `mid`; BFS meets (mid, left) first, and only
    # (mid, right) goes on to break the property. Were nodes keyed by state alone,
    # (mid, right) would count as visited: the violation would be missed, or (with
    # the detour through `side`) found 3 steps long instead of 2.
    moves = {
        "start": [(Move("left"), "mid"), (Move("right"), "mid")],
        "mid": [(Move("go"), "end")],
    }
    if detour:
        moves["start"].append((Move("right-detour"), "side"))
        moves["side"] = [(Move("on"), "far")]
        moves["far"] = [(Move("go"), "end")]
    model, config = toy_model(moves)
    r = explore(model, config, no_go_from_the_right)
    assert r.verdict == "violated", r.message
    assert story(r) == [("right", None), ("go", None)]
    assert r.stats["shortest"] and r.trace["violation"]["step"] == 1


# --- moves that change only the memory -------------------------------------------------


@trace_property("toy", initial=False)
def no_go_after_a_mark(marked, step):
    """``go`` must not come after a ``mark`` (which changes nothing but this memory)."""
    label = step.action.get("label")
    return marked or label == "mark", ("go after a mark" if label == "go" and marked else None)


@trace_property("toy", initial=False)
def marks_at_most_once(marked, step):
    """A second ``mark`` breaks it: a step that changes neither state nor memory."""
    label = step.action.get("label")
    return marked or label == "mark", ("marked twice" if label == "mark" and marked else None)


@pytest.mark.parametrize("prop, expected", [
    (no_go_after_a_mark, [("mark", None), ("go", None)]),  # the mark changes only the memory
    (marks_at_most_once, [("mark", None), ("mark", None)]),  # the second changes nothing, but complains
], ids=["memory-only", "complains"])
def test_a_self_loop_of_the_state_is_a_move_when_the_property_sees_it(prop, expected):
    model, config = toy_model({"start": [(Move("mark"), "start"), (Move("go"), "end")]})
    r = explore(model, config, prop)
    assert r.verdict == "violated", r.message
    assert story(r) == expected
    assert r.trace["steps"][0]["observation"] == {"at": "start"}  # the state did not move


@trace_property("toy", initial=False)
def marks_are_fine(marked, step):
    """Never breaks; remembers whether a ``mark`` was made."""
    return marked or step.action.get("label") == "mark", None


def test_a_self_loop_for_the_state_and_the_memory_is_not_a_move():
    # from (start, True) another mark is a pure self-loop: no move, no transition counted;
    # the moves are start -mark-> (start, True), and go from both nodes
    model, config = toy_model({"start": [(Move("mark"), "start"), (Move("go"), "end")]})
    r = explore(model, config, marks_are_fine)
    assert r.verdict == "holds" and r.stats["complete"]
    assert r.stats["states"] == 4  # (start, F), (start, T), (end, F), (end, T)
    assert r.stats["transitions"] == 3 and r.stats["by_action"]["move"] == 3


# --- refused actions -----------------------------------------------------------------


@trace_property("toy", initial=False)
def no_go_after_a_refusal(refused, step):
    """``go`` must not be accepted after an action was refused."""
    label = step.action.get("label")
    bad = label == "go" and refused and step.rejected is None
    return refused or step.rejected is not None, ("go after a refusal" if bad else None)


@trace_property("toy", initial=None)
def nothing_refused(memory, step):
    """No action is refused."""
    return memory, (f"{step.action.get('label')} refused: {step.rejected}" if step.rejected else None)


@pytest.mark.parametrize("prop, expected, refused, accepted", [
    # the refusal changes the memory: (start, F) -knock-> (start, T), then go from both nodes;
    # the second knock, from (start, T), changes nothing and is no move, but was tried
    (no_go_after_a_refusal, [("knock", "closed"), ("go", None)], 2, 2),
    (nothing_refused, [("knock", "closed")], 1, 0),  # the refusal itself breaks it
], ids=["changes-memory", "complains"])
def test_a_refused_action_is_a_step_the_property_sees(prop, expected, refused, accepted):
    model, config = toy_model({"start": [(Move("knock"), Rejected("closed")), (Move("go"), "end")]})
    r = explore(model, config, prop)
    assert r.verdict == "violated", r.message
    assert story(r) == expected
    # refusals tried are counted apart from the accepted moves
    assert r.stats["rejected_by_action"]["move"] == refused
    assert r.stats["by_action"]["move"] == accepted


# --- the settle phase ----------------------------------------------------------------


@settled_property("toy")
def comes_to_rest(obs):
    """Once the platform is left alone, no node is left spinning, waiting, stuck or climbing."""
    at = obs["at"]
    return f"settled at {at}" if at.startswith(("spinning", "waiting", "stuck", "c")) else None


def idle_or_busy(idle):
    """From `spinning` (and `spinning-too`) the platform runs forever (not a tick: the
    settle bound, 5, ends it); from `waiting` one tick changes nothing (``idle``: its
    result) and ends the phase; from `x` a tick moves to `home`, where there is nothing to do."""
    return toy_model(
        {"start": [(Move("a"), "spinning"), (Move("b"), "x")],
         "x": [(Move("c"), "waiting"), (Move("d"), "spinning-too")]},
        {"spinning": (Run(), "spinning"), "spinning-too": (Run(), "spinning-too"),
         "waiting": (Tick(), idle), "x": (Tick(), "home")},
        settle_steps=5)


IDLE = pytest.mark.parametrize("idle", ["waiting", Rejected("nothing to update")], ids=["tick", "refused-tick"])


@IDLE
def test_the_settler_counts_an_idle_tick_as_the_last_step(idle):
    model, config = idle_or_busy(idle)
    settler = Settler(model, model.variant("toy"), config, comes_to_rest)
    assert settler.outcome("waiting") == ("settled at waiting", 1)
    assert settler.outcome("spinning") == ("settled at spinning", 5)  # an idle run is no tick
    assert settler.outcome("x") == (None, 1)  # a tick that moves, then nothing to do
    assert settler.outcome("start") == (None, 0)  # nothing to do at all


@IDLE
def test_an_idle_tick_makes_a_longer_path_the_shortest_trace(idle):
    # the shortest trace is the longer path with the shorter settle phase: b, c, then the
    # one idle tick (3 steps), not a, then 5 runs (6), nor b, d, then 5 runs (7, found
    # after it). Were an idle tick not the end, `waiting` would settle in 5 steps too;
    # were any idle platform step the end, `spinning` in 1 (and the replay, which runs
    # 5, would disagree)
    model, config = idle_or_busy(idle)
    r = explore(model, config, comes_to_rest)
    assert r.verdict == "violated", r.message
    assert story(r) == [("b", None), ("c", None), ("tick", getattr(idle, "reason", None))]
    assert r.trace["settle_from"] == 2 and r.stats["shortest"]
    assert r.message == "settled at waiting"  # the platform, not the bound, ended the phase


def test_nothing_to_do_is_a_settle_phase_of_no_steps():
    model, config = toy_model({"start": [(Move("go"), "stuck")]}, settle_steps=5)
    settler = Settler(model, model.variant("toy"), config, comes_to_rest)
    assert settler.outcome("stuck") == ("settled at stuck", 0)
    r = explore(model, config, comes_to_rest)
    assert r.verdict == "violated" and story(r) == [("go", None)]
    assert r.trace["settle_from"] == 1 and r.message == "settled at stuck"


def climbing(bound):
    """From c0 the platform climbs c0 -> c1 -> c2 -> top in 3 runs."""
    return toy_model({"start": [(Move("go"), "c0")]},
                     {"c0": (Run(), "c1"), "c1": (Run(), "c2"), "c2": (Run(), "top")},
                     settle_steps=bound)


@pytest.mark.parametrize("bound", [2, 3, 4])
def test_the_settler_stops_at_the_settle_bound(bound):
    model, config = climbing(bound)
    settler = Settler(model, model.variant("toy"), config, comes_to_rest)
    if bound == 2:  # cut at c2, judged there
        assert settler.outcome("c0") == ("settled at c2", 2)
        assert settler.memo == {}  # a cut outcome holds for this bound only: not remembered
    else:
        assert settler.outcome("c0") == (None, 3)
    if bound >= 3:  # the run ended (at the bound, or before): the states it passed through are remembered
        assert settler.memo[hash("c1")] == (None, 2) and settler.memo[hash("top")] == (None, 0)


@pytest.mark.parametrize("bound, verdict", [(2, "violated"), (3, "holds"), (4, "holds")])
def test_a_settle_bound_that_cuts_the_phase_is_in_the_trace_and_the_message(bound, verdict):
    model, config = climbing(bound)
    r = explore(model, config, comes_to_rest)
    assert r.verdict == verdict and r.stats["complete"], r.message
    if verdict == "violated":
        assert story(r) == [("go", None), ("run", None), ("run", None)]
        assert r.message == ("settled at c2 (the settle phase was cut at settle_steps=2: "
                             "the platform had not come to rest)")


# --- rebuilding the path -------------------------------------------------------------


@trace_property("toy", initial=None)
def marks_only_first(last_mark, step):
    """``go`` must not follow a ``mark`` made after the first step (memory: the index of the last mark)."""
    label = step.action.get("label")
    if label == "mark":
        return step.index, None
    return last_mark, ("go after a late mark" if label == "go" and last_mark else None)


def test_the_path_is_rebuilt_with_the_step_indices_the_search_saw():
    # mark, mark, go: the second mark changes only the memory (0 -> 1), so it is a move
    # only if the rebuilt path gives it its index, 1, as the search did
    model, config = toy_model({"start": [(Move("mark"), "start"), (Move("go"), "end")]})
    r = explore(model, config, marks_only_first)
    assert r.verdict == "violated", r.message
    assert story(r) == [("mark", None), ("mark", None), ("go", None)]
