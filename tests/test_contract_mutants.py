"""Behaviours of the contract harness that a mutation pass over ``deployspec/contract/``
and ``validation.py`` found unpinned: how a divergence and a fault are worded, which fault
a run reports, what the in-process adapter does with an interrupted, failed or async
object, and which repeated names an observation may not have. Each test was written
against a hand-made mutant the rest of the suite let through; its docstring names it."""

from __future__ import annotations

import inspect

import pytest

from deployspec.adapter import ImplementationError
from deployspec.contract import protocol
from deployspec.contract.conformance import _message, differences
from deployspec.contract.examples import ReferenceImplementation
from deployspec.contract.guard import FaultBox, ImplementationFault, _first_differences
from deployspec.contract.python_adapter import PythonAdapter
from deployspec.models import get_model

# --- contract/conformance.py -----------------------------------------------------


def test_a_divergence_message_counts_one_other_difference():
    """Two differences: the first and "(and 1 more difference(s))". (Mutant C3: the count
    only from three differences on, ``len(problems) > 2``.)"""
    assert _message("w", "v", ["a: x", "b: y"]) == "w differs from v: a: x (and 1 more difference(s))"


def test_entries_in_another_order_are_said_so_only_when_nothing_else_differs():
    """Numbered entries paired by id: a list also reordered says only what differs in an
    entry; "the same entries in another order" is for lists that differ in nothing else.
    (Mutant C7: the order message added whatever else differs, ``if common != ...``.)"""
    ref = [{"id": 0, "n": 1}, {"id": 1, "n": 1}]
    assert differences(ref, [{"id": 1, "n": 1}, {"id": 0, "n": 2}], "ref") == ["[id=0].n: ref 1, implementation 2"]
    assert differences(ref, [ref[1], ref[0]], "ref") == [
        "observation: the same entries in another order (ref ids [0, 1], implementation [1, 0])"]


def test_entries_that_share_an_id_are_compared_by_place():
    """Entries are paired by id only where every id is distinct: with two entries of one id,
    pairing by id would drop one of them unsaid (the observation schemas refuse repeated ids
    before a diff; this holds ``differences`` to it on its own). (Mutant C6: ``_ids``
    without the ``len(set(ids)) < len(ids)`` clause.)"""
    ref = [{"id": 1, "n": 0}, {"id": 1, "n": 1}]
    assert differences(ref, [{"id": 1, "n": 0}, {"id": 2, "n": 1}], "ref") == ["[1].id: ref 1, implementation 2"]


# --- contract/guard.py -----------------------------------------------------------


def test_a_history_of_exactly_the_most_steps_is_not_said_cut():
    """With exactly ``most`` steps since reset, all of them are shown, without "the last N of
    N". (Mutant G2: ``len(self.history) >= most``.)"""
    fault = ImplementationFault("boom", where="step 2 (tick())", history=("a()", "b()", "tick()"))
    assert fault.with_history(most=3) == "implementation fault at step 2 (tick()): boom; steps since reset (a(), b(), tick())"
    assert "the last 2 of 3: b(), tick()" in fault.with_history(most=2)


def test_the_fault_box_keeps_the_first_fault_not_its_echoes():
    """A failed implementation is not called again: each later call answers with the same
    cause at a later place (an echo); the run reports the first fault. (Mutant G3:
    ``FaultBox.record`` keeping the latest.)"""
    box = FaultBox()
    first = ImplementationFault("boom", where="step 3 (tick())")
    assert box.record(first) is first
    assert box.record(ImplementationFault("boom", where="reset")) is first
    assert box.first is first


def test_the_first_differences_say_how_many_more_there_are():
    """A fault's account of what changed names the first three paths and counts the rest.
    (Mutant G9: the count dropped.)"""
    was = {k: 0 for k in "abcde"}
    now = {k: 1 for k in "abcde"}
    assert _first_differences(was, now, "before", "after") == (
        "a: before 0, after 1; b: before 0, after 1; c: before 0, after 1 (and 2 more)")
    assert _first_differences({"a": 0}, {"a": 1}, "before", "after") == "a: before 0, after 1"


# --- contract/python_adapter.py --------------------------------------------------


def _python_adapter(impl):
    model = get_model("capi")
    return model, PythonAdapter(impl, model)


def test_an_interrupted_object_is_not_called_again_and_a_later_call_is_an_interruption_too():
    """Ctrl-C inside the object's call stops the run; any later call (a teardown's) raises
    KeyboardInterrupt again without calling the object, never an implementation fault
    "interrupted". (Mutant P1: the ``dead == INTERRUPTED`` check dropped.)"""
    calls = []

    class Impl:
        def reset(self, config):
            calls.append("reset")

        def perform(self, action):
            calls.append("perform")
            raise KeyboardInterrupt

        def observe(self):
            calls.append("observe")
            return {}

    model, adapter = _python_adapter(Impl())
    with pytest.raises(KeyboardInterrupt):
        adapter.perform(model.action({"type": "tick"}))
    with pytest.raises(KeyboardInterrupt):
        adapter.observe()
    assert calls == ["perform"]


def test_a_failed_object_s_close_is_not_even_looked_up():
    """Once the object has failed it is not called again: closing the run does not look its
    ``close`` up either (a lookup runs its code, a property or ``__getattr__``: a hang there
    waits out another timeout). (Mutant P4: ``close_implementation`` without ``dead is None``.)"""
    looked = []

    class Impl:
        def reset(self, config):
            raise RuntimeError("boom")

        @property
        def close(self):
            looked.append("close")
            return lambda: None

    model, adapter = _python_adapter(Impl())
    with pytest.raises(ImplementationError):
        adapter.reset(model.default_config())
    adapter.close_implementation()
    assert looked == []
    model, healthy = _python_adapter(type("Fine", (), {"close": property(lambda self: looked.append("x") or (lambda: None))})())
    healthy.close_implementation()
    assert looked and set(looked) == {"x"}


def test_an_async_perform_s_coroutine_is_closed_not_left_to_warn():
    """An ``async def perform`` is refused as an awaitable, and its coroutine closed: left
    to the collector it warned "coroutine ... was never awaited". (Mutant P9: the
    ``result.close()`` dropped; the suite only shows a warning.)"""
    made = []

    class Impl:
        def reset(self, config):
            pass

        async def _perform(self, action):
            return None

        def perform(self, action):
            made.append(self._perform(action))
            return made[-1]

    model, adapter = _python_adapter(Impl())
    with pytest.raises(ImplementationError, match="returned an awaitable"):
        adapter.perform(model.action({"type": "tick"}))
    assert made and inspect.getcoroutinestate(made[0]) == inspect.CORO_CLOSED


# --- validation.py -----------------------------------------------------------------


def test_a_setting_named_twice_apart_is_said_at_the_second():
    """x-uniqueBy compares every item with all before it, not only with its neighbour: a
    slot's settings have no order of their own to catch ``a, b, a``. (Mutant V2: only
    adjacent duplicates caught.)"""
    impl = ReferenceImplementation("slots", "slots-webhook-tag")
    impl.reset({"start": "webhook"})
    obs = impl.observe()
    first = obs["slots"]["production"]["settings"][0]
    other = {"name": first["name"] + "_OTHER", "value": True, "sticky": False}
    obs["slots"]["production"]["settings"] = [first, other, first]
    assert protocol.ObservationChecker(get_model("slots")).check(obs) == (
        f'slots/production/settings/2/name: items 0 and 2 have the same name "{first["name"]}"')


