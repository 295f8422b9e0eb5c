"""Details of the Z3 engine and of the selection rule's encoding that a bug would get
wrong quietly.

Found missing by mutation testing of ``deployspec/engines/z3_engine.py`` and
``spec/selection``: the confirming search (the cancel dispatch, the deployments it
allows, the view it must reach, a break before the cancel step, and why a view went
unconfirmed: the search's bound, or the states, not dispatches, that showed it), the symbolic
properties on concrete views, the well-formedness constraints of each family and
when two views are equivalent.
"""

from __future__ import annotations

import attrs
import pytest
import z3
from deployspec.spec import selection as sel
from deployspec.spec.core import state_property

from deployspec.engines import z3_confirm, z3_engine
from deployspec.models import get_model

CAPI = get_model("capi")


# --- the Z3 engine's confirming search ---------------------------------------------------


def test_the_cancel_dispatch_fails_only_steps_of_other_active_deployments():
    # capi-pr3072's dead interim: d0 (DEPLOYED/SUPERSEDED) has no step left to fail, so the
    # dispatch that runs d1's cancel step is a plain tick in the trace
    r = z3_engine.search(CAPI, "capi-pr3072", CAPI.property("app_stays_available"), budget=10, seed=0,
                         out_dir=None)
    assert r.verdict == "violated"
    cancel = r.trace["extra"]["selection"]["cancel_step"]
    action = r.trace["steps"][cancel]["action"]
    assert action["type"] == "tick" and action["failed"] == [] and action["reports_unavailable"] == []


def test_the_confirming_search_allows_as_many_deployments_as_the_view_has():
    # the view fixes the number of deployments: the search (and the trace's config) allow no more
    r = z3_engine.search(CAPI, "capi-2022", CAPI.property("app_stays_available"), budget=10, seed=0,
                         out_dir=None)
    assert r.verdict == "violated" and r.stats["counterexample"]["deployments"] == 2
    assert r.trace["config"]["max_deployments"] == 2 and r.trace["config"]["max_instances"] == 1
    assert r.trace["extra"]["selection"]["search"]["config"] == r.trace["config"]


def test_the_confirming_trace_reaches_a_view_equivalent_to_the_symbolic_one():
    # the trace confirms the symbolic counterexample only if its cancel step saw the same
    # owners, deployment states, canceled deployment, reports and running processes
    def shape(view):
        return ([(p["created_by"], p["running"] > 0, p["crashed"] > 0) for p in view["processes"]],
                view["deployments"], view["canceled"], view["reports_available"])

    for variant, prop in (("capi-2022", "deployment_converges"), ("capi-pr3072", "app_stays_available")):
        r = z3_engine.search(CAPI, variant, CAPI.property(prop), budget=10, seed=0, out_dir=None)
        assert r.verdict == "violated", variant
        selection = r.trace["extra"]["selection"]
        assert shape(selection["reached"]) == shape(selection["view"]), variant


@state_property("capi")
def no_app_at_all(obs):
    """Breaks as soon as an app exists: at the push, long before any cancel step."""
    return "there is an app" if obs["app"] is not None else None


def _seed_view():
    """capi-2022, the seed's minimal view, and the configuration confirming it searches."""
    variant, encoding = CAPI.variant("capi-2022"), sel.VARIANTS["capi-2022"]
    rule = z3_engine.problem(encoding, 8, 7, sel.traits(variant, encoding))
    view = rule.minimal(sel.selection_property("survivor_not_newer"))
    return variant, view, z3_confirm.search_config(CAPI, variant, view.m)


def test_a_trace_that_breaks_the_property_before_the_cancel_step_confirms_nothing():
    # every state showing the seed's view breaks no_app_at_all from its start, but each
    # trace reaching one broke it at the push already: the cancel step is not the cause
    variant, view, _ = _seed_view()
    outcome = z3_confirm.confirm(CAPI, variant, view, no_app_at_all, budget=30, max_depth=5)
    assert outcome.session is None
    assert "did not break no_app_at_all given their history" in outcome.why


