"""capi-safe's cancel ends at once only when its prior crashes and nothing else can
serve; upstream's UpScaler#can_scale? counts room in flight strictly. Both paths are
reachable but change no property's verdict, so they are pinned here by their states."""

from __future__ import annotations

from deployspec.reference.capi import scaling
from deployspec.reference.capi.actions import Cancel, Deploy, Push, Runtime, Stage, Tick
from deployspec.reference.capi.instances import InstanceSummary
from deployspec.reference.capi.state import Process

from .helpers import run_capi


def test_capi_safe_rolls_back_onto_a_prior_short_of_instances_that_has_not_crashed():
    """Found by a mutant that ended the cancel at once whenever nothing ran (BFS, depth 8):
    the prior P0 still starts, so the roll-back goes on instead of destroying P2 at once."""
    state = run_capi("capi-safe", [Push(1), Stage(healthy=False), Deploy(), Runtime(1), Deploy(), Tick(),
                              Runtime(2), Cancel(), Tick()])
    assert state.deployments[1].state == "CANCELING"
    assert [p.id for p in state.processes] == [0, 2]
    assert "CRASHED" not in state.process(0).instances


def test_up_scaling_needs_room_in_flight_strictly():
    """``UpScaler#can_scale?`` (3bbba90, up_scaler.rb): starting < max_in_flight."""
    deploying = Process(1, 0, ("STARTING",))
    assert not scaling.can_scale_up(InstanceSummary(routable=0, starting=1, unhealthy=0), deploying, 1)
    assert scaling.can_scale_up(InstanceSummary(routable=0, starting=1, unhealthy=0), deploying, 2)


def test_capi_current_leaves_a_canary_that_is_still_starting_alone():
    """Two canary deploys, one dispatch: the first canary's process keeps its starting
    instance (a step with no room in flight writes nothing)."""
    state = run_capi("capi-current", [Push(1), Deploy(strategy="canary"), Deploy(strategy="canary"), Tick()])
    assert state.process(1).instances == ("STARTING",)
