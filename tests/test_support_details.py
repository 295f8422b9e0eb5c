"""Details of the small support modules a mutation pass found unpinned.

Mutated by hand (session 21): ``validation.py`` (9 mutants), ``batches.py`` (10),
``user_code.py`` (4), ``adapter.py`` (2) and ``scenario.py`` (7); 18 survived the
suite, 14 of them are pinned here. Equivalent: the pickle protocol of a batch and the
cache of field getters per class (speed only); ``batches``' ``isinstance(cls, type)``
(``obj.__class__`` is always a type) and its ``alias != name`` test (the constructor
is called with the values by position, so a renamed private field rebuilds the same).
"""

from __future__ import annotations

import json
import os
import pickle
import sys
from pathlib import Path

import attrs
import pytest

from deployspec import batches, traces, validation
from deployspec.models import get_model
from deployspec.replay import replay
from deployspec.scenario import record
from deployspec.user_code import cwd_first_on_path

from .helpers import SEED_STORY

CAPI = get_model("capi")
COUNTEREXAMPLES = Path(__file__).parent.parent / "counterexamples" / "capi"


# validation: an integer is written as one, and a schema error reads as one line


@pytest.mark.parametrize("value, integer", [(2, True), (0, True), (True, False), (False, False), (2.0, False)])
def test_an_integer_must_be_written_as_one_not_as_a_bool_or_a_float(value, integer):
    """``true`` would index a list as 1, ``2.0`` would print as ``P2.0``."""
    assert validation.validator({"type": "integer"}).is_valid(value) is integer


def _error(schema: dict, instance) -> object:
    return next(validation.validator(schema).iter_errors(instance))


def test_a_schema_message_spread_over_lines_is_read_as_one_line():
    error = _error({"type": "string"}, {"a": 1, "b": [1, 2]})
    error.message = "first line\n  second\tline"
    assert validation.explained(error) == "first line second line"


def test_a_message_as_long_as_the_limit_is_kept_whole_and_a_longer_one_clipped_to_it():
    error = _error({"type": "string"}, 1)
    error.message = "x" * 40
    assert validation.explained(error, limit=40) == "x" * 40
    error.message = "x" * 41
    clipped = validation.explained(error, limit=40)
    assert clipped == "x" * 39 + "…" and len(clipped) == 40


@pytest.mark.parametrize("instance, said", [
    (None, "null is not of type 'integer'"),
    ({"a": True, "b": [0.5]}, '{"a": true, "b": [0.5]} is not of type \'integer\''),
    ("x", "'x' is not of type 'integer'"),  # a string is quoted as a name, as before
])
def test_the_value_a_message_begins_with_is_spelled_as_json_spells_it(instance, said):
    assert validation.explained(_error({"type": "integer"}, instance)) == said


@pytest.mark.parametrize("schema, instance, said", [
    ({"enum": [None, True, 1, "x", [1, "y"]]}, False, "false is not one of [null, true, 1, 'x', [1, \"y\"]]"),
    ({"enum": ["STARTING", "RUNNING"]}, None, "null is not one of ['STARTING', 'RUNNING']"),
    ({"enum": ["STARTING", "RUNNING"]}, "UP", "'UP' is not one of ['STARTING', 'RUNNING']"),
    ({"const": None}, True, "null was expected"),
    ({"const": "action"}, None, "'action' was expected"),
])
def test_what_enum_and_const_expect_is_spelled_as_the_value_they_got(schema, instance, said):
    """jsonschema writes both sides in Python (``False is not one of [None, True]``), which
    the leading value's JSON spelling would otherwise mix with (``false … [None, True]``)."""
    assert validation.explained(_error(schema, instance)) == said


def test_a_value_json_cannot_write_keeps_pythons_spelling(monkeypatch):
    """Nested past what the encoder takes (or not JSON at all): the message as jsonschema wrote it."""
    def too_deep(*args, **kwargs):
        raise RecursionError("maximum recursion depth exceeded")

    monkeypatch.setattr(validation.json, "dumps", too_deep)
    assert validation.explained(_error({"type": "integer"}, [None])) == "[None] is not of type 'integer'"
    monkeypatch.undo()
    assert validation.explained(_error({"type": "integer"}, {1, 2})) == "{1, 2} is not of type 'integer'"


