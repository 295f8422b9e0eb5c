"""A folder given to ``replay --variant`` stands for its traces of that design's model
(a session's review: ``replay counterexamples/ --variant capi-safe`` replayed nothing,
refused on the first slots trace). Files named on their own stay strict."""

from __future__ import annotations

import shutil

from .cli_runs import SEED, run

SLOTS = min((SEED.parent.parent / "slots").glob("*.json"))


def _suite(tmp_path):
    """A folder as ``check --out`` leaves it after the whole matrix: both models' traces."""
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
    status, _, err = run(capsys, "replay", str(folder / SEED.name), str(SLOTS), "--variant", "capi-safe")
    assert status == 2 and f"{SLOTS}: a slots trace; --variant capi-safe is a design of another model" in err


def test_without_variant_a_mixed_folder_replays_each_file_on_its_own_design(capsys, tmp_path):
    status, out, err = run(capsys, "replay", str(_suite(tmp_path)))
    assert status == 1 and "reproduces on capi-2022" in out and SLOTS.name in out and "left out" not in err


def test_an_implementation_is_not_given_a_mixed_folder(capsys, tmp_path):
    status, _, err = run(capsys, "replay", str(_suite(tmp_path)), "--exec", "never-started")
    assert status == 2
    assert err == ("deployspec: error: replay --exec/--python: the files are of different models (1 capi trace, "
                   "1 slots trace); an implementation speaks one: replay one model's traces at a time\n")
