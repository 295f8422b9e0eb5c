"""Details of the random search that a bug would get wrong quietly: the Hypothesis
engine's rounds (the state machine it drives: test_machine_details.py).

Found missing by a mutation pass (ast-based: comparisons flipped, and/or swapped,
conditions negated, constants changed, statements deleted, returns emptied, tuple
elements dropped) run against each module's targeted tests, over four modules; those
of deployspec/engines/product.py are in test_product_details.py, those of
deployspec/partitioned.py in test_partitioned_details.py:

- deployspec/engines/hypothesis_engine.py: 110 mutants, 25 survived; 4 equivalent
  (three in annotations, never evaluated under ``from __future__ import annotations``;
  ``getattr(exc, "found", True)``: an exception without ``found`` is not None either
  way), 21 killed here (the round size, the counts, the rounding of the time, the
  default settings and the global seed given back, the configuration and the causes
  reaching the machine, a pending stop, the non-repeating search's error, which fault
  takes the violation seen). Then 18 more (keyword arguments dropped, arguments
  swapped), run with this file as it was: 9 survived, all killed here (what each
  round is given, the settings Hypothesis's own default profile would change, the
  machine's name, a finding's cause and why it was not saved).
- stateful_tests/machine.py: test_machine_details.py.
"""

from __future__ import annotations

import signal

import attrs
import hypothesis.core
import pytest
from deployspec.stateful_tests.machine import PROBE, PropertyViolated
from hypothesis import HealthCheck, Phase, Verbosity, settings
from hypothesis.errors import Flaky

from deployspec import interruption
from deployspec.adapter import ReferenceAdapter
from deployspec.engines import hypothesis_engine
from deployspec.engines.result import Result
from deployspec.models import get_model
from deployspec.session import Session

from .helpers import SEED_STORY, Recorded

CAPI = get_model("capi")
SINGLE_ACTIVE = CAPI.property("single_active_deployment")


# --- the Hypothesis engine's rounds ------------------------------------------------------


def _rounds(monkeypatch, *results):
    """Stub ``check_property`` with ``results``, one per round; return its calls' keywords."""
    calls = []

    def stub(model, variant, prop, **kw):
        calls.append(kw)
        return results[len(calls) - 1]

    monkeypatch.setattr(hypothesis_engine, "check_property", stub)
    return calls


def test_a_round_is_the_documented_100_examples(monkeypatch):
    # docs/ci.md: "a fixed first round of 100 examples per property"
    calls = _rounds(monkeypatch, Result("capi", "capi-safe", SINGLE_ACTIVE.name, "hypothesis", "holds"))
    hypothesis_engine.search(CAPI, "capi-safe", SINGLE_ACTIVE, budget=0, seed=5, out_dir=None)
    assert [(c["max_examples"], c["seed"]) for c in calls] == [(100, 5)]


def test_each_round_is_given_where_to_save_the_causes_already_found_and_the_rest(monkeypatch):
    calls = _rounds(monkeypatch, Result("capi", "capi-safe", SINGLE_ACTIVE.name, "hypothesis", "holds"))
    hypothesis_engine.search(CAPI, "capi-safe", SINGLE_ACTIVE, budget=0, seed=5, out_dir="saved here",
                             skip_causes=frozenset({"known"}), probes=True)
    assert calls == [{"max_examples": 100, "seed": 5, "out_dir": "saved here",
                      "skip_causes": frozenset({"known"}), "probes": True}]


def test_a_round_that_reports_no_counts_adds_none(monkeypatch):
    # an error before any example ran carries no counts: the search's are zero, not one
    _rounds(monkeypatch, Result("capi", "capi-safe", SINGLE_ACTIVE.name, "hypothesis", "error", message="broken"))
    r = hypothesis_engine.search(CAPI, "capi-safe", SINGLE_ACTIVE, budget=600, seed=0, out_dir=None)
    assert r.verdict == "error"
    assert (r.stats["examples"], r.stats["steps"], r.stats["rounds"]) == (0, 0, 1)



class Clock:
    """``perf_counter`` for the engine: the given readings, one per call."""

    def __init__(self, *readings):
        self.readings = list(readings)

    def perf_counter(self) -> float:
        return self.readings.pop(0)


