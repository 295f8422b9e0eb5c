import pytest
from deployspec.reference.core import ActionError

from deployspec.models import get_model

CAPI = get_model("capi")


def test_every_offered_action_round_trips_through_json():
    obs = {"app": {"droplet": 0, "started": True}, "droplets": [{"id": 0, "healthy": True}],
           "processes": [{"id": 0, "droplet": 0, "instances": ["STARTING"]}],
           "deployments": [{"id": 0, "state": "DEPLOYING", "status_value": "ACTIVE",
                            "status_reason": "DEPLOYING", "deploying_process": 0, "droplet": 0,
                            "previous_droplet": 0, "owic": 1}]}
    config = CAPI.default_config()
    offered = CAPI.candidate_actions(obs, config)
    assert {a.kind for a in offered} >= {"runtime", "tick", "stage", "deploy", "cancel"}
    for action in offered:
        assert CAPI.action(action.to_json()) == action


@pytest.mark.parametrize(
    "data, message",
    [
        ([], "must be a JSON object"),
        ({"type": "teleport"}, "unknown action type 'teleport'"),
        ({"type": None}, "unknown action type null (known: "),
        ({"type": "scale"}, "lacks field 'instances'"),
        ({"type": "scale", "instances": "3"}, "must be an integer"),
        ({"type": "scale", "instances": True}, "must be an integer"),
        ({"type": "scale", "instances": -1}, "instances must be >= 0"),
        ({"type": "scale", "instances": 1, "colour": "red"}, "unknown field(s): colour"),
        ({"type": "tick", "failed": [0, "x"]}, "list of integers"),
        ({"type": "deploy", "max_in_flight": 0}, "max_in_flight must be >= 1"),
        ({"type": "deploy", "strategy": "blue-green"}, "strategy"),
    ],
)
def test_malformed_actions_are_named_errors(data, message):
    with pytest.raises(ActionError, match=None) as info:
        CAPI.action(data)
    assert message in str(info.value)
