"""Behaviours of the program's entrance that a mutation probe of deployspec.cli, argtypes,
progress, streams, interruption, text and profiles found unpinned.

They pin: check's default seed; an interruption held while loading timed from the
program's start and its report kept off a --json stdout; the exit status of a contract
run cut short by a closed pipe; a missing current folder said only when it is missing;
the out-of-memory hint for contract; a closed stdout refused for check --out and a usage
error said as itself then; a closed sys.stderr that costs no status; a SIGTERM ignored
on entry staying ignored under ``python -m deployspec.cli``; a SIGTERM while the exit
handlers run ending the process by its default; a --bound nested too deeply refused in
one line; a host process's own final flush left nothing to fail after a cut pipe or a
full disk; standard output named through /proc/<pid>/fd/1 or a relative link, and the
very file stdout goes to refused beside --json in the program; descriptor 1 put back and
its copy closed after --json in a host; a --python object's own output after the run
kept off stdout, with --json and with --junit; /dev/null's descriptor closed after a
drop; the
signals: each signal heard in ``kept(once=True)``, an unraisable KeyboardInterrupt
reported when no signal is pending, an enclosing block's pending signal kept, a mask
already blocking a signal left so; a character U+0080-U+009F quoted as a character; and
the Hypothesis profiles made on Hypothesis's defaults, ci's taken for an unknown one.
"""

from __future__ import annotations

import errno
import io
import json
import os
import re
import signal
import subprocess
import sys
import time
import xml.etree.ElementTree as ET
from types import SimpleNamespace

import pytest

from deployspec import cli, interruption, profiles, streams
from deployspec.text import quoted

from .cli_runs import BUFFERED, SEED


@pytest.fixture
def own_program(monkeypatch):
    """main() as the deployspec program runs it (its interruption is its own), with
    ``by`` and the held signals put back after the test."""
    monkeypatch.setattr(interruption, "OWN_PROCESS", True)
    monkeypatch.setattr(interruption, "by", None)
    monkeypatch.setattr(interruption, "HELD", None)
    return monkeypatch


@pytest.fixture
def stand_in(monkeypatch):
    """``stand_in(command, exc)``: the command raises ``exc``; the real stdout is never dropped."""
    monkeypatch.setattr(interruption, "by", None)
    monkeypatch.setattr(streams, "drop_stdout", lambda: None)

    def raising(command, exc):
        def cmd(args):
            raise exc
        monkeypatch.setitem(cli.COMMANDS, command, cmd)

    return raising


# --- cli: arguments and statuses ------------------------------------------------------


def test_check_s_seed_is_0_unless_given():
    """C02 (--seed default None): the default makes a check repeatable, as the help says."""
    assert cli.build_parser().parse_args(["check"]).seed == 0


def test_an_interruption_held_while_loading_is_timed_from_the_program_s_start(own_program, tmp_path, capsys):
    """C06 (the report's time counted from main, not from the program's start): a CI
    timeout 100 s into loading reads "after 100 s", not "after 0.0 s"."""
    own_program.setattr(interruption, "HELD", ([signal.SIGTERM], {}, time.time() - 100))
    report = tmp_path / "r.xml"
    assert cli.main(["check", "--model", "capi", "--junit", str(report)]) == 130
    (error,) = ET.parse(report).getroot().iter("error")
    seconds = float(re.search(r"interrupted \(SIGTERM\) after ([\d.]+) s", error.get("message")).group(1))
    assert seconds >= 100


def test_an_interrupted_start_writes_no_report_onto_a_json_stdout(own_program, capsys):
    """C25 (json_on_stdout dropped for the interrupted report): ``--json --junit /dev/stdout``
    is refused, as a run that started would refuse it; the XML was written to stdout."""
    own_program.setattr(interruption, "HELD", ([signal.SIGTERM], {}, time.time()))
    assert cli.main(["check", "--model", "capi", "--json", "--junit", "/dev/stdout"]) == 130
    out, err = capsys.readouterr()
    assert out == ""
    assert err == ("deployspec: interrupted\ndeployspec: error: --junit /dev/stdout: standard output carries "
                   "--json; write the report to a file\n")


