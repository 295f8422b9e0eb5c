"""Details of the exhaustive search that a wrong search would get wrong quietly.

Each answer is worked out by hand on a tiny graph (``helpers.Tree``,
``helpers.Grid``, a table of ``toy.py``) or by a plain search that keeps whole
states: every state a state bound admits is judged; nodes are told apart by their
key alone; a step to an equal state (with an equal memory) is no transition, in
``bfs`` and in a property's search, and the counts per action kind are a plain
search's; a model's canonical form applies to the root, to every move and to the
rebuilt path, which gives each move the step index the search gave it; a settled
property is judged from the initial state too, and its search stops at the first
layer after which no deeper state can give a shorter trace (not before), says
when a bound stopped it earlier and calls a trace shortest when the bound cut
nothing shorter.
"""

from __future__ import annotations

import os
from collections import Counter

import attrs
import pytest
from deployspec.reference.core import Rejected
from deployspec.spec.core import settled_property, state_property, trace_property

from deployspec.engines.explore import explore_config, search
from deployspec.explorer import Layered, bfs
from deployspec.models import get_model

from .helpers import Grid, Tree, action_labels, two_active
from .toy import Move, Run, canonical_toy, toy_model


def explore(model, config, prop, **kw):
    return search(model, "toy", prop, budget=60, seed=0, out_dir=None, config=config, **kw)


@state_property("toy")
def anything_goes(_obs):
    """Never breaks: a search for it visits every reachable state."""


# --- the generic search ---------------------------------------------------------------


@pytest.mark.parametrize("k", [2, 5, 63])
def test_every_state_a_state_bound_admits_is_judged(k):
    # a bound checked before judging the k-th state would keep it (k states) unjudged: a
    # goal there would be missed
    judged = []
    search = Layered(Tree(64), max_states=k)
    assert search.run(lambda n, depth, number: judged.append(number)) is None
    assert search.states == k and judged == list(range(k))
    assert search.stopped == "max_states"
    last = Layered(Tree(64), max_states=k)
    assert last.run(lambda n, depth, number: number == k - 1) == k - 1 and last.stopped is None


def test_nodes_are_told_apart_by_their_key_alone():
    # every point of a 4 x 4 grid is reached by many routes; each node carries its route,
    # which its key leaves out: one node per point, judged once, at its distance
    grid = Grid(4)
    judged = Counter()
    search = Layered(grid)
    assert search.run(lambda node, depth, number: judged.update([(node[:2], depth)])) is None
    assert judged == Counter({((x, y), x + y): 1 for x in range(4) for y in range(4)})
    assert (search.states, search.depth, search.transitions) == (16, 6, grid.moves)
    assert search.exhausted


# --- what is a transition ---------------------------------------------------------------


def copies_and_refusals():
    """From `start`: `knock` is refused, `stay` gives back an equal copy of the state
    (not the same object), `go` moves to `end`; from `end`, `back` returns to `start`."""
    copy = "START".lower()  # made afresh
    start = "start"
    assert copy == start and copy is not start
    return toy_model({"start": [(Move("knock"), Rejected("closed")), (Move("stay"), copy), (Move("go"), "end")],
                      "end": [(Move("back"), "start")]})


def test_a_move_to_an_equal_copy_of_the_state_is_no_transition():
    # two states, two moves (go, back): the copy is the same state, the refusal no move
    model, config = copies_and_refusals()
    r = bfs(model, model.variant("toy"), config, goal=lambda s, o: False)
    assert (r.states, r.transitions, r.depth, r.complete) == (2, 2, 1, True)
    assert r.by_kind == {"move": 2}
    p = explore(model, config, anything_goes)
    assert p.verdict == "holds" and p.stats["complete"]
    assert (p.stats["states"], p.stats["transitions"], p.stats["depth"]) == (2, 2, 1)
    assert p.stats["by_action"] == {"move": 2, "tick": 0, "run": 0}
    assert p.stats["rejected_by_action"] == {"move": 1, "tick": 0, "run": 0}  # knock, tried once
    assert p.stats["never_enabled"] == ["tick", "run"]