def test_a_view_not_reached_by_a_depth_bounded_search_says_the_bound_stopped_it():
    """C06 (the reason's two cases swapped): a search cut at its depth bound said 'no
    reachable state shows it', a claim only a complete search makes."""
    variant, view, config = _seed_view()
    views = z3_confirm.CancelViews.of(CAPI, variant, config, max_depth=0, budget=30)
    outcome = z3_confirm.confirm(CAPI, variant, view, no_app_at_all, budget=30, config=config, views=views)
    assert outcome.session is None and not views.figures["complete"]
    assert outcome.why == "not reached within the search bound (max_depth)"


def test_an_unconfirmed_view_counts_the_states_that_showed_it_not_their_dispatches():
    """C07 (``len(refuted)`` for the states in it): with two deployments active each state
    is tried with two dispatches (the cancel step alone, then with every step), and the
    count said twice the states that showed the view."""
    variant, view, config = _seed_view()
    views = z3_confirm.CancelViews.of(CAPI, variant, config, max_depth=5, budget=30)
    tried = views.by_key[view.key()]
    states = len({number for number, _ in tried})
    assert len(tried) > states  # (what tells the two counts apart)
    outcome = z3_confirm.confirm(CAPI, variant, view, no_app_at_all, budget=30, config=config, views=views)
    assert f"{states} state(s) showing it did not break no_app_at_all given their history" in outcome.why


def test_an_unconfirmed_view_that_states_showed_is_not_said_unreached():
    """The reason began "not reached within the search bound" and went on to count the
    states that showed the view: reached, by its own words. It says the states first, and
    the bound only as what may hide others (found reading the code during the mutation pass)."""
    variant, view, config = _seed_view()
    views = z3_confirm.CancelViews.of(CAPI, variant, config, max_depth=5, budget=30)
    states = len({number for number, _ in views.by_key[view.key()]})
    outcome = z3_confirm.confirm(CAPI, variant, view, no_app_at_all, budget=30, config=config, views=views)
    assert outcome.why == (f"{states} state(s) showing it did not break no_app_at_all given their history; "
                           "no other within the search bound (max_depth)")


# --- the selection rule's encoding -------------------------------------------------------


def test_capi_safe_s_proof_covers_states_with_crashed_instances_and_the_others_do_not_need_to():
    # only capi-safe's rule reads CRASHED counts, so only its proof ranges over them
    for name, crashes in (("capi-safe", z3.sat), ("capi-pr3084", z3.unsat)):
        variant, encoding = CAPI.variant(name), sel.VARIANTS[name]
        rule = z3_engine.problem(encoding, 8, 7, sel.traits(variant, encoding))
        solver = z3.Solver()
        solver.add(rule.base + [rule.s.crashed[0] > 0])
        assert solver.check() == crashes, name


def test_keeping_the_canceled_deployment_s_own_process_while_another_serves_is_newer():
    # P0 pushed and running, P1 of d0 (canceled) running: keeping P1 breaks survivor_not_newer
    view = sel.SelectionView(owners=(-1, 0), desired=(1, 1), running=(1, 1),
                             deployments=(("CANCELING", "CANCELING"),), canceled=0, reports=True)
    s = sel.Symbolic(2, 1)
    assert s.evaluate(sel._survivor_not_newer(s, z3.IntVal(1)), view) is False
    assert s.evaluate(sel._survivor_not_newer(s, z3.IntVal(0)), view) is True


