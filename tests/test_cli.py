"""The command line as users script it: exit statuses and one-line errors."""

import json
import os
import subprocess
import sys
from pathlib import Path

import attrs
import pytest

from deployspec.cli import main

from .cli_runs import SEED, deployspec, run


def test_variants_lists_declarations(capsys):
    status, out, _ = run(capsys, "variants")
    assert status == 0
    for name in ("capi-2022", "capi-pr3072", "capi-pr3084", "capi-safe", "4528366a1bebbe99"):
        assert name in out


def test_variants_as_json_say_what_each_declares(capsys):
    from deployspec.models import get_model

    status, out, _ = run(capsys, "variants", "--json")
    doc = json.loads(out)
    assert status == 0 and set(doc) == {"capi", "slots"}
    for name, model in doc.items():
        for v in model["variants"]:
            assert set(v["declares"]) == set(get_model(name).variant(v["name"]).declares)
    pr3084 = next(v for v in doc["capi"]["variants"] if v["name"] == "capi-pr3084")
    assert pr3084["violates_beyond"]["deployment_converges"]["trace"].endswith(".json")


def test_check_json_says_what_was_expected_and_the_exit_status(capsys):
    """A script reading --json needs no second source: each result says whether its
    variant declares the property violated and, for the matrix, whether it agrees."""
    status, out, _ = run(capsys, "check", "--model", "slots", "--property", "push_does_not_touch_production",
                         "--engine", "explore", "--json")
    doc = json.loads(out)
    assert status == 0 and doc["exit_status"] == 0 and doc["matches_declarations"] is True
    by_variant = {r["variant"]: r for r in doc["results"]}
    assert by_variant["slots-webhook-tag"]["declared_violated"] is True
    assert by_variant["slots-webhook-tag"]["verdict"] == "violated"
    assert by_variant["slots-pipeline-tag"]["declared_violated"] is False
    assert all(r["matches_declaration"] for r in doc["results"])
    status, out, _ = run(capsys, "check", "--model", "slots", "--variant", "slots-webhook-tag",
                         "--property", "push_does_not_touch_production", "--engine", "explore", "--json")
    doc = json.loads(out)
    assert status == 1 and doc["exit_status"] == 1 and "matches_declarations" not in doc


def test_replay_of_a_folder_replays_every_trace_in_it(capsys, tmp_path):
    import shutil

    (tmp_path / "sub").mkdir()
    shutil.copy(SEED, tmp_path / "sub" / SEED.name)
    (tmp_path / "notes.txt").write_text("not a trace")
    status, out, _ = run(capsys, "replay", str(tmp_path))
    assert status == 1 and out.count("reproduces on capi-2022") == 1
    (tmp_path / "empty").mkdir()
    status, _, err = run(capsys, "replay", str(tmp_path / "empty"))
    assert status == 2 and "a folder with no trace files" in err


def test_an_unknown_bound_lists_the_known_ones(capsys):
    status, _, err = run(capsys, "check", "--model", "capi", "--bound", "max_deploys=3")
    assert status == 2
    assert "unknown configuration field(s): max_deploys (known: max_instances, max_deployments," in err


def test_an_incomplete_proof_says_how_to_finish_it():
    from deployspec.engines.result import Result
    from deployspec.report import matrix

    cut = Result("capi", "capi-safe", "deployment_converges", "explore", "holds", stats={"complete": False})
    text = matrix([cut], declared=False)
    assert "holds*" in text
    assert ("  deployspec check --model capi --variant capi-safe --engine explore "
            "--property deployment_converges --budget 120") in text


def test_an_error_cell_says_why_under_the_table_once_per_message():
    """A killed --jobs process turned most cells into "error !" with the reason only in --json."""
    from deployspec.engines.result import Result
    from deployspec.report import matrix

    lost = "a search process stopped without answering (killed: out of memory?)"
    rs = [Result("capi", "capi-safe", p, "hypothesis", "error", message=lost)
          for p in ("app_stays_available", "single_active_deployment", "deployment_converges")]
    rs += [Result("capi", "capi-2022", "app_stays_available", "hypothesis", "error", message="boom"),
           Result("capi", "capi-2022", "single_active_deployment", "hypothesis", "violated"),
           Result("capi", "capi-2022", "single_active_deployment", "explore", "error", message="hidden")]
    notes = [ln for ln in matrix(rs, declared=True).splitlines() if ln.startswith("error in")]
    assert notes == [
        "error in capi-safe · single_active_deployment, capi-safe · app_stays_available and 1 more: " + lost,
        "error in capi-2022 · app_stays_available: boom",
    ]  # a cell a violation decided says nothing of an error beside it