@trace_property("toy", initial=())
def kinds_seen(kinds, step):
    """Never breaks; remembers the kinds of action seen so far (a tuple built afresh each step)."""
    return tuple(sorted({*kinds, step.action["type"]})), None


def test_a_step_to_an_equal_state_and_an_equal_memory_is_no_transition():
    # root (start, ()); every step makes the memory ("move",): knock (refused) moves to
    # A = (start, ("move",)), stay reaches A again, go reaches B = (end, ("move",)). From A,
    # knock and stay give an equal state and an equal (not the same) memory: no moves;
    # go reaches B again; from B, back reaches A. Moves: 3 + 2; accepted: stay, go, go, back
    model, config = copies_and_refusals()
    p = explore(model, config, kinds_seen)
    assert p.verdict == "holds" and p.stats["complete"]
    assert (p.stats["states"], p.stats["transitions"], p.stats["depth"]) == (3, 5, 1)
    assert p.stats["by_action"]["move"] == 4 and p.stats["rejected_by_action"]["move"] == 2


def test_bfs_and_a_proof_count_what_a_plain_search_counts_on_capi():
    """States, transitions (accepted actions that change the state), moves and refusals
    per action kind and the depth, against a plain search that keeps whole states."""
    capi = get_model("capi")
    variant = capi.variant("capi-safe")
    config = attrs.evolve(explore_config(capi, variant), max_instances=1, max_deployments=1, max_droplets=1)
    root = capi.initial_state(config)
    distance, layer = {root: 0}, [root]
    moved, refused, transitions = Counter(), Counter(), 0
    while layer:
        nxt = []
        for s in layer:
            for a in capi.candidate_actions(capi.observe(s), config):
                t = variant.step(s, a)
                if isinstance(t, Rejected):
                    refused[a.kind] += 1
                    continue
                if t == s:
                    continue
                transitions += 1
                moved[a.kind] += 1
                if t not in distance:
                    distance[t] = distance[s] + 1
                    nxt.append(t)
        layer = nxt
    expected = (len(distance), transitions, max(distance.values()))

    r = bfs(capi, variant, config, goal=lambda s, o: False)
    assert (r.states, r.transitions, r.depth) == expected and r.complete
    assert r.by_kind == dict(moved)
    prop = capi.property("single_active_deployment")
    p = search(capi, "capi-safe", prop, budget=60, seed=0, out_dir=None, config=config)
    assert p.verdict == "holds" and p.stats["complete"]
    assert (p.stats["states"], p.stats["transitions"], p.stats["depth"]) == expected
    assert p.stats["by_action"] == {k: moved[k] for k in capi.vocabulary}
    assert p.stats["rejected_by_action"] == {k: refused[k] for k in capi.vocabulary}
    assert p.stats["never_enabled"] == [k for k in capi.vocabulary if not moved[k]]


@pytest.mark.parametrize("stop", [{"goal": two_active}, {"goal": lambda s, o: False, "max_states": 1000}],
                         ids=["goal", "max_states"])
def test_a_search_stopped_at_a_move_counts_no_move_after_it(stop):
    # the moves of the state being expanded are made one at a time: those after the goal
    # (or the last state the bound admits) are neither stepped nor counted per kind
    capi = get_model("capi")
    variant = capi.variant("capi-2022")
    r = bfs(capi, variant, explore_config(capi, variant), **stop)
    assert r.path is not None if "max_states" not in stop else r.stopped == "max_states"
    assert sum(r.by_kind.values()) == r.transitions


# --- a model's canonical form --------------------------------------------------------------


@state_property("toy")
def never_at_the_end(obs):
    """Breaks at `end`, whatever its tag."""
    return "at the end" if obs["at"].startswith("end") else None


