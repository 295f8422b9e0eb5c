"""The Hypothesis engine's rounds: seed, seed + 1, ... until a violation or the budget ends.

Whether the first round misses depends on the seed and the bug, and how many
rounds fit in a budget on the machine's speed; so a miss is stubbed and the
clock is a fake one, and every count below follows from the stubs.
"""

from __future__ import annotations

import pytest

from deployspec.engines import hypothesis_engine
from deployspec.engines.result import Result
from deployspec.models import get_model
from deployspec.replay import replay

CAPI = get_model("capi")


def test_a_later_round_finds_what_the_first_missed(monkeypatch):
    real = hypothesis_engine.check_property
    seeds = []

    def first_round_misses(model, variant, prop, *, seed, **kw):
        assert seed not in seeds, f"seed {seed} again"  # not a search until the budget of 600 s
        seeds.append(seed)
        if seed == 7:  # the first round: a miss
            return Result(model.name, variant, prop.name, "hypothesis", "holds",
                          stats={"examples": 100, "steps": 1234})
        return real(model, variant, prop, seed=seed, **kw)

    monkeypatch.setattr(hypothesis_engine, "check_property", first_round_misses)
    prop = CAPI.property("single_active_deployment")
    r = hypothesis_engine.search(CAPI, "capi-2022", prop, budget=600, seed=7, out_dir=None)
    assert seeds == [7, 8]  # the second round, with the next seed, found it
    assert r.verdict == "violated" and r.stats["rounds"] == 2
    assert r.stats["seed"] == 7  # what `check --seed` was given: the search again
    assert r.trace["seed"] == r.stats["found_seed"] == 8  # the round that found it: --json says it too
    assert r.stats["examples"] > 100 and r.stats["steps"] > 1234  # both rounds counted
    assert replay(r.trace).reproduced


class FakeClock:
    """``perf_counter`` for the engine: time passes only when a round runs."""

    def __init__(self):
        self.now = 0.0

    def perf_counter(self) -> float:
        return self.now


@pytest.mark.parametrize("budget, rounds", [(0.0, 1), (0.5, 1), (1.0, 1), (3.0, 3), (3.5, 4)])
def test_rounds_run_with_successive_seeds_until_the_budget_is_spent(monkeypatch, budget, rounds):
    # each round takes one (fake) second and finds nothing; the first runs in full
    # however small the budget, and a round starts while the budget is not spent
    clock = FakeClock()
    seeds = []

    def misses(model, variant, prop, *, seed, **kw):
        assert len(seeds) < 10, "the budget did not end the search"
        seeds.append(seed)
        clock.now += 1.0
        return Result(model.name, variant, prop.name, "hypothesis", "holds",
                      stats={"examples": 100, "steps": 4000})

    monkeypatch.setattr(hypothesis_engine, "check_property", misses)
    monkeypatch.setattr(hypothesis_engine, "time", clock)
    prop = CAPI.property("single_active_deployment")
    r = hypothesis_engine.search(CAPI, "capi-safe", prop, budget=budget, seed=40, out_dir=None)
    assert r.verdict == "holds"
    assert seeds == list(range(40, 40 + rounds))
    assert r.stats["rounds"] == rounds and r.stats["seed"] == 40 and "found_seed" not in r.stats
    assert (r.stats["examples"], r.stats["steps"]) == (100 * rounds, 4000 * rounds)
    assert r.stats["seconds"] == rounds and r.stats["steps_per_second"] == 4000


def test_an_error_ends_the_rounds(monkeypatch):
    seeds = []

    def flaky(model, variant, prop, *, seed, **kw):
        assert not seeds, "a round after an error"  # not a search until the budget of 600 s
        seeds.append(seed)
        return Result(model.name, variant, prop.name, "hypothesis", "error", message="non-deterministic")

    monkeypatch.setattr(hypothesis_engine, "check_property", flaky)
    r = hypothesis_engine.search(CAPI, "capi-safe", CAPI.property("single_active_deployment"),
                                 budget=600, seed=3, out_dir=None)
    assert r.verdict == "error" and seeds == [3] and r.stats["rounds"] == 1
