"""Where results are written (--out, -o): never half a file, never a finished verdict lost."""

import json
import os
import subprocess
from pathlib import Path

import pytest

from deployspec import traces
from deployspec.cli import main

from .cli_runs import SEED, finished, run


def test_an_out_folder_that_cannot_be_written_is_refused_before_the_search(capsys, tmp_path, monkeypatch):
    import deployspec.files

    def read_only(path):
        raise OSError(30, "Read-only file system")

    monkeypatch.setattr(deployspec.files, "check_writable_dir", read_only)
    status, out, err = run(capsys, "check", "--variant", "capi-2022", "--out", str(tmp_path))
    assert status == 2 and out == ""
    assert "cannot write there: Read-only file system" in err and err.count("\n") == 1


#: the commands with --out, each as quick as it gets (should a refusal fail to come)
OUT_COMMANDS = {"check": ["check", "--model", "capi", "--variant", "capi-2022", "--engine", "explore",
                          "--property", "single_active_deployment"],
                "contract": ["contract", "--python", "deployspec.contract.examples:capi_2022", "--model", "capi",
                             "--property", "single_active_deployment", "--examples", "3"]}


@pytest.mark.parametrize("command", sorted(OUT_COMMANDS))
def test_out_and_junit_naming_one_new_path_are_refused_before_the_run(capsys, tmp_path, monkeypatch, command):
    """Was: the run went through, --out made the folder, and only then the report
    could not be saved ("cannot write: Is a directory"), the work's report lost."""
    monkeypatch.chdir(tmp_path)
    for out, report in (("d", "d"), ("./e", "e"), ("f/", str(tmp_path / "f"))):
        status, stdout, err = run(capsys, *OUT_COMMANDS[command], "--out", out, "--junit", report)
        assert (status, stdout) == (2, "")
        assert err == f"deployspec: error: --out {out}: also the --junit report's name; give the report a file of its own\n"
    assert list(tmp_path.iterdir()) == []  # nothing made, nothing run


@pytest.mark.parametrize("command", sorted(OUT_COMMANDS))
def test_out_inside_the_junit_reports_name_is_refused_before_the_run(capsys, tmp_path, monkeypatch, command):
    """``--junit a --out a/b``: making the folder made ``a`` a folder, and the report, written
    after the whole run, failed ("cannot write: Is a directory")."""
    monkeypatch.chdir(tmp_path)
    status, stdout, err = run(capsys, *OUT_COMMANDS[command], "--out", "a/b", "--junit", "a")
    assert (status, stdout) == (2, "")
    assert err == ("deployspec: error: --out a/b: under the --junit report's name, which would have to "
                   "become a folder; give the report a file of its own\n")
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize("command", sorted(OUT_COMMANDS))
def test_out_dash_is_refused_not_a_folder_named_dash(capsys, tmp_path, monkeypatch, command):
    """``-`` is standard output, which cannot hold a folder of traces; it made a folder named ``-``."""
    monkeypatch.chdir(tmp_path)
    status, stdout, err = run(capsys, *OUT_COMMANDS[command], "--out", "-")
    assert (status, stdout) == (2, "")
    assert err == "deployspec: error: --out -: standard output cannot hold a folder of traces; give a directory\n"
    assert not (tmp_path / "-").exists()


def test_a_report_inside_the_out_folder_is_still_fine(capsys, tmp_path):
    """Only the very same name clashes: a report saved among the traces is the user's choice."""
    (tmp_path / "d").mkdir()
    status, _, err = run(capsys, *OUT_COMMANDS["check"], "--out", str(tmp_path / "d"),
                         "--junit", str(tmp_path / "d" / "report.xml"))
    assert status == 1, err
    assert (tmp_path / "d" / "report.xml").is_file() and list((tmp_path / "d").glob("*.json"))


