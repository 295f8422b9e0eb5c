"""The sweep of the initial state: details a mutation pass over
deployspec/contract/sweep.py found unpinned (a recording answers as recorded and
only that, judging goes past one that replays otherwise and counts what it
judged, no settle phase after a violating first step, an unreadable first
observation left to the search, the time a sweep spent)."""

from __future__ import annotations

import pytest

from deployspec.contract import harness, sweep
from deployspec.contract.examples import ReferenceImplementation
from deployspec.contract.python_adapter import PythonAdapter
from deployspec.models import get_model


def _recording():
    return sweep.Recording(("A",), {"at": "start"},
                           ({"action": {"type": "a"}, "rejected": None, "observation": {"at": 0}},
                            {"action": {"type": "b"}, "rejected": "no", "observation": {"at": 1}}))


class _Act:
    def __init__(self, kind):
        self.kind = kind

    def to_json(self):
        return {"type": self.kind}


def test_a_recorded_adapter_answers_as_recorded_and_only_that():
    adapter = sweep.RecordedAdapter(_recording())
    adapter.reset(None)
    assert adapter.observe() == {"at": "start"}
    assert adapter.perform(_Act("a")) is None and adapter.observe() == {"at": 0}
    assert adapter.perform(_Act("b")) == "no" and adapter.observe() == {"at": 1}
    with pytest.raises(sweep._Replayed):
        adapter.perform(_Act("c"))  # past its end
    adapter.reset(None)
    assert adapter.observe() == {"at": "start"}
    with pytest.raises(sweep._Replayed):
        adapter.perform(_Act("b"))  # not what was done first


def test_judge_goes_past_a_recording_that_replays_otherwise_and_counts_what_it_judged(monkeypatch):
    model, config = get_model("capi"), harness.config_for(get_model("capi"), None)
    prop = model.property("single_active_deployment")
    calls = []

    class Judged:
        def __init__(self, model, adapter, properties, config):
            calls.append(adapter.recording.actions[0])
            self.violation = None if adapter.recording.actions[0] != "bad" else "violated"

        def perform(self, action):
            if action == "otherwise":
                raise sweep._Replayed(action)
            return self.violation

        def settle(self):
            calls.append("settle")

    monkeypatch.setattr(sweep, "Session", Judged)
    recordings = [sweep.Recording((a,), {}, ()) for a in ("ok", "otherwise", "bad", "ok")]
    found, n = sweep.judge(model, sweep.Sweep(tuple(recordings), 0.0), prop, config)
    # no settle phase after a first step that violates it, nor after one that replays otherwise
    assert (found.violation, n, calls) == ("violated", 3, ["ok", "settle", "otherwise", "bad"])
    found, n = sweep.judge(model, sweep.Sweep(tuple(recordings[:2] + recordings[3:]), 0.0), prop, config)
    assert (found, n) == (None, 3)


def test_a_first_observation_the_model_cannot_read_is_left_to_the_search(monkeypatch):
    """No first steps are swept from it; the search's properties report it (a fault)."""

    def unreadable(model, obs, config):
        raise KeyError("droplet")

    monkeypatch.setattr(sweep, "searchable_actions", unreadable)
    model = get_model("capi")
    recorded = sweep.record(model, lambda: PythonAdapter(ReferenceImplementation("capi", "capi-safe"), model),
                            harness.config_for(model, None))
    assert recorded.recordings == ()


def test_a_sweep_times_what_it_spent_driving_the_implementation():
    model = get_model("capi")
    config = harness.config_for(model, None)
    recorded = sweep.record(model, lambda: PythonAdapter(ReferenceImplementation("capi", "capi-safe"), model), config)
    assert recorded.seconds > 0 and len(recorded.recordings) >= 10
    first = recorded.recordings[0]
    assert first.initial == recorded.recordings[1].initial and first.steps[0]["action"] == first.actions[0].to_json()