def test_check_finds_seed_bug_and_saves_it(capsys, tmp_path):
    status, out, _ = run(capsys, "check", "--model", "capi", "--variant", "capi-2022",
                         "--budget", "0.5", "--out", str(tmp_path), "--json")
    assert status == 1
    results = json.loads(out)["results"]
    assert {r["property"] for r in results if r["verdict"] == "violated"} >= {
        "single_active_deployment", "cancel_restores_last_good"}
    saved = [r["counterexample"] for r in results if r["counterexample"]]
    assert saved and all(Path(p).exists() for p in saved)
    status, out, _ = run(capsys, "replay", *saved)
    assert status == 1 and "reproduces on capi-2022" in out
    status, out, _ = run(capsys, "replay", *saved, "--variant", "capi-safe")
    assert status == 0 and "does not reproduce" in out


def test_check_runs_only_the_properties_named(capsys):
    status, out, _ = run(capsys, "check", "--model", "capi", "--variant", "capi-2022", "--engine", "explore",
                         "--property", "capacity_within_bound", "--property", "single_active_deployment",
                         "--json")
    found = {r["property"] for r in json.loads(out)["results"]}
    assert status == 1 and found == {"capacity_within_bound", "single_active_deployment"}


def test_show_text_marks_breaking_step(capsys, tmp_path):
    status, out, _ = run(capsys, "show", str(SEED))
    assert status == 0
    marked = [line for line in out.splitlines() if line.startswith(">>")]
    assert len(marked) == 1 and "tick()" in marked[0]
    target = tmp_path / "seed.txt"
    assert run(capsys, "show", str(SEED), "-o", str(target))[0] == 0
    assert target.read_text() == out


@pytest.mark.parametrize(
    "argv, message",
    [
        (["check", "--model", "nomad"], "unknown model 'nomad'"),
        (["check", "--variant", "capi-1999"], "unknown variant 'capi-1999'"),
        (["check", "--engine", "tarot"], "unknown engine 'tarot'"),
        (["check", "--budget", "soon"], "not a number of seconds"),
        (["check", "--seed", "-3"], "must be >= 0"),
        (["check", "--jobs", "0"], "must be >= 1"),
        (["check", "--property", "fast_enough"], "unknown property 'fast_enough' (known: "),
        (["check", "--model", "slots", "--property", "single_active_deployment"],
         "unknown property 'single_active_deployment'"),
        (["replay", "/nonexistent/trace.json"], "no such file"),
        (["show", "/nonexistent/trace.json"], "no such file"),
        (["frobnicate"], "invalid choice"),
        (["check", "--variant", "capi-safe", "--bound", "max_instances=1000000"],
         "max_instances must be at most 64, got 1000000"),
        (["check", "--variant", "capi-safe", "--bound", "settle_steps=" + "9" * 4000],
         "settle_steps must be at most 100000, got a number of 4000 digits"),
        (["check", "--bound", "settle_steps=" + "9" * 5000], "settle_steps: Exceeds the limit (4300 digits)"),
        (["check", "--seed", "9" * 5000], "too large: '999"),
        (["check", "--model", "slots", "--bound", "max_pushes=65"], "max_pushes must be at most 64"),
        (["show", str(SEED), "-o", str(SEED)], "is the trace being shown"),
        (["show", str(SEED), "-o", ""], "-o: empty"),
        (["check", "--model", ""], "unknown model ''"),
        (["check", "--variant", "capi-2022", "--out", ""], "--out: empty"),
        (["check", "--variant", "capi-2022", "--bound", "max_instances=0"],
         "max_instances must be a positive integer, got 0"),
        (["contract", "--exec", "true", "--model", "capi", "--name", "n" * 300], "at most 64 letters"),
    ],
)
def test_bad_input_is_one_line_exit_2(capsys, argv, message):
    status, _out, err = run(capsys, *argv)
    assert status == 2
    assert message in err and err.count("\n") == 1 and "Traceback" not in err


