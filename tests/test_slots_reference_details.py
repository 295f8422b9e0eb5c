"""Details of the slots reference designs that no committed counterexample or property
verdict pins. Each was found by a hand-made mutant of ``reference/slots`` that the rest
of the suite let through; each test asserts what App Service (or the registry) does."""

from __future__ import annotations

import pytest
from deployspec.reference.core import Rejected
from deployspec.reference.slots import VARIANTS
from deployspec.reference.slots.actions import CrashRetry, Push, Recycle, SetImage
from deployspec.reference.slots.model import SlotsConfig

from .helpers import run_slots as run


@pytest.mark.parametrize("action", [Recycle, CrashRetry])
def test_a_host_move_or_retry_of_an_instance_the_plan_does_not_have_is_refused(action):
    """The plan's instance count decides how many containers a slot runs (scale_out adds
    one to every slot); a host move or crash retry names one of them: past the last one
    it is refused and starts no container."""
    tag = VARIANTS["slots-pipeline-tag"]
    state = run(tag, [Push(healthy=False), SetImage("production")])
    n = len(state.site("production").instances)
    assert isinstance(tag.step(state, action("production", n)), Rejected)
    assert not isinstance(tag.step(state, action("production", n - 1)), Rejected)


def test_validate_fails_while_any_staging_instance_is_not_running():
    """The pipeline's check of staging passes only if every instance runs: a host move that
    pulled a newer, broken build onto one instance of a slot on :release fails it."""
    from deployspec.reference.slots.actions import Validate

    tag = VARIANTS["slots-pipeline-tag"]
    state = run(tag, [Push(), SetImage("staging"), Push(healthy=False), Recycle("staging", 1)])
    assert [i.status for i in state.site("staging").instances] == ["running", "crash_loop"]
    assert isinstance(tag.step(state, Validate()), Rejected)


def test_a_state_after_a_swap_with_a_sticky_setting_round_trips_through_its_observation():
    """The observation says which site answers to production (a completed swap trades
    them) and which settings are deployment slot settings (sticky); a state built from it
    is the state observed."""
    from deployspec.reference.slots import from_observation, observe
    from deployspec.reference.slots.actions import Swap, Validate

    webhook = VARIANTS["slots-webhook-tag"]
    state = run(webhook, [Push(), SetImage("production"), Push(), SetImage("staging"), Validate(), Swap()],
                SlotsConfig(ci_sticky=True, start="webhook"))
    assert (state.last_swap, state.site("production").name) == ("completed", "B")
    obs = observe(state)
    assert {"name": "DOCKER_ENABLE_CI", "value": True, "sticky": True} in obs["slots"]["production"]["settings"]
    assert from_observation(obs) == state
