"""A folder given to ``replay --variant`` stands for its traces of that design's model
(a session's review: ``replay counterexamples/ --variant capi-safe`` replayed nothing,
refused on the first slots trace). Files named on their own stay strict."""

from __future__ import annotations

import json
import shutil

from .cli_runs import SEED, run

SLOTS = min((SEED.parent.parent / "slots").glob("*.json"))


def _suite(tmp_path):
    """A folder as ``check --out`` leaves it after the whole matrix: both models' traces."""
    tmp_path.mkdir(exist_ok=True)
    shutil.copy(SEED, tmp_path / SEED.name)
    (tmp_path / "more").mkdir()
    shutil.copy(SLOTS, tmp_path / "more" / SLOTS.name)
    return tmp_path


def test_a_folder_s_traces_of_another_model_are_left_out_and_said(capsys, tmp_path):
    folder = _suite(tmp_path)
    status, out, err = run(capsys, "replay", str(folder), "--variant", "capi-2022")
    assert status == 1 and "reproduces on capi-2022" in out  # the capi trace was replayed
    assert SLOTS.name not in out
    assert err == (f"deployspec: left out 1 slots trace (--variant capi-2022 is a capi design): "
                   f"{folder / 'more' / SLOTS.name}\n")
    status, out, err = run(capsys, "replay", str(folder), "--variant", "slots-webhook-tag")
    assert SEED.name not in out and SLOTS.name in out
    assert err.startswith("deployspec: left out 1 capi trace (--variant slots-webhook-tag is a slots design)")


def test_a_folder_with_no_trace_of_the_model_is_a_usage_error(capsys, tmp_path):
    folder = _suite(tmp_path) / "more"
    status, out, err = run(capsys, "replay", str(folder), "--variant", "capi-safe")
    assert (status, out) == (2, "")
    assert err == (f"deployspec: error: {folder}: no capi trace to replay on --variant capi-safe (1 slots trace; "
                   "replay each model's traces on one of its own)\n")


def test_a_file_named_on_its_own_is_never_left_out(capsys, tmp_path):
    """Named beside a folder, a slots file is refused as before, not dropped."""
    folder = _suite(tmp_path)
    status, _, err = run(capsys, "replay", str(folder), str(SLOTS), "--variant", "capi-safe")
    assert status == 2 and f"{SLOTS}: a slots trace; --variant capi-safe is a design of another model" in err


def test_each_folder_must_hold_a_trace_of_the_model(capsys, tmp_path):
    """As a file of another model named on its own is refused, so is a folder that holds
    none of the model's traces, beside one that does (found by a review)."""
    folder = _suite(tmp_path)
    status, out, err = run(capsys, "replay", str(folder / SEED.name), str(folder / "more"), "--variant", "capi-safe")
    assert (status, out) == (2, "") and err.startswith(f"deployspec: error: {folder / 'more'}: no capi trace")


def test_the_note_comes_once_and_only_when_the_replay_runs(capsys, tmp_path):
    """A folder given twice names each left-out file once; a usage error found after the
    filter (a bad --bound) is the one line on stderr, without the note (found by a review)."""
    folder = _suite(tmp_path)
    status, _, err = run(capsys, "replay", str(folder), str(folder), "--variant", "capi-2022", "--json")
    assert status == 1 and err.count("left out 1 slots trace") == 1 and err.count(SLOTS.name) == 1
    status, _, err = run(capsys, "replay", str(folder), "--variant", "capi-2022", "--bound", "no_such_bound=1")
    assert status == 2 and len(err.splitlines()) == 1 and "left out" not in err


def test_the_json_document_lists_what_was_left_out(capsys, tmp_path):
    import json

    from .cli_runs import valid_json_output

    folder = _suite(tmp_path)
    _, out, _ = run(capsys, "replay", str(folder), "--variant", "capi-2022", "--json")
    doc = valid_json_output(json.loads(out))
    assert doc["left_out"] == [{"file": str(folder / "more" / SLOTS.name), "model": "slots"}]
    assert [f["file"] for f in doc["files"]] == [str(folder / SEED.name)]
    _, out, _ = run(capsys, "replay", str(folder), "--json")
    assert valid_json_output(json.loads(out))["left_out"] == []


def test_a_slots_replay_loads_no_capi_design(capsys, tmp_path, hand_in):
    """A design of one's own of the other model, broken, does not stop a replay that does
    not need it (docs/variants.md; a review found the filter loading every model)."""
    hand_in("badcapi", "import attrs\n"
                       "from deployspec.reference.capi.variants import CAPI_CURRENT\n"
                       "VARIANTS = [attrs.evolve(CAPI_CURRENT, name='capi-bad', config={'nonsense': 1})]\n")
    folder = _suite(tmp_path / "suite")
    status, out, err = run(capsys, "replay", str(folder / "more"), "--variant", "slots-webhook-tag")
    assert status == 1 and SLOTS.name in out and "capi-bad" not in err
    status, _, err = run(capsys, "replay", str(folder), "--variant", "capi-safe")  # it is loaded here
    assert status == 2 and "capi-bad" in err


