"""``replay --out DIR``: a finding replayed on another design, saved as a trace of that
design, so that ``show`` draws it there (an App Service user wanted #316's scenarios on
their own pipeline for their team, and could draw them only on the design they were
recorded on)."""

from __future__ import annotations

import json
from pathlib import Path

from deployspec import traces

from .cli_runs import run, valid_json_output

SLOTS = Path(__file__).parent.parent / "counterexamples" / "slots"
SCENARIOS = sorted(SLOTS.glob("scenario-*.json"))


def test_each_file_that_reproduces_is_saved_as_a_trace_of_the_design_it_was_replayed_on(capsys, tmp_path):
    status, out, _ = run(capsys, "replay", *map(str, SCENARIOS), "--variant", "slots-pipeline-tag",
                         "--out", str(tmp_path))
    assert status == 1
    lines = out.splitlines()
    reproduced = [ln for ln in lines if ": reproduces on slots-pipeline-tag" in ln]
    saved = [ln.removeprefix("saved: ") for ln in lines if ln.startswith("saved: ")]
    # each saved line right under its file's verdict; the one that does not reproduce saves nothing
    assert len(saved) == len(reproduced) == 3 and any(": does not reproduce on" in ln for ln in lines)
    for line in saved:
        assert lines[lines.index(f"saved: {line}") - 1] in reproduced
    assert sorted(str(p) for p in tmp_path.iterdir()) == sorted(saved)
    for path in saved:
        trace = traces.load(path)
        assert trace["variant"] == "slots-pipeline-tag" and trace["engine"] == "replay"
        source = Path(trace["extra"]["replayed"])
        assert source in SCENARIOS and trace["title"].endswith("(replayed on slots-pipeline-tag)")
        assert trace["title"].startswith(traces.load(source)["title"])
    # each reproduces on that design as recorded, and show draws it under its name
    status, out, _ = run(capsys, "replay", str(tmp_path))
    assert status == 1 and out.count(": reproduces on slots-pipeline-tag:") == 3 and "departs" not in out
    status, out, _ = run(capsys, "show", saved[0])
    assert status == 0 and out.startswith("slots / slots-pipeline-tag: ")


def test_the_json_document_names_the_file_saved(capsys, tmp_path):
    status, out, _ = run(capsys, "replay", str(SCENARIOS[0]), str(SCENARIOS[-1]), "--variant", "slots-pipeline-tag",
                         "--out", str(tmp_path), "--json")
    files = valid_json_output(json.loads(out))["files"]
    assert status == 1 and [f["outcome"] for f in files] == ["reproduces", "does_not_reproduce"]
    assert Path(files[0]["counterexample"]).parent == tmp_path and "counterexample" not in files[1]


def test_out_is_refused_with_an_implementation_and_where_no_folder_can_be(capsys, tmp_path):
    status, out, err = run(capsys, "replay", str(SCENARIOS[0]), "--python", "contract_fakes:raising",
                           "--out", str(tmp_path / "new"))
    assert (status, out) == (2, "") and "an implementation's runs are saved by deployspec contract --out" in err
    afile = tmp_path / "afile"
    afile.write_text("keep me")
    status, out, err = run(capsys, "replay", str(SCENARIOS[0]), "--out", str(afile))
    assert (status, out, err) == (2, "", f"deployspec: error: --out {afile}: exists and is not a directory\n")
    assert afile.read_text() == "keep me" and not (tmp_path / "new").exists()


def test_a_replay_that_cannot_be_saved_keeps_its_verdicts_and_exits_2(capsys, tmp_path):
    out_dir = tmp_path / "out"
    out_dir.mkdir()
    status, _, _ = run(capsys, "replay", str(SCENARIOS[0]), "--variant", "slots-pipeline-tag", "--out", str(out_dir))
    (saved,) = out_dir.iterdir()
    saved.write_text(json.dumps(traces.load(SCENARIOS[1])))  # another finding under its name
    status, out, err = run(capsys, "replay", str(SCENARIOS[0]), "--variant", "slots-pipeline-tag", "--out", str(out_dir))
    assert status == 2 and ": reproduces on slots-pipeline-tag" in out and "saved:" not in out
    assert err.startswith(f"deployspec: error: cannot save {saved}: the name is taken by another trace")
    assert err.rstrip().endswith("the verdicts above stand") and err.count("\n") == 1


