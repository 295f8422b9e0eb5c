"""Trace files changed at random: every command that reads one answers with a verdict
or one line (exit 2), never a traceback.

The hand-written cases (test_traces.py) cover what we thought of; here Hypothesis
takes committed counterexamples of both models and deletes, replaces, retypes or
changes values anywhere in them (an observation's field, an action's argument, the
configuration, the violation) and drops, repeats or swaps steps, as a hand-edited,
truncated or foreign file would.
``DEPLOYSPEC_PROFILE=thorough`` tries 2,000 files per command."""

from __future__ import annotations

import contextlib
import io
import json
import tempfile
from pathlib import Path

from hypothesis import given
from hypothesis import strategies as st

from deployspec.cli import main

ROOT = Path(__file__).resolve().parents[1] / "counterexamples"
#: a few committed traces: a short and a settled capi one, a slots one
SOURCES = [json.loads(p.read_text()) for p in (
    ROOT / "capi" / "capi-2022--app_stays_available--a940739cf1.json",
    next((ROOT / "capi").glob("capi-2022--deployment_converges--*.json")),
    next((ROOT / "slots").glob("slots-webhook-tag--*.json")),
)]

JSON_VALUES = st.recursive(
    st.none() | st.booleans() | st.integers(-10**6, 10**6) | st.floats(allow_nan=False) | st.text(max_size=12),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=8), inner, max_size=3),
    max_leaves=6,
)


def _at(node, path):
    for key in path:
        node = node[key]
    return node


def _paths(node, here=()):
    """Every place in a JSON tree, as the keys and indices leading to it."""
    yield here
    if isinstance(node, dict):
        for k, v in node.items():
            yield from _paths(v, (*here, k))
    elif isinstance(node, list):
        for i, v in enumerate(node):
            yield from _paths(v, (*here, i))


#: words a trace is made of (names of variants, properties, states, actions), so that a
#: change often stays a well-formed trace and reaches the replay, not only the schema
WORDS = sorted({v for t in SOURCES for p in _paths(t) if p for v in [_at(t, p)] if isinstance(v, str)}
               | {"capi-safe", "capi-current", "capi-pr3072", "slots-pipeline-immutable", "tick", "deploy",
                  "cancel", "CANCELING", "DEPLOYED", "single_active_deployment", "rollback_restores_previous"})


@st.composite
def damaged_traces(draw):
    trace = json.loads(json.dumps(draw(st.sampled_from(SOURCES))))
    for _ in range(draw(st.integers(1, 3))):
        places = [p for p in _paths(trace) if p]
        # half the time a place outside the observations (the header, the violation, an
        # action), which are few among the hundreds of observation fields
        header = [p for p in places if "observation" not in p and p[0] != "initial"]
        path = draw(st.sampled_from(draw(st.sampled_from([places, header]))))
        parent = _at(trace, path[:-1])
        value = parent[path[-1]]
        how = draw(st.sampled_from(["delete", "replace", "retype", "tweak", "tweak", "steps"]))
        if how == "delete":
            del parent[path[-1]]
        elif how == "replace":
            parent[path[-1]] = draw(JSON_VALUES)
        elif how == "retype":  # the same value as another JSON type: "3" for 3, [x] for x
            parent[path[-1]] = draw(st.sampled_from([json.dumps(value), [value], {"value": value}]))
        elif how == "tweak":  # a value of the same kind: another count, name or flag
            if isinstance(value, bool):
                parent[path[-1]] = not value
            elif isinstance(value, int):
                parent[path[-1]] = draw(st.sampled_from([0, 1, 2, 3, value + 1, value - 1, 64, 65, 10**4]))
            elif isinstance(value, str):
                parent[path[-1]] = draw(st.sampled_from(WORDS))
        elif isinstance(trace.get("steps"), list) and trace["steps"]:  # one left out, repeated or moved
            steps = trace["steps"]
            i = draw(st.integers(0, len(steps) - 1))
            j = draw(st.integers(0, len(steps) - 1))
            change = draw(st.sampled_from(["drop", "repeat", "swap"]))
            if change == "drop":
                del steps[i]
            elif change == "repeat":
                steps.insert(j, steps[i])
            else:
                steps[i], steps[j] = steps[j], steps[i]
    return trace


def _run(argv: list[str]) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        status = main(argv)
    return status, out.getvalue(), err.getvalue()


def _judged(argv: list[str], trace: dict) -> None:
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "damaged.json"
        path.write_text(json.dumps(trace))
        status, out, err = _run([a.replace("FILE", str(path)) for a in argv])
    assert status in (0, 1, 2), (status, out, err)
    assert "Traceback" not in err + out
    if status == 2:
        assert out == "" and err.startswith("deployspec: error: ") and err.count("\n") == 1, (out, err)


@given(damaged_traces())
def test_replay_of_a_damaged_trace_is_a_verdict_or_one_line(trace):
    _judged(["replay", "FILE"], trace)


@given(damaged_traces(), st.sampled_from(["capi-safe", "slots-pipeline-immutable", "capi-2022"]))
def test_replay_of_a_damaged_trace_on_another_design_is_a_verdict_or_one_line(trace, variant):
    _judged(["replay", "FILE", "--variant", variant], trace)


@given(damaged_traces(), st.sampled_from(["text", "svg", "html", "itf"]))
def test_show_of_a_damaged_trace_is_a_picture_or_one_line(trace, fmt):
    _judged(["show", "FILE", "--format", fmt], trace)
