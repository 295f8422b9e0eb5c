"""The Z3 encoding of the selection rules agrees with the Python rules, and the
selection properties say what they mean on hand-made views."""

import attrs
import pytest
from deployspec.reference.capi.state import DEPLOYMENT_STATES, STATUS_REASONS
from deployspec.spec import selection as sel
from deployspec.spec.selection import PUSHED, RETRY, SelectionView
from hypothesis import given, settings
from hypothesis import strategies as st

from deployspec.models import get_model

N, M = 6, 5
SYM = sel.Symbolic(N, M)
CAPI = get_model("capi")


#: (state, status_reason) pairs the controllers write, drawn more often than the others
WRITTEN = (("DEPLOYING", "DEPLOYING"), ("CANCELING", "CANCELING"), ("DEPLOYED", "DEPLOYED"),
           ("DEPLOYED", "SUPERSEDED"), ("DEPLOYED", "DEGENERATE"), ("CANCELED", "CANCELED"),
           ("CANCELED", "SUPERSEDED"), ("PREPAUSED", "DEPLOYING"), ("PAUSED", "PAUSED"))


@st.composite
def views(draw, max_n=N, max_m=M):
    """Any view the encoding's domain admits, well-formed or not: the rules are total."""
    m = draw(st.integers(1, max_m))
    n = draw(st.integers(0, max_n))
    owners = draw(st.lists(st.integers(PUSHED, m - 1), min_size=n, max_size=n))
    seen = set()
    for i, o in enumerate(owners):  # one process per deployment at most
        if o != PUSHED and o in seen:
            owners[i] = PUSHED
        seen.add(owners[i])
    desired = draw(st.lists(st.integers(0, 3), min_size=n, max_size=n))
    running = [draw(st.integers(0, d)) for d in desired]
    crashed = [draw(st.integers(0, d - r)) for d, r in zip(desired, running)]
    pair = st.one_of(st.sampled_from(WRITTEN), st.tuples(st.sampled_from(DEPLOYMENT_STATES),
                                                         st.sampled_from(STATUS_REASONS)))
    deployments = draw(st.lists(pair, min_size=m, max_size=m))
    recorded = draw(st.integers(sel.NOT_RECORDED, n - 1))  # a live slot, or none
    return SelectionView(tuple(owners), tuple(desired), tuple(running), tuple(deployments),
                         draw(st.integers(0, m - 1)), draw(st.booleans()), tuple(crashed), recorded)


TERMS = {name: enc.encode(SYM) for name, enc in sel.RULES.items()}


@settings(max_examples=150)
@given(views())
def test_each_encoded_rule_agrees_with_its_python_rule(view):
    for name, enc in sel.RULES.items():
        assert SYM.evaluate(TERMS[name], view) == view.select(enc.rule), name


@pytest.mark.parametrize("variant", [v for v in sel.VARIANTS if v in CAPI.variants])
@given(view=views())
def test_each_variant_rule_agrees_with_its_encoding(variant, view):
    """By variant name, with the variant's own rule: a variant that changes its rule
    (capi-current, once it exists) must change the table too."""
    term = sel.VARIANTS[variant].rule.encode(SYM)
    assert SYM.evaluate(term, view) == view.select(CAPI.variant(variant).select_prior)


def test_model_round_trip():
    import z3

    solver = z3.Solver()
    solver.add(SYM.domain())
    solver.add(SYM.n == 3, SYM.m == 2, SYM.running[1] == 2)
    assert solver.check() == z3.sat
    view = SYM.view(solver.model())
    assert (view.n, view.m, view.running[1]) == (3, 2, 2)
    assert SYM.evaluate(SYM.same_class(view), view) is True


# ---- the seed and its relatives, by hand -------------------------------------

SEED = SelectionView(
    owners=(PUSHED, 0, 1), desired=(1, 1, 1), running=(1, 0, 0),
    deployments=(("CANCELING", "CANCELING"), ("DEPLOYING", "DEPLOYING")), canceled=0, reports=True)