def test_a_contract_run_cut_short_by_a_closed_pipe_is_not_a_success(stand_in, capsys):
    """C18 (contract left out of VERDICTS): ``contract … | head`` must end 141, never 0."""
    stand_in("contract", BrokenPipeError(errno.EPIPE, "Broken pipe"))
    assert cli.main(["contract", "--model", "capi", "--exec", "true"]) == 141
    assert capsys.readouterr().err == ""


def test_a_missing_file_without_a_name_is_not_blamed_on_the_current_folder(stand_in, capsys):
    """C21 (``and`` -> ``or``): the current folder exists, so the line must not say it was deleted."""
    stand_in("variants", FileNotFoundError(errno.ENOENT, "No such file or directory"))
    assert cli.main(["variants"]) == 2
    assert capsys.readouterr().err == "deployspec: error: cannot write the output: No such file or directory\n"


def test_a_contract_run_out_of_memory_hints_at_its_bounds(stand_in, capsys):
    """C28 (the hint for check only): contract has --bound and --budget too."""
    stand_in("contract", MemoryError())
    assert cli.main(["contract", "--model", "capi", "--exec", "true"]) == 1
    assert capsys.readouterr().err == "deployspec: error: out of memory (tighter bounds, --bound, or a --budget?)\n"


def test_a_closed_stderr_of_a_host_costs_no_status(monkeypatch):
    """C37 (_say catching OSError only): printing to a closed sys.stderr raises ValueError;
    main still returns its status, never raises."""
    closed = io.StringIO()
    closed.close()
    monkeypatch.setattr(sys, "stderr", closed)
    assert cli.main(["frobnicate"]) == 2


def test_a_bound_nested_too_deeply_is_one_line(capsys):
    """A06 (RecursionError not caught): valid JSON Python cannot hold is a usage error, not a traceback."""
    assert cli.main(["check", "--bound", "x=" + "[" * 5000 + "]" * 5000]) == 2
    assert capsys.readouterr().err == "deployspec: error: argument --bound: x: it is nested too deeply\n"


def _closed_stdout(*argv: str) -> tuple[int, str]:
    done = subprocess.run([sys.executable, "-m", "deployspec", *argv], stdout=subprocess.DEVNULL,
                          stderr=subprocess.PIPE, text=True, timeout=120, check=False,
                          preexec_fn=lambda: os.close(1))
    return done.returncode, done.stderr


def test_with_stdout_closed_check_is_refused_even_with_out(tmp_path):
    """C29 (any --out taken for "writes elsewhere"): check prints its verdicts on stdout;
    --out holds only the counterexamples, so the run is refused before it starts."""
    found = tmp_path / "found"
    assert _closed_stdout("check", "--model", "capi", "--variant", "capi-2022", "--property",
                          "single_active_deployment", "--budget", "0.5", "--out", str(found)) == (
        2, "deployspec: error: standard output is closed\n")
    assert not found.exists()


def test_with_stdout_closed_a_usage_error_is_said_as_itself():
    """C30 (a refused line taken to need stdout): the error says what is wrong with the line."""
    assert _closed_stdout("check", "--jobs", "0") == (2, "deployspec: error: argument --jobs: must be >= 1, got 0\n")


def test_a_sigterm_ignored_on_entry_stays_ignored_under_python_m_deployspec_cli():
    """C38 (run() keeping an ignored SIGTERM among the handlers to take over): ``nohup``-like
    starts of ``python -m deployspec.cli`` were stopped by the SIGTERM they ignore."""
    script = ("import signal, sys\n"
              "signal.signal(signal.SIGTERM, signal.SIG_IGN)\n"
              "from deployspec import cli\n"
              "def said(args):\n"
              "    print(signal.getsignal(signal.SIGTERM) is signal.SIG_IGN)\n"
              "    return 0\n"
              "cli.COMMANDS['variants'] = said\n"
              "sys.argv = ['deployspec', 'variants']\n"
              "cli.run()\n")
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=60, check=False)
    assert (done.returncode, done.stdout, done.stderr) == (0, "True\n", "")