@pytest.mark.parametrize("command", sorted(OUT_COMMANDS))
def test_a_report_inside_an_out_folder_not_made_yet_is_fine_too(capsys, tmp_path, monkeypatch, command):
    """``--out results --junit results/junit.xml`` in a fresh checkout: "no folder", though
    --out makes it. A report in a folder --out does not make is still refused before the run."""
    monkeypatch.chdir(tmp_path)
    status, _, err = run(capsys, *OUT_COMMANDS[command], "--out", "results", "--junit", "results/junit.xml")
    assert status == 1, err
    assert (tmp_path / "results" / "junit.xml").is_file() and list((tmp_path / "results").glob("*.json"))
    status, _, err = run(capsys, *OUT_COMMANDS[command], "--out", "new", "--junit", "other/junit.xml")
    assert (status, err) == (2, f"deployspec: error: --junit other/junit.xml: no folder {tmp_path / 'other'}\n")
    assert not (tmp_path / "new").exists()


def test_show_writes_into_a_fifo_or_through_a_symlink_without_replacing_it(tmp_path):
    fifo, real, link = tmp_path / "fifo", tmp_path / "real.txt", tmp_path / "link.txt"
    os.mkfifo(fifo)
    real.write_text("old")
    link.symlink_to(real)
    reader = subprocess.Popen(["cat", str(fifo)], stdout=subprocess.PIPE, text=True)
    assert main(["show", str(SEED), "-o", str(fifo)]) == 0
    drawn = reader.communicate(timeout=30)[0]
    assert main(["show", str(SEED), "-o", str(link)]) == 0
    assert fifo.is_fifo() and link.is_symlink() and "tick()" in drawn
    assert real.read_text() == drawn


@pytest.mark.parametrize("command", ["check", "contract"])
def test_a_counterexample_that_cannot_be_saved_leaves_the_verdict_on_screen(capsys, tmp_path, monkeypatch,
                                                                           command):
    """The search is done: its verdict and trace are printed, the trace file it could
    not write is one line on stderr after them, and the status is 2 (not 1: the --out
    asked for was not honoured). The file in the way is left alone. The folder is
    named as given (relative here), also by contract, which resolves it before the run."""
    if command == "check":
        argv = ["check", "--model", "capi", "--variant", "capi-2022", "--engine", "explore",
                "--property", "single_active_deployment"]
    else:
        argv = ["contract", "--python", "deployspec.contract.examples:capi_2022", "--model", "capi",
                "--property", "single_active_deployment", "--examples", "20", "--seed", "0"]
    status, out, _ = run(capsys, *argv, "--out", str(tmp_path / "first"))
    assert status == 1
    (saved,) = (tmp_path / "first").iterdir()
    blocked = tmp_path / "blocked"
    (blocked / saved.name).mkdir(parents=True)  # the same name, held by a directory
    monkeypatch.chdir(tmp_path)
    status, out, err = run(capsys, *argv, "--out", "blocked")
    assert status == 2
    assert "VIOLATED" in out or "violated" in out
    assert f"not saved: cannot save blocked/{saved.name}: a directory has that name" in out
    assert err.splitlines()[-1] == (f"deployspec: error: cannot save blocked/{saved.name}: "
                                    "a directory has that name; the verdicts above stand")
    assert (blocked / saved.name).is_dir()
    status, out, _ = run(capsys, *argv, "--out", str(blocked), "--json")
    doc = json.loads(out)
    assert status == doc["exit_status"] == 2
    assert next(r["unsaved"] for r in doc["results"] if r["verdict"] == "violated").endswith("a directory has that name")


def test_out_through_a_link_to_nothing_is_named_so(capsys, tmp_path):
    link = tmp_path / "findings"
    link.symlink_to(tmp_path / "gone")
    status, _, err = run(capsys, "check", "--model", "capi", "--variant", "capi-2022", "--engine", "explore",
                         "--property", "single_active_deployment", "--out", str(link))
    assert status == 2 and err == f"deployspec: error: --out {link}: a link to nothing ({tmp_path / 'gone'})\n"