def test_without_variant_a_mixed_folder_replays_each_file_on_its_own_design(capsys, tmp_path):
    status, out, err = run(capsys, "replay", str(_suite(tmp_path)))
    assert status == 1 and "reproduces on capi-2022" in out and SLOTS.name in out and "left out" not in err


def test_an_implementation_is_not_given_a_mixed_folder(capsys, tmp_path):
    status, _, err = run(capsys, "replay", str(_suite(tmp_path)), "--exec", "never-started")
    assert status == 2
    assert err == ("deployspec: error: replay --exec/--python: the files are of different models (1 capi trace, "
                   "1 slots trace); an implementation speaks one: replay one model's traces at a time\n")


def test_variant_and_an_implementation_are_refused_first(capsys, tmp_path):
    """Not the mixed models, whose advice would only lead to this refusal (a review)."""
    status, _, err = run(capsys, "replay", str(_suite(tmp_path)), "--variant", "capi-safe", "--exec", "never-started")
    assert (status, err) == (2, "deployspec: error: replay: --variant and --exec/--python exclude each other\n")


def test_a_long_list_of_names_is_cut_after_the_first_few():
    from deployspec.text import first_few

    assert first_few(["a", "b", "c", "d", "e"], 3) == "a, b, c and 2 more"
    assert first_few(["a", "b", "c"], 3) == "a, b, c"
    assert first_few(["a"], 2) == "a"


def test_a_trace_on_standard_input_is_replayed_as_show_reads_it(tmp_path):
    """``-`` was "-: no such file" (a helper's finding), while ``show -`` read it."""
    import subprocess
    import sys

    proc = subprocess.run([sys.executable, "-m", "deployspec", "replay", "-"], input=SEED.read_text(),
                          capture_output=True, text=True, timeout=120, check=False)
    assert proc.returncode == 1, proc.stderr
    assert proc.stdout.startswith("-: reproduces on capi-2022: app_stays_available at step 5")
    twice = subprocess.run([sys.executable, "-m", "deployspec", "replay", "-", "-"], input=SEED.read_text(),
                           capture_output=True, text=True, timeout=120, check=False)
    assert (twice.returncode, twice.stderr) == (
        2, "deployspec: error: replay: - (standard input) named twice; it holds one trace\n")


def test_a_file_a_folder_brings_that_is_no_trace_says_the_folder_is_read_whole(capsys, tmp_path):
    """``check --json > found/results.json`` beside the traces: the folder is refused, and the
    line says why that file was read at all; named on its own, the file's error is as ever."""
    shutil.copy(SEED, tmp_path)
    (tmp_path / "results.json").write_text('{"results": [], "exit_status": 0}')
    status, out, err = run(capsys, "replay", str(tmp_path))
    assert (status, out) == (2, "")
    assert err.endswith("; every *.json file under a folder named is read as a trace (but *.itf.json): move it "
                        "out, or name the trace files\n")
    status, _, err = run(capsys, "replay", str(tmp_path / "results.json"))
    assert status == 2 and "read as a trace" not in err
    (tmp_path / "results.json").write_text('{"results": [')  # (a run that ended as it wrote: not JSON)
    status, _, err = run(capsys, "replay", str(tmp_path))
    assert status == 2 and err.endswith("move it out, or name the trace files\n")
    # a trace edited wrong is to mend, not to move out
    (tmp_path / "results.json").unlink()
    edited = json.loads(SEED.read_text())
    edited["steps"][0]["rejected"] = 7
    (tmp_path / "edited.json").write_text(json.dumps(edited))
    status, _, err = run(capsys, "replay", str(tmp_path))
    assert status == 2 and "not a deployspec trace" in err and "move it out" not in err


def test_an_itf_export_under_a_json_name_is_said_to_be_one(capsys, tmp_path):
    """``show --format itf > found/x.json``: refused as what it is, with the name a folder's
    replay leaves out (it was "top level: 'format' is a required property")."""
    status, itf, _ = run(capsys, "show", str(SEED), "--format", "itf")
    (tmp_path / "x.json").write_text(itf)
    status, out, err = run(capsys, "replay", str(tmp_path))
    assert (status, out) == (2, "")
    assert err == (f"deployspec: error: {tmp_path / 'x.json'}: an ITF export (show --format itf), not a deployspec "
                   "trace; a folder's replay leaves out files named *.itf.json, as show names them\n")