def test_a_search_s_seconds_are_rounded_to_milliseconds_and_its_speed_to_steps(monkeypatch):
    monkeypatch.setattr(hypothesis_engine, "time", Clock(10.0, 11.23456))
    r = hypothesis_engine.check_property(CAPI, "capi-safe", SINGLE_ACTIVE, max_examples=5, seed=0)
    assert r.verdict == "holds" and r.stats["steps"] > 0
    assert r.stats["seconds"] == 1.235
    assert r.stats["steps_per_second"] == round(r.stats["steps"] / 1.23456)


def test_a_search_that_took_no_time_has_no_speed(monkeypatch):
    monkeypatch.setattr(hypothesis_engine, "time", Clock(10.0, 10.0))
    r = hypothesis_engine.check_property(CAPI, "capi-safe", SINGLE_ACTIVE, max_examples=5, seed=0)
    assert r.stats["seconds"] == 0 and r.stats["steps_per_second"] is None



def test_a_search_s_settings_by_default(monkeypatch):
    # what a bare check_property runs under: 300 examples of 40 steps, seed 0, no probes,
    # no example database (nothing written to .hypothesis/), generation and shrinking only,
    # Hypothesis silent (the search reports itself); the global seed given back after
    ran = {}

    def run(machine, settings):
        ran.update(settings=settings, machine=machine, seed=hypothesis.core.global_force_seed)

    monkeypatch.setattr(hypothesis_engine, "run_state_machine_as_test", run)
    monkeypatch.setattr(hypothesis.core, "global_force_seed", 12345)  # a host's own
    profile = settings.get_current_profile_name()
    settings.load_profile("default")  # Hypothesis's own defaults, as in the CLI (not this pytest's)
    try:
        r = hypothesis_engine.check_property(CAPI, "capi-safe", SINGLE_ACTIVE)
    finally:
        settings.load_profile(profile)
    assert r.verdict == "holds" and r.stats["seed"] == 0
    s = ran["settings"]
    assert (s.max_examples, s.stateful_step_count, s.deadline, s.database) == (300, 40, None, None)
    assert (s.derandomize, s.report_multiple_bugs, s.print_blob) == (False, False, False)
    assert s.phases == (Phase.generate, Phase.shrink) and s.verbosity == Verbosity.quiet
    # pins the engine's own setting (hypothesis_engine: the search is the product, not a test);
    # this test suppresses nothing itself
    assert set(s.suppress_health_check) == set(HealthCheck)
    assert ran["seed"] == 0 and hypothesis.core.global_force_seed == 12345
    assert not hasattr(ran["machine"], PROBE)
    assert ran["machine"].__name__ == "Counted"
    assert ran["machine"].__mro__[1].__name__ == "single_active_deployment_machine"  # in Hypothesis's reports



def test_of_equally_short_violations_seen_the_first_is_remembered():
    prop = CAPI.property("app_stays_available")
    config = CAPI.default_config(CAPI.variant("capi-2022"))

    def violated():
        session = Session(CAPI, ReferenceAdapter(CAPI, CAPI.variant("capi-2022")), (prop,), config)
        for action in SEED_STORY:
            session.perform(action)
        return PropertyViolated(session.violation, session)

    first, second = violated(), violated()
    seen = {}
    for exc in (first, second):
        with pytest.raises(PropertyViolated), hypothesis_engine._remembered(seen, 1):
            raise exc
    assert seen["violation"] is first


def _configuration_seen(monkeypatch, **kwargs):
    """The configuration the machine's session ran under, for ``check_property(**kwargs)``."""
    ran = {}

    def run(machine, settings):
        ran["config"] = machine().session.config

    monkeypatch.setattr(hypothesis_engine, "run_state_machine_as_test", run)
    hypothesis_engine.check_property(CAPI, "capi-2022", SINGLE_ACTIVE, **kwargs)
    return ran["config"]


def test_a_search_on_the_reference_runs_under_the_configuration_it_is_given(monkeypatch):
    # the variant's own configuration is only the default
    config = attrs.evolve(CAPI.default_config(CAPI.variant("capi-2022")), max_instances=2)
    assert _configuration_seen(monkeypatch, config=config) is config