def test_the_canceled_deployment_s_own_process_is_no_candidate_and_no_exception_without_a_crash():
    # P0 pushed, still starting (no crash); P1 of d0 (canceled) running
    view = sel.SelectionView(owners=(-1, 0), desired=(1, 1), running=(0, 1),
                             deployments=(("CANCELING", "CANCELING"),), canceled=0, reports=True)
    s = sel.Symbolic(2, 1)
    # nothing that may rightly survive runs, so keeping the oldest is what survivor_runs asks
    assert s.evaluate(sel._survivor_runs(s, z3.IntVal(0)), view) is True
    # the oldest does not crash: keeping the canceled deployment's own process is not allowed
    assert s.evaluate(sel._survivor_not_newer(s, z3.IntVal(1)), view) is False


def test_once_a_newer_deployment_replaced_the_canceled_process_keeping_it_is_not_newer():
    # d0 (canceled) lost its process to d1's scale step earlier in the dispatch: nothing to undo
    view = sel.SelectionView(owners=(-1, 1), desired=(0, 1), running=(0, 1),
                             deployments=(("CANCELING", "CANCELING"), ("DEPLOYING", "DEPLOYING")),
                             canceled=0, reports=True)
    s = sel.Symbolic(2, 2)
    assert s.evaluate(sel._survivor_not_newer(s, z3.IntVal(1)), view) is True


def test_views_that_differ_in_which_process_runs_are_not_the_same_class():
    # the Z3 engine excludes a refuted view's class: one that differs in what runs is another try
    one = sel.SelectionView(owners=(-1, 0), desired=(1, 1), running=(1, 0),
                            deployments=(("CANCELING", "CANCELING"),), canceled=0, reports=True)
    other = attrs.evolve(one, running=(0, 1))
    s = sel.Symbolic(2, 1)
    assert s.evaluate(s.same_class(one), one) is True and s.evaluate(s.same_class(one), other) is False


def test_no_view_in_a_z3_problem_runs_more_instances_than_it_wants():
    variant, encoding = CAPI.variant("capi-safe"), sel.VARIANTS["capi-safe"]
    rule = z3_engine.problem(encoding, 8, 7, sel.traits(variant, encoding))
    solver = z3.Solver()
    solver.add(rule.base + [rule.s.running[0] + rule.s.crashed[0] > rule.s.desired[0]])
    assert solver.check() == z3.unsat


def _wellformed_at(view, family, N=None, M=None):
    """Each well-formedness constraint of a design of ``family`` (every other trait
    present) on ``view``, with bounds as tight as the view (unless given)."""
    s = sel.Symbolic(N or view.n, M or view.m)
    traits = frozenset({family, sel.DESTROYS_AT_END, sel.FINALIZE_WHOLE, sel.SNAPSHOT_CLOSED})
    return {c.name: s.evaluate(c.build(s), view) for c in sel.WELLFORMED if c.needs <= traits}


def test_a_cancel_step_runs_for_a_canceling_canceling_deployment_only():
    view = sel.SelectionView(owners=(-1, 0), desired=(1, 1), running=(1, 0),
                             deployments=(("CANCELING", "CANCELING"),), canceled=0, reports=True)
    assert all(_wellformed_at(view, sel.ONE_ACTIVE).values())
    other = attrs.evolve(view, deployments=(("CANCELING", "SUPERSEDED"),))
    assert _wellformed_at(other, sel.ONE_ACTIVE)["canceled_is_canceling"] is False


def test_a_finalize_by_the_last_deployment_slot_wipes_the_pushed_process():
    # capi-2022: d0 canceled, then d1 deployed and finalized, destroying P0 and d0's process
    view = sel.SelectionView(owners=(1,), desired=(1,), running=(1,),
                             deployments=(("CANCELING", "CANCELING"), ("DEPLOYED", "DEPLOYED")),
                             canceled=0, reports=True)
    assert all(_wellformed_at(view, sel.TWO_ACTIVE).values())


def test_canceled_superseded_is_written_from_pr_3072_on_only():
    # d0 was canceled and then superseded by d1, now canceled itself
    view = sel.SelectionView(owners=(-1, 1), desired=(1, 1), running=(1, 0),
                             deployments=(("CANCELED", "SUPERSEDED"), ("CANCELING", "CANCELING")),
                             canceled=1, reports=True)
    assert all(_wellformed_at(view, sel.ONE_ACTIVE).values())
    assert _wellformed_at(view, sel.TWO_ACTIVE)["statuses_before_3072"] is False


