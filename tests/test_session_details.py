"""Details of one run against an adapter (deployspec.session) that the mutation pass found
unpinned: which violation a run keeps, where its settle phase starts, and when a settle
phase ends. On the toy model of tests/toy.py, whose every answer is known by hand."""

from deployspec.spec.core import settled_property, state_property

from deployspec.adapter import ReferenceAdapter
from deployspec.session import Session

from .toy import Move, Run, Tick, toy_model


@state_property("toy")
def never_bad(obs):
    """No node named bad..."""
    return f"at {obs['at']}" if obs["at"].startswith("bad") else None


@settled_property("toy")
def rests_home(obs):
    """Left alone, the platform ends at home."""
    return None if obs["at"] == "home" else f"settled at {obs['at']}"


def session(*props, moves=None, settle=None, **config) -> Session:
    model, config = toy_model(moves or {"start": [(Move("a"), "bad1")], "bad1": [(Move("b"), "bad2")]},
                              settle or {}, **config)
    return Session(model, ReferenceAdapter(model, model.variant("toy")), props, config)


def test_a_run_keeps_its_first_violation():
    """The trace saved is the shortest one that breaks the property: a later step breaking
    it again must not move the violation (and the trace's end) further."""
    s = session(never_bad)
    assert s.perform(Move("a")).step == 0
    assert s.perform(Move("b")).step == 1
    assert (s.violation.step, s.violation.message) == (0, "at bad1")


def test_a_settled_violation_does_not_replace_one_found_on_the_way():
    s = session(never_bad, rests_home)
    s.perform(Move("a"))
    assert s.settle().message == "settled at bad1"
    assert (s.violation.step, s.violation.message) == (0, "at bad1")


def test_the_settle_phase_ends_at_a_violation_on_its_way():
    """A platform step that breaks a property ends the run there: that step is the end of
    the trace, and the violation the one the settle phase returns."""
    s = session(never_bad, rests_home, moves={"start": [(Move("a"), "busy")]},
                settle={"busy": (Run(), "bad1"), "bad1": (Run(), "bad2"), "bad2": (Run(), "home")})
    s.perform(Move("a"))
    v = s.settle()
    assert (v.step, v.message) == (1, "at bad1") and len(s.steps) == 2 and s.settle_from == 1


def test_a_reset_run_has_no_settle_phase_yet():
    """A session reused for the next run (the Hypothesis engine) starts with none: a stale
    start would cut the next trace's steps in two."""
    s = session(rests_home, settle={"start": (Tick(), "home")})
    s.settle()
    assert s.settle_from == 0
    s.reset()
    assert (s.settle_from, s.steps, s.violation) == (None, [], None)


def test_a_settle_phase_finished_on_its_last_allowed_step_was_not_cut():
    """The platform done on the step the bound allowed: the verdict is the design's, and
    saying "the settle phase was cut" would send the user raising settle_steps for nothing."""
    s = session(rests_home, settle={"start": (Run(), "n1"), "n1": (Run(), "n2")}, settle_steps=2)
    assert s.settle().message == "settled at n2" and len(s.steps) == 2
    cut = session(rests_home, settle={"start": (Run(), "n1"), "n1": (Run(), "n2")}, settle_steps=1)
    assert cut.settle().message == ("settled at n1 (the settle phase was cut at settle_steps=1: "
                                    "the platform had not come to rest)")


def test_each_step_is_recorded_with_the_observation_after_it():
    """A trace file holds, for each step, what was seen after it (replay and the
    properties read it so); the one before would shift every picture by a step."""
    s = session(never_bad, moves={"start": [(Move("a"), "x")], "x": [(Move("b"), "y")]})
    s.perform(Move("a"))
    s.perform(Move("b"))
    assert [(step["action"]["label"], step["rejected"], step["observation"]) for step in s.steps] == [
        ("a", None, {"at": "x"}), ("b", None, {"at": "y"})]
    assert s.initial == {"at": "start"}