def test_console_script_runs_without_traceback(tmp_path):
    bad = tmp_path / "bad.json"
    bad.write_text("{")
    proc = subprocess.run([sys.executable, "-m", "deployspec.cli", "replay", str(bad)],
                          capture_output=True, text=True, check=False)
    assert proc.returncode == 2
    assert proc.stderr.startswith("deployspec: error:") and "Traceback" not in proc.stderr


def test_the_program_flushes_its_output_and_keeps_its_exit_status():
    """``run`` leaves with ``os._exit`` (freeing a large search's states took seconds)."""
    env = {k: v for k, v in os.environ.items() if k != "PYTHONUNBUFFERED"}  # so a lost flush shows
    proc = subprocess.run([sys.executable, "-m", "deployspec", "check", "--model", "capi", "--variant",
                           "capi-2022", "--engine", "explore", "--property", "capacity_within_bound"],
                          capture_output=True, text=True, check=False, env=env)
    assert proc.returncode == 1, proc.stderr
    assert proc.stdout.rstrip().endswith("capi-2022  VIOLATED") and "Traceback" not in proc.stderr


def test_the_program_still_runs_exit_handlers():
    """Contract implementations are stopped by an ``atexit`` handler: it must still run."""
    script = ("import atexit, sys; atexit.register(print, 'exit handlers ran'); "
              "sys.argv = ['deployspec', 'variants']; from deployspec.cli import run; run()")
    env = {k: v for k, v in os.environ.items() if k != "PYTHONUNBUFFERED"}  # so a lost flush shows
    proc = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, check=False,
                          env=env)
    assert proc.returncode == 0, proc.stderr
    assert "capi-safe" in proc.stdout and proc.stdout.rstrip().endswith("exit handlers ran")


def test_output_that_cannot_be_written_is_one_line_exit_2(tmp_path):
    """stdout on a full disk, or closed: no traceback, no 'Exception ignored' at exit."""
    for stdout in (open("/dev/full", "w"), None):  # noqa: SIM115 (closed below)
        proc = subprocess.run(
            [sys.executable, "-m", "deployspec.cli", "show", str(SEED)],
            stdout=stdout if stdout is not None else subprocess.DEVNULL, stderr=subprocess.PIPE,
            text=True, check=False,
            **({} if stdout is not None else {"preexec_fn": lambda: __import__("os").close(1)}),
        )
        if stdout is not None:
            stdout.close()
        assert proc.returncode == 2, proc.stderr
        assert proc.stderr.count("\n") == 1 and proc.stderr.startswith("deployspec: error:"), proc.stderr


def test_an_out_folder_that_cannot_be_written_is_refused_before_the_search(capsys, tmp_path, monkeypatch):
    import deployspec.files

    def read_only(path):
        raise OSError(30, "Read-only file system")

    monkeypatch.setattr(deployspec.files, "check_writable_dir", read_only)
    status, out, err = run(capsys, "check", "--variant", "capi-2022", "--out", str(tmp_path))
    assert status == 2 and out == ""
    assert "cannot write there: Read-only file system" in err and err.count("\n") == 1


def test_jobs_give_the_verdicts_of_a_serial_run(tmp_path):
    from deployspec import check

    pairs = check.plan("slots", ["slots-webhook-tag", "slots-pipeline-immutable"])
    serial = check.run(pairs, ["explore"], budget=60, seed=0, out_dir=None)
    seen = []
    parallel = check.run(pairs, ["explore"], budget=60, seed=0, out_dir=str(tmp_path), jobs=2,
                         on_result=seen.append)
    key = lambda r: (r.variant, r.property, r.verdict, r.trace_length, r.stats["states"])
    assert [key(r) for r in parallel] == [key(r) for r in serial]  # same order, same findings
    assert len(seen) == len(serial) and len(list(tmp_path.glob("*.json"))) == sum(
        r.verdict == "violated" for r in serial)