def test_the_canceled_process_is_gone_only_after_a_running_replacement_took_the_last_instance():
    # capi-2022: d1's scale step, earlier in the dispatch, took the last instance of d0's process
    replaced = sel.SelectionView(owners=(-1, 1), desired=(0, 1), running=(0, 1),
                                 deployments=(("CANCELING", "CANCELING"), ("DEPLOYING", "DEPLOYING")),
                                 canceled=0, reports=True)
    assert all(_wellformed_at(replaced, sel.TWO_ACTIVE).values())
    # the step moves an instance only when the deploying process's instances all run
    not_running = attrs.evolve(replaced, running=(0, 0))
    assert _wellformed_at(not_running, sel.TWO_ACTIVE)["canceled_process_gone_only_if_replaced"] is False
    # and the canceled process was then the oldest with instances: P0 wants none
    older_wants_one = attrs.evolve(replaced, desired=(1, 1))
    assert _wellformed_at(older_wants_one, sel.TWO_ACTIVE)["canceled_process_gone_only_if_replaced"] is False


def test_from_pr_3072_on_no_other_deployment_is_still_deploying():
    view = sel.SelectionView(owners=(-1, 0, 1), desired=(1, 1, 1), running=(1, 0, 0),
                             deployments=(("DEPLOYED", "SUPERSEDED"), ("CANCELING", "CANCELING")),
                             canceled=1, reports=True)
    assert all(_wellformed_at(view, sel.ONE_ACTIVE).values())
    deploying = attrs.evolve(view, deployments=(("DEPLOYING", "DEPLOYING"), ("CANCELING", "CANCELING")))
    assert _wellformed_at(deploying, sel.ONE_ACTIVE)["single_active_deployment"] is False


def test_views_that_differ_in_reports_or_the_canceled_deployment_are_not_equivalent():
    one = sel.SelectionView(owners=(-1, 0, 1), desired=(1, 1, 1), running=(1, 0, 0),
                            deployments=(("CANCELING", "CANCELING"), ("CANCELING", "CANCELING")),
                            canceled=0, reports=True)
    assert one.key() == attrs.evolve(one, desired=(2, 1, 1), running=(2, 0, 0)).key()
    assert one.key() != attrs.evolve(one, reports=False).key()
    assert one.key() != attrs.evolve(one, canceled=1).key()


def test_views_that_differ_in_a_deployment_or_a_crash_are_not_the_same_class():
    one = sel.SelectionView(owners=(-1, 0), desired=(1, 1), running=(1, 0),
                            deployments=(("CANCELING", "CANCELING"),), canceled=0, reports=True)
    s = sel.Symbolic(3, 2)
    assert s.evaluate(s.same_class(one), attrs.evolve(one, desired=(2, 1), running=(2, 0))) is True
    others = [
        attrs.evolve(one, deployments=(("CANCELING", "CANCELING"), ("CANCELING", "CANCELING"))),
        attrs.evolve(one, deployments=(("CANCELING", "SUPERSEDED"),)),
        attrs.evolve(one, crashed=(0, 1)),
    ]
    for other in others:
        assert one.key() != other.key()
        assert s.evaluate(s.same_class(one), other) is False, other


def test_the_canceled_deployment_s_process_counts_as_live_in_the_first_slot_too():
    # capi-2022: another cancel kept only d0's process (deployment_converges' counterexample)
    view = sel.SelectionView(owners=(0,), desired=(1,), running=(1,),
                             deployments=(("CANCELING", "CANCELING"), ("CANCELED", "CANCELED")),
                             canceled=0, reports=True)
    s = sel.Symbolic(2, 2)
    assert s.evaluate(s.canceled_process_live(), view) is True
    assert all(_wellformed_at(view, sel.TWO_ACTIVE).values())