def test_a_sigterm_while_the_exit_handlers_run_ends_the_program_by_its_default():
    """C41 (the handlers not given back before the exit handlers): the SIGTERM raised a
    KeyboardInterrupt inside an exit handler (a traceback, the handler cut short) and the
    program exited 0 instead of being stopped."""
    script = ("import atexit, os, signal, sys, time\n"
              "def stopped_meanwhile():\n"
              "    os.kill(os.getpid(), signal.SIGTERM)\n"
              "    time.sleep(30)\n"
              "atexit.register(stopped_meanwhile)\n"
              "sys.argv = ['deployspec', 'variants']\n"
              "from deployspec.cli import run\n"
              "run()\n")
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=60, check=False)
    assert done.returncode == -signal.SIGTERM and done.stderr == "", done.stderr


# --- a host's process: what is left for its own exit -----------------------------------


def _host(argv: list[str], **kwargs) -> subprocess.Popen:
    """A user's program calling main(argv) and exiting with its status, output buffered."""
    script = f"import sys\nfrom deployspec.cli import main\nsys.exit(main({argv!r}))\n"
    return subprocess.Popen([sys.executable, "-c", script], env=BUFFERED, text=True, stderr=subprocess.PIPE,
                            **kwargs)


@pytest.mark.parametrize("junit", [False, True])
def test_a_host_s_exit_after_a_cut_pipe_says_nothing_more(tmp_path, junit):
    """C17 (stdout not dropped on a closed pipe) and S14 (with --junit: a cut that did not
    point stdout at /dev/null): the host's final flush failed, "Exception ignored …
    BrokenPipeError" and exit status 120 instead of 141."""
    argv = ["replay", str(SEED), str(SEED)] + (["--junit", str(tmp_path / "r.xml")] if junit else [])
    proc = _host(argv, stdout=subprocess.PIPE)
    proc.stdout.close()
    err = proc.stderr.read()
    proc.stderr.close()
    assert (proc.wait(60), err) == (141, "")


def test_a_host_s_exit_after_a_full_disk_says_nothing_more():
    """C22 (stdout not dropped when the output cannot be written): one line, status 2, and
    no second failure ("Exception ignored", status 120) at the host's exit."""
    with open("/dev/full", "w") as full:
        proc = _host(["show", str(SEED)], stdout=full)
        err = proc.stderr.read()
        proc.stderr.close()
        status = proc.wait(60)
    assert (status, err) == (2, "deployspec: error: cannot write the output: No space left on device\n")


def test_a_host_gets_descriptor_1_back_after_json_and_no_descriptor_is_left_open(tmp_path):
    """S09 (descriptor 1 left on stderr after --json) and S10 (the document's copy not
    closed): the host's own output after main went to stderr; each run leaked a descriptor."""
    program = tmp_path / "host.py"
    program.write_text(
        "import os, sys\n"
        "from deployspec.cli import main\n"
        "main(['variants', '--json'])  # (what a first run loads and keeps open)\n"
        "before = sorted(os.listdir('/proc/self/fd'))\n"
        "main(['variants', '--json'])\n"
        "after = sorted(os.listdir('/proc/self/fd'))\n"
        "sys.stdout.flush()\n"
        "os.write(1, b'host: after main\\n')\n"
        "print(before == after or (before, after), file=sys.stderr)\n")
    done = subprocess.run([sys.executable, str(program)], capture_output=True, text=True, timeout=120, check=False)
    assert done.stdout.endswith("}\nhost: after main\n") and done.stderr == "True\n", done.stderr