@pytest.mark.parametrize("existing", [False, True])
def test_show_o_with_a_trailing_slash_writes_no_file(capsys, tmp_path, monkeypatch, existing):
    """``-o new/`` made a file ``new`` (pathlib drops the slash); ``-o afile/`` replaced afile."""
    target = tmp_path / "afile"
    if existing:
        target.write_text("keep me")
    status, _, err = run(capsys, "show", str(SEED), "-o", f"{target}/")
    assert status == 2 and err == f"deployspec: error: -o {target}/: ends with /, a folder; give a file name\n"
    assert (target.read_text() == "keep me") if existing else not target.exists()
    monkeypatch.chdir(tmp_path)
    assert run(capsys, "show", str(SEED), "-o", "./")[2] == "deployspec: error: -o ./: ends with /, a folder; give a file name\n"
    assert run(capsys, "show", str(SEED), "-o", ".")[2] == "deployspec: error: -o .: is a directory\n"


def test_an_unsaved_counterexample_is_no_mismatch_of_the_matrix(capsys, monkeypatch):
    """Status 2 for the file, but every verdict as declared: the matrix said MISMATCH and
    --json's matches_declarations was false, while no cell had a '!'."""
    from deployspec import check
    from deployspec.engines.result import Result

    why = "cannot save out/capi-2022--single_active_deployment--15c4d29d9e.json: a directory has that name"
    results = [Result("capi", "capi-2022", "single_active_deployment", "hypothesis", "violated",
                      unsaved=why, trace=traces.load(SEED))]
    monkeypatch.setattr(check, "run", lambda *a, **k: results)
    argv = ["check", "--model", "capi", "--property", "single_active_deployment"]
    status, out, err = run(capsys, *argv)
    assert status == 2 and "MISMATCH" not in out
    assert out.rstrip().endswith("every variant shows exactly the violations it declares")
    assert err == f"deployspec: error: {why}; the verdicts above stand\n"
    status, out, _ = run(capsys, *argv, "--json")
    doc = json.loads(out)
    assert (status, doc["exit_status"], doc["matches_declarations"]) == (2, 2, True)


@pytest.mark.parametrize(("name", "starts"), [("t.svg", "<svg"), ("t.HTML", "<!DOCTYPE html"), ("t.itf.json", "{"),
                                              ("t.txt", "capi / capi-2022")])
def test_show_draws_what_the_name_of_o_asks_for(capsys, tmp_path, name, starts):
    """`show FILE -o trace.svg` wrote the text table into a file no browser shows."""
    out = tmp_path / name
    assert run(capsys, "show", str(SEED), "-o", str(out))[0] == 0
    assert out.read_text().startswith(starts)


@pytest.mark.parametrize("name", ["t.jsonl", "t.YAML", "t.xml"])
def test_show_refuses_a_data_name_rather_than_write_text_there(capsys, tmp_path, name):
    out = tmp_path / name
    assert run(capsys, "show", str(SEED), "-o", str(out)) == (
        2, "", (f"deployspec: error: -o {out}: show writes svg, html, itf (Apalache/Quint's trace format) or text; "
               "name it .itf.json, .svg, .html or .txt (or give --format)\n"))
    assert not out.exists()


def test_show_says_what_it_wrote_and_not_into_a_device(capsys, tmp_path):
    """``show -o FILE`` said nothing: a user could not tell where the picture went."""
    out = tmp_path / "seed.svg"
    status, said, err = run(capsys, "show", str(SEED), "-o", str(out))
    size = out.stat().st_size
    assert (status, said, err) == (0, "", f"deployspec: wrote {out} (svg, {size / 1024:.0f} KiB)\n")
    assert run(capsys, "show", str(SEED), "-o", "/dev/null") == (0, "", "")
    assert run(capsys, "show", str(SEED), "-o", "-")[2] == ""