DEAD_INTERIM = SelectionView(
    owners=(PUSHED, 0, 1), desired=(1, 1, 1), running=(1, 0, 0),
    deployments=(("DEPLOYED", "SUPERSEDED"), ("CANCELING", "CANCELING")), canceled=1, reports=True)
RUNNING_INTERIM_UNSEEN = SelectionView(
    owners=(PUSHED, 0, 1), desired=(1, 1, 1), running=(0, 1, 0),
    deployments=(("DEPLOYED", "SUPERSEDED"), ("CANCELING", "CANCELING")), canceled=1, reports=False)


def verdicts(variant: str, view: SelectionView) -> dict[str, bool]:
    enc = sel.VARIANTS[variant]
    survivor = enc.rule.encode(SYM)
    return {p.name: SYM.evaluate(p.build(SYM, survivor), view) for p in sel.PROPERTIES}


def wellformed(view: SelectionView, family: str) -> dict[str, bool]:
    traits = frozenset({family, sel.DESTROYS_AT_END, sel.FINALIZE_WHOLE})
    return {c.name: SYM.evaluate(c.build(SYM), view) for c in sel.WELLFORMED if c.needs <= traits}


def test_seed_view_is_wellformed_before_3072_only():
    assert all(wellformed(SEED, sel.TWO_ACTIVE).values())
    assert not wellformed(SEED, sel.ONE_ACTIVE)["single_active_deployment"]


def test_seed_breaks_the_2022_rule():
    assert verdicts("capi-2022", SEED) == {
        "survivor_not_newer": False, "survivor_runs": False, "survivor_exists": True}


def test_dead_interim_breaks_3072_not_3084():
    assert all(wellformed(DEAD_INTERIM, sel.ONE_ACTIVE).values())
    assert not verdicts("capi-pr3072", DEAD_INTERIM)["survivor_runs"]
    assert all(verdicts("capi-pr3084", DEAD_INTERIM).values())


def test_unavailable_reports_break_3084_and_make_safe_retry():
    assert not verdicts("capi-pr3084", RUNNING_INTERIM_UNSEEN)["survivor_runs"]
    assert all(verdicts("capi-safe", RUNNING_INTERIM_UNSEEN).values())
    assert RUNNING_INTERIM_UNSEEN.select(CAPI.variant("capi-safe").select_prior) == RETRY
    with_reports = attrs.evolve(RUNNING_INTERIM_UNSEEN, reports=True)
    assert all(verdicts("capi-safe", with_reports).values())
    assert with_reports.select(CAPI.variant("capi-safe").select_prior) == 1


def test_view_of_a_concrete_state_round_trips():
    state = DEAD_INTERIM.to_state()
    again = SelectionView.of(state, state.deployments[1], True)
    assert again == DEAD_INTERIM


def test_traits_follow_the_cancel_step():
    variant, enc = CAPI.variant("capi-pr3084"), sel.VARIANTS["capi-pr3084"]
    assert sel.traits(variant, enc) == {sel.ONE_ACTIVE, sel.DESTROYS_AT_END, sel.FINALIZE_WHOLE, sel.SNAPSHOT_CLOSED}

    def cancel_step_roll_back(variant, state, deployment, reports):  # scales the others down first
        return state

    rolling_back = attrs.evolve(variant, cancel_step=cancel_step_roll_back)
    assert sel.traits(rolling_back, enc) == {sel.ONE_ACTIVE, sel.FINALIZE_WHOLE, sel.SNAPSHOT_CLOSED}
    kept = [c.name for c in sel.WELLFORMED if c.needs <= sel.traits(rolling_back, enc)]
    assert "canceled_process_not_oldest" in kept and "canceled_process_kept" not in kept
    # capi-current's Finalize runs after the commit and can stop half-way (findings 8-10)
    current = sel.traits(CAPI.variant("capi-current"), sel.VARIANTS["capi-current"])
    assert current == {sel.ONE_ACTIVE, sel.DESTROYS_AT_END, sel.SNAPSHOT_CLOSED}
    kept = [c.name for c in sel.WELLFORMED if c.needs <= current]
    assert not {"single_active_deployment", "canceled_process_not_oldest", "pushed_process_kept_until_wiped"} & set(kept)