def test_jobs_give_every_cause_of_a_serial_close_look(capsys, tmp_path):
    """A close look (--variant) searches again for each further cause inside the job
    that found the first one: with --jobs 2 the same results, causes and files come
    back, in the same order. Small bounds keep the four causes of app_stays_available
    on capi-current (and two of capacity_within_bound) and the proofs in a second."""
    def close_look(jobs: int) -> tuple[int, list[dict], list[str]]:
        out_dir = tmp_path / f"jobs{jobs}"
        status, out, _ = run(capsys, "check", "--model", "capi", "--variant", "capi-current",
                             "--engine", "explore", "--bound", "max_deployments=2",
                             "--bound", "max_instances=1", "--bound", "max_droplets=1",
                             "--budget", "60", "--jobs", str(jobs), "--json", "--out", str(out_dir))
        return status, json.loads(out)["results"], sorted(p.name for p in out_dir.glob("*.json"))

    key = lambda r: (r["property"], r["verdict"], r["cause"], r["trace_length"], r["stats"]["states"],
                     (r["stats"].get("other_causes") or "").split(":")[0])  # not the seconds after it
    status, serial, files = close_look(1)
    assert status == 1
    causes = [r["cause"] for r in serial if r["property"] == "app_stays_available"]
    assert len(causes) == len(set(causes)) >= 3  # several causes, each from its own search
    status2, parallel, files2 = close_look(2)
    assert status2 == status and [key(r) for r in parallel] == [key(r) for r in serial]
    assert files2 == files and len(files) == sum(r["verdict"] == "violated" for r in serial)


def test_a_matrix_that_differs_from_the_declarations_exits_1(capsys, monkeypatch):
    """The CI gate: a fixed design that suddenly 'declares' a violation it does not
    show (or a historic one that lost its bug) must fail the check."""
    import attrs

    from deployspec.models import get_model

    model = get_model("slots")
    name = "slots-pipeline-immutable"
    monkeypatch.setitem(model.variants, name,
                        attrs.evolve(model.variants[name], declares=frozenset({"no_latent_drift"})))
    status, out, _ = run(capsys, "check", "--model", "slots", "--engine", "explore")
    assert status == 1 and "MISMATCH" in out


def test_replaying_several_files_exits_with_the_worst_status(capsys):
    fixed = Path(__file__).parent.parent / "docs" / "explore-findings" / \
        "capi-safe--deployment_converges--820cc66814.json"  # no longer reproduces on capi-safe
    assert run(capsys, "replay", str(fixed))[0] == 0
    for files in ([SEED, fixed], [fixed, SEED]):
        status, out, _ = run(capsys, "replay", *map(str, files))
        assert status == 1 and "does not reproduce" in out and "reproduces on capi-2022" in out


