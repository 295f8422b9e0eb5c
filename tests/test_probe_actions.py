"""What each model probes in a contract run besides its candidate actions (``probe_actions``).

The search over a reference tries ``candidate_actions`` only: it leaves out what every design
refuses in the observed state, or what changes nothing there, because for exploring the
reference those are stutters. A contract run tries them too (``build_machine(probes=True)``),
so that an implementation accepting what the reference refuses is asked. These tests pin that
the two lists are disjoint, that leaving the probes out loses the explorer no transition, and
which actions each model probes where.
"""

from __future__ import annotations

import json
from collections import deque

import pytest
from deployspec.reference.core import Rejected
from deployspec.stateful_tests.machine import PROBE, build_machine

from deployspec import traces
from deployspec.engines.explore import explore_config
from deployspec.models import get_model

from .cli_runs import run, valid_json_output

CAPI, SLOTS = get_model("capi"), get_model("slots")

#: the verbs each model probes somewhere within the explored bounds
PROBED = {
    "capi": {"push", "stage", "deploy", "cancel", "continue_", "scale", "tick", "runtime"},
    "slots": {"validate", "deliver_webhook", "restart", "recycle", "crash_retry"},
}


def reachable(model, variant, config, limit: int):
    """States reachable by candidate actions, breadth first, at most ``limit``."""
    start = model.initial_state(config)
    seen, todo = {start}, deque([start])
    while todo and len(seen) < limit:
        state = todo.popleft()
        yield state
        for action in model.candidate_actions(model.observe(state), config):
            after = variant.step(state, action)
            if not isinstance(after, Rejected) and after not in seen:
                seen.add(after)
                todo.append(after)


@pytest.mark.parametrize("model, variant", [(m, v) for m in (CAPI, SLOTS) for v in m.variants],
                         ids=lambda x: x if isinstance(x, str) else x.name)
def test_a_probe_is_refused_or_adds_no_transition(model, variant):
    """Every probe is refused by the variant, leaves the state as it is, or goes where a
    candidate action goes too: the explorer, which tries candidates only, misses nothing."""
    v = model.variant(variant)
    config = explore_config(model, v)
    kinds, refused = set(), set()
    for state in reachable(model, v, config, limit=2500):
        obs = model.observe(state)
        candidates = model.candidate_actions(obs, config)
        probes = model.probe_actions(obs, config)
        assert not set(candidates) & set(probes), obs
        successors = {v.step(state, a) for a in candidates}
        for action in probes:
            after = v.step(state, action)
            kinds.add(action.kind)
            if isinstance(after, Rejected):
                refused.add(action.kind)
            else:
                assert after == state or after in successors, (obs, str(action))
    assert kinds == PROBED[model.name]
    # the reference refuses some probes of each kind but the no-op ones
    assert refused >= PROBED[model.name] - {"restart", "recycle"}


def played(model, variant, actions, config=None):
    """The state after ``actions`` (each accepted) from the initial state, and the configuration."""
    v = model.variant(variant)
    config = config or model.default_config(v)
    state = model.initial_state(config)
    for a in actions:
        state = v.step(state, model.action(a))
        assert not isinstance(state, Rejected), (a, state)
    return state, config


def obs_after(model, variant, actions, config=None):
    state, config = played(model, variant, actions, config)
    return model.observe(state), config


def labels(actions) -> list[str]:
    return [str(a) for a in actions]


def test_capi_before_the_push_probes_everything_but_a_push():
    obs, config = obs_after(CAPI, "capi-safe", [])
    assert {a.kind for a in CAPI.candidate_actions(obs, config)} == {"push"}
    assert {a.kind for a in CAPI.probe_actions(obs, config)} == PROBED["capi"] - {"push", "runtime"}


def test_capi_while_deploying_probes_scale_continue_push_and_the_failed_tick():
    obs, config = obs_after(CAPI, "capi-safe", [{"type": "push"}, {"type": "deploy"}])
    probes = labels(CAPI.probe_actions(obs, config))
    # no process has settled an instance, none is without a STARTING one: no runtime probe
    assert probes == ["tick(failed=d0)", "continue_()", "scale(instances=0)", "scale(instances=1)",
                      "scale(instances=2)", "scale(instances=3)", "push(instances=1)",
                      "push(instances=2)", "push(instances=3)"]
    assert not {a.kind for a in CAPI.candidate_actions(obs, config)} & {"scale", "continue_", "push"}


def test_capi_canceling_again_is_probed_until_a_droplet_is_staged():
    steps = [{"type": "push"}, {"type": "deploy"}, {"type": "cancel"}]
    obs, config = obs_after(CAPI, "capi-safe", steps)
    assert "cancel()" in labels(CAPI.probe_actions(obs, config))
    assert "cancel()" not in labels(CAPI.candidate_actions(obs, config))
    obs, config = obs_after(CAPI, "capi-safe", [*steps, {"type": "stage"}])
    assert "cancel()" in labels(CAPI.candidate_actions(obs, config))
    assert "cancel()" not in labels(CAPI.probe_actions(obs, config))


