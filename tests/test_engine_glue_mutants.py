"""Behaviours of the engines' glue that a mutation pass over ``session``, ``reached``,
``shortened``, ``render_itf`` and ``timeline`` found unpinned: where a scenario's play and
settle phase stop, how the steps that reached a failing rule are said and shortened, and
two edges of the pictures. Each test was written against a hand-made mutant the rest of
the suite let through; its docstring names it."""

from __future__ import annotations

import pytest
from deployspec.spec.core import settled_property, state_property

from deployspec import reached, render_itf, shortened, timeline
from deployspec.adapter import ReferenceAdapter
from deployspec.rule_results import RuleHungError
from deployspec.session import Session
from deployspec.shortened import shortest

from .test_output_details import trace
from .toy import Move, Run, Tick, ToyVariant, toy_model

# --- session.py --------------------------------------------------------------------


def _toy_session(props, moves, settle=None, **config):
    model, config = toy_model(moves, settle or {}, **config)
    return Session(model, ReferenceAdapter(model, model.variant("toy")), props, config)


def _never_bad():
    @state_property("toy")
    def never_bad(obs):
        """No node named bad..."""
        return f"at {obs['at']}" if obs["at"].startswith("bad") else None

    return never_bad


def test_play_stops_at_the_first_violation():
    """A scenario's trace ends at the step that broke the property: no later step is
    performed and no settle phase follows. (Mutant SE3: ``play`` going on after it.)"""
    s = _toy_session((_never_bad(),), {"start": [(Move("a"), "bad1")], "bad1": [(Move("b"), "bad2")]})
    assert s.play([Move("a"), Move("b")]).step == 0
    assert len(s.steps) == 1 and s.settle_from is None


def test_play_without_settling_leaves_the_platform_alone():
    """``settle=False`` (a scenario told step by step, reference/slots/scenarios.py): no
    settle phase, so a property the platform's own step would break still holds. (Mutant
    SE9: ``play`` settling regardless.)"""
    s = _toy_session((_never_bad(),), {"start": [(Move("a"), "x")]}, {"x": (Run(), "bad1")})
    assert s.play([Move("a")], settle=False) is None
    assert len(s.steps) == 1 and s.settle_from is None
    assert s.play([], settle=True).message == "at bad1"


def test_a_platform_step_other_than_a_tick_that_changes_nothing_does_not_end_settling():
    """Only an idle tick ends the settle phase early; any other platform step that changes
    nothing is tried again until the bound, and the verdict says the phase was cut.
    (Mutant SE4: any unchanged step ends it.)"""
    @settled_property("toy")
    def rests_home(obs):
        """Left alone, the platform ends at home."""
        return None if obs["at"] == "home" else f"settled at {obs['at']}"

    stuck = _toy_session((rests_home,), {}, {"start": (Run(), "start")}, settle_steps=3)
    assert stuck.settle().message == ("settled at start (the settle phase was cut at settle_steps=3: the "
                                      "platform had not come to rest)")
    assert len(stuck.steps) == 3
    idle = _toy_session((rests_home,), {}, {"start": (Tick(), "start")}, settle_steps=3)
    assert idle.settle().message == "settled at start" and len(idle.steps) == 1


# --- reached.py --------------------------------------------------------------------


def test_the_steps_that_reached_a_rule_are_the_last_eight_and_a_count_of_the_rest():
    """Up to ``SHOWN`` (8) steps are all named; past it, the last 8 and how many came before.
    (Mutants RE3 ``<``, RE4 the first 8, RE5 the count of all.)"""
    eight = [f"s{i}()" for i in range(8)]
    assert reached.after(eight) == " after " + ", ".join(eight)
    ten = [f"s{i}()" for i in range(10)]
    assert reached.after(ten) == " after 2 earlier steps, then " + ", ".join(ten[2:])
    assert reached.after(ten[1:]) == " after " + ", ".join(ten[1:])  # one left out is one said
    assert reached.after([]) == ""


def test_long_labels_are_named_fewer_so_an_error_line_keeps_its_count():
    """Eight long labels would pass the error line's 300 characters, whose middle cut took
    "after N steps" and a step away (a helper's report): fewer are named, within
    ``WIDTH``, the last one always."""
    labels = [f"scale(instances={i})" for i in range(40)]
    said = reached.after(labels)
    kept = said.split(" earlier steps, then ")[1].split(", ")
    assert said.startswith(f" after {40 - len(kept)} earlier steps, then ") and kept == labels[-len(kept):]
    assert 1 < len(kept) < reached.SHOWN and len(", ".join(kept)) <= reached.WIDTH
    assert reached.after(["x" * 500]) == " after " + "x" * 500