def test_a_verdict_cut_short_by_a_closed_pipe_is_not_a_success():
    """``replay A B | true``: the trace reproduces (exit 1); the pipe closed before
    the verdict was written, so the status is SIGPIPE's 141, never 0."""
    proc = deployspec("replay", str(SEED), str(SEED), stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    proc.stdout.close()
    assert proc.wait(60) == 141
    assert "Traceback" not in proc.stderr.read()
    proc.stderr.close()


def test_show_to_a_file_needs_no_stdout_but_the_rest_does(tmp_path):
    """``show TRACE -o FILE >&-`` draws into FILE; a command that writes to stdout is refused."""
    drawn = tmp_path / "seed.svg"
    proc = deployspec("show", str(SEED), "--format", "svg", "-o", str(drawn),
                       stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, close_fds=True,
                       preexec_fn=lambda: os.close(1))
    assert proc.wait(60) == 0 and drawn.read_text().startswith("<svg")
    proc.stderr.close()
    proc = deployspec("show", str(SEED), stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                       preexec_fn=lambda: os.close(1))
    assert proc.wait(60) == 2
    assert proc.stderr.read() == "deployspec: error: standard output is closed\n"
    proc.stderr.close()
    # -o /dev/stderr with stderr closed: likewise (said nowhere, so the status alone)
    proc = deployspec("show", str(SEED), "-o", "/dev/stderr", stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
                       preexec_fn=lambda: os.close(2))
    assert proc.wait(60) == 2 and proc.stdout.read() == ""
    proc.stdout.close()
    # --help and -o /dev/stdout are for stdout: they wrote into the /dev/null put in its place (status 0)
    proc = deployspec("--help", stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, preexec_fn=lambda: os.close(1))
    assert proc.wait(60) == 2
    assert proc.stderr.read() == "deployspec: error: standard output is closed\n"
    proc.stderr.close()
    proc = deployspec("show", str(SEED), "-o", "/dev/stdout", stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                       preexec_fn=lambda: os.close(1))
    assert proc.wait(60) == 2
    assert proc.stderr.read() == "deployspec: error: standard output is closed\n"
    proc.stderr.close()


@pytest.mark.parametrize("argv", [["--help"], ["check", "--help"], ["variants", "--help"]])
def test_help_that_cannot_be_written_is_an_error_and_a_closed_pipe_is_not(argv):
    """argparse dropped a failed write of a long help (--help > /dev/full: status 0, nothing said);
    a short one stayed in the buffer until the exit, whose flush failed unseen."""
    with open("/dev/full", "w") as full:
        proc = deployspec(*argv, stdout=full, stderr=subprocess.PIPE)
        _, err = proc.communicate(timeout=60)
    assert (proc.returncode, err) == (2, "deployspec: error: cannot write the output: No space left on device\n")
    proc = deployspec(*argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    first = proc.stdout.readline()
    proc.stdout.close()  # as `| head -1` does
    _, err = proc.communicate(timeout=60)
    assert first.startswith("usage: deployspec") and (proc.returncode, err) == (0, "")


def test_a_closed_or_full_stderr_does_not_cost_the_results(tmp_path):
    """Progress goes to stderr; when it cannot be written, the run goes on quietly."""
    out = tmp_path / "results.txt"
    with open(out, "w") as stdout, open("/dev/full", "w") as full:
        proc = deployspec("check", "--model", "capi", "--variant", "capi-2022", "--engine", "explore",
                           "--property", "capacity_within_bound", "--property", "single_active_deployment",
                           stdout=stdout, stderr=full)
        assert proc.wait(120) == 1
    assert "capi-2022 · capacity_within_bound · explore: violated" in out.read_text()


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


def test_too_many_jobs_is_a_usage_error(capsys):
    assert main(["check", "--jobs", "99999999999999999999"]) == 2
    assert "--jobs: at most 64" in capsys.readouterr().err


def test_a_variant_named_twice_is_checked_once(capsys):
    argv = ["check", "--model", "capi", "--engine", "explore", "--property", "single_active_deployment", "--json"]
    once = run(capsys, *argv, "--variant", "capi-2022")
    twice = run(capsys, *argv, "--variant", "capi-2022", "--variant", "capi-2022")
    assert once[0] == twice[0] == 1
    assert len(json.loads(twice[1])["results"]) == len(json.loads(once[1])["results"]) == 1


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


@pytest.mark.parametrize("argv, message", [
    # --workers splits an exhaustive search: with none to split it was silently ignored
    (["check", "--model", "capi", "--engine", "hypothesis", "--workers", "2"],
     "--workers splits an exhaustive search, and --engine hypothesis runs none here"),
    (["check", "--model", "capi", "--variant", "capi-safe", "--engine", "z3", "--workers", "2"],
     "--engine z3 runs none here"),
    # an empty --variant was ignored (the recorded variant replayed); Path("") is "."
    (["replay", str(SEED), "--variant", ""], "--variant: empty"),
    (["show", ""], "an empty file name: name a trace file"),
    (["contract", "--python", "deployspec.contract.examples:capi_2022", "--model", "capi",
      "--examples", "10000001"], "--examples: at most 10,000,000"),
])
def test_options_that_would_be_ignored_or_misread_are_usage_errors(capsys, argv, message):
    status, out, err = run(capsys, *argv)
    assert status == 2 and out == ""
    assert err.startswith("deployspec: error: ") and message in err
    assert len(err.splitlines()) == 1


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
                      unsaved=why, trace=traces_load_seed())]
    monkeypatch.setattr(check, "run", lambda *a, **k: results)
    argv = ["check", "--model", "capi", "--property", "single_active_deployment"]
    status, out, err = run(capsys, *argv)
    assert status == 2 and "MISMATCH" not in out
    assert out.rstrip().endswith("every variant shows exactly the violations it declares")
    assert err == f"deployspec: error: {why}; the verdicts above stand\n"
    status, out, _ = run(capsys, *argv, "--json")
    doc = json.loads(out)
    assert (status, doc["exit_status"], doc["matches_declarations"]) == (2, 2, True)


