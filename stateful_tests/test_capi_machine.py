"""The Hypothesis machine run as an ordinary pytest test.

Against the fixed design every property must hold over random interleavings
(the ``ci`` profile keeps it quick; ``DEPLOYSPEC_PROFILE=thorough`` hunts longer).
Against the seed's design the same machine must find the seed's bug, which
shows the machine can fail.
"""

import pytest
from deployspec.stateful_tests.machine import PropertyViolated, build_machine
from hypothesis import HealthCheck, settings
from hypothesis.stateful import run_state_machine_as_test

from deployspec.adapter import ReferenceAdapter
from deployspec.models import get_model
from deployspec.profiles import chosen
from deployspec.validation import validator as strict_validator

CAPI = get_model("capi")


def machine_for(variant: str, properties=None):
    v = CAPI.variant(variant)
    return build_machine(CAPI, lambda: ReferenceAdapter(CAPI, v), properties or CAPI.properties,
                         CAPI.default_config(v))


SafeMachine = machine_for("capi-safe")
TestCapiSafe = SafeMachine.TestCase
# deployspec's profile (DEPLOYSPEC_PROFILE), whatever profile the run loaded for its other tests;
# every health check off, as Hypothesis's own TestCase settings have them
TestCapiSafe.settings = chosen(suppress_health_check=list(HealthCheck))


def test_seed_design_is_caught():
    machine = machine_for("capi-2022", [CAPI.property("single_active_deployment")])
    with pytest.raises(PropertyViolated) as info:
        run_state_machine_as_test(machine, settings=settings(chosen(), max_examples=200, database=None))
    assert info.value.violation.property == "single_active_deployment"


def test_observations_match_the_published_schema():
    schema = CAPI.schema()
    validator = strict_validator(schema)  # as the entrances do: an integer written 2.0 is no integer
    base = machine_for("capi-2022")

    class Validating(base):
        def do(self, action):
            try:
                super().do(action)
            except PropertyViolated:
                pass  # properties are not under test here; the schema is
            validator.validate(self.session.obs)

        def teardown(self):
            self.session.adapter.close()

    run_state_machine_as_test(Validating, settings=settings(chosen(), max_examples=30, database=None))