# --- shortened.py ------------------------------------------------------------------


def _raising_toy():
    """A toy model whose variant raises ValueError from one line in state ``armed``, at a
    step or while settling."""
    model, config = toy_model({"start": [(Move("a"), "armed"), (Move("b"), "bad1")], "armed": [(Move("a"), "x")],
                               "bad1": [(Move("a"), "armed")]}, {"armed": (Run(), "home")})
    base = model.variant("toy")

    class Raising(ToyVariant):
        def step(self, state, action):
            if state == "armed":
                raise ValueError("boom")
            return ToyVariant.step(self, state, action)

    return model, config, Raising(base.moves, base.settle)


def test_a_replay_says_whether_the_rule_raised_at_a_step_or_while_settling():
    """A shorter run stands for the example only if its rule raises at the same kind of
    place: a step, or the settle phase. (Mutant SH2: ``signature`` without ``settling``.)"""
    model, config, variant = _raising_toy()
    at_step = shortened.raised_by(model, variant, config, (), [Move("a"), Move("a")])
    settling = shortened.raised_by(model, variant, config, (), [Move("a")])
    assert at_step[0][0] is settling[0][0] is ValueError and at_step[0][1] == settling[0][1]
    assert (at_step[0][2], at_step[1]) == (False, 2) and (settling[0][2], settling[1]) == (True, 1)


def test_a_replay_in_which_a_property_breaks_first_raises_nothing():
    """The search stops at a violation: a candidate that breaks a property before the rule
    raises does not stand for the example. (Mutant SH3: the violation not noticed.)"""
    model, config, variant = _raising_toy()
    assert shortened.raised_by(model, variant, config, (_never_bad(),), [Move("b"), Move("a"), Move("a")]) is None
    assert shortened.raised_by(model, variant, config, (), [Move("b"), Move("a"), Move("a")])[1] == 3


def test_a_hung_rule_ends_the_shortening():
    """Every replay would wait out a hung rule's limit again: ``raised_by`` lets RuleHungError
    through for the caller to keep what it has. (Mutant SH7: taken as "nothing raised".)"""
    model, config, _ = _raising_toy()
    base = model.variant("toy")

    class Hung(ToyVariant):
        def step(self, state, action):
            raise RuleHungError("its rule did not return")

    with pytest.raises(RuleHungError):
        shortened.raised_by(model, Hung(base.moves, base.settle), config, (), [Move("a")])


def test_runs_of_steps_go_before_single_ones():
    """Halves, then smaller runs, then single steps: two steps that must go together (each
    alone leaves the rest failing otherwise) are taken away as a run. (Mutant SH4: single
    steps only.)"""
    def kept(candidate):  # raises only with an even number of x's, and needs b
        return candidate if "b" in candidate and candidate.count("x") % 2 == 0 else None

    assert shortest(["x", "x", "a", "b"], kept) == ["b"]


def test_the_shortening_stops_when_its_time_is_up():
    """``seconds`` bounds the shortening: past it the steps it has are kept, with no further
    replay. (Mutant SH6: the deadline not looked at.)"""
    tried = []
    assert shortest(list(range(6)), lambda c: tried.append(c) or c, seconds=-1) == list(range(6))
    assert tried == []


# --- render_itf.py -----------------------------------------------------------------


def test_itf_keeps_a_seed_of_0():
    """Seed 0 reproduces a run as any other: ``#meta`` names it. (Mutant I8: ``if seed:``.)"""
    assert render_itf.render(trace(3, bad=1, seed=0))["#meta"]["seed"] == "0"


# --- timeline.py -------------------------------------------------------------------


def test_a_trace_of_exactly_max_columns_observations_is_drawn_whole():
    """``MAX_COLUMNS`` observations fit: every one gets its column, no gap. (Mutant T5:
    ``n < MAX_COLUMNS``, which drew 119 and a gap standing for one.)"""
    n = timeline.MAX_COLUMNS
    assert timeline.columns(n, n - 1) == list(range(n))
    assert None in timeline.columns(n + 1, n)


def test_a_text_emptied_by_a_step_is_said_as_nothing():
    """Where a step empties the text and no ``NAME=`` part went, the row says "(nothing)",
    not an empty line. (Mutant T9: ``changed or [now]``.)"""
    assert timeline.changed_parts(["swap aborted", ""]) == [["swap aborted"], ["(nothing)"]]
    assert timeline.changed_parts(["release=1", ""]) == [["release=1"], ["no release"]]
