"""Every committed trace, exported to ITF, is what typed ITF readers load: only ITF's
forms (no null, float or ``#unserializable``; records keyed by field names) and one
type per variable from state to state (Quint's ``ofItfNormalized``, itf-rs into Rust
types). The export wrote null as ``#unserializable`` and a nullable value bare beside
it, the registry's tags as a record, and actions as records of different shapes."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from deployspec import render_itf, traces

ROOT = Path(__file__).parent.parent
TRACES = sorted([*ROOT.glob("counterexamples/**/*.json"), *ROOT.glob("docs/explore-findings/*.json")])


class Mistyped(AssertionError):
    pass


def itf_type(v):
    """The type of an ITF value: a string for scalars, a tuple for the rest."""
    if isinstance(v, bool):
        return "bool"
    if isinstance(v, str):
        return "str"
    if isinstance(v, int):
        if abs(v) > render_itf.SAFE_INT:
            raise Mistyped(f"{v} is past 2**53 and not a #bigint")
        return "int"
    if isinstance(v, list):
        return ("seq", joined(itf_type(x) for x in v))
    if not isinstance(v, dict):
        raise Mistyped(f"{v!r} is no ITF value")
    special = [k for k in v if k.startswith("#")]
    if special and len(v) > 1:
        raise Mistyped(f"{sorted(v)}: {special[0]} stands alone; a record's fields may not start with #")
    if "#bigint" in v:
        if not isinstance(v["#bigint"], str):
            raise Mistyped(f"bad #bigint {v}")
        int(v["#bigint"])
        return "int"
    if "#tup" in v:
        return ("tup", tuple(itf_type(x) for x in v["#tup"]))
    if "#set" in v:
        return ("set", joined(itf_type(x) for x in v["#set"]))
    if "#map" in v:
        return ("map", joined(itf_type(k) for k, _ in v["#map"]), joined(itf_type(x) for _, x in v["#map"]))
    if set(v) == {"tag", "value"} and isinstance(v["tag"], str):
        return ("variant", ((v["tag"], itf_type(v["value"])),))
    if special:
        raise Mistyped(f"{special[0]} is no ITF form")
    return ("rec", tuple(sorted((k, itf_type(x)) for k, x in v.items())))


def joined(types, start=None):
    out = start
    for t in types:
        out = join(out, t)
    return out


def join(a, b):
    """The one type both are (None: not known yet, as an empty list's items)."""
    if a is None or a == b:
        return b
    if b is None:
        return a
    if isinstance(a, tuple) and isinstance(b, tuple) and a[0] == b[0]:
        kind = a[0]
        if kind in ("seq", "set"):
            return (kind, join(a[1], b[1]))
        if kind == "map":
            return (kind, join(a[1], b[1]), join(a[2], b[2]))
        if kind == "tup" and len(a[1]) == len(b[1]):
            return (kind, tuple(join(x, y) for x, y in zip(a[1], b[1])))
        if kind == "rec" and [k for k, _ in a[1]] == [k for k, _ in b[1]]:
            return (kind, tuple((k, join(x, y)) for (k, x), (_, y) in zip(a[1], b[1])))
        if kind == "variant":
            tags = dict(a[1])
            for tag, t in b[1]:
                tags[tag] = join(tags.get(tag), t)
            return (kind, tuple(sorted(tags.items())))
    raise Mistyped(f"{a} and {b} are different types")


@pytest.mark.parametrize("path", TRACES, ids=lambda p: p.name)
def test_an_exported_trace_gives_each_variable_one_type(path):
    itf = render_itf.render(traces.load(path), source=str(path))
    json.dumps(itf, allow_nan=False)
    assert all(isinstance(v, str) for v in itf["#meta"].values())  # as itf-rs reads them
    for state in itf["states"]:
        assert set(state) - {"#meta"} == set(itf["vars"])
    for var in itf["vars"]:
        joined(itf_type(state[var]) for state in itf["states"])


def test_the_type_check_finds_what_the_export_wrote_before():
    """The checker itself: the old writing of each case is refused."""
    with pytest.raises(Mistyped):
        joined([itf_type(3), itf_type({"#unserializable": "null"})])
    with pytest.raises(Mistyped):
        joined([itf_type({"type": "scale", "instances": 2}), itf_type({"type": "tick"})])
    with pytest.raises(Mistyped):
        itf_type(None)
    with pytest.raises(Mistyped):
        itf_type({"#set": [1], "x": 2})
    assert joined([itf_type({"tag": "None", "value": {"#tup": []}}), itf_type({"tag": "Some", "value": 3})]) == (
        "variant", (("None", ("tup", ())), ("Some", "int")))
    assert joined([itf_type([]), itf_type([1])]) == ("seq", "int")


def test_records_keep_one_shape_when_a_field_the_schema_does_not_require_is_left_out():
    """A record whose schema leaves a field optional, written with it by some and without it
    by others, made records of two shapes. (capi's deployments once left max_in_flight,
    strategy… optional; the shipped schemas now require every member, so a schema of the
    export's own shape is used here.)"""
    schema = {"type": "array", "items": {"type": "object", "required": ["id"],
                                         "properties": {"id": {"type": "integer"}, "strategy": {"type": "string"}}}}
    written = [[{"id": 0}], [{"id": 0, "strategy": "rolling"}], [{"id": 0, "strategy": None}]]
    types = joined(itf_type(render_itf.value(records, schema)) for records in written)
    kind, record = types
    assert kind == "seq" and record[0] == "rec"
    fields = dict(record[1])
    assert fields["strategy"] == ("variant", (("None", ("tup", ())), ("Some", "str")))