def test_the_canonical_form_applies_to_the_root_to_every_move_and_to_the_rebuilt_path():
    # canonical states: start, mid, end; moves a, b, go, back. Were the root left as it is,
    # `back` would reach a fourth state (start besides start~0); were moves, mid~1 and mid~2
    model, config = canonical_toy()
    variant = model.variant("toy")
    whole = bfs(model, variant, config, goal=lambda s, o: False)
    assert (whole.states, whole.transitions, whole.depth) == (3, 4, 2)
    found = bfs(model, variant, config, goal=lambda s, o: s == "end")
    assert [a.label for a in found.path] == ["a", "go"]
    assert found.goal_state == "end"  # the state the goal judged, not end~1
    p = explore(model, config, anything_goes)
    assert p.verdict == "holds" and (p.stats["states"], p.stats["transitions"]) == (3, 4)
    v = explore(model, config, never_at_the_end)
    assert v.verdict == "violated" and action_labels(v.trace) == ["a", "go"]


# --- the path of a trace property ----------------------------------------------------------


@trace_property("toy", initial=None)
def no_go_after_a_late_mark(when, step):
    """``go`` must not follow a mark made after the first step (memory: when the last mark was)."""
    label = step.action.get("label")
    if label == "mark":
        return ("first" if step.index == 0 else "later"), None
    return when, ("go after a late mark" if label == "go" and when == "later" else None)


def test_the_rebuilt_path_gives_each_move_the_index_the_search_gave_it():
    # mark (0: first), mark (1: later), go: breaks. Rebuilt one step off, the second mark
    # would see index 2, leave "later" as it was and be no move at all
    model, config = toy_model({"start": [(Move("mark"), "start"), (Move("go"), "end")]})
    r = explore(model, config, no_go_after_a_late_mark)
    assert r.verdict == "violated", r.message
    assert action_labels(r.trace) == ["mark", "mark", "go"] and r.stats["shortest"]


# --- how far a settled property's search goes ------------------------------------------


@settled_property("toy")
def comes_to_rest(obs):
    """Once the platform is left alone, it must not be stuck."""
    return f"settled at {obs['at']}" if obs["at"].startswith("stuck") else None


def test_the_settle_phase_from_the_initial_state_is_judged_too():
    # left alone from the start, the platform gets stuck: a trace of no user action at all
    model, config = toy_model({"start": [(Move("go"), "elsewhere")]}, {"start": (Run(), "stuck")})
    r = explore(model, config, comes_to_rest)
    assert r.verdict == "violated" and action_labels(r.trace) == ["run"]
    assert r.trace["settle_from"] == 0 and r.message == "settled at stuck"


def test_a_settled_search_goes_one_layer_deeper_for_a_shorter_trace():
    # `a` reaches x, which the platform takes to stuck-x in 2 steps (3 in all); `b`, `c`
    # reach stuck-z, stuck already (2 in all). After layer 1 the best is 3: a state of
    # layer 2 may still give 2, so the search must look at layer 2
    model, config = toy_model({"start": [(Move("a"), "x"), (Move("b"), "y")], "y": [(Move("c"), "stuck-z")]},
                              {"x": (Run(), "x1"), "x1": (Run(), "stuck-x")})
    r = explore(model, config, comes_to_rest)
    assert r.verdict == "violated" and r.stats["shortest"]
    assert action_labels(r.trace) == ["b", "c"] and r.message == "settled at stuck-z"


def test_a_settled_search_stops_once_no_deeper_state_can_give_a_shorter_trace():
    # `a` reaches z, which the platform takes to stuck in 1 step: 2 in all, found in layer 1.
    # Any state of layer 2 or deeper gives 2 or more: the search stops after layer 1
    # (two states), not at the end of the chain w1, w2, w3
    model, config = toy_model({"start": [(Move("a"), "z")], "z": [(Move("d"), "w1")],
                               "w1": [(Move("e"), "w2")], "w2": [(Move("f"), "w3")]},
                              {"z": (Run(), "stuck")})
    r = explore(model, config, comes_to_rest)
    assert r.verdict == "violated" and action_labels(r.trace) == ["a", "run"]
    assert (r.stats["states"], r.stats["depth"], r.stats["complete"]) == (2, 1, True)
    assert r.stats["shortest"] and r.stats["stopped"] is None