# --- streams -----------------------------------------------------------------------------


@pytest.fixture
def document_elsewhere(monkeypatch, tmp_path):
    """As while --json's document is written: its descriptor is another than 1."""
    fd = os.open(tmp_path / "document.json", os.O_WRONLY | os.O_CREAT)
    monkeypatch.setattr(streams, "DOCUMENT_FD", fd)
    yield
    os.close(fd)


def test_proc_pid_fd_1_names_standard_output(document_elsewhere):
    """S03 (the /proc/<pid>/fd/1 clause dropped): this process's own descriptor 1 by its pid."""
    assert streams.is_stdout(f"/proc/{os.getpid()}/fd/1")


def test_a_relative_link_to_standard_output_is_read_from_its_own_folder(document_elsewhere, tmp_path, monkeypatch):
    """S04 (a link's relative target read from the current folder): a link beside the
    report naming ../../…/dev/stdout leads there, wherever the run is started."""
    link = tmp_path / "so.xml"
    link.symlink_to(os.path.relpath("/dev/stdout", tmp_path))
    deeper = tmp_path.joinpath("a", "b", "c", "d")
    deeper.mkdir(parents=True)
    monkeypatch.chdir(deeper)
    assert streams.is_stdout(str(link))


def test_json_and_a_junit_report_named_as_the_file_stdout_goes_to_are_refused(tmp_path):
    """S05 (is_stdout comparing with descriptor 1, stderr's while --json runs):
    ``--json --junit r.xml > r.xml`` would write the report over the document."""
    report = tmp_path / "r.xml"
    with open(report, "w") as out:
        done = subprocess.run([sys.executable, "-m", "deployspec", "check", "--model", "slots", "--variant",
                               "slots-pipeline-immutable", "--property", "no_latent_drift", "--budget", "0.1",
                               "--json", "--junit", str(report)], stdout=out, stderr=subprocess.PIPE, text=True,
                              timeout=120, check=False)
    assert (done.returncode, done.stderr, report.read_text()) == (
        2, f"deployspec: error: --junit {report}: standard output carries --json; write the report to a file\n", "")


CHATTY_OBJECT = """
import atexit
from deployspec.contract.examples import ReferenceImplementation

atexit.register(print, "the object's exit handler")


def make():
    return ReferenceImplementation("capi", "capi-2022")
"""


@pytest.mark.parametrize("option", ["--json", "--junit"])
def test_a_python_object_s_output_after_the_run_stays_off_stdout(tmp_path, option):
    """S11 (document_only putting sys.stdout back over --python's lender) and S21 (outlasting
    doing so): the object's exit handler printed into the --json document, or after the verdicts."""
    (tmp_path / "chattyobject.py").write_text(CHATTY_OBJECT)
    extra = ["--junit", str(tmp_path / "r.xml")] if option == "--junit" else ["--json"]
    done = subprocess.run([sys.executable, "-m", "deployspec", "replay", str(SEED), "--python", "chattyobject:make",
                           *extra], capture_output=True, text=True, cwd=tmp_path,
                          env={**os.environ, "PYTHONPATH": str(tmp_path)}, timeout=120, check=False)
    assert done.returncode == 1, done.stderr
    assert "exit handler" not in done.stdout and done.stderr.endswith("the object's exit handler\n"), done.stderr
    if option == "--json":
        json.loads(done.stdout)


def test_dropping_stdout_leaves_no_descriptor_open(monkeypatch, tmp_path):
    """S19 (/dev/null's descriptor not closed): each closed pipe or full disk leaked one."""
    fd = os.open(tmp_path / "out", os.O_WRONLY | os.O_CREAT)
    monkeypatch.setattr(sys, "stdout", SimpleNamespace(fileno=lambda: fd))
    try:
        before = len(os.listdir("/proc/self/fd"))
        streams.drop_stdout()
        assert len(os.listdir("/proc/self/fd")) == before
    finally:
        os.close(fd)