def test_capi_runtime_is_probed_for_a_process_without_a_starting_instance():
    obs, config = obs_after(CAPI, "capi-safe", [{"type": "push"}, {"type": "runtime", "process": 0}])
    assert "runtime(P0)" in labels(CAPI.probe_actions(obs, config))
    assert "runtime(P0)" not in labels(CAPI.candidate_actions(obs, config))


def test_the_bounds_are_no_probes():
    """A stage past max_droplets, a push past max_pushes: the reference accepts them, the
    bounds only keep the search finite. Neither list has them."""
    obs, config = obs_after(CAPI, "capi-safe", [{"type": "push"}, {"type": "stage"}, {"type": "stage"}])
    assert len(obs["droplets"]) == config.max_droplets
    assert "stage" not in {a.kind for a in CAPI.candidate_actions(obs, config) + CAPI.probe_actions(obs, config)}
    config = SLOTS.config_type(max_pushes=1)
    obs, config = obs_after(SLOTS, "slots-pipeline-immutable", [{"type": "push"}], config)
    assert "push" not in {a.kind for a in SLOTS.candidate_actions(obs, config) + SLOTS.probe_actions(obs, config)}


def test_slots_probes_what_the_candidates_skip():
    obs, config = obs_after(SLOTS, "slots-pipeline-immutable", [])
    # nothing queued, staging empty (validation fails), every pull lands what each instance has
    assert labels(SLOTS.probe_actions(obs, config)) == [
        "validate()", "deliver_webhook()",
        "restart(slot='production')", "recycle(slot='production', instance=0)",
        "crash_retry(slot='production', instance=0)", "recycle(slot='production', instance=1)",
        "crash_retry(slot='production', instance=1)",
        "restart(slot='staging')", "recycle(slot='staging', instance=0)",
        "crash_retry(slot='staging', instance=0)", "recycle(slot='staging', instance=1)",
        "crash_retry(slot='staging', instance=1)",
    ]


def test_only_a_contract_machine_has_the_probe_move():
    """``deployspec check`` and the model's own Hypothesis tests draw from the candidates alone."""
    v = CAPI.variant("capi-safe")
    args = (CAPI, lambda: None, CAPI.properties, CAPI.default_config(v))
    assert not hasattr(build_machine(*args), PROBE)
    assert hasattr(build_machine(*args, probes=True), PROBE)


def test_capi_before_the_push_probes_the_deploys_of_a_new_droplet_too():
    """With ``push_rolling`` on, ``deploy(new_droplet=…)`` is one more deploy that every
    design refuses before the push ("no app"): an implementation that stages a droplet, or
    creates the app, on it must be asked, as it is for a plain deploy."""
    import attrs

    obs, config = obs_after(CAPI, "capi-safe", [])
    config = attrs.evolve(config, push_rolling=True)
    probes = labels(CAPI.probe_actions(obs, config))
    assert "deploy(max_in_flight=1, new_droplet=True)" in probes
    assert "deploy(max_in_flight=1, new_droplet=False)" in probes
    state = CAPI.initial_state(config)
    for action in CAPI.probe_actions(obs, config):
        if action.kind == "deploy":
            assert isinstance(CAPI.variant("capi-safe").step(state, action), Rejected)


def settled(variant: str, steps: list[dict], config=None):
    """The state after ``steps`` and the platform's settle phase, with its observation."""
    v = CAPI.variant(variant)
    state, config = played(CAPI, variant, steps, config)
    while (action := CAPI.settle_action(CAPI.observe(state))) is not None:
        state = v.step(state, action)
    return state, CAPI.observe(state), config


def test_capi_a_scale_to_the_count_the_web_process_has_is_a_probe():
    """``scale`` acts on the newest web process (``api.scale``, the same in every design): to
    the count it has, it changes no design's state."""
    state, obs, config = settled("capi-safe", [{"type": "push", "instances": 2}])
    assert len(obs["processes"][-1]["instances"]) == 2
    assert labels(a for a in CAPI.candidate_actions(obs, config) if a.kind == "scale") == [
        "scale(instances=0)", "scale(instances=1)", "scale(instances=3)"]
    assert "scale(instances=2)" in labels(CAPI.probe_actions(obs, config))
    for variant in CAPI.variants:
        state, obs, config = settled(variant, [{"type": "push", "instances": 2}])
        assert CAPI.variant(variant).step(state, CAPI.action({"type": "scale", "instances": 2})) is state


def test_an_idle_tick_of_a_design_that_acts_on_it_is_explored(capsys, outside, tmp_path):
    """The shipped dispatchers do nothing with no deployment in flight, but a tick runs the
    design's own rules, so the idle tick is a candidate, not a probe: with it left to the
    probes, tests/designs/holds_count.py held app_stays_available (a review found it); its
    shortest violation ends with that tick."""
    outside("holds_count")
    status, out, _ = run(capsys, "check", "--model", "capi", "--variant", "holds-count", "--engine", "explore",
                         "--property", "app_stays_available", "--out", str(tmp_path), "--json")
    (result,) = valid_json_output(json.loads(out))["results"]
    assert status == 1 and result["verdict"] == "violated", result
    steps = [s["action"]["type"] for s in traces.load(result["counterexample"])["steps"]]
    assert steps[-1] == "tick" and "scale" in steps, steps