def test_a_settled_violation_found_before_a_bound_stopped_the_search_is_not_called_shortest():
    # layer 1: x settles at stuck-x in 3 steps (4 in all); layer 2 holds stuck-z (2 in all),
    # which a depth bound of 1 keeps out of reach: the trace found is not known shortest
    model, config = toy_model({"start": [(Move("a"), "x"), (Move("b"), "y")], "y": [(Move("c"), "stuck-z")]},
                              {"x": (Run(), "x1"), "x1": (Run(), "x2"), "x2": (Run(), "stuck-x")})
    cut = explore(model, config, comes_to_rest, max_depth=1)
    assert cut.verdict == "violated" and action_labels(cut.trace) == ["a", "run", "run", "run"]
    assert cut.stats["stopped"] == "max_depth" and cut.stats["shortest"] is False
    whole = explore(model, config, comes_to_rest)
    assert action_labels(whole.trace) == ["b", "c"] and whole.stats["shortest"] is True


@pytest.mark.parametrize("workers", [1, 2])
def test_a_settled_violation_provably_shortest_at_the_depth_bound_is_called_shortest(workers):
    # layer 1 holds z, stuck after 1 step: 2 in all. A state of layer 2 or deeper gives 2 or
    # more, so the bound of 1 cut nothing: the trace is shortest, not one the bound stopped
    model, config = toy_model({"start": [(Move("a"), "z")], "z": [(Move("d"), "w1")]},
                              {"z": (Run(), "stuck")})
    r = explore(model, config, comes_to_rest, max_depth=1, workers=workers)
    assert r.verdict == "violated" and action_labels(r.trace) == ["a", "run"]
    assert r.stats["stopped"] is None and r.stats["shortest"] is True and r.stats["complete"]


def test_the_workers_findings_are_taken_as_one_process_takes_its_own():
    """The shortest total, the first worker's on a tie, and only if strictly shorter than
    what is there: a tie with what was found before keeps it."""
    from deployspec.engines.explore import _take_shortest

    found: dict = {}
    _take_shortest(found, [{"total": 5, "number": 1}, {"total": 5, "number": 2}, {"total": 6, "number": 3}, {}])
    assert found == {"total": 5, "number": 1}
    _take_shortest(found, [{"total": 5, "number": 9}])
    assert found == {"total": 5, "number": 1}
    _take_shortest(found, [{}, {"total": 4, "number": 9}])
    assert found == {"total": 4, "number": 9}


@pytest.mark.skipif(not os.path.exists("/proc/self/statm"), reason="the address space is read from Linux's /proc")
def test_the_address_space_left_under_a_limit_is_measured_against_a_reserve(monkeypatch):
    """``ulimit -v``: a search stops on its memory budget while a reserve of address space is
    left (MemoryError there could hang CPython 3.11); no limit, nothing to keep in hand."""
    import resource

    from deployspec import memory

    with open("/proc/self/statm") as f:
        size = int(f.read().split()[0]) * resource.getpagesize()
    for limit, short in ((resource.RLIM_INFINITY, False), (size + (8 << 20), True),
                         (size + (64 << 30), False), (size * 11 // 10, True)):
        monkeypatch.setattr(resource, "getrlimit", lambda which, limit=limit: (limit, resource.RLIM_INFINITY))
        assert memory.address_space_short() is short, (limit - size) >> 20


@pytest.mark.parametrize(("platform", "maxrss", "mb"), [("linux", 2048, 2.0), ("darwin", 2 << 20, 2.0)])
def test_the_peak_memory_is_read_in_the_unit_of_the_platform(monkeypatch, platform, maxrss, mb):
    """``ru_maxrss`` is in KiB on Linux and in bytes on macOS: read as KiB there, a search's
    80 MB was 80 GB, over every memory budget at the first look (off Linux, where no
    ``/proc/self/statm`` is, the budget is judged by the peak)."""
    import resource
    import sys

    from deployspec import memory

    monkeypatch.setattr(sys, "platform", platform)
    monkeypatch.setattr(resource, "getrusage", lambda who: type("Usage", (), {"ru_maxrss": maxrss})())
    assert memory.peak_rss_mb() == mb
    monkeypatch.setattr(memory, "_statm", lambda: None)  # (no /proc: the peak stands for the resident size)
    assert memory.current_rss_mb() == mb and memory.memory_stop(mb + 1) is None and memory.memory_stop(mb / 2) == "memory"