def test_a_search_on_an_implementation_given_no_configuration_runs_under_the_model_s(monkeypatch):
    seen = _configuration_seen(
        monkeypatch, adapter_factory=lambda: ReferenceAdapter(CAPI, CAPI.variant("capi-2022")))
    assert seen == CAPI.default_config()


def test_a_search_counts_its_examples_and_their_steps(monkeypatch):
    def run(machine, settings):  # two examples, one step in all
        machine().push(pick=0)
        machine()

    monkeypatch.setattr(hypothesis_engine, "run_state_machine_as_test", run)
    r = hypothesis_engine.check_property(CAPI, "capi-safe", SINGLE_ACTIVE)
    assert r.verdict == "holds" and (r.stats["examples"], r.stats["steps"]) == (2, 1)



def test_the_causes_already_found_are_passed_over_for_this_property(monkeypatch):
    ran = {}

    def run(machine, settings):
        ran["skip"] = machine().session.skip

    monkeypatch.setattr(hypothesis_engine, "run_state_machine_as_test", run)
    hypothesis_engine.check_property(CAPI, "capi-2022", SINGLE_ACTIVE, skip_causes=frozenset({"a", "b"}))
    assert ran["skip"] == {("single_active_deployment", "a"), ("single_active_deployment", "b")}



def test_a_stop_kept_pending_ends_the_search_before_the_next_step_reaches_the_implementation(monkeypatch):
    # a signal Python dropped in Hypothesis's gc callback, kept by interruption.pending
    adapter = Recorded()
    monkeypatch.setattr(interruption, "pending", signal.SIGTERM)
    with pytest.raises(KeyboardInterrupt):
        hypothesis_engine.check_property(CAPI, "capi-safe", SINGLE_ACTIVE, max_examples=5, seed=0,
                                         adapter_factory=lambda: adapter)
    assert adapter.performed == []



def test_a_search_that_did_not_repeat_is_an_error_with_its_counts_and_time(monkeypatch):
    def run(machine, settings):
        machine().push(pick=0)
        raise Flaky("the same example failed, then passed")

    monkeypatch.setattr(hypothesis_engine, "run_state_machine_as_test", run)
    monkeypatch.setattr(hypothesis_engine, "time", Clock(10.0, 11.23456))
    r = hypothesis_engine.check_property(CAPI, "capi-safe", SINGLE_ACTIVE, seed=4)
    assert r.verdict == "error" and r.trace is None and r.cause is None
    assert r.message == "non-deterministic behaviour: the same example failed, then passed"
    assert r.stats == {"examples": 1, "steps": 1, "seed": 4, "seconds": 1.235}



class Fault(Exception):
    """An implementation's failure; ``found``: the violation it carries (see ImplementationFault)."""

    def __init__(self, found):
        super().__init__("failed")
        self.found = found


def _fail_after_the_seed(monkeypatch, failure, **kwargs):
    """A search that sees the seed's violation, then fails with ``failure`` (which it raises)."""
    def run(machine, settings):
        m = machine()
        with pytest.raises(PropertyViolated):
            for action in SEED_STORY:
                m.do(action)
        raise failure

    monkeypatch.setattr(hypothesis_engine, "run_state_machine_as_test", run)
    with pytest.raises(type(failure)):
        hypothesis_engine.check_property(CAPI, "capi-2022", CAPI.property("app_stays_available"), **kwargs)


@pytest.mark.parametrize("failure", [RuntimeError("a bug"), Fault(found="what it carried")],
                         ids=["no found", "found already"])
def test_only_a_fault_carrying_nothing_yet_takes_the_violation_seen(monkeypatch, failure):
    _fail_after_the_seed(monkeypatch, failure)
    assert getattr(failure, "found", None) == (None if isinstance(failure, RuntimeError) else "what it carried")


def test_a_fault_carrying_nothing_takes_the_violation_seen_as_it_was(monkeypatch):
    failure = Fault(found=None)
    _fail_after_the_seed(monkeypatch, failure, seed=3)
    found = failure.found
    assert (found.model, found.variant, found.property) == ("capi", "capi-2022", "app_stays_available")
    assert (found.verdict, found.cause, found.trace_length) == ("violated", found.trace["violation"]["cause"], 6)
    assert found.stats == {"examples": 1, "steps": 6, "seed": 3, "found_in_example": 1, "shrunk": False}