def test_show_writes_itf_into_a_name_ending_itf(capsys, tmp_path):
    """Was the text table, exit 0 (a helper's finding)."""
    out = tmp_path / "t.itf"
    assert run(capsys, "show", str(SEED), "-o", str(out))[0] == 0
    assert json.loads(out.read_text())["#meta"]["format"] == "ITF"


def test_show_refuses_a_name_that_asks_for_another_format(capsys, tmp_path):
    out = tmp_path / "t.html"
    assert run(capsys, "show", str(SEED), "--format", "svg", "-o", str(out)) == (
        2, "", f"deployspec: error: -o {out}: a name for html, not --format svg\n")
    assert not out.exists()


def test_show_refuses_a_picture_name_it_does_not_draw_rather_than_write_text_there(capsys, tmp_path):
    out = tmp_path / "t.png"
    assert run(capsys, "show", str(SEED), "-o", str(out)) == (
        2, "", f"deployspec: error: -o {out}: show draws svg, html, itf or text; name it .svg (or give --format)\n")
    assert not out.exists()
    assert run(capsys, "show", str(SEED), "--format", "text", "-o", str(out))[0] == 0  # asked for: as asked


def test_a_dash_is_standard_output_not_a_file_named_dash(capsys, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    status, out, _ = run(capsys, "show", str(SEED), "--format", "svg", "-o", "-")
    assert status == 0 and out.startswith("<svg")
    status, out, _ = run(capsys, "replay", str(SEED), "--junit", "-")
    assert status == 1 and out.rstrip().endswith("</testsuites>")
    assert not (tmp_path / "-").exists()


@pytest.mark.parametrize("where", ["-", "/dev/stdout"])
@pytest.mark.parametrize("command", [["replay", str(SEED)],
                                     ["contract", "--model", "capi", "--examples", "3",
                                      "--property", "single_active_deployment"]])
def test_a_python_runs_junit_report_sent_to_standard_output_goes_there(command, where):
    """A --python object prints to stderr (stdout is deployspec's); the report sent to
    standard output went there too, in the deployspec program (a user's CI job)."""
    done = finished(*command, "--python", "deployspec.contract.examples:capi_safe", "--junit", where)
    assert done.returncode == 0, done.stderr
    assert done.stdout.rstrip().endswith("</testsuites>") and "<testsuites" not in done.stderr


@pytest.mark.parametrize("where", ["-", "/dev/stdout"])
def test_a_junit_report_does_not_follow_json_on_standard_output(capsys, where):
    """A JSON document followed by XML is read by neither parser."""
    for argv in (["check", "--model", "capi", "--variant", "capi-safe"],
                 ["contract", "--python", "deployspec.contract.examples:capi_2022", "--model", "capi"]):
        assert run(capsys, *argv, "--json", "--junit", where) == (
            2, "", f"deployspec: error: --junit {where}: standard output carries --json; write the report to a file\n")


def test_show_writes_no_json_name_a_replay_of_its_folder_would_read_as_a_trace(capsys, tmp_path):
    out = tmp_path / "x.json"
    for argv in ([], ["--format", "itf"]):
        status, _, err = run(capsys, "show", str(SEED), "-o", str(out), *argv)
        assert status == 2 and "a .json name would be read as a trace" in err and not out.exists()
    assert run(capsys, "show", str(SEED), "-o", str(tmp_path / "x.itf.json"))[0] == 0
    assert run(capsys, "show", str(SEED), "-o", str(tmp_path / "y.ITF.json"))[0] == 0  # (its suffix, any case)
    # the names it takes for ITF are ones a replay of the folder leaves alone (it read them, and failed)
    import shutil

    shutil.copy(SEED, tmp_path / SEED.name)
    status, out, err = run(capsys, "replay", str(tmp_path))
    assert (status, err) == (1, "") and out.count("reproduces on capi-2022") == 1


def test_show_writes_no_trace_through_a_link_of_a_pictures_name(capsys, tmp_path):
    """``-o pic.svg`` linking to a saved trace wrote the picture over it: the name the
    link leads to is judged as the name given is; a link to a picture's name is written
    through, the link left a link."""
    trace = tmp_path / "saved.json"
    trace.write_bytes(SEED.read_bytes())
    for name in ("pic.svg", "pic.itf.json"):
        (tmp_path / name).symlink_to(trace)
        status, _, err = run(capsys, "show", str(SEED), "-o", str(tmp_path / name))
        assert status == 2 and f"links to {trace}: a .json name would be read as a trace" in err, err
    assert trace.read_bytes() == SEED.read_bytes()
    (tmp_path / "to-itf.svg").symlink_to(tmp_path / "x.itf.json")  # a link to a picture's name: written through
    assert run(capsys, "show", str(SEED), "-o", str(tmp_path / "to-itf.svg"), "--format", "svg")[0] == 0
    assert (tmp_path / "to-itf.svg").is_symlink() and (tmp_path / "x.itf.json").read_text().startswith("<svg")


def test_a_save_cut_short_leaves_no_file_a_replay_of_the_folder_would_read(capsys, tmp_path, monkeypatch):
    """A crash between write and rename (SIGKILL, out of memory, power) left
    ``.tmp-XXXX.json``, which a replay of the folder then read: a truncated one failed the
    suite as 'not JSON', a whole one was replayed as an extra finding under a hidden name."""
    from deployspec import files

    def killed(src, dst):
        raise SystemExit("killed before the rename")  # the finally that removes it never runs on SIGKILL

    monkeypatch.setattr(os, "replace", killed)
    monkeypatch.setattr(os, "unlink", lambda path: None)
    with pytest.raises(SystemExit):
        files.write_atomically(tmp_path / SEED.name, SEED.read_text())
    monkeypatch.undo()
    (left,) = tmp_path.iterdir()
    assert left.name.startswith(files.TEMPORARY) and not left.name.endswith(".json")
    left.rename(tmp_path / ".tmp-abcd.json")  # as older versions named it
    import shutil

    shutil.copy(SEED, tmp_path / SEED.name)
    status, out, err = run(capsys, "replay", str(tmp_path))
    assert (status, err) == (1, "") and out.count("reproduces on capi-2022") == 1


@pytest.mark.parametrize("kind", ["dangling link", "fifo"])
def test_a_json_name_in_a_replayed_folder_that_is_no_file_is_an_error(capsys, tmp_path, kind):
    """It was skipped without a word and the suite passed on the other traces."""
    import shutil

    shutil.copy(SEED, tmp_path / SEED.name)
    odd = tmp_path / "regression.json"
    if kind == "fifo":
        os.mkfifo(odd)
    else:
        odd.symlink_to(tmp_path / "gone.json")
    status, out, err = run(capsys, "replay", str(tmp_path))
    what = "a link to nothing" if kind != "fifo" else "not a regular file"
    assert (status, out) == (2, "")
    assert err == f"deployspec: error: {tmp_path}: {odd}: {what}, where a trace file was expected\n"


def test_check_says_how_to_replay_what_it_saved_and_which_file_it_kept(capsys, tmp_path):
    """As contract does: a replay line under each saved trace. A second search of the same
    finding (the explorer's, with its own bounds) keeps the first file and says so."""
    argv = ("check", "--model", "capi", "--variant", "capi-2022", "--property", "single_active_deployment",
            "--out", str(tmp_path))
    status, out, _ = run(capsys, *argv, "--budget", "1")
    saved = [ln for ln in out.splitlines() if ln.startswith(("saved: ", "kept: "))]
    assert status == 1 and saved and all(ln.startswith("saved: ") for ln in saved)
    path = saved[0].removeprefix("saved: ")
    assert f"replay: deployspec replay {path}" in out.splitlines()
    status, out, _ = run(capsys, *argv, "--engine", "explore")
    assert status == 1 and f"kept: {path} (the same steps were there already, found by engine hypothesis" in out


def test_check_says_it_kept_a_file_of_its_finding_s_name_edited_since(capsys, tmp_path):
    """The same search run again, its file's message edited by hand meanwhile (still a trace
    replay reads): the file is kept, and the line says it is not this run's (it said
    "saved:", and the user read their own words as deployspec's)."""
    argv = ("check", "--model", "capi", "--variant", "capi-2022", "--property", "single_active_deployment",
            "--engine", "explore", "--out", str(tmp_path))
    status, out, _ = run(capsys, *argv)
    path = next(ln for ln in out.splitlines() if ln.startswith("saved: ")).removeprefix("saved: ")
    status, out, _ = run(capsys, *argv)  # the same finding again: the same file, nothing to say
    assert status == 1 and f"saved: {path}" in out.splitlines()
    edited = json.loads(Path(path).read_text())
    edited["violation"]["message"] = "EDITED BY ME"
    Path(path).write_text(json.dumps(edited))
    status, out, _ = run(capsys, *argv)
    assert status == 1 and (f"kept: {path} (the same steps were there already, found by engine explore, but the "
                            "file differs from this run's trace: edited since it was saved?; left as it was)"
                            ) in out.splitlines()
    assert json.loads(Path(path).read_text())["violation"]["message"] == "EDITED BY ME"


def test_the_same_finding_of_two_incident_files_is_not_said_to_be_edited(capsys, tmp_path):
    """Two files of the same calls give the same steps under titles naming each file: the
    second kept the first's file and said it was "edited since it was saved?" (a review)."""
    calls = "push(instances=2)\nsettle\ndeploy()\ncancel()\ndeploy()\n"
    lines = []
    for name in ("a.txt", "b.txt"):
        (tmp_path / name).write_text(calls)
        _status, out, _ = run(capsys, "check", "--incident", str(tmp_path / name), "--variant", "capi-2022",
                              "--property", "app_stays_available", "--out", str(tmp_path / "out"))
        lines += [ln for ln in out.splitlines() if ln.startswith(("saved: ", "kept: "))]
    assert len(lines) == 2 and lines[0] == lines[1] and lines[0].startswith("saved: ")


def test_check_says_which_file_of_its_finding_s_name_it_replaced(capsys, tmp_path):
    """A file under the finding's name that replay refuses (edited by hand), or a dangling
    link, is replaced by the trace found; the saved line says so, so the user knows what
    had that name is gone."""
    argv = ("check", "--model", "capi", "--variant", "capi-2022", "--property", "single_active_deployment",
            "--engine", "explore", "--out", str(tmp_path))
    status, out, _ = run(capsys, *argv)
    path = next(ln for ln in out.splitlines() if ln.startswith("saved: ")).removeprefix("saved: ")
    assert status == 1 and path.endswith(".json")
    edited = json.loads(Path(path).read_text())
    del edited["initial"]
    Path(path).write_text(json.dumps(edited))
    status, out, _ = run(capsys, *argv)
    assert status == 1 and f"saved: {path} (replacing a file of that name that replay refused)" in out.splitlines()
    assert "initial" in json.loads(Path(path).read_text())
    os.remove(path)
    os.symlink(tmp_path / "gone.json", path)
    status, out, _ = run(capsys, *argv)
    assert status == 1 and f"saved: {path} (replacing a dangling link of that name)" in out.splitlines()
    os.remove(path)
    (tmp_path / "edited.txt").write_text(json.dumps(edited))
    os.symlink(tmp_path / "edited.txt", path)
    status, out, _ = run(capsys, *argv)
    assert status == 1 and f"saved: {path} (replacing a link of that name to a file replay refused)" in out
    assert not os.path.islink(path) and json.loads((tmp_path / "edited.txt").read_text()) == edited
    status, out, _ = run(capsys, *argv)
    assert status == 1 and f"saved: {path}" in out.splitlines()  # this run's own file: nothing replaced
