"""What an implementation's observation is told when its model's schema refuses it: the
error inside a value that may be null where it is, and another model's observation named as
such (``protocol.ObservationChecker``, ``validation.inner``, ``protocol.of_another_model``)."""

from __future__ import annotations

from pathlib import Path

import pytest


@pytest.mark.parametrize("app, said", [
    # the float protocol.md warns of, inside a value that may also be null: said where it is
    ({"droplet": 2.0, "started": True}, "app/droplet: 2.0 is not of type 'integer'"),
    ({"droplet": 0}, "app: 'started' is a required property"),
    # no branch fits better than another: the value as a whole
    ("x", "app: 'x' is not valid under any of the given schemas"),
])
def test_an_observation_s_error_inside_a_value_that_may_be_null_is_said_where_it_is(app, said):
    from deployspec.contract.protocol import ObservationChecker
    from deployspec.models import get_model

    obs = {"app": app, "droplets": [], "processes": [], "deployments": []}
    assert ObservationChecker(get_model("capi")).check(obs) == said


class CapiOnly:
    """A capi controller that takes whatever configuration it is sent (as many do)."""

    def __init__(self):
        from deployspec.contract.examples import ReferenceImplementation

        self.inner = ReferenceImplementation("capi", "capi-safe")

    def reset(self, config):
        self.inner.reset({})

    def perform(self, action):
        return self.inner.perform(action)

    def observe(self):
        return self.inner.observe()


def test_an_implementation_answering_another_model_s_observations_is_told_which(capsys):
    """A slots trace replayed on a capi controller read as the controller's fault alone
    ("'registry' is a required property"): the fault now says whose observations it answers."""
    from deployspec import cli
    from deployspec.contract import harness

    trace = str(Path(__file__).parent.parent / "counterexamples" / "slots" / "scenario-1-rollback-by-swap.json")
    status = cli.main(["replay", trace, "--python", f"{__name__}:CapiOnly"])
    err = capsys.readouterr().err
    assert status == harness.FAULT
    assert ("(it is a capi observation: the implementation serves capi, and this run is of slots: "
            "contract --model capi checks it, and it replays capi traces)") in err
    assert len(err.strip().splitlines()) == 1
