"""Details of the state machine the random search drives (stateful_tests/machine.py)
that a bug would get wrong quietly.

Found missing by a mutation pass (see test_search_details.py): 55 mutants (annotations
left out), 7 survived, all killed here (teardown after a failed step and on a machine
without steps, the adapter closed, the class's name, the ranges of a pick and of a
probe's number).
"""

from __future__ import annotations

import attrs
import pytest
from deployspec.reference.capi.actions import Push, Tick
from deployspec.spec.core import settled_property
from deployspec.stateful_tests.machine import PropertyViolated, build_machine
from hypothesis import find, settings
from hypothesis.errors import NoSuchExample

from deployspec.models import get_model

from .helpers import Recorded

CAPI = get_model("capi")
SINGLE_ACTIVE = CAPI.property("single_active_deployment")
SAFE_CONFIG = CAPI.default_config(CAPI.variant("capi-safe"))


def _machine(adapter, props=(SINGLE_ACTIVE,), **kw):
    config = CAPI.default_config(CAPI.variant("capi-safe"))
    return build_machine(CAPI, lambda: adapter, props, config, **kw)()


def _may(machine, move):
    """Whether the machine's step may make ``move`` now."""
    return move in machine.moves()


def test_a_step_that_raised_is_not_followed_by_a_settle_phase():
    # the implementation failed mid-step, with an instance still starting: teardown
    # closes it without driving it again (a settle phase would start the instance)
    adapter = Recorded(fail_on="tick")
    m = _machine(adapter)
    m.do(Push(1))
    with pytest.raises(RuntimeError, match="tick failed"):
        m.do(Tick())
    m.teardown()
    assert [a.kind for a in adapter.performed] == ["push", "tick"] and adapter.closed


def test_a_machine_without_a_step_still_settles_and_judges_at_teardown():
    m = _machine(Recorded(), props=(never_at_rest,))
    with pytest.raises(PropertyViolated, match=r"^never_at_rest: at rest with 0 process\(es\) \(step -1\)"):
        m.teardown()


def test_a_machine_class_is_named_for_hypothesis_s_reports():
    args = (CAPI, Recorded, (SINGLE_ACTIVE,), CAPI.default_config(CAPI.variant("capi-safe")))
    assert build_machine(*args).__name__ == "DeploymentMachine"
    named = build_machine(*args, name="single_active_deployment_machine")
    assert named.__name__ == named.__qualname__ == "single_active_deployment_machine"


def test_teardown_settles_after_steps_that_went_through():
    adapter = Recorded()
    m = _machine(adapter)
    m.push(pick=0)
    m.teardown()
    assert [a.kind for a in adapter.performed] == ["push", "runtime"] and adapter.closed  # the instance started


@settled_property("capi")
def never_at_rest(obs):
    """Breaks wherever the platform comes to rest."""
    return f"at rest with {len(obs['processes'])} process(es)"


def test_teardown_closes_the_adapter_when_the_settled_property_breaks():
    adapter = Recorded()
    m = _machine(adapter, props=(never_at_rest,))
    m.push(pick=0)
    with pytest.raises(PropertyViolated, match=r"^never_at_rest: at rest with 1 process\(es\) \(step 1\)"):
        m.teardown()
    assert adapter.closed


def test_a_probe_s_number_picks_a_verb_then_one_of_its_probes():
    # before the push every verb but push is probed; 8 verbs: choice = verb + 8 * pick,
    # a verb with no probe here gives way to the next one of the vocabulary
    def probed(choice):
        adapter = Recorded()
        m = _machine(adapter, probes=True)
        m.probe(choice=choice)
        return str(adapter.performed[0])

    assert probed(0) == "stage(healthy=True)"  # push has none: stage, the next verb
    assert probed(7) == "stage(healthy=True)"  # runtime neither: round to push, then stage
    # deploy's fourth probe: rolling with max_in_flight 1 and 2, then asking web_instances 1
    assert probed(2 + 8 * 3) == "deploy(max_in_flight=2, web_instances=1)"
    assert probed(5 + 8 * 5) == "scale(instances=1)"  # the pick wraps round scale's 4 probes


