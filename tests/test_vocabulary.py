"""One vocabulary: the states and statuses the models write, the properties read and
the published observation schemas admit are the same words (each is spelled in three
places; a state added to one alone would go unexplored, unjudged or refused)."""

from deployspec.reference.capi import state as capi_state
from deployspec.reference.slots import state as slots_state
from deployspec.spec import capi as capi_spec

from deployspec.models import get_model


def test_the_capi_models_words_are_the_schemas():
    props = get_model("capi").schema()["properties"]
    process = props["processes"]["items"]["properties"]
    deployment = props["deployments"]["items"]["properties"]
    assert set(process["instances"]["items"]["enum"]) == set(capi_state.INSTANCE_STATES)
    assert set(deployment["state"]["enum"]) == set(capi_state.DEPLOYMENT_STATES)
    assert set(deployment["status_value"]["enum"]) == set(capi_state.STATUS_VALUES)
    assert set(deployment["status_reason"]["enum"]) == set(capi_state.STATUS_REASONS)


def test_the_capi_properties_read_the_models_states():
    assert set(capi_spec.PROGRESSING_STATES) == capi_state.PROGRESSING_STATES
    assert set(capi_spec.ACTIVE_STATES) == capi_state.ACTIVE_STATES


def test_the_slots_models_words_are_the_schemas():
    schema = get_model("slots").schema()
    statuses = [set(node["enum"]) for node in _walk(schema) if "enum" in node and "crash_loop" in node["enum"]]
    assert statuses == [set(slots_state.INSTANCE_STATUSES)]
    slots = [set(node["enum"]) for node in _walk(schema) if "enum" in node and "staging" in node["enum"]]
    assert slots and all(s == set(slots_state.SLOT_NAMES) for s in slots)


def _walk(node):
    if isinstance(node, dict):
        yield node
        for value in node.values():
            yield from _walk(value)
    elif isinstance(node, list):
        for value in node:
            yield from _walk(value)
