"""The program's own streams and process: stdout or stderr closed, full, cut short or
non-blocking, help that cannot be written, exit handlers, a deleted current folder."""

import json
import os
import subprocess
import sys

import pytest

from .cli_runs import BUFFERED, SEED, deployspec


def test_console_script_runs_without_traceback(tmp_path):
    bad = tmp_path / "bad.json"
    bad.write_text("{")
    proc = subprocess.run([sys.executable, "-m", "deployspec.cli", "replay", str(bad)],
                          capture_output=True, text=True, check=False)
    assert proc.returncode == 2
    assert proc.stderr.startswith("deployspec: error:") and "Traceback" not in proc.stderr


def test_the_program_flushes_its_output_and_keeps_its_exit_status():
    """``run`` leaves with ``os._exit`` (freeing a large search's states took seconds)."""
    proc = subprocess.run([sys.executable, "-m", "deployspec", "check", "--model", "capi", "--variant",
                           "capi-2022", "--engine", "explore", "--property", "capacity_within_bound"],
                          capture_output=True, text=True, check=False, env=BUFFERED)
    assert proc.returncode == 1, proc.stderr
    assert "\ncapi-2022  VIOLATED" in proc.stdout and "Traceback" not in proc.stderr
    assert proc.stdout.endswith("to judge it by that: deployspec check --model capi --variant capi-2022 --declared "
                                "--property capacity_within_bound\n")  # the last line, whole


def test_the_program_still_runs_exit_handlers():
    """Contract implementations are stopped by an ``atexit`` handler: it must still run."""
    script = ("import atexit, sys; atexit.register(print, 'exit handlers ran'); "
              "sys.argv = ['deployspec', 'variants']; from deployspec.cli import run; run()")
    proc = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, check=False,
                          env=BUFFERED)
    assert proc.returncode == 0, proc.stderr
    assert "capi-safe" in proc.stdout and proc.stdout.rstrip().endswith("exit handlers ran")


def test_output_that_cannot_be_written_is_one_line_exit_2(tmp_path):
    """stdout on a full disk, or closed: no traceback, no 'Exception ignored' at exit."""
    for stdout in (open("/dev/full", "w"), None):  # noqa: SIM115 (closed below)
        proc = subprocess.run(
            [sys.executable, "-m", "deployspec.cli", "show", str(SEED)],
            stdout=stdout if stdout is not None else subprocess.DEVNULL, stderr=subprocess.PIPE,
            text=True, check=False, env=BUFFERED,  # (so the last flush is main's)
            **({} if stdout is not None else {"preexec_fn": lambda: __import__("os").close(1)}),
        )
        if stdout is not None:
            stdout.close()
        assert proc.returncode == 2, proc.stderr
        assert proc.stderr.count("\n") == 1 and proc.stderr.startswith("deployspec: error:"), proc.stderr