def test_capi_pr3072_s_dead_interim_breaks_cancel_restores_last_good_by_survivor_runs():
    r = z3_engine.search(CAPI, "capi-pr3072", CAPI.property("cancel_restores_last_good"), budget=10, seed=0,
                         out_dir=None)
    assert r.verdict == "violated" and r.stats["counterexample"]["selection_property"] == "survivor_runs"


# --- terms a mutation probe found unpinned: each view tells the term from a weaker or stronger one

_CC, _CS = ("CANCELING", "CANCELING"), ("DEPLOYED", "SUPERSEDED")


def _ev(prop, view, survivor):
    s = sel.Symbolic(view.n, view.m)
    return s.evaluate(getattr(sel, prop)(s, z3.IntVal(survivor)), view)


@pytest.mark.parametrize("owners, deployments, canceled", [
    ((-1, 0), (_CC,), 0),  # the pushed process: a candidate
    ((0, 1), (("DEPLOYED", "DEPLOYED"), _CC), 1),  # the finalized deployment's process: a candidate
])
def test_a_running_process_of_the_kinds_cancel_may_keep_satisfies_survivor_runs(owners, deployments, canceled):
    view = sel.SelectionView(owners=owners, desired=(1, 1), running=(1, 1), deployments=deployments,
                             canceled=canceled, reports=True)
    assert _ev("_survivor_runs", view, 1) is True


def test_an_oldest_process_that_still_runs_is_no_exception_even_with_a_crash():
    """P0, the process capi-safe's cancel of d0 kept (its own: owner d0, CANCELED), runs one
    instance and has one crashed; keeping P1 of the canceled d1 instead is newer, and keeping
    it does not serve what P0 serves."""
    view = sel.SelectionView(owners=(0, 1), desired=(2, 1), running=(1, 1), crashed=(1, 0),
                             deployments=(("CANCELED", "CANCELED"), _CC), canceled=1, reports=True)
    assert _ev("_survivor_not_newer", view, 1) is False
    assert _ev("_survivor_runs", view, 1) is False


def test_a_crashed_oldest_is_no_exception_while_an_interim_runs():
    """Near the seed: the cancel keeps the canceled deployment's own process while an older
    interim still runs; the crashing original excuses nothing then."""
    view = sel.SelectionView(owners=(-1, 0, 1), desired=(1, 1, 1), running=(0, 1, 1), crashed=(1, 0, 0),
                             deployments=(_CS, _CC), canceled=1, reports=True)
    assert _ev("_survivor_not_newer", view, 2) is False


def test_the_exception_keeps_the_canceled_process_only_if_it_runs():
    view = sel.SelectionView(owners=(-1, 0), desired=(1, 1), running=(0, 0), crashed=(1, 0),
                             deployments=(_CC,), canceled=0, reports=True)
    assert _ev("_survivor_not_newer", view, 1) is False


def test_a_degenerate_deployment_has_no_live_process():
    view = sel.SelectionView(owners=(-1, 0), desired=(1, 1), running=(1, 0),
                             deployments=(("DEPLOYED", "DEGENERATE"), _CC), canceled=1, reports=True)
    s = sel.Symbolic(2, 2)
    got = {c.name: s.evaluate(c.build(s), view) for c in sel.WELLFORMED if c.needs == sel.ALWAYS}
    assert got["degenerate_has_no_process"] is False


def test_the_app_stays_available_symptom_needs_a_process_that_runs():
    """The search for a view that takes the app down looks where something ran before."""
    view = sel.SelectionView(owners=(-1, 0), desired=(1, 1), running=(0, 0),
                             deployments=(_CC,), canceled=0, reports=True)
    s = sel.Symbolic(2, 1)
    assert s.evaluate(sel.SYMPTOMS["app_stays_available"](s, z3.IntVal(0)), view) is False
