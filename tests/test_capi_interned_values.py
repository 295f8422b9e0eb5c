"""The capi model's writing helpers hand out one object per value (reference/capi/state.py,
``_INTERNED``): the explorer's speed-up must change no state's equality, hash or
observation, and a bounded table must not change what a step returns."""

from __future__ import annotations

import copy
import importlib
import random

import attrs
import pytest
from deployspec.reference.capi import instances as capi_instances
from deployspec.reference.capi import runtime as capi_runtime
from deployspec.reference.capi import state as capi_state
from deployspec.reference.capi import tick_memo
from deployspec.reference.capi import variants as capi_variants
from deployspec.reference.capi.observe import from_observation, observe
from deployspec.reference.capi.state import CRASHED, RUNNING, STARTING, App, Process

from deployspec.models import get_model

CAPI = get_model("capi")
#: the module (the package exports its function ``observe`` under the same name)
capi_observe = importlib.import_module("deployspec.reference.capi.observe")


def test_a_written_value_is_one_object_equal_to_what_the_constructor_builds():
    p = Process(0, 1, (RUNNING,))
    a, b = p.with_instances((RUNNING, STARTING)), Process(0, 1, (RUNNING,)).with_instances((RUNNING, STARTING))
    built = Process(0, 1, (RUNNING, STARTING))
    assert a is b
    assert a == built and hash(a) == hash(built) and a is not built
    assert App.of(2, False) is App.of(2, False) == App(2, False)


def test_scaling_gives_what_it_gave_before_for_equal_processes_built_apart():
    for instances in [(), (RUNNING,), (RUNNING, CRASHED, STARTING)]:
        for n in range(5):
            p, q = Process(3, 0, instances), Process(3, 0, instances)
            expected = instances[:n] + (STARTING,) * max(0, n - len(instances))
            assert p.scaled_to(n).instances == q.scaled_to(n).instances == expected
            assert p.scaled_to(n) == Process(3, 0, expected)
    assert Process(0, 0, (RUNNING,)).scaled_to(-1).instances == ()


def _walk(variant_name: str, seed: int, steps: int = 40):
    """A random walk of the reference: each state and its observation."""
    variant = CAPI.variant(variant_name)
    config = CAPI.default_config(variant)
    rng = random.Random(seed)
    state = CAPI.initial_state(config)
    for _ in range(steps):
        actions = CAPI.candidate_actions(observe(state), config)
        after = variant.step(state, rng.choice(actions))
        if after.__class__.__name__ != "Rejected":
            state = after
        yield state


def _rebuilt(state):
    """The state its observation describes, built through the constructors (nothing
    interned there), with what no observation shows carried over: the updater's memory
    and the process each deployment recorded for its cancel (capi-safe)."""
    rebuilt = attrs.evolve(from_observation(observe(state)), pending=state.pending)
    deployments = tuple(attrs.evolve(d, rolls_back_to=was.rolls_back_to)
                        for d, was in zip(rebuilt.deployments, state.deployments))
    return attrs.evolve(rebuilt, deployments=deployments)


def _recorded_state():
    from deployspec.reference.capi.actions import Deploy, Push, Runtime, Stage, Tick

    variant = CAPI.variant("capi-safe")
    state = CAPI.initial_state(CAPI.default_config(variant))
    for action in (Push(1), Stage(True), Deploy(strategy="canary"), Runtime(1), Tick(), Deploy()):
        state = variant.step(state, action)
    assert state.deployments[1].rolls_back_to == 1
    return state


def test_states_built_from_interned_values_equal_states_built_from_scratch():
    """Every state of random walks (and one where capi-safe recorded a process) equals,
    hashes as and observes as the state its own observation rebuilds."""
    walked = [s for name in ("capi-2022", "capi-current", "capi-safe") for seed in range(5)
              for s in _walk(name, seed)]
    for state in walked + [_recorded_state()]:
        rebuilt = _rebuilt(state)
        assert rebuilt == state and hash(rebuilt) == hash(state)
        assert observe(rebuilt) == observe(state)


def test_what_a_deployment_recorded_is_no_part_of_its_observation():
    """So a rebuilt state must carry it over, or it is another state."""
    state = _recorded_state()
    assert attrs.evolve(from_observation(observe(state)), pending=state.pending) != state


def test_full_tables_are_emptied_and_steps_still_return_equal_values(monkeypatch):
    monkeypatch.setattr(capi_state, "INTERNED_MAX", 8)
    monkeypatch.setattr(capi_state, "_INTERNED", {})
    monkeypatch.setattr(capi_state, "_SCALED", {})
    monkeypatch.setattr(capi_instances, "SUMMARIES_MAX", 2)
    monkeypatch.setattr(capi_instances, "_SUMMARIES", {})
    monkeypatch.setattr(capi_observe, "_SEEN_MAX", 2)
    monkeypatch.setattr(capi_observe, "_SEEN", {})
    for seed in range(3):
        for state in _walk("capi-safe", seed, steps=60):
            assert _rebuilt(state) == state
            assert len(capi_state._INTERNED) <= 8 and len(capi_state._SCALED) <= 8
            assert len(capi_instances._SUMMARIES) <= 2 and len(capi_observe._SEEN) <= 2
            for p in state.processes:
                assert capi_instances.summarise(p) == capi_instances.InstanceSummary(
                    p.instances.count(RUNNING), p.instances.count(STARTING), p.instances.count(CRASHED))