# --- interruption --------------------------------------------------------------------------


@pytest.fixture
def signals(monkeypatch):
    monkeypatch.setattr(interruption, "by", None)
    monkeypatch.setattr(interruption, "pending", None)


def test_with_once_every_signal_is_heard_and_only_the_first_raises(signals):
    """I03 (on_signal called only when it raises): a --jobs process's SIGUSR1 after the
    SIGTERM of a CI timeout went unheard."""
    heard = []
    with interruption.kept([signal.SIGUSR1], heard.append, once=True):
        with pytest.raises(KeyboardInterrupt):
            signal.raise_signal(signal.SIGUSR1)
        signal.raise_signal(signal.SIGUSR1)  # heard, not raised
    assert heard == [signal.SIGUSR1, signal.SIGUSR1]


def test_an_unraisable_interruption_with_no_signal_pending_is_reported(monkeypatch, signals):
    """I04 (every unraisable KeyboardInterrupt swallowed): only the one a signal of the
    block raised is known and kept; another is the code's own, reported."""
    reported = []
    monkeypatch.setattr(sys, "unraisablehook", reported.append)
    unraisable = SimpleNamespace(exc_value=KeyboardInterrupt())
    with interruption.sigterm_interrupts():
        sys.unraisablehook(unraisable)
    assert reported == [unraisable]


def test_an_inner_block_leaves_the_enclosing_block_s_pending_signal(signals):
    """I05 (pending cleared at an inner block's end): the outer search no longer stopped at its next step."""
    with interruption.kept([signal.SIGUSR1]):
        with pytest.raises(KeyboardInterrupt):
            signal.raise_signal(signal.SIGUSR1)
        with interruption.kept([signal.SIGUSR2]):
            pass
        with pytest.raises(KeyboardInterrupt):
            interruption.raise_if_pending()
    assert interruption.pending is None


@pytest.mark.skipif(not hasattr(signal, "pthread_sigmask"), reason="POSIX signal masks only")
def test_a_signal_blocked_before_starting_stays_blocked_after():
    """I08 (the mask restored by unblocking the signals): a block within another's, or a
    thread that had blocked SIGUSR1 itself, had it unblocked."""
    before = signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGUSR1})
    try:
        with interruption.held_while_starting({signal.SIGUSR1}):
            pass
        assert signal.SIGUSR1 in signal.pthread_sigmask(signal.SIG_BLOCK, [])
    finally:
        signal.pthread_sigmask(signal.SIG_SETMASK, before)


# --- text and profiles ----------------------------------------------------------------------


@pytest.mark.parametrize("char", ["\x80", "\x85", "\x9f"])
def test_a_quoted_c1_control_character_reads_as_a_character(char):
    """T08 (only \\xa0-\\xff respelled): repr's \\x85 reads as the byte 0x85 of a name that was not UTF-8."""
    assert quoted(char) == f"'\\u{ord(char):04x}'"


def test_a_profile_is_made_on_hypothesis_s_defaults_not_on_the_one_loaded():
    """R03 (made on the loaded profile): a user's profile (here derandomize) leaked into
    the settings of deployspec's state machines."""
    from hypothesis import settings

    settings.register_profile("a-user-s", derandomize=True)
    settings.load_profile("a-user-s")
    try:
        assert profiles.made("ci").derandomize is False
    finally:
        profiles.load()  # the suite's profile back, as tests/conftest.py loads it


def test_an_unknown_profile_is_taken_as_ci_by_a_test_that_chooses_its_own(monkeypatch):
    """R07 (chosen reading an unknown DEPLOYSPEC_PROFILE): a KeyError at the import of the
    shipped state machines, outside the plugin that says it in one line."""
    monkeypatch.setenv("DEPLOYSPEC_PROFILE", "thourough")
    assert profiles.chosen().max_examples == profiles.made("ci").max_examples
