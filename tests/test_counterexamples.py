"""The regression suite: every committed counterexample still reproduces on the
variant it was found on, and never on the fixed design of its model."""

from pathlib import Path

import pytest

from deployspec import traces
from deployspec.replay import replay

ROOT = Path(__file__).parent.parent / "counterexamples"
FILES = sorted(ROOT.rglob("*.json"))
FIXED = {"capi": "capi-safe", "slots": "slots-pipeline-immutable"}


def test_there_are_committed_counterexamples():
    assert any(f.parent.name == "capi" for f in FILES)


@pytest.mark.parametrize("path", FILES, ids=lambda p: p.name)
def test_reproduces_on_recorded_variant(path):
    trace = traces.load(path)
    outcome = replay(trace)
    assert outcome.reproduced, f"{path.name} no longer reproduces on {trace['variant']}"
    assert outcome.violation.step == trace["violation"]["step"]
    assert outcome.violation.cause == trace["violation"].get("cause"), "the property names another cause now"
    # what show and the pictures print is what replay says today: the message, each
    # observation and refusal, from the recorded start
    assert outcome.violation.message == trace["violation"]["message"]
    assert not outcome.started_elsewhere(trace) and outcome.departure(trace) is None


@pytest.mark.parametrize("path", FILES, ids=lambda p: p.name)
def test_does_not_reproduce_on_fixed_design(path):
    trace = traces.load(path)
    outcome = replay(trace, variant=FIXED[trace["model"]])
    assert not outcome.reproduced, outcome.violation
