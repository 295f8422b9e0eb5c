"""The Hypothesis machine over the App Service slots model, as ordinary pytest tests.

Against ``slots-pipeline-immutable`` every property must hold over random
interleavings of pushes, deliveries, deployments, swaps, restarts, recycles,
scale-outs and crash retries. Against cobalt's pre-#324 design the same machine
must catch the webhook redeploying production, which shows the machine can fail.
"""

import pytest
from deployspec.stateful_tests.machine import PropertyViolated, build_machine
from hypothesis import HealthCheck, Phase, settings
from hypothesis.stateful import run_state_machine_as_test

from deployspec.adapter import ReferenceAdapter
from deployspec.models import get_model
from deployspec.profiles import chosen
from deployspec.validation import validator as strict_validator

SLOTS = get_model("slots")


def machine_for(variant: str, properties=None, config=None):
    v = SLOTS.variant(variant)
    return build_machine(SLOTS, lambda: ReferenceAdapter(SLOTS, v),
                         SLOTS.properties if properties is None else properties,
                         config or SLOTS.default_config(v), name=f"Slots_{variant.replace('-', '_')}")


TestSlotsImmutable = machine_for("slots-pipeline-immutable").TestCase
# deployspec's profile (DEPLOYSPEC_PROFILE), whatever profile the run loaded for its other tests;
# every health check off, as Hypothesis's own TestCase settings have them
TestSlotsImmutable.settings = chosen(suppress_health_check=list(HealthCheck))


def test_immutable_holds_with_sticky_ci_setting():
    config = SLOTS.config_type(ci_sticky=True)
    run_state_machine_as_test(machine_for("slots-pipeline-immutable", config=config),
                              settings=settings(chosen(), max_examples=30, database=None))


def test_webhook_design_is_caught():
    machine = machine_for("slots-webhook-tag", [SLOTS.property("push_does_not_touch_production")])
    with pytest.raises(PropertyViolated) as info:
        # generation only: catching it is the point here, shrinking is the engine's job
        run_state_machine_as_test(machine, settings=settings(chosen(), max_examples=200, database=None,
                                                             phases=(Phase.generate,)))
    assert info.value.violation.property == "push_does_not_touch_production"


def test_observations_match_the_published_schema():
    validator = strict_validator(SLOTS.schema())  # as the entrances do: an integer written 2.0 is no integer
    base = machine_for("slots-webhook-tag", properties=())

    class Validating(base):
        def do(self, action):
            super().do(action)
            validator.validate(self.session.obs)

    run_state_machine_as_test(Validating, settings=settings(chosen(), max_examples=30, database=None))