def test_a_search_that_did_not_repeat_a_violation_keeps_it_as_it_was_with_its_cause(monkeypatch):
    def run(machine, settings):
        m = machine()
        with pytest.raises(PropertyViolated):
            for action in SEED_STORY:
                m.do(action)
        raise Flaky("it did not happen again")

    monkeypatch.setattr(hypothesis_engine, "run_state_machine_as_test", run)
    r = hypothesis_engine.check_property(CAPI, "capi-2022", CAPI.property("app_stays_available"))
    assert r.verdict == "error" and r.message == "non-deterministic behaviour: it did not happen again"
    assert len(r.trace["steps"]) == 6 and r.cause is not None and r.cause == r.trace["violation"]["cause"]



def _finds_the_seed_story(monkeypatch):
    """Stub the search: its one example is the seed bug's story, which breaks app_stays_available."""
    def run(machine, settings):
        m = machine()
        for action in SEED_STORY:
            m.do(action)

    monkeypatch.setattr(hypothesis_engine, "run_state_machine_as_test", run)


def test_a_random_search_s_finding_names_its_cause(monkeypatch):
    _finds_the_seed_story(monkeypatch)
    r = hypothesis_engine.check_property(CAPI, "capi-2022", CAPI.property("app_stays_available"))
    assert r.verdict == "violated" and r.cause == r.trace["violation"]["cause"] == "cancel-keeps-unstarted"


def test_a_random_search_s_finding_that_cannot_be_saved_is_reported_with_why(monkeypatch, tmp_path):
    _finds_the_seed_story(monkeypatch)
    (tmp_path / "a-file").write_text("")
    r = hypothesis_engine.check_property(CAPI, "capi-2022", CAPI.property("app_stays_available"),
                                         out_dir=str(tmp_path / "a-file"))
    assert r.verdict == "violated" and r.counterexample is None
    assert r.unsaved.startswith(f"cannot save {tmp_path / 'a-file'}/capi-2022--app_stays_available--")
    assert r.unsaved.endswith(f".json: {tmp_path / 'a-file'} is not a folder")


def test_the_example_that_first_saw_a_violation_is_counted_over_the_rounds():
    """capi-pr3084's cancel bug: seed 2's round holds, seed 3's finds it. ``search`` says the
    example counted from its first round, so a --budget run and --examples agree on it."""
    prop = CAPI.property("app_stays_available")
    first = hypothesis_engine.check_property(CAPI, "capi-pr3084", prop, max_examples=hypothesis_engine.ROUND, seed=2)
    second = hypothesis_engine.check_property(CAPI, "capi-pr3084", prop, max_examples=hypothesis_engine.ROUND, seed=3)
    assert first.verdict == "holds" and second.verdict == "violated", (first.stats, second.stats)
    r = hypothesis_engine.search(CAPI, "capi-pr3084", prop, budget=60, seed=2, out_dir=None)
    assert r.verdict == "violated" and r.stats["found_seed"] == 3
    assert r.stats["found_in_example"] == first.stats["examples"] + second.stats["found_in_example"]


def test_a_violation_a_fault_carries_is_counted_over_the_rounds_too(monkeypatch):
    """An implementation that fails in a later round (``ImplementationFault.found``: the
    violation seen before it failed) says the example counted from the first round, as a
    violation the round reported would (the review found this path untested)."""
    from deployspec.contract.guard import ImplementationFault

    found = Result("capi", "implementation", SINGLE_ACTIVE.name, "contract", "violated",
                   stats={"examples": 9, "found_in_example": 7})
    calls = []

    def stub(model, variant, prop, **kw):
        calls.append(kw["seed"])
        if len(calls) == 1:
            return Result("capi", "capi-safe", SINGLE_ACTIVE.name, "hypothesis", "holds",
                          stats={"examples": 103, "steps": 4000})
        fault = ImplementationFault("it crashed", where="step")
        fault.found = found
        raise fault

    monkeypatch.setattr(hypothesis_engine, "check_property", stub)
    with pytest.raises(ImplementationFault) as raised:
        hypothesis_engine.search(CAPI, "capi-safe", SINGLE_ACTIVE, budget=600, seed=4, out_dir=None)
    assert calls == [4, 5]
    assert raised.value.found.stats["found_in_example"] == 103 + 7