def test_a_probe_never_follows_a_probe():
    m = _machine(Recorded(), probes=True)
    assert _may(m, "probe")
    m.probe(choice=0)
    assert not _may(m, "probe") and _may(m, "push")
    m.push(pick=0)
    assert _may(m, "probe")


def test_there_is_no_probe_where_the_model_probes_nothing():
    model = attrs.evolve(CAPI, probe_actions=lambda obs, config: [])
    config = CAPI.default_config(CAPI.variant("capi-safe"))
    m = build_machine(model, Recorded, (SINGLE_ACTIVE,), config, probes=True)()
    assert not _may(m, "probe") and _may(m, "push")


def test_a_verb_runs_only_where_the_model_offers_it_and_its_pick_wraps_round_the_offers():
    adapter = Recorded()
    m = _machine(adapter)
    assert _may(m, "push") and not _may(m, "deploy") and not _may(m, "tick")
    m.push(pick=4)  # three pushes are offered (1, 2 or 3 instances): the second
    assert str(adapter.performed[0]) == "push(instances=2)"
    assert not _may(m, "push") and _may(m, "deploy")  # offers computed afresh after the step


def test_a_verb_s_pick_runs_from_0_its_first_offer_to_63_and_a_probe_s_over_64_per_verb():
    # shrinking lowers the numbers: to pick 0, the first (simplest) action offered;
    # a probe's number covers the same 64 picks for each of the 8 verbs, no more
    rules = build_machine(CAPI, Recorded, (SINGLE_ACTIVE,), CAPI.default_config(CAPI.variant("capi-safe")),
                          probes=True)
    quiet = settings(database=None, max_examples=200, derandomize=True)  # (random: once missed 8*64-1)
    pick = rules.arguments["push"]["pick"]
    assert find(pick, lambda p: True, settings=quiet) == 0
    assert find(pick, lambda p: p >= 63, settings=quiet) == 63
    with pytest.raises(NoSuchExample):
        find(pick, lambda p: p >= 64, settings=quiet)
    choice = rules.arguments["probe"]["choice"]
    assert find(choice, lambda c: True, settings=quiet) == 0
    assert find(choice, lambda c: c >= 8 * 64 - 1, settings=quiet) == 8 * 64 - 1
    with pytest.raises(NoSuchExample):
        find(choice, lambda c: c >= 8 * 64, settings=quiet)


def test_the_machine_has_one_rule_so_swarm_testing_cannot_switch_a_verb_off():
    """Hypothesis's swarm testing switches off a random share of a machine's rules for a
    whole example; with one rule per verb, an example often could not take the verbs a bug
    needs together. The machine's one rule draws the verb itself (``step``)."""
    for probes in (False, True):
        machine = build_machine(CAPI, Recorded, (SINGLE_ACTIVE,), SAFE_CONFIG, probes=probes)
        rules = [name for name in dir(machine) if hasattr(getattr(machine, name), "hypothesis_stateful_rule")]
        assert rules == ["step"]


class _Draws:
    """Stands for Hypothesis's ``data``: hands out the given numbers in turn."""

    def __init__(self, *numbers: int):
        self.numbers, self.strategies = list(numbers), []

    def draw(self, strategy):
        self.strategies.append(strategy)
        return self.numbers.pop(0)


def test_a_step_draws_a_move_among_those_possible_then_its_arguments():
    adapter = Recorded()
    m = _machine(adapter, probes=True)
    assert m.moves() == ["push", "probe"]  # before the push: push, or a probe of another verb
    draws = _Draws(0, 4)
    m.step(data=draws)
    assert str(adapter.performed[-1]) == "push(instances=2)"  # the move, then its pick
    assert draws.strategies[1] is m.arguments["push"]["pick"]
    # the verbs offered and wait (two instances are starting) by name, then a probe
    assert m.moves() == ["deploy", "runtime", "scale", "stage", "tick", "wait", "probe"]
    m.step(data=_Draws(6, 0))
    assert "probe" not in m.moves()  # a probe never follows a probe
    m.step(data=_Draws(5, 2))  # wait: the platform's own steps (the instances start)
    assert [str(a) for a in adapter.performed[-2:]] == ["runtime(P0)", "runtime(P0)"]
