"""How a replay walks a trace (deployspec.replay.replay): it stops at the violation, and a
trace whose violation came from settling alone is settled, not played. Found missing by a
mutation pass: both mutants survived every replay test and were caught only indirectly,
through the contract's shortening, in the full suite."""

from __future__ import annotations

import copy
import json

import pytest

from deployspec.replay import replay

from .cli_runs import SEED, run


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


def _edited(tmp_path, edit) -> str:
    trace = _seed()
    edit(trace)
    path = tmp_path / "edited.json"
    path.write_text(json.dumps(trace))
    return str(path)


def _set(where: dict, key: str, value):
    where[key] = value


@pytest.mark.parametrize("edit, note", [
    (lambda t: None, None),
    (lambda t: _set(t["initial"], "app", {"droplet": 0, "started": True}),
     "from another start than recorded: the file, or the design or model it replays on, changed since it was saved"),
    (lambda t: _set(t["steps"][2]["observation"], "deployments", []),
     "departs from the recorded steps at step 2: the file, or the design or model it replays on, changed since it was saved"),
    (lambda t: _set(t["steps"][1], "rejected", "refused"),
     "departs from the recorded steps at step 1: the file, or the design or model it replays on, changed since it was saved"),
], ids=["as-recorded", "start", "observation", "refusal"])
def test_a_replay_on_the_recorded_design_says_where_it_parts_from_the_recorded_steps(capsys, tmp_path, edit, note):
    """The replay follows the recorded actions; a file whose recorded story it does not
    follow (edited, or the model changed) reproduced as if nothing differed, and its start
    was said to be the design's "own" (it is the recorded design's)."""
    path = _edited(tmp_path, edit)
    status, out, _ = run(capsys, "replay", path)
    on = "capi-2022" + (f" ({note})" if note else "")
    assert status == 1 and out.startswith(f"{path}: reproduces on {on}: app_stays_available at step 5 ")
    # and --json says where, in a field of its own (a CI script read it out of the message)
    status, out, _ = run(capsys, "replay", path, "--json")
    (said,) = json.loads(out)["files"]
    assert said["departs_at"] == (int(note.split("at step ")[1].split(":")[0]) if note and "departs" in note else None)
    # on another design the replay's story is its own: nothing to say
    status, out, _ = run(capsys, "replay", path, "--variant", "capi-current")
    assert "parts from" not in out and "changed since" not in out


def _recorded_on_an_implementation(trace: dict, factory: str) -> dict:
    """The seed trace as a contract run on the ``--python`` object ``factory`` records it."""
    trace = {**trace, "engine": "contract", "variant": "implementation",
             "extra": {"implementation": {"python": factory, "name": None, "reference": None}}}
    return trace


def test_a_replay_on_the_implementation_it_was_recorded_on_says_where_it_parts_from_the_recorded_steps(
        capsys, tmp_path):
    """A contract trace whose steps a user edited replayed on the same implementation as it
    holds, with no word of the edit: it is said, as on a design; on another implementation
    the recorded answers are not its own, and nothing is said."""
    factory = "deployspec.contract.examples:capi_2022"
    trace = _recorded_on_an_implementation(_seed(), factory)
    trace["steps"][3]["action"] = {"type": "scale", "instances": 2}  # (refused mid-deployment)
    path = tmp_path / "edited.json"
    path.write_text(json.dumps(trace))
    status, out, _ = run(capsys, "replay", str(path), "--python", factory, "--json")
    (said,) = json.loads(out)["files"]
    assert status == 0 and said["outcome"] == "does_not_reproduce" and said["departs_at"] == 3
    assert ("(departs from the recorded steps at step 3: the file, or the implementation, changed since it "
            "was saved)") in said["message"]
    status, out, _ = run(capsys, "replay", str(path), "--python", "deployspec.contract.examples:capi_safe", "--json")
    (said,) = json.loads(out)["files"]
    assert status == 0 and said["departs_at"] is None and "departs" not in said["message"]