CRASHING_PRIOR = SelectionView(
    owners=(0, 1), desired=(1, 1), running=(0, 1),
    deployments=(("DEPLOYED", "DEPLOYED"), ("CANCELING", "CANCELING")), canceled=1, reports=True,
    crashed=(1, 0))


def test_a_prior_that_cannot_serve_gives_way_in_capi_safe_only():
    assert CRASHING_PRIOR.select(CAPI.variant("capi-current").select_prior) == 0
    assert CRASHING_PRIOR.select(CAPI.variant("capi-safe").select_prior) == 1  # the canceled one's own
    assert all(wellformed(CRASHING_PRIOR, sel.ONE_ACTIVE).values())
    assert verdicts("capi-safe", CRASHING_PRIOR) == {  # nothing can serve: keeping its own is allowed
        "survivor_not_newer": True, "survivor_runs": True, "survivor_exists": True}
    # survivor_runs allows the oldest when no candidate runs, crashing or not: it does not
    # flag capi-current here (the app goes down; tests/test_capi_current_findings.py)
    assert verdicts("capi-current", CRASHING_PRIOR)["survivor_runs"]
    starting = attrs.evolve(CRASHING_PRIOR, crashed=(0, 0))  # not crashing: wait for it
    assert starting.select(CAPI.variant("capi-safe").select_prior) == 0
    assert starting.key() != CRASHING_PRIOR.key()


def test_crashed_instances_round_trip():
    state = CRASHING_PRIOR.to_state()
    assert [p.instances for p in state.processes] == [("CRASHED",), ("RUNNING",)]
    assert SelectionView.of(state, state.deployments[1], True) == CRASHING_PRIOR


#: capi-2022 (two active deployments): deployment 0 is canceled while a newer one,
#: 2, is deploying; the interim of the SUPERSEDED deployment 1 and deployment 2's
#: process run, the pushed process does not
NEWER_INTERIM = SelectionView(
    owners=(PUSHED, 0, 1, 2), desired=(1, 1, 1, 1), running=(0, 0, 1, 1),
    deployments=(("CANCELING", "CANCELING"), ("DEPLOYED", "SUPERSEDED"), ("DEPLOYING", "DEPLOYING")),
    canceled=0, reports=True)


def test_an_interim_of_a_deployment_newer_than_the_canceled_one_is_no_candidate():
    """Only a SUPERSEDED deployment older than the canceled one left a process that
    may rightly survive; here deployment 1 is newer than the canceled 0."""
    assert all(wellformed(NEWER_INTERIM, sel.TWO_ACTIVE).values())
    assert SYM.evaluate(sel.candidate(SYM, 2), NEWER_INTERIM) is False
    assert verdicts("capi-2022", NEWER_INTERIM)["survivor_runs"] is False


def test_the_cancel_symptom_covers_the_canceled_deployments_own_running_process():
    """cancel_restores_last_good's necessary condition: a survivor created by the
    canceled deployment itself counts, running or not (its droplet never served before)."""
    import z3

    own = z3.IntVal(1)  # CRASHING_PRIOR's process 1, owned by the canceled deployment 1, runs
    assert SYM.evaluate(sel.SYMPTOMS["cancel_restores_last_good"](SYM, own), CRASHING_PRIOR) is True
    assert SYM.evaluate(sel.SYMPTOMS["cancel_restores_last_good"](SYM, z3.IntVal(0)), CRASHING_PRIOR) is True
