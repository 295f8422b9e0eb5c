"""The cyclic garbage collector during a serial ``check`` run: paused from one exhaustive
search to the next (they share the step memo, which a collection would walk again),
running as it was for the other engines, and restored however the run ends."""

from __future__ import annotations

import gc

import pytest

from deployspec import check
from deployspec.engines.result import Result


def _recording_judge(seen: list, stop_at: int | None = None):
    """A judge that records (engine, whether the collector runs) and judges nothing;
    it raises KeyboardInterrupt at call number ``stop_at``."""

    def judge(model_name, variant, engine, prop, **_options):
        seen.append((engine, gc.isenabled()))
        if stop_at is not None and len(seen) == stop_at:
            raise KeyboardInterrupt
        return [Result(model=model_name, variant=variant, engine=engine, property=prop, verdict="holds")]

    return judge


@pytest.fixture
def collector_on():
    was = gc.isenabled()
    gc.enable()
    yield
    (gc.enable if was else gc.disable)()


def test_paused_for_the_exhaustive_searches_and_running_for_the_others(monkeypatch, collector_on):
    seen: list = []
    monkeypatch.setattr(check, "judge", _recording_judge(seen))
    pairs = check.plan("slots", ["slots-pipeline-tag", "slots-pipeline-immutable"])
    results = check.run(pairs, ("hypothesis", "explore"), budget=1, seed=0, out_dir=None,
                        properties=["production_runs_only_released_images", "swap_keeps_production_serving"])
    assert [r.engine for r in results] == [e for e, _ in seen]
    # per variant its random searches, then its exhaustive ones: the second variant's random
    # searches come after the first one's exhaustive searches, with the collector running again
    assert seen == [("hypothesis", True)] * 2 + [("explore", False)] * 2 + [("hypothesis", True)] * 2 + [
        ("explore", False)] * 2
    assert gc.isenabled()


def test_restored_when_the_run_is_interrupted_in_an_exhaustive_search(monkeypatch, collector_on):
    seen: list = []
    monkeypatch.setattr(check, "judge", _recording_judge(seen, stop_at=1))
    with pytest.raises(KeyboardInterrupt):
        check.run(check.plan("capi", ["capi-safe"]), ("explore",), budget=1, seed=0, out_dir=None)
    assert seen == [("explore", False)]
    assert gc.isenabled()


def test_left_off_when_the_caller_had_it_off(monkeypatch, collector_on):
    seen: list = []
    monkeypatch.setattr(check, "judge", _recording_judge(seen))
    gc.disable()
    check.run(check.plan("slots", ["slots-pipeline-immutable"]), ("hypothesis", "explore"), budget=1, seed=0,
              out_dir=None, properties=["production_runs_only_released_images"])
    assert seen == [("hypothesis", False), ("explore", False)]
    assert not gc.isenabled()


def test_a_jobs_process_keeps_it_paused_between_its_exhaustive_searches(monkeypatch, collector_on):
    """A ``--jobs`` search process runs one search after another with nothing in between:
    paused from one exhaustive search to the next, running again for another engine's."""
    from deployspec import pool

    seen: list = []
    monkeypatch.setattr(check, "judge", _recording_judge(seen))
    monkeypatch.setattr(pool, "_collecting", True)
    for engine in ("explore", "explore", "hypothesis", "explore"):
        pool._judge_in_pool("capi", "capi-safe", engine, "single_active_deployment", budget=1)
    assert seen == [("explore", False), ("explore", False), ("hypothesis", True), ("explore", False)]
    monkeypatch.setattr(pool, "_collecting", False)  # a process started with it off: left off
    gc.disable()
    pool._judge_in_pool("capi", "capi-safe", "hypothesis", "single_active_deployment", budget=1)
    assert seen[-1] == ("hypothesis", False)
