"""The actions a search offers a design of one's own: what ``candidate_actions`` leaves
out as every shipped design's refusal is offered where the design's own rule may accept
it (``CapiVariant.refusals``). A soundness review handed in capi-safe with a scale
accepted while DEPLOYING, and with a ``continue`` accepted while PREPAUSED: both passed
every search, which never tried either."""

from __future__ import annotations

import attrs
import pytest
from deployspec.reference.capi import updater
from deployspec.reference.capi.actions import Continue, Deploy, Push, Runtime, Scale, Tick
from deployspec.reference.capi.model import SHIPPED_REFUSALS, candidate_actions
from deployspec.reference.capi.state import PREPAUSED

from deployspec.explorer import bfs
from deployspec.models import get_model

from .helpers import run_capi

CAPI = get_model("capi")
SAFE = CAPI.variants["capi-safe"]


#: the two designs the review handed in, as a user hands them in
MUTANTS = """
import attrs
from deployspec.reference.capi import api
from deployspec.reference.capi.state import CANCELING, PAUSED, PREPAUSED
from deployspec.reference.capi.variants import CAPI_SAFE


def continue_also_prepaused(state):
    d = api.newest_active(state)
    if d is not None and d.state == PREPAUSED:
        state = state.with_deployment(attrs.evolve(d, state=PAUSED))
    return api.continue_canary(state)


VARIANTS = [
    attrs.evolve(CAPI_SAFE, name="safe-scales-in-flight", scale_blocked_in=frozenset({CANCELING})),
    attrs.evolve(CAPI_SAFE, name="safe-continues-prepaused", continue_=continue_also_prepaused),
]
"""


def judged(variant: str, prop: str, engine: str):
    """The engine's verdict on a design handed in (the search alone: a check's close look
    would go on to look for further causes)."""
    from deployspec.engines import explore, hypothesis_engine

    model = get_model("capi")
    search = {"explore": explore.search, "hypothesis": hypothesis_engine.search}[engine]
    return search(model, variant, model.property(prop), budget=60, seed=0, out_dir=None)


@pytest.mark.parametrize("name", sorted(CAPI.variants))
def test_a_shipped_design_is_offered_what_candidate_actions_offers_in_every_state_it_reaches(name):
    """The historic designs refuse a scale only while DEPLOYING (the canary states they
    never reach), so their own candidates are the model's in every state."""
    variant = CAPI.variants[name]
    config = attrs.evolve(CAPI.default_config(variant), max_instances=2, max_deployments=2, max_droplets=2,
                          web_instances=())
    offered = CAPI.offered(variant)
    # today's designs refuse what the model assumes: its own function, no cost per state
    assert (offered is candidate_actions) == (name in ("capi-current", "capi-safe"))
    assert variant.refusals().finish_in == SHIPPED_REFUSALS.finish_in
    seen = []
    result = bfs(CAPI, variant, config, goal=lambda state, obs: seen.append(obs), max_states=20_000)
    assert result.path is None and len(seen) > 500
    assert all(offered(obs, config) == candidate_actions(obs, config) for obs in seen)


@pytest.mark.parametrize("engine", ["explore", "hypothesis"])
def test_a_design_that_scales_while_deploying_is_offered_the_scale_and_breaks_the_capacity_bound(hand_in, engine):
    hand_in("reviewed_designs", MUTANTS)
    mutant = get_model("capi").variant("safe-scales-in-flight")
    state = run_capi("capi-safe", [Push(1), Runtime(0), Deploy()])
    obs, config = CAPI.observe(state), CAPI.default_config(mutant)
    assert Scale(2) not in candidate_actions(obs, config)  # what every shipped design refuses
    assert Scale(2) in CAPI.offered(mutant)(obs, config)
    result = judged(mutant.name, "capacity_within_bound", engine)
    assert result.verdict == "violated" and "scale(instances=" in result.message, result


