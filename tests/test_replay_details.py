"""How a replay walks a trace (deployspec.replay.replay): it stops at the violation, and a
trace whose violation came from settling alone is settled, not played. Found missing by a
mutation pass: both mutants survived every replay test and were caught only indirectly,
through the contract's shortening, in the full suite."""

from __future__ import annotations

import copy
import json

from deployspec.replay import replay

from .cli_runs import SEED


def _seed() -> dict:
    return json.loads(SEED.read_text())


def test_a_replay_sends_nothing_after_the_violation():
    """An implementation is sent the actions up to the one that breaks the property, no more
    (the verdict would not change; what the implementation is made to do would)."""
    trace = _seed()
    bad = trace["violation"]["step"]
    trace["steps"] = trace["steps"][:bad + 1] + copy.deepcopy(trace["steps"][:3])  # more after it
    outcome = replay(trace)
    assert outcome.reproduced and outcome.violation.step == bad
    assert len(outcome.session.steps) == bad + 1 and outcome.session.settle_from is None


def test_a_trace_broken_by_settling_alone_is_settled_not_played():
    """``settle_from`` 0: every recorded step is the platform's settling, so the replay
    performs none of them as recorded actions and lets the platform settle (a file like
    this one, with a user's actions after it, is refused on load: test_trace_details)."""
    trace = _seed()
    trace["settle_from"] = 0
    outcome = replay(trace)
    assert outcome.session.settle_from == 0
    assert outcome.session.steps == []  # no push, deploy…: capi's start has no app, so nothing settles
    assert not outcome.reproduced  # (capi's start has no app: settling does nothing)