def test_a_verdict_cut_short_by_a_closed_pipe_is_not_a_success():
    """``replay A B | true``: the trace reproduces (exit 1); the pipe closed before
    the verdict was written, so the status is SIGPIPE's 141, never 0."""
    proc = deployspec("replay", str(SEED), str(SEED), stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    proc.stdout.close()
    assert proc.wait(60) == 141
    assert "Traceback" not in proc.stderr.read()
    proc.stderr.close()


@pytest.mark.parametrize("argv", [
    ("replay", str(SEED), str(SEED)),
    ("check", "--model", "slots", "--variant", "slots-webhook-tag", "--property", "no_latent_drift",
     "--budget", "0.5", "--json"),
], ids=["replay", "check --json"])
def test_a_closed_pipe_cuts_the_display_short_not_the_junit_report(tmp_path, argv):
    """``… --junit r.xml | head -2`` in a CI job: head leaves, the verdicts cannot be
    written; the run still writes its report (exit 141 all the same). It stopped at the
    first write, and a report of an earlier run stayed for the CI to publish."""
    report = tmp_path / "r.xml"
    report.write_text("an earlier run's report")
    proc = deployspec(*argv, "--junit", str(report), stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    proc.stdout.close()
    assert proc.wait(120) == 141
    err = proc.stderr.read()
    proc.stderr.close()
    assert "Traceback" not in err, err
    from .junit_reports import cases_of, totals_agree

    totals_agree(report)
    assert len(cases_of(report)) == (2 if argv[0] == "replay" else 1)


def test_a_closed_pipe_with_a_python_object_leaves_stderr_as_it_was(tmp_path):
    """replay --python … --junit r.xml | true: the object's call had lent stdout to stderr;
    the cut pointed descriptor 2 at /dev/null, and what came after (exit handlers, the
    object's threads, the last resort) was lost."""
    script = ("import atexit, sys; atexit.register(lambda: print('exit handlers ran', file=sys.stderr)); "
              f"sys.argv = ['deployspec', 'replay', {str(SEED)!r}, '--python', "
              f"'deployspec.contract.examples:capi_2022', '--junit', {str(tmp_path / 'r.xml')!r}]; "
              "from deployspec.cli import run; run()")
    proc = subprocess.Popen([sys.executable, "-c", script], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            text=True)
    proc.stdout.close()
    assert proc.wait(120) == 141
    err = proc.stderr.read()
    proc.stderr.close()
    assert "exit handlers ran" in err and "Traceback" not in err, err
    assert (tmp_path / "r.xml").exists()


def test_a_junit_report_cut_short_by_a_closed_pipe_is_141_not_a_usage_error(monkeypatch):
    """``--junit /dev/stdout | head``: the verdicts fit in the pipe, then head left and the
    report's write failed. It is the output cut short (141), as the verdicts' would be; it
    was "cannot write: Broken pipe", exit 2, or 141, as the timing fell."""
    from pathlib import Path

    from deployspec import outputs

    class Closed:
        def write(self, text):
            raise BrokenPipeError(32, "Broken pipe")

        def flush(self):
            pass

    monkeypatch.setattr(sys, "stdout", Closed())
    with pytest.raises(BrokenPipeError):  # (which cli.main turns into 141)
        outputs.write_output(Path("/dev/stdout"), "<testsuites/>", "--junit", "/dev/stdout")


def test_with_json_a_junit_link_to_stdout_is_refused_while_descriptor_1_is_stderrs(tmp_path):
    """Descriptor 1 points at stderr while a --json command runs (streams.document_only),
    so a link to /dev/stdout leads there: it is refused by the names it leads through."""
    link = tmp_path / "so.xml"
    link.symlink_to("/dev/stdout")
    proc = subprocess.run([sys.executable, "-m", "deployspec", "check", "--model", "slots", "--variant",
                           "slots-pipeline-immutable", "--property", "no_latent_drift", "--budget", "0.1",
                           "--json", "--junit", str(link)], capture_output=True, text=True, timeout=120, check=False)
    assert proc.returncode == 2 and proc.stdout == ""
    assert proc.stderr == f"deployspec: error: --junit {link}: standard output carries --json; write the report to a file\n"


def test_json_inside_a_program_that_redirected_stdout_leaves_its_descriptor_1_alone(tmp_path):
    """A program calling cli.main with sys.stdout sent to a file: the document goes to the
    file, and descriptor 1 is the program's as before (it was left on that file)."""
    program = tmp_path / "host.py"
    program.write_text(
        "import contextlib, os\n"
        "from deployspec.cli import main\n"
        "with open('doc.json', 'w') as f, contextlib.redirect_stdout(f):\n"
        "    main(['variants', '--json'])\n"
        "os.write(1, b'host: after main\\n')\n")
    proc = subprocess.run([sys.executable, str(program)], cwd=tmp_path, capture_output=True, text=True,
                          timeout=120, check=False)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout == "host: after main\n"
    assert json.loads((tmp_path / "doc.json").read_text())["slots"]["variants"][1]["name"] == "slots-webhook-staging-tag"


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
    # -o /dev/stderr with stderr closed: it wrote into the /dev/null in its place, status 0
    # (refused now, said nowhere, so the status alone)
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
    assert proc.stderr.read() == "deployspec: error: -o /dev/stdout: standard output is closed\n"
    proc.stderr.close()


@pytest.mark.parametrize("argv", [["--help"], ["check", "--help"], ["variants", "--help"]])
def test_help_that_cannot_be_written_is_an_error_and_a_closed_pipe_is_not(argv):
    """argparse dropped a failed write of a long help (--help > /dev/full: status 0, nothing said);
    a short one stayed in the buffer until the exit, whose flush failed unseen."""
    with open("/dev/full", "w") as full:
        proc = deployspec(*argv, stdout=full, stderr=subprocess.PIPE, env=BUFFERED)
        _, err = proc.communicate(timeout=60)
    assert (proc.returncode, err) == (2, "deployspec: error: cannot write the output: No space left on device\n")
    proc = deployspec(*argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=BUFFERED)
    first = proc.stdout.readline()
    proc.stdout.close()  # as `| head -1` does
    _, err = proc.communicate(timeout=60)
    assert first.startswith("usage: deployspec") and (proc.returncode, err) == (0, "")
    proc = deployspec(*argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=BUFFERED)
    proc.stdout.close()  # `| true`: closed before the help is flushed at the exit
    _, err = proc.communicate(timeout=60)
    assert (proc.returncode, err) == (0, "")


def test_a_closed_or_full_stderr_does_not_cost_the_results(tmp_path):
    """Progress goes to stderr; when it cannot be written, the run goes on quietly."""
    out = tmp_path / "results.txt"
    with open(out, "w") as stdout, open("/dev/full", "w") as full:
        proc = deployspec("check", "--model", "capi", "--variant", "capi-2022", "--engine", "explore",
                           "--property", "capacity_within_bound", "--property", "single_active_deployment",
                           stdout=stdout, stderr=full)
        assert proc.wait(120) == 1
    assert "capi-2022 · capacity_within_bound · explore: violated" in out.read_text()


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


def test_version_says_the_installed_distribution():
    from importlib.metadata import version

    proc = deployspec("--version", stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    out, err = proc.communicate(timeout=60)
    assert (proc.returncode, out, err) == (0, f"deployspec {version('deployspec')}\n", "")
