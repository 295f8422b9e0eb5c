"""``replay --property``: a file's steps judged by other properties than the one it
records. An operator replayed the seed's steps on today's design to ask "is this fixed?":
"does not reproduce" of the recorded ``cancel_restores_last_good``, exit 0, while the same
steps leave today's design with nothing routable (docs/findings.md, the seed)."""

from __future__ import annotations

import json
import re

from .cli_runs import run, valid_json_output
from .designs_handed_in import FINDINGS

SEED = FINDINGS / "capi-2022--cancel_restores_last_good--401cd5ce87.json"
NOT_CONVERGING = FINDINGS / "capi-2022--deployment_converges--757eafacc0.json"


def test_every_property_judges_the_seed_s_steps_on_today_s_design_and_one_breaking_fails_the_run(capsys):
    status, out, _ = run(capsys, "replay", str(SEED), "--variant", "capi-current", "--property", "all")
    lines = out.splitlines()
    assert status == 1 and len(lines) == 10  # one per property of the model, in the model's order
    assert lines[0] == f"{SEED}: single_active_deployment holds on capi-current"
    assert lines[1].startswith(f"{SEED}: app_stays_available violated on capi-current at step 8 (cause scale-step): "
                               "no routable web instance left after step 8")
    # the property it records is said as a replay says it
    assert lines[2] == f"{SEED}: does not reproduce on capi-current: cancel_restores_last_good holds"
    status, out, _ = run(capsys, "replay", str(SEED), "--variant", "capi-safe", "--property", "app_stays_available",
                         "--property", "cancel_restores_last_good")
    assert (status, out) == (0, (f"{SEED}: app_stays_available holds on capi-safe\n"
                                f"{SEED}: does not reproduce on capi-safe: cancel_restores_last_good holds\n"))


def test_each_file_and_property_is_a_verdict_of_the_json_document_and_the_junit_report(capsys, tmp_path):
    report = tmp_path / "r.xml"
    status, out, _ = run(capsys, "replay", str(SEED), "--variant", "capi-current", "--property", "app_stays_available",
                         "--property", "single_active_deployment", "--json", "--junit", str(report))
    files = valid_json_output(json.loads(out))["files"]
    assert status == 1
    assert [(f["property"], f["outcome"], f["step"], f["cause"]) for f in files] == [
        ("app_stays_available", "reproduces", 8, "scale-step"),
        ("single_active_deployment", "does_not_reproduce", None, None)]
    xml = report.read_text()
    assert xml.count("<testcase ") == 2 and xml.count("<failure") == 1
    assert 'classname="deployspec.replay.capi.app_stays_available"' in xml
    # each case named by its file, told apart by its class: the names stay whatever the properties asked
    # (numbered, a case's name moved with the order of --property, and CI lost its history)
    assert len(re.findall(f'name="[^"]*{re.escape(SEED.name)}"', xml)) == 2 and " #2" not in xml


def test_a_settled_property_is_judged_once_the_platform_settles(capsys, tmp_path):
    """A file without a settle phase, judged by ``deployment_converges``: judged where a
    search judges it, after the platform's own steps (else it would always hold)."""
    trace = json.loads(NOT_CONVERGING.read_text())
    trace |= {"property": "app_stays_available", "steps": trace["steps"][:trace["settle_from"]],
              "settle_from": None, "violation": {"step": 4, "message": "edited"}}
    edited = tmp_path / "no-settle.json"
    edited.write_text(json.dumps(trace))
    status, out, _ = run(capsys, "replay", str(edited), "--property", "deployment_converges")
    assert status == 1 and "deployment_converges violated on capi-2022" in out and "still CANCELING" in out, out


def test_a_property_the_model_does_not_have_is_a_usage_error_with_a_guess(capsys):
    status, out, err = run(capsys, "replay", str(SEED), "--property", "app_stays_availble")
    assert (status, out) == (2, "")
    assert err.startswith("deployspec: error: --property 'app_stays_availble': not a property of model capi: "
                          "did you mean 'app_stays_available'? (known: single_active_deployment, ")
    status, _, err = run(capsys, "replay", str(SEED), "--property", "All")
    assert status == 2 and "did you mean 'all'?" in err


def test_a_replay_judged_by_another_property_is_saved_as_a_trace_of_it(capsys, tmp_path):
    status, out, _ = run(capsys, "replay", str(SEED), "--variant", "capi-current", "--property", "app_stays_available",
                         "--out", str(tmp_path))
    (saved,) = tmp_path.glob("*.json")
    kept = json.loads(saved.read_text())
    assert status == 1 and (kept["property"], kept["variant"]) == ("app_stays_available", "capi-current")
    assert kept["title"].endswith("(replayed on capi-current, judged by app_stays_available)")
    status, out, _ = run(capsys, "replay", str(saved))
    assert status == 1 and "reproduces on capi-current: app_stays_available at step 8" in out


def test_a_misspelt_property_beside_all_is_refused_and_a_replay_of_a_replay_keeps_what_it_was_judged_by(
        capsys, tmp_path):
    status, _, err = run(capsys, "replay", str(SEED), "--property", "all", "--property", "nope")
    assert status == 2 and "--property 'nope': not a property of model capi" in err
    first, again = tmp_path / "first", tmp_path / "again"
    run(capsys, "replay", str(SEED), "--variant", "capi-current", "--property", "app_stays_available",
        "--out", str(first))
    (saved,) = first.glob("*.json")
    status, _, _ = run(capsys, "replay", str(saved), "--out", str(again))
    (twice,) = again.glob("*.json")
    title = json.loads(twice.read_text())["title"]
    assert status == 1 and title.endswith("(replayed on capi-current, judged by app_stays_available)"), title
    assert title.count("replayed on") == 1


def test_a_folder_of_both_models_judged_by_one_model_s_property_leaves_the_other_s_out(capsys, tmp_path):
    """It was refused (exit 2): a folder of regressions of both models could not be judged by
    app_stays_available; now the slots traces are left out, said on stderr and in --json."""
    import shutil

    slots_file = min((SEED.parent.parent / "slots").glob("*.json"))
    for f in (SEED, slots_file):
        shutil.copy(f, tmp_path / f.name)
    status, out, err = run(capsys, "replay", str(tmp_path), "--property", "app_stays_available", "--json")
    doc = json.loads(out)
    assert status == 1 and [f["file"] for f in doc["files"]] == [str(tmp_path / SEED.name)]
    assert doc["left_out"] == [{"file": str(tmp_path / slots_file.name), "model": "slots"}]
    assert err.splitlines()[0] == (f"deployspec: left out 1 slots trace (--property app_stays_available: not a "
                                   f"property of their model): {tmp_path / slots_file.name}")
    status, _, err = run(capsys, "replay", str(tmp_path), "--property", "app_stays_availble")
    assert status == 2 and "not a property of models capi, slots: did you mean 'app_stays_available'?" in err
    # a file named on its own is judged or refused, never left out; a folder with nothing judged, refused
    status, _, err = run(capsys, "replay", str(SEED), str(slots_file), "--property", "app_stays_available")
    assert status == 2 and err.endswith(f"{slots_file}: a slots trace, and --property app_stays_available is not "
                                        "a property of slots\n")
    (tmp_path / SEED.name).unlink()
    status, _, err = run(capsys, "replay", str(SEED), str(tmp_path), "--property", "app_stays_available")
    assert status == 2 and err.endswith(f"{tmp_path}: no trace of a model with --property app_stays_available "
                                        "(1 slots trace)\n")
