"""The in-process adapter (``contract --python``) on its own: what it copies of an
object's answers, under which alarm, and what of the process's state it keeps apart."""

from __future__ import annotations

import random

import pytest

from deployspec.adapter import ImplementationError
from deployspec.contract import protocol, python_adapter, timed_call
from deployspec.models import get_model


class _Observes:
    """An object whose observation is ``obs``."""

    def __init__(self, obs):
        self.obs = obs

    def reset(self, config):
        pass

    def perform(self, action):
        return None

    def observe(self):
        return self.obs


def test_an_observation_larger_than_a_reply_may_be_is_a_fault_and_is_copied_within_the_timeout(monkeypatch):
    """Over --exec a reply over 8 MiB is a fault; in process one of millions of instances was
    accepted, its copy taking 14 s past --timeout 1."""
    model = get_model("capi")
    armed, copy = [], python_adapter.as_json
    monkeypatch.setattr(python_adapter, "as_json", lambda obs: armed.append(timed_call._armed) or copy(obs))
    monkeypatch.setattr(protocol, "MAX_LINE", 1000)
    adapter = python_adapter.PythonAdapter(_Observes({"app": "x" * 2000}), model, timeout=5.0)
    with pytest.raises(ImplementationError) as caught:
        adapter.observe()
    assert str(caught.value) == ("observe() returned an observation of 2011 bytes as JSON, over the 1000 a "
                                 "reply may have (as over --exec)")
    assert armed == [True]  # the copy ran while the call's alarm was set


def test_an_object_s_calls_draw_from_the_global_random_generator_as_a_process_of_its_own_would(monkeypatch):
    """Hypothesis seeds the global ``random`` generator alike before every example: an object
    whose updater failed at ``random.random() < 0.1`` drew the same numbers after every reset
    and passed as deterministic (over --exec, in a process of its own, it did not). Its calls
    now carry a generator state of their own from call to call, and the caller's is left as it was."""
    class Draws:
        def __init__(self):
            self.drawn: list[float] = []

        def reset(self, config):
            self.drawn.append(random.random())

        def perform(self, action):
            return None

        def observe(self):
            return {}

    model = get_model("capi")
    impl = Draws()
    adapter = python_adapter.PythonAdapter(impl, model, timeout=5.0)
    for _ in range(3):
        random.seed(0)  # as Hypothesis does before each example
        adapter.reset(model.default_config())
    assert len(set(impl.drawn)) == 3, impl.drawn
    assert random.random() == random.Random(0).random()  # the caller's generator, as it left it