def test_a_design_whose_continue_skips_the_pause_is_offered_continue_and_breaks_the_canary_pause(hand_in):
    hand_in("reviewed_designs", MUTANTS)
    mutant = get_model("capi").variant("safe-continues-prepaused")
    state = run_capi("capi-safe", [Push(1), Runtime(0), Deploy(strategy="canary", canary_steps=(100,))])
    obs, config = CAPI.observe(state), CAPI.default_config(mutant)
    assert obs["deployments"][0]["state"] == PREPAUSED
    assert Continue() not in candidate_actions(obs, config) and Continue() in CAPI.offered(mutant)(obs, config)
    result = judged(mutant.name, "canary_pauses_at_every_step", "explore")
    assert result.verdict == "violated" and "continue_()" in result.message, result


def test_a_design_of_its_own_dispatch_is_offered_the_failure_of_its_only_deployment():
    """A failed step of the only active deployment leaves what the shipped dispatchers do
    before the steps (nothing, or a finalize); a dispatcher of one's own may do more."""
    mutant = attrs.evolve(SAFE, name="safe-own-dispatch", before_dispatch=lambda state: state)
    state = run_capi("capi-safe", [Push(1), Runtime(0), Deploy()])
    obs, config = CAPI.observe(state), CAPI.default_config(mutant)
    failed = Tick(failed=(0,))
    assert failed not in candidate_actions(obs, config)
    assert failed in CAPI.offered(mutant)(obs, config)
    assert CAPI.offered(attrs.evolve(SAFE, before_dispatch=updater.finalize_degenerate)) is candidate_actions


def test_a_design_whose_updater_scales_a_paused_deployment_is_offered_its_finish_left_for_later():
    """``tick(finish_later=…)`` acts on a deployment in the design's own ``scaled_states``
    (``updater.dispatch``); offered only in DEPLOYING and PREPAUSED, a design that scales
    PAUSED ones was never given that window there. Such a design is also offered a failed
    step of its only active deployment only where a step of an ended one may run beside it."""
    mutant = attrs.evolve(CAPI.variants["capi-current"], name="scales-paused",
                          scaled_states=frozenset({"DEPLOYING", "PREPAUSED", "PAUSED"}))
    state = run_capi("capi-current", [Push(1), Runtime(0), Deploy(strategy="canary", canary_steps=(100,)),
                                      Runtime(1), Tick()])
    obs = CAPI.observe(state)
    config = attrs.evolve(CAPI.default_config(mutant), finish_window=True)
    assert obs["deployments"][0]["state"] == "PAUSED"
    later = Tick(finish_later=(0,))
    assert later not in candidate_actions(obs, config) and later in CAPI.offered(mutant)(obs, config)
    ended = attrs.evolve(mutant, scaled_states=frozenset({"DEPLOYING", "DEPLOYED"}))
    assert ended.refusals().lone_failure_stutters is False and mutant.refusals().lone_failure_stutters is True


def test_a_continue_of_one_s_own_is_offered_before_the_push_and_a_stand_in_design_is_offered_everything():
    mutant = attrs.evolve(SAFE, name="continues-anywhere", continue_=lambda state: state)
    empty = CAPI.observe(CAPI.initial_state(CAPI.default_config()))
    config = CAPI.default_config()
    assert Continue() not in candidate_actions(empty, config) and Continue() in CAPI.offered(mutant)(empty, config)

    class StandIn:  # a step alone (the benchmarks' recorded variant): nothing known refused
        step = SAFE.step

    state = run_capi("capi-safe", [Push(1), Runtime(0), Deploy()])
    offered = CAPI.offered(StandIn())(CAPI.observe(state), config)
    assert {Scale(2), Continue(), Tick(failed=(0,))} <= set(offered)
    seen = []
    result = bfs(CAPI, StandIn(), attrs.evolve(config, max_instances=1, max_deployments=1, max_droplets=1),
                 goal=lambda state, obs: seen.append(obs))
    assert result.path is None and result.complete and len(seen) > 10