# batches: every attrs class either rebuilt from its field values or pickled the default way


@attrs.frozen
class NoFields:
    pass


@attrs.frozen
class OneField:
    value: int


@attrs.frozen
class KeywordOnly:
    a: int
    b: int = attrs.field(kw_only=True, default=0)


def _plus_one(n: int) -> int:
    return n + 1


@attrs.frozen
class Converted:
    """Rebuilt by its constructor, its field would be converted twice."""

    a: int
    b: int = attrs.field(converter=_plus_one, default=0)


@attrs.frozen
class Aliased:
    a: int
    _b: int = 0


@pytest.mark.parametrize("value", [
    NoFields(), OneField(7), OneField((1, 2)), KeywordOnly(1, b=2), Converted(1, 2), Aliased(1, 2),
])
def test_every_kind_of_attrs_class_comes_back_equal(value):
    """A class whose constructor cannot take its fields by position under their own
    names (keyword-only, converted, renamed by attrs) goes the default way; a class of
    one field or none is rebuilt all the same."""
    assert pickle.loads(batches.dumps([value, value])) == [value, value]


# user_code: the current folder first on sys.path, once


def test_the_current_folder_goes_first_on_the_path(monkeypatch, tmp_path):
    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(sys, "path", ["/somewhere", "/else"])
    cwd_first_on_path()
    assert sys.path == [os.getcwd(), "/somewhere", "/else"]


@pytest.mark.parametrize("already", ["", "cwd"])
def test_a_path_that_already_finds_the_current_folder_is_left_as_it_is(monkeypatch, tmp_path, already):
    """``""`` (as ``python -m`` and the REPL put it) means the current folder too."""
    monkeypatch.chdir(tmp_path)
    entry = os.getcwd() if already == "cwd" else ""
    monkeypatch.setattr(sys, "path", ["/somewhere", entry])
    cwd_first_on_path()
    assert sys.path == ["/somewhere", entry]


# scenario: a named story, recorded as told


def _story_of(name: str) -> tuple[dict, list]:
    trace = traces.load(COUNTEREXAMPLES / name)
    return trace, [CAPI.action(s["action"]) for s in trace["steps"][: trace["settle_from"]]]


def test_a_scenario_lets_the_platform_settle_unless_told_not_to():
    """The violation of this counterexample shows only while the platform settles."""
    trace, story = _story_of("capi-2022--deployment_converges--2cffbe2128.json")
    prop = CAPI.property(trace["property"])
    config = CAPI.config_from_json(trace["config"])
    settled = record(CAPI, "capi-2022", config, prop, story, title="settles")
    assert settled["settle_from"] == len(story) and len(settled["steps"]) > len(story)
    assert replay(settled).reproduced
    with pytest.raises(ValueError, match="settles: deployment_converges holds on capi-2022"):
        record(CAPI, "capi-2022", config, prop, story, title="settles", settle=False)


def test_a_scenario_ends_at_the_step_that_breaks_the_property():
    """Actions told after the violation are not performed (nor recorded)."""
    prop = CAPI.property("app_stays_available")
    config = CAPI.default_config(CAPI.variant("capi-2022"))
    story = SEED_STORY + [CAPI.action({"type": "push", "instances": 1}), CAPI.action({"type": "deploy"})]
    trace = record(CAPI, "capi-2022", config, prop, story, title="the seed, told on")
    assert len(trace["steps"]) == len(SEED_STORY)
    assert trace["violation"]["step"] == len(SEED_STORY) - 1 and trace["settle_from"] is None


def test_a_scenario_carries_a_note_only_when_one_is_given():
    prop = CAPI.property("app_stays_available")
    config = CAPI.default_config(CAPI.variant("capi-2022"))
    bare = record(CAPI, "capi-2022", config, prop, SEED_STORY, title="the seed")
    noted = record(CAPI, "capi-2022", config, prop, SEED_STORY, title="the seed", note="as filed")
    assert "note" not in bare and noted["note"] == "as filed"
    assert json.loads(json.dumps(bare)) == bare