def traces_load_seed() -> dict:
    from deployspec import traces

    return traces.load(SEED)


def test_replay_checks_every_trace_s_configuration_before_any_verdict(capsys, monkeypatch, tmp_path):
    """A later trace whose bounds do not fit the target design was a usage error after
    the earlier verdicts were printed."""
    from deployspec.models import get_model

    slots = get_model("slots")
    scenario = Path(__file__).parent.parent / "counterexamples" / "slots" / "scenario-4-first-deployment.json"
    data = json.loads(scenario.read_text())
    data["config"]["instances"] = 3  # given on purpose (the default is 2 of at most 3)
    misfit = tmp_path / "z-misfit.json"
    misfit.write_text(json.dumps(data))
    target = slots.variant("slots-pipeline-immutable")
    monkeypatch.setitem(slots.variants, target.name, attrs.evolve(target, config={"max_instances": 2}))
    status, out, err = run(capsys, "replay", str(scenario), str(misfit), "--variant", target.name)
    assert (status, out) == (2, "")
    assert err.startswith(f"deployspec: error: {misfit}: cannot replay on slots-pipeline-immutable: ")


def test_a_non_blocking_stdout_left_by_the_parent_gets_the_whole_report():
    """Node.js and some CI runners hand their children non-blocking pipes: Python dropped
    what a full pipe refused, and ``variants`` came out cut at the pipe's size, status 0.
    The parent's flag is restored at exit."""
    import fcntl
    import select
    import time

    r, w = os.pipe()
    fcntl.fcntl(w, fcntl.F_SETPIPE_SZ, 4096)  # smaller than the report
    os.set_blocking(w, False)
    proc = deployspec("variants", stdout=w, stderr=subprocess.PIPE)
    time.sleep(1.0)  # unread meanwhile: the pipe fills (the old code then dropped the rest)
    last = main_variants_last_line().encode()
    report = b""
    while last not in report and proc.poll() is None or select.select([r], [], [], 0.5)[0]:
        report += os.read(r, 65536)  # (w stays open here: no end of file to wait for)
    assert proc.wait(60) == 0 and proc.stderr.read() == ""
    proc.stderr.close()
    assert len(report) > 4096 and report.rstrip().endswith(last)
    assert not os.get_blocking(w)  # as the parent left it
    os.close(w)
    os.close(r)


def main_variants_last_line() -> str:
    from deployspec.report import variants_table

    return variants_table().rstrip().splitlines()[-1]


def test_replay_says_when_the_violation_comes_at_another_step_than_recorded(capsys, tmp_path):
    data = json.loads(SEED.read_text())
    at = data["violation"]["step"]
    assert run(capsys, "replay", str(SEED))[1].count("not at the recorded step") == 0
    data["violation"]["step"] = 0
    edited = tmp_path / "edited.json"
    edited.write_text(json.dumps(data))
    status, out, _ = run(capsys, "replay", str(edited))
    assert status == 1 and f"at step {at} (cause " in out and ", not at the recorded step 0: " in out


def test_a_deleted_current_folder_is_said_as_such(tmp_path):
    """Hypothesis asks for the current folder when imported: a FileNotFoundError without a
    file name, reported as 'cannot write the output'."""
    gone = tmp_path / "gone"
    gone.mkdir()

    def into_gone():
        os.chdir(gone)
        os.rmdir(gone)

    proc = deployspec("check", "--model", "capi", "--variant", "capi-2022", "--property", "single_active_deployment",
                      "--budget", "0.5", stdout=subprocess.PIPE, stderr=subprocess.PIPE, preexec_fn=into_gone)
    out, err = proc.communicate(timeout=120)
    assert (proc.returncode, out, err) == (
        2, "", "deployspec: error: the current folder no longer exists (deleted?): cd to one that does\n")