def test_an_unsaved_replay_makes_the_document_s_exit_status_2_as_the_process_s(capsys, tmp_path):
    out_dir = tmp_path / "out"
    run(capsys, "replay", str(SCENARIOS[1]), "--variant", "slots-pipeline-tag", "--out", str(out_dir))
    (saved,) = out_dir.iterdir()
    saved.unlink()
    saved.mkdir()  # a folder takes the file's name
    status, out, err = run(capsys, "replay", str(SCENARIOS[1]), "--variant", "slots-pipeline-tag",
                           "--out", str(out_dir), "--json")
    doc = valid_json_output(json.loads(out))
    assert status == 2 and doc["exit_status"] == 2 and doc["files"][0]["outcome"] == "reproduces"
    assert "counterexample" not in doc["files"][0] and err.rstrip().endswith("the verdicts above stand")


def test_a_junit_report_may_go_into_the_out_folder_it_makes(capsys, tmp_path):
    import xml.etree.ElementTree as ET

    out_dir = tmp_path / "new"
    status, _, err = run(capsys, "replay", str(SCENARIOS[0]), "--variant", "slots-pipeline-tag",
                         "--out", str(out_dir), "--junit", str(out_dir / "report.xml"))
    assert status == 1, err
    assert ET.parse(out_dir / "report.xml").getroot().tag == "testsuites"
    assert len(list(out_dir.glob("*.json"))) == 1


def test_a_replay_of_a_replay_is_marked_once(capsys, tmp_path):
    first, second = tmp_path / "a", tmp_path / "b"
    run(capsys, "replay", str(SCENARIOS[0]), "--variant", "slots-pipeline-tag", "--out", str(first))
    (saved,) = first.iterdir()
    run(capsys, "replay", str(saved), "--variant", "slots-webhook-tag", "--out", str(second))
    (again,) = second.iterdir()
    title = traces.load(again)["title"]
    assert title.endswith(" (replayed on slots-webhook-tag)") and title.count("replayed on") == 1


def test_files_whose_replays_are_the_same_steps_are_saved_once_and_said_so(capsys, tmp_path):
    same = sorted(SLOTS.glob("*--slot_runs_one_version--*.json"))
    status, out, _ = run(capsys, "replay", *map(str, same), "--variant", "slots-pipeline-tag", "--out", str(tmp_path))
    saved = [ln for ln in out.splitlines() if ln.startswith("saved: ")]
    (path,) = tmp_path.iterdir()
    assert status == 1 and len(saved) == len(same) == 3 and saved[0] == f"saved: {path}"
    assert all(ln == f"saved: {path} (the same steps as the replay of {same[0]} above: one file)" for ln in saved[1:])


def test_the_help_says_the_exit_statuses(capsys):
    import pytest

    from deployspec.cli import main

    for command in ("check", "replay"):
        with pytest.raises(SystemExit):
            main([command, "--help"])
        text = " ".join(capsys.readouterr().out.split())
        assert "Exit status: 0 " in text and ", 1 " in text and ", 2 usage error" in text, command


def test_a_replay_that_breaks_another_way_says_so_in_its_title(capsys, tmp_path):
    """The seed's title tells capi-2022's story (the healthy process destroyed by the
    cancel); on capi-current the same steps break by the scale step: an operator's
    postmortem picture kept the old story with no hint."""
    seed = Path(__file__).parent.parent / "counterexamples/capi/capi-2022--app_stays_available--a940739cf1.json"
    status, _, _ = run(capsys, "replay", str(seed), "--variant", "capi-current", "--out", str(tmp_path))
    (saved,) = tmp_path.glob("*.json")
    assert status == 1 and json.loads(saved.read_text())["title"].endswith(
        "(replayed on capi-current, where it breaks another way: scale-step)")


def test_a_replay_of_a_file_without_a_title_is_titled_by_the_file_it_came_from(capsys, tmp_path):
    """21 of 33 replays a CI user saved had no title: a picture of one did not say which
    incident it came from."""
    source = next(p for p in sorted((Path(__file__).parent.parent / "counterexamples/capi").glob("capi-2022--*.json"))
                  if "title" not in json.loads(p.read_text()))
    status, _, _ = run(capsys, "replay", str(source), "--out", str(tmp_path))
    (saved,) = tmp_path.glob("*.json")
    assert status == 1 and json.loads(saved.read_text())["title"] == f"{source.name} (replayed on capi-2022)"
