import json
import os
from pathlib import Path

import pytest

from deployspec import traces
from deployspec.models import UsageError
from deployspec.replay import replay

SEED = Path(__file__).parent.parent / "counterexamples" / "capi" / "capi-2022--app_stays_available--a940739cf1.json"


def test_save_is_idempotent_and_never_overwrites(tmp_path):
    trace = traces.load(SEED)
    first = traces.save(trace, tmp_path)
    mtime = first.stat().st_mtime_ns
    again = traces.save(trace | {"seed": 99}, tmp_path)  # same finding (same actions)
    assert again == first and first.stat().st_mtime_ns == mtime
    assert json.loads(first.read_text())["seed"] == trace["seed"]
    other = dict(trace, steps=trace["steps"][:-1])
    assert traces.save(other, tmp_path) != first
    assert sorted(p.name for p in tmp_path.iterdir() if p.name.startswith(".tmp")) == []


def test_save_leaves_no_partial_file_on_failure(tmp_path, monkeypatch):
    trace = traces.load(SEED)

    def boom(*a, **k):
        raise OSError("disk full")

    monkeypatch.setattr(os, "link", boom)
    with pytest.raises(OSError):
        traces.save(trace, tmp_path)
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize(
    "content, message",
    [
        ("{not json", "not JSON"),
        ("[]", "not a deployspec trace"),
        ('{"format": "deployspec-trace"}', "not a deployspec trace"),
    ],
)
def test_malformed_files_are_one_line_errors(tmp_path, content, message):
    f = tmp_path / "t.json"
    f.write_text(content)
    with pytest.raises(UsageError) as info:
        traces.load(f)
    assert message in str(info.value) and "\n" not in str(info.value)


def test_other_bad_inputs(tmp_path):
    with pytest.raises(UsageError, match="no such file"):
        traces.load(tmp_path / "missing.json")
    with pytest.raises(UsageError, match="is a directory"):
        traces.load(tmp_path)
    data = json.loads(SEED.read_text())
    for change, message in [
        ({"model": "nomad"}, "unknown model"),
        ({"property": "always_green"}, "unknown property"),
    ]:
        f = tmp_path / "bad.json"
        f.write_text(json.dumps(data | change))
        with pytest.raises(UsageError, match=message):
            traces.load(f)
    data["steps"][0]["action"] = {"type": "teleport"}
    f.write_text(json.dumps(data))
    with pytest.raises(UsageError, match="step 0: unknown action type"):
        traces.load(f)


def test_replay_on_another_variant_skips_rejected_actions():
    trace = traces.load(SEED)
    trace = dict(trace, steps=trace["steps"] + [{"action": {"type": "runtime", "process": 9}, "observation": {}}])
    outcome = replay(trace, variant="capi-safe")
    assert not outcome.reproduced
    assert outcome.session.steps[-1]["rejected"] == "no web process P9"
