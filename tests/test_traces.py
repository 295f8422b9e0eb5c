import json
import os
import re
from pathlib import Path

import pytest

from deployspec import trace_checks, traces
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
    with pytest.raises(UsageError, match=r"cannot save .*--a940739cf1\.json: disk full"):
        traces.save(trace, tmp_path)
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize(
    "content, message",
    [
        ("{not json", "not JSON"),
        ("[]", "not a deployspec trace"),
        ('{"format": "deployspec-trace"}', "not a deployspec trace"),
        # read one way here and another by a first-wins parser: neither
        ('{"format": "deployspec-trace", "format": "x"}', 'cannot be read: an object names "format" twice'),
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


def _mutated(tmp_path, change) -> Path:
    data = json.loads(SEED.read_text())
    change(data)
    f = tmp_path / "mutated.json"
    f.write_text(json.dumps(data))
    return f


@pytest.mark.parametrize(
    "text, message",
    [
        ("[" * 100_000 + "]" * 100_000, "cannot be read: it is nested too deeply"),
        ('{"a": ' + "1" * 5000 + "}", "cannot be read: Exceeds the limit (4300 digits)"),
    ],
)
def test_json_the_parser_refuses_is_a_one_line_error(tmp_path, text, message):
    f = tmp_path / "t.json"
    f.write_text(text)
    with pytest.raises(UsageError, match=re.escape(message)) as info:
        traces.load(f)
    assert "\n" not in str(info.value)


@pytest.mark.parametrize(
    "change, message",
    [
        (lambda d: d["steps"][0].__setitem__("observation", {}),
         "not a capi observation at steps/0/observation: 'app' is a required property"),
        (lambda d: d["steps"][1]["observation"]["processes"][0].__setitem__("instances", ["BOGUS"]),
         "at steps/1/observation/processes/0/instances/0: 'BOGUS' is not one of"),
        (lambda d: d.__setitem__("initial", {"app": None}), "not a capi observation at initial:"),
        (lambda d: d["violation"].__setitem__("step", 6), "violation.step 6 is beyond the trace's 6 step"),
        (lambda d: d.__setitem__("settle_from", 7), "settle_from 7 is beyond"),
        # JSON Schema's "integer" admits 2.0; Python would then slice the steps with a float
        (lambda d: d.__setitem__("settle_from", 2.0), "settle_from: 2.0 is not of type 'integer', 'null'"),
        (lambda d: d["violation"].__setitem__("step", 5.0), "violation/step: 5.0 is not of type 'integer'"),
        (lambda d: d["steps"][1]["observation"]["processes"][0].__setitem__("id", 0.0),
         "steps/1/observation/processes/0/id: 0.0 is not of type 'integer'"),
        # the value as the file spells it: true and null, not Python's True and None
        (lambda d: d["steps"][1]["observation"]["processes"][0].__setitem__("id", True),
         "steps/1/observation/processes/0/id: true is not of type 'integer'"),
        (lambda d: d["violation"].__setitem__("step", None), "violation/step: null is not of type 'integer'"),
        (lambda d: d["steps"][1]["observation"]["processes"][0].__setitem__("instances", {"0": None}),
         'processes/0/instances: {"0": null} is not of type \'array\''),
        (lambda d: d["steps"][0]["action"].__setitem__("instances", 10**18),
         "step 0: action 'push': field 'instances' is out of range"),
        (lambda d: d["config"].__setitem__("max_instances", 10**6), "bad config: max_instances must be at most 64"),
        (lambda d: d["steps"][2]["action"].__setitem__("strategy", "yolo"),
         "step 2: action 'deploy': 'strategy' must be in ('rolling', 'canary') (got 'yolo')"),
        (lambda d: d.__setitem__("property", "always_green"), "mutated.json: unknown property"),
        # two lanes of a picture drawn as one, a process hidden (ids are numbered, never reused)
        (lambda d: d["steps"][3]["observation"]["processes"][1].__setitem__("id", 0),
         "steps/3/observation/processes/1/id: items 0 and 1 have the same id 0"),
        (lambda d: d["steps"][3]["observation"]["deployments"].append(d["steps"][3]["observation"]["deployments"][0]),
         "steps/3/observation/deployments/1/id: items 0 and 1 have the same id 0"),
    ],
)
def test_what_the_renderers_and_replay_read_is_checked_when_loading(tmp_path, change, message):
    """A trace the schema of the file accepts but whose observations, violation
    step, actions or bounds would crash ``show`` or exhaust memory in ``replay``."""
    f = _mutated(tmp_path, change)
    with pytest.raises(UsageError) as info:
        traces.load(f)
    assert message in str(info.value) and "\n" not in str(info.value)


def test_save_replaces_a_broken_file_of_the_same_name_and_keeps_a_readable_one(tmp_path):
    trace = traces.load(SEED)
    path = traces.save(trace, tmp_path)
    good = path.read_text()
    path.write_text(good[:100])  # truncated, e.g. by a crash of some other tool
    assert traces.save(trace, tmp_path) == path and path.read_text() == good
    path.unlink()
    path.symlink_to(tmp_path / "gone.json")  # a dangling link
    assert traces.save(trace, tmp_path) == path and path.read_text() == good
    assert not path.is_symlink()
    other = json.loads(good)
    other["steps"] = other["steps"][:2]  # a readable trace of another finding under this name
    other["violation"]["step"] = 1
    path.write_text(json.dumps(other))
    assert traces.load(path)["steps"] == other["steps"]
    with pytest.raises(UsageError, match="the name is taken by another trace"):
        traces.save(trace, tmp_path)
    assert json.loads(path.read_text()) == other


def test_saved_files_get_the_umask_permissions_not_0600(tmp_path):
    old = os.umask(0o022)
    try:
        path = traces.save(traces.load(SEED), tmp_path)
    finally:
        os.umask(old)
    assert path.stat().st_mode & 0o777 == 0o644


def test_write_failures_leave_the_old_file_and_no_temporary(tmp_path, monkeypatch):
    from deployspec.files import write_atomically

    target = tmp_path / "picture.svg"
    target.write_text("old")
    target.chmod(0o640)

    def full(fd):
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(os, "fsync", full)
    with pytest.raises(OSError, match="No space left"):
        write_atomically(target, "new" * 1000)
    assert target.read_text() == "old" and [p.name for p in tmp_path.iterdir()] == ["picture.svg"]
    monkeypatch.undo()
    write_atomically(target, "new \ud800")  # a lone surrogate from JSON: escaped, not fatal
    assert target.read_text() == "new \\ud800" and target.stat().st_mode & 0o777 == 0o640


def test_replay_runs_under_the_trace_s_own_configuration(tmp_path):
    """A trace found with other bounds replays with those bounds: here a settle
    bound too short for the platform makes the settled property break."""
    trace = traces.load(SEED)
    deploying = dict(trace, property="deployment_converges", steps=trace["steps"][:3], settle_from=3,
                     violation={"step": 2, "message": "a deployment in progress when users stop"})
    assert not replay(deploying).reproduced  # 80 settle steps: it converges
    short = dict(deploying, config=trace["config"] | {"settle_steps": 0})
    outcome = replay(short)
    assert outcome.reproduced and "cut at settle_steps=0" in outcome.violation.message


@pytest.mark.parametrize("occupant", ["directory", "fifo", "link to a directory"])
def test_a_name_held_by_no_regular_file_is_refused_at_once_and_left_alone(tmp_path, occupant):
    """A FIFO there was read to compare (waiting for ever); a link to a directory
    was replaced by the trace, with the directory's mode (0755)."""
    trace = traces.load(SEED)
    name = tmp_path / f"{trace['variant']}--{trace['property']}--{traces.fingerprint(trace)}.json"
    elsewhere = tmp_path / "elsewhere"
    if occupant == "directory":
        name.mkdir()
    elif occupant == "fifo":
        os.mkfifo(name)
    else:
        elsewhere.mkdir()
        name.symlink_to(elsewhere)
    what = {"directory": "a directory", "fifo": "a FIFO", "link to a directory": "a directory"}[occupant]
    with pytest.raises(UsageError, match=f"^cannot save {re.escape(str(name))}: {what} has that name$"):
        traces.save(trace, tmp_path)
    assert name.is_symlink() == (occupant == "link to a directory")
    assert traces.keep(trace, tmp_path) == {"counterexample": None, "unsaved": f"cannot save {name}: {what} has that name",
                                           "kept": None, "replaced": None}


def test_instance_counts_that_would_take_minutes_to_replay_are_refused_when_loading(tmp_path):
    """A 3 KB trace asking for 10,000 instances took 4 minutes and 2.4 GB to replay;
    a 60 MB one with millions of instances per observation, most of a minute to draw."""
    data = json.loads(SEED.read_text())
    data["steps"][0]["action"] = {"type": "push", "instances": 1001}
    f = tmp_path / "big.json"
    f.write_text(json.dumps(data))
    with pytest.raises(UsageError, match=r"step 0: action 'push': field 'instances' is out of range \(at most 1000"):
        traces.load(f)
    data = json.loads(SEED.read_text())
    data["steps"][0]["observation"]["processes"][0]["instances"] = ["RUNNING"] * 10001
    f.write_text(json.dumps(data))
    with pytest.raises(UsageError, match=r"steps/0/observation/processes/0/instances: 10,001 items, at most 10,000$"):
        traces.load(f)
    data["steps"][0]["observation"]["processes"][0]["instances"] = ["RUNNING"] * 1000
    data["steps"][0]["action"] = {"type": "push", "instances": 1000}
    f.write_text(json.dumps(data))
    assert traces.load(f)["steps"][0]["action"]["instances"] == 1000  # the largest allowed


def test_a_file_where_the_out_folder_was_is_named_so(tmp_path):
    """Replaced during a run (the folder was checked at the start): 'File exists' before."""
    trace = traces.load(SEED)
    (tmp_path / "out").write_text("x")
    kept = traces.keep(trace, tmp_path / "out")
    found, why = kept["counterexample"], kept["unsaved"]
    assert found is None and why.startswith(f"cannot save {tmp_path / 'out'}/") and why.endswith(
        f": {tmp_path / 'out'} is not a folder")
    assert (tmp_path / "out").read_text() == "x"


def test_a_finding_already_there_is_said_to_be_kept_not_saved(tmp_path):
    """save keeps a readable file of the same steps (found by another engine, seed or
    with other bounds): the line names it kept, not saved as this run's; what it says is
    what save found there, not what the folder holds when the line is printed."""
    from deployspec import traces
    from deployspec.engines.result import Result

    def said(trace) -> str:
        kept = traces.keep(trace, tmp_path)
        assert kept["unsaved"] is None
        return traces.saved_line(Result("capi", "v", "p", trace["engine"], "violated", **kept))

    trace = json.loads(SEED.read_text())
    path = str(tmp_path / traces.name_of(trace))
    assert said(trace) == f"saved: {path}"
    assert said(trace) == f"saved: {path}"  # this very finding again: the file is what it would write
    again = trace | {"engine": "explore", "seed": None, "config": trace["config"] | {"max_instances": 2}}
    assert said(again) == (f"kept: {path} (the same steps were there already, found by engine hypothesis, "
                           f"seed {trace['seed']}, other bounds; left as it was)")
    assert json.loads(Path(path).read_text())["engine"] == "hypothesis"
    # the explorer draws nothing: a seed it was given (0 in older files) is no other provenance
    os.remove(path)
    traces.keep(again | {"seed": 0}, tmp_path)
    assert said(again) == f"saved: {path}"


def test_an_observation_is_validated_once_however_often_the_trace_repeats_it(tmp_path, monkeypatch):
    """A long trace repeats its observations; each distinct one is validated once, and
    one that differs only in how a number is written (``1.0`` for ``1``) is not taken
    for one already found valid."""
    data = json.loads(SEED.read_text())
    step = data["steps"][-1]
    data["steps"] += [json.loads(json.dumps(step)) for _ in range(50)]
    data["violation"]["step"] = len(data["steps"]) - 1
    f = tmp_path / "long.json"
    f.write_text(json.dumps(data))
    validated = []
    schema_of = trace_checks._observation_validator

    def counting(name):
        validator = schema_of(name)

        class Counting:
            def iter_errors(self, obs):
                validated.append(obs)
                return validator.iter_errors(obs)
        return Counting()

    monkeypatch.setattr(trace_checks, "_observation_validator", counting)
    traces.load(f)
    distinct = {json.dumps(o, sort_keys=True) for o in [data["initial"]] + [s["observation"] for s in data["steps"]]}
    assert len(validated) == len(distinct) < len(data["steps"])
    data["steps"][-1]["observation"]["processes"][0]["id"] = float(step["observation"]["processes"][0]["id"])
    f.write_text(json.dumps(data))
    with pytest.raises(UsageError, match=rf"steps/{len(data['steps']) - 1}/observation/processes/0/id: .* is not of type 'integer'"):
        traces.load(f)


def test_a_file_over_the_trace_limit_under_the_name_is_not_read_but_replaced(tmp_path, monkeypatch):
    """Saving reads the file already under the name (the same finding is kept, another
    refused): one over ``MAX_TRACE_BYTES`` is no trace, as ``show`` and ``replay`` say, and
    is not read whole (8 GB there took a minute and a half and 17 GB of memory)."""
    trace = traces.load(SEED)
    path = traces.save(trace, tmp_path)
    good = path.read_text()
    other = json.loads(good)
    other["steps"] = other["steps"][:2]
    other["violation"]["step"] = 1  # (a trace load reads: one it refuses is replaced too)
    padded = json.dumps(other) + " " * 200
    monkeypatch.setattr(traces, "MAX_TRACE_BYTES", len(padded.encode()))
    path.write_text(padded)  # within the limit: another finding's, refused
    with pytest.raises(UsageError, match="the name is taken by another trace"):
        traces.save(trace, tmp_path)
    path.write_text(padded + " ")  # one byte over: no trace, replaced
    assert traces.save(trace, tmp_path) == path and path.read_text() == good