def test_interning_changes_no_step(monkeypatch):
    """The same random walks with every value built afresh and every scaling worked out
    again: state for state, the same states (a key missing a field would hand out
    another process's or deployment's object here)."""
    names = ("capi-2022", "capi-pr3084", "capi-current", "capi-safe")
    walks = {(name, seed): list(_walk(name, seed, steps=60)) for name in names for seed in range(4)}
    monkeypatch.setattr(capi_state, "_interned", lambda key, build: build(*key[1:]))
    monkeypatch.setattr(Process, "scaled_to", Process._scaled_to)
    # and the memos of what is worked out from interned tuples: every tuple, tick and settle afresh
    monkeypatch.setattr(capi_state, "_edited", lambda how, items, arg: how(items, arg))
    monkeypatch.setattr(capi_variants, "_SHIPPED", {})
    monkeypatch.setattr(capi_variants, "settle_instance", capi_runtime._settled)
    afresh = False
    for (name, seed), interned in walks.items():
        fresh = list(_walk(name, seed, steps=60))
        assert fresh == interned, (name, seed)
        # the patches took: equal processes, other objects (states themselves are never interned)
        afresh |= any(p is not q for a, b in zip(fresh, interned) for p, q in zip(a.processes, b.processes))
    assert afresh


def test_an_observation_shares_nothing_with_the_next_one_of_the_same_deployment():
    """Deployments are observed once (observe._SEEN); a property that changes what it was
    handed must change no other observation."""
    state = list(_walk("capi-current", 0))[-1]
    assert state.deployments, "the walk deployed nothing"
    first = observe(state)
    for d in first["deployments"]:
        d["state"] = "MANGLED"
        d["canary_steps"].append(99)
    again = observe(state)
    assert again == observe(from_observation(again))
    assert all(d["state"] != "MANGLED" and 99 not in d["canary_steps"] for d in again["deployments"])


def _mangle(value) -> None:
    """Change every dict and list inside an observation in place."""
    if isinstance(value, dict):
        for v in value.values():
            _mangle(v)
        value["mangled"] = True
    elif isinstance(value, list):
        for v in value:
            _mangle(v)
        value.append("mangled")


def test_no_dict_or_list_of_an_observation_is_in_another():
    """Droplets and deployments are observed from kept copies (observe._DROPLETS, _SEEN):
    a property that changes every dict and list it was handed changes no later observation,
    of the same state or of another one holding the same values."""
    states = list(_walk("capi-current", 0))
    assert states[-1].deployments and len(states[-1].droplets) > 1, "the walk deployed and staged nothing"
    expected = [copy.deepcopy(observe(s)) for s in states]
    for s in states:
        _mangle(observe(s))
    assert [observe(s) for s in states] == expected


def test_a_droplet_s_health_is_a_bool_where_it_is_made():
    """The droplets' observations are kept by value (``observe._DROPLETS``), where ``1 == True``:
    a droplet staged as ``1`` would be observed as the ``true`` of an earlier state. The actions
    that stage one take a bool only (JSON traces and the protocol check types already)."""
    from deployspec.reference.capi.actions import Deploy, Stage

    for make in (lambda: Stage(1), lambda: Deploy(new_droplet=0)):
        with pytest.raises(TypeError, match="must be <class 'bool'>"):
            make()
    assert Stage(False).healthy is False and Deploy(new_droplet=True).new_droplet is True


def test_a_shipped_design_dispatches_once_per_value_a_design_of_ones_own_every_tick(monkeypatch):
    """``variants._tick`` keeps a shipped design's dispatch by the processes, deployments and
    pending work it reads; a design of one's own may read anything, so each of its ticks runs."""
    from deployspec.reference.capi import updater as capi_updater
    from deployspec.reference.capi.actions import Tick

    safe = CAPI.variant("capi-safe")
    mine = attrs.evolve(safe, name="mine")
    state = [s for s in _walk("capi-safe", 0) if s.deployments][-1]
    twin = attrs.evolve(state, next_process_id=state.next_process_id)  # equal, another object
    calls = []
    dispatch = capi_updater.dispatch
    monkeypatch.setattr(capi_updater, "dispatch",
                        lambda *args: calls.append(args[0]) or dispatch(*args))
    monkeypatch.setattr(tick_memo, "_TICKS", {})
    tick = Tick()
    for variant in (safe, mine):
        for s in (state, state, twin):
            assert variant.step(s, tick) == dispatch(variant, s, tick)
    assert [c is safe for c in calls] == [True, False, False, False]


def test_a_shipped_tick_that_reads_what_the_memo_does_not_key_by_fails(monkeypatch):
    """The memo keys a shipped design's tick by the processes, deployments and pending work:
    were a rule to read the app or the droplets, the tests fail (the suite checks every tick
    it keeps) instead of a search answering from another state's entry."""
    from deployspec.reference.capi import updater as capi_updater
    from deployspec.reference.capi.actions import Tick

    assert tick_memo.CHECKED  # (conftest.py: the whole suite runs so)
    dispatch = capi_updater.dispatch
    state = [s for s in _walk("capi-safe", 0) if s.deployments][-1]
    for read in (lambda s: s.app.droplet, lambda s: s.droplets[0], lambda s: len(s.droplets)):
        monkeypatch.setattr(capi_updater, "dispatch", lambda v, s, a, read=read: read(s) and dispatch(v, s, a))
        monkeypatch.setattr(tick_memo, "_TICKS", {})
        with pytest.raises(AssertionError, match="a shipped design's tick read the state's (app|droplets)"):
            CAPI.variant("capi-safe").step(state, Tick())
