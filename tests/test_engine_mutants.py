"""Behaviours of the random search and of the Z3 check of the selection rule that a
hand-made mutation pass (engines/hypothesis_engine.py, engines/z3_engine.py,
engines/z3_confirm.py, engines/product.py) found unpinned: where a rule that hung while
the platform settled is said to have been reached, a stop pending when Hypothesis calls
a search flaky, which selection properties of a Z3 finding say "only when instance
reports are unavailable", its trace's title, why a variant without an encoding is not
judged, Z3's "unknown" as an error, and the cap on the explorer's shared moves (why a
symbolic counterexample went unconfirmed: tests/test_selection_details.py). Each test's
docstring names its mutant (mut/mutants.py in the probe's clone)."""

from __future__ import annotations

import signal

import pytest
from deployspec.reference.capi.actions import Tick
from deployspec.spec.core import state_property
from hypothesis.errors import Flaky

from deployspec import interruption, reached
from deployspec.engines import explore, hypothesis_engine, product, z3_engine
from deployspec.models import get_model
from deployspec.render_text import action_label
from deployspec.rule_results import RuleHungError
from deployspec.session import Session

from .toy import Move, toy_model

CAPI = get_model("capi")
SLOTS = get_model("slots")


# --- the random search --------------------------------------------------------------


def test_a_rule_that_hung_while_the_platform_settled_is_said_after_the_user_s_steps_only(monkeypatch):
    """E08 (``self.session.steps`` for ``steps[:settle_from]`` in teardown's note): the
    settle phase's own ticks were listed as steps that reached it ('after push(…), deploy(),
    tick()' for a hang in the dispatch the settle phase ran). A hang is not shortened by
    replay (each try would hang as long), so the note is what the error says."""
    user_steps = []

    def settle(self):
        self.settle_from = len(self.steps)  # as Session.settle begins
        user_steps[:] = [action_label(s["action"]) for s in self.steps]
        self.perform(Tick())  # the settle phase's first dispatch, recorded as a step
        raise RuleHungError("its rule select_prior did not return within 0.5 s")

    monkeypatch.setattr(Session, "settle", settle)
    with pytest.raises(RuleHungError) as hung:
        hypothesis_engine.check_property(CAPI, "capi-safe", CAPI.property("deployment_converges"),
                                         max_examples=1, seed=0)
    assert reached.said(hung.value) == ", while the platform settled" + reached.after(user_steps)


def test_a_stop_pending_when_hypothesis_calls_the_search_flaky_is_a_stop_not_an_error(monkeypatch):
    """E11 (the ``raise_if_pending`` in the Flaky branch left out): a Ctrl-C or SIGTERM that
    Python dropped in Hypothesis's gc callback, where the steps were cut short so that an
    example did not repeat, became the verdict 'error: non-deterministic behaviour'."""
    def run(machine, settings):
        monkeypatch.setattr(interruption, "pending", signal.SIGTERM)
        raise Flaky("the same example failed, then passed")

    monkeypatch.setattr(hypothesis_engine, "run_state_machine_as_test", run)
    with pytest.raises(KeyboardInterrupt):
        hypothesis_engine.check_property(CAPI, "capi-safe", CAPI.property("single_active_deployment"), seed=0)


# --- the Z3 check of the selection rule ----------------------------------------------


def test_a_z3_finding_says_only_when_reports_are_unavailable_only_where_it_is_so():
    """Z02 (the check with reports run for holding properties too) and Z06 (``is not None``
    for the value of holds_with_reports_available): capi-pr3072's dead interim breaks
    survivor_runs with reports available too; its finding said 'only when instance reports
    are unavailable', and a holding property's stats carried the question's answer. Z07
    (the title's counts swapped): the trace is titled by its processes, then deployments."""
    r = z3_engine.search(CAPI, "capi-pr3072", CAPI.property("app_stays_available"), budget=10, seed=0,
                         out_dir=None)
    assert r.verdict == "violated" and r.stats["counterexample"]["selection_property"] == "survivor_runs"
    assert "only when" not in r.message
    assert r.stats["selection"]["survivor_runs"]["holds_with_reports_available"] is False
    assert set(r.stats["selection"]["survivor_not_newer"]) == {"verdict", "seconds"}  # it holds: no question
    ce = r.stats["counterexample"]
    assert (ce["processes"], ce["deployments"]) == (3, 2)
    assert r.trace["title"] == ("the web process a cancel keeps breaks survivor_runs (a view the Z3 engine found, "
                                "3 processes and 2 deployments, reached by these steps)")


def test_a_variant_of_another_model_is_said_to_have_no_encoding_of_the_cloud_controller_s_rule():
    """Z08 (the two reasons swapped): a shipped slots design was told to hand its design in
    to --engine explore, as if it were a design of the user's own."""
    prop = SLOTS.properties[0]
    r = z3_engine.search(SLOTS, "slots-pipeline-immutable", prop, budget=1, seed=0, out_dir=None)
    assert r.verdict == "n/a"
    assert r.message == ("no Z3 encoding of slots-pipeline-immutable's selection rule (the Z3 engine encodes "
                         "the Cloud Controller's choice of the web process a cancel keeps)")


def test_z3_answering_unknown_is_an_error_not_unconfirmed(monkeypatch):
    """Z12 (``unconfirmed`` for ``error``): no verdict can be claimed when Z3 cannot decide
    the rule; 'unconfirmed' reads as a symbolic counterexample found but not reached."""
    def undecided(*args):
        raise z3_engine.SolverUnknown("Z3 could not decide the query")

    monkeypatch.setattr(z3_engine, "problem", undecided)
    r = z3_engine.search(CAPI, "capi-2022", CAPI.property("app_stays_available"), budget=1, seed=0, out_dir=None)
    assert (r.verdict, r.message) == ("error", "Z3 could not decide the query")


@state_property("toy")
def anywhere(obs):
    """Holds everywhere."""


def test_the_moves_shared_between_searches_are_kept_for_at_most_moves_cap_states(monkeypatch):
    """P09 (the cap on the shared moves left out): they were kept for every state of a
    search of any size, a memory only the cap bounds; past it a state's moves are computed
    again by the next search."""
    model, config = toy_model({"start": [(Move("a"), "x"), (Move("b"), "y")], "x": [(Move("c"), "y")],
                               "y": [(Move("d"), "start")]})
    variant = model.variant("toy")
    real, steps = type(variant).step, []

    def step(self, state, action):
        steps.append(state)
        return real(self, state, action)

    monkeypatch.setattr(type(variant), "step", step)
    monkeypatch.setattr(product, "MOVES_CAP", 1)
    for _ in range(2):
        assert explore.search(model, "toy", anywhere, budget=60, seed=0, out_dir=None, config=config).verdict == "holds"
    # the first search's four moves, then again those of the two states past the cap (x, y)
    assert sorted(steps) == ["start", "start", "x", "x", "y", "y"]
