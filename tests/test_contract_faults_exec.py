"""Faults of a program behind the protocol (--exec): one line, exit 3, none of its processes left running."""

from __future__ import annotations

import subprocess
import sys
import time
from xml.etree import ElementTree

import pytest

from deployspec.cli import main
from deployspec.contract import subprocess_adapter
from deployspec.models import get_model

from .fault_runs import alive, fake

PREFIX = "deployspec: implementation fault at step 0 (cancel()) while checking single_active_deployment: "


def contract(capsys, command: str, *extra: str) -> tuple[int, str]:
    status = main(["contract", "--exec", command, "--model", "capi", "--timeout", "0.5",
                   "--examples", "5", "--property", "single_active_deployment", *extra])
    return status, capsys.readouterr().err


@pytest.mark.parametrize("mode, cause", [
    ("crash", ("the implementation exited with status 1 before replying to action cancel; its stderr ends "
              "with: fake: simulated crash (TypeError: cannot read 'instances' of undefined)")),
    # its last words on stderr, as for a crash: often what it waits for
    ("hang", ("no reply to action cancel within 0.5 s (hung? see --timeout; or its reply waits unflushed in its "
              "output buffer); its stderr ends with: fake: "
              "waiting for the database lock")),
    ("garbage", "reply to action cancel is not JSON: 'DEBUG: deploying app now'"),
    ("wrong-id", "reply to action cancel carries id 132, but the request's id is 32"),
    ("bad-schema", ("observation violates the capi observation schema: processes/0/instances/0: "
                   "'UP' is not one of ['STARTING', 'RUNNING', 'CRASHED']")),
    ("bad-reply", ("reply to action cancel violates the protocol (performed schema): "
                  "top level: 'observation' is a required property")),
    ("error", "the implementation reported an error on action cancel: database is locked"),
    ("spawn-and-crash", "the implementation exited with status 1 before replying to action cancel"),
    ("deep", "reply to action cancel cannot be read: it is nested too deeply"),
    ("big-number", ("reply to action cancel cannot be read: Exceeds the limit (4300 digits) for integer "
                    "string conversion: value has 5000 digits")),
    # clipped to one line of at most 300 characters, the escape shown, not sent to the terminal
    ("error-flood", ("the implementation reported an error on action cancel: \\x1b[2JTraceback (most recent "
                     "call last):\\n  File x\\n")),
    ("big-id", ("observation violates the capi observation schema: processes/0/id: 20000 is greater than "
                "the maximum of 10000")),
    # a valid reply, but a refusal must leave the state unchanged (docs/protocol.md)
    ("dirty-refusal", ("rejected (nothing to cancel), yet the observation changed (a refusal must leave the "
                       "state unchanged, and nothing changes but by actions): droplets: after has an "
                       "entry with id 0, which before lacks")),
])
def test_each_fault_is_one_line_exit_3_and_leaves_no_process(capsys, tmp_path, mode, cause):
    pidfile = tmp_path / "pids"
    status, err = contract(capsys, fake(mode, pidfile))
    assert status == 3
    assert len(err.strip().splitlines()) == 1, err
    first, second = err.strip().split("; steps since reset ")
    if mode == "error-flood":
        assert first.startswith(PREFIX + cause) and len(first) <= len(PREFIX) + len("the implementation reported an error on action cancel: ") + 301 and "\x1b" not in first
    else:
        assert first == PREFIX + cause
    # the fake misbehaves at its 14th action: the cancel the sweep of the initial state
    # probes (after the three pushes, each settled, then tick, two stages, a deploy)
    assert second == ("(cancel() REJECTED)" if mode == "dirty-refusal" else "(cancel())")
    pids = [int(p) for p in pidfile.read_text().split()]
    assert len(pids) == (2 if mode in ("hang", "spawn-and-crash") else 1)
    deadline = time.monotonic() + 5  # init reaps the orphaned zombies in its own time
    while any(alive(p) for p in pids) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not any(alive(p) for p in pids), "a process of the implementation outlived the run"


@pytest.mark.parametrize("mode", ["closes-stdin", "closes-stdin-late"])
def test_a_program_that_stops_reading_is_said_to_have_closed_its_stdin(capsys, tmp_path, mode):
    """Whether the next request's write fails or it sits unread in the pipe (then the
    wait times out, and the closed pipe is named, not a hang)."""
    # as typed: the shell is made the program (``exec``), so none holds the pipe open
    status, err = contract(capsys, fake(mode, tmp_path / "pids"))
    assert status == 3
    assert "the implementation closed its stdin before replying to " in err.splitlines()[0]


@pytest.mark.parametrize("timeout, waited", [("0.2", "0.6"), ("1", "1")])
def test_a_program_slow_to_start_is_told_that_a_longer_timeout_waits_longer(capsys, monkeypatch, timeout, waited):
    """The first reply after start is given the startup allowance (30 s; 0.6 here) or
    --timeout, whichever is longer: the message says so, not that --timeout does not apply."""
    monkeypatch.setattr(subprocess_adapter, "STARTUP_TIMEOUT", 0.6)
    status = main(["contract", "--exec", "exec sleep 30", "--model", "capi", "--timeout", timeout,
                   "--examples", "1"])
    err = capsys.readouterr().err
    assert status == 3
    assert err.strip() == ("deployspec: implementation fault at reset: "
                           f"no reply to reset within {waited} s (hung, or its replies wait in its output "
                           "buffer (flush after each line)? the first reply after start is given "
                           "0.6 s, or --timeout if longer)")


@pytest.mark.parametrize("mode, where, cause", [
    # the cancel ends the sweep's example: the stale second reply answers the next reset
    ("double-reply", "reset", ("reply to reset carries the id of the request before it, 32: "
                               "a second reply to action cancel, which had its reply already")),
    # it exits once it has answered: the next request is the reset of the next example
    ("exit-after-reply", "reset", ("the implementation exited with status 0 before replying to reset, after "
                                   "its reply to action cancel")),
])
def test_a_reply_too_many_or_an_exit_after_one_names_the_request_it_follows(capsys, tmp_path, mode, where, cause):
    status, err = contract(capsys, fake(mode, tmp_path / "pids"))
    assert status == 3
    assert err.splitlines()[0].startswith(
        f"deployspec: implementation fault at {where} while checking single_active_deployment: {cause}"), err


@pytest.mark.parametrize("mode, cause", [
    ("bad-initial-observation", "observation violates the capi observation schema: "),
    ("error-initial-observation", "the implementation reported an error on observe: observe not ready"),
])
def test_a_bad_initial_observation_is_said_as_such_not_as_the_reset(capsys, tmp_path, mode, cause):
    """The adapter asks for it with the reset, in one write: the fault is the observation's."""
    status, err = contract(capsys, fake(mode, tmp_path / "pids"))
    assert status == 3
    # before it ever answered: a fault at start, not of the check the run began with
    assert err.startswith(f"deployspec: implementation fault at the initial observation: {cause}"), err


def test_the_summary_gives_deployspecs_exit_status_not_the_programs(capsys):
    """The program exits 7; the fault line quotes that, the summary's last line says what
    deployspec exits with, in words that cannot be read as the program's status."""
    status = main(["contract", "--exec", "exit 7", "--model", "capi", "--examples", "1"])
    out, err = capsys.readouterr()
    assert status == 3
    assert "the implementation exited with status 7 before replying to reset" in err
    assert out.splitlines()[-1] == "FAULT: the implementation failed; the run stopped there (deployspec exits 3)"
    # the checks it never reached are listed as such, not left out
    names = [p.name for p in get_model("capi").properties]
    rows = [line.split(None, 1) for line in out.splitlines()[-len(names) - 2:-1]]
    assert rows == [["start", "FAULT"], *[[name, "not run"] for name in names]], rows


def test_a_command_that_cannot_start_is_a_fault_at_start(capsys, tmp_path):
    """Not blamed on the check the run began with (which depended on --property): the
    JUnit case is ``start``, --json's ``fault.checking`` null, as for a --python import.
    (Through ``exec``: a missing program named first is a usage error, before the run.)"""
    report = tmp_path / "r.xml"
    status, err = contract(capsys, "exec /nonexistent/impl --serve", "--junit", str(report))
    assert status == 3
    assert err.startswith("deployspec: implementation fault at reset: "
                          "the implementation exited with status 127 before replying to reset; its stderr ends with:")
    cases = [(case.get("name"), [child.tag for child in case])
             for case in ElementTree.parse(report).getroot().iter("testcase")]
    assert cases[0] == ("start", ["error"]) and {tags[0] for _, tags in cases[1:]} == {"skipped"}


def test_a_long_last_stderr_line_keeps_its_end(capsys, tmp_path):
    """A structured log line puts its message last: the line is cut in its middle (the
    cause was cut away with the end of 600 characters, a user's report)."""
    program = tmp_path / "impl.py"
    program.write_text("import sys\nsys.stderr.write('{\"level\": \"fatal\", \"trace\": \"' + 'ab' * 300 + "
                       "'\", \"msg\": \"connection refused\"}\\n')\nsys.exit(1)\n")
    status, err = contract(capsys, f"{sys.executable} {program}")
    assert status == 3
    assert err.rstrip().endswith('abab", "msg": "connection refused"}') and '{"level": "fatal"' in err, err


def test_a_form_feed_in_the_last_stderr_line_keeps_what_came_before(capsys, tmp_path):
    program = tmp_path / "impl.py"
    program.write_text("import sys\nsys.stderr.write('FATAL: \\x0cdisk full\\n')\nsys.exit(1)\n")
    status, err = contract(capsys, f"{sys.executable} {program}")
    assert status == 3 and err.rstrip().endswith("its stderr ends with: FATAL: \\x0cdisk full"), err


def test_only_the_tail_of_a_programs_stderr_is_kept():
    """A flood on stderr is read as it comes and forgotten but for its last bytes."""
    from deployspec.contract.leftovers import StderrTail

    tail = StderrTail(keep=4096)
    proc = subprocess.Popen([sys.executable, "-c", ("import sys\nfor i in range(20000): print('x' * 500, "
                             "file=sys.stderr)\nprint('the last line', file=sys.stderr)")], stderr=tail.write_end)
    tail.started()
    assert proc.wait(60) == 0
    text = tail.tail(settle=True)
    assert text.endswith("the last line\n") and len(text.encode()) <= 4096
    assert not tail._reader.is_alive()  # the end of the output was seen


def test_a_hang_of_a_program_is_saved_shortened(capsys, tmp_path):
    """Each try of a hang runs in a new process (the hung one ended): the steps saved are
    shortened, halves first, within the time of a few hangs (a user's hang of 41 steps was
    saved as found, where a push and the scale did it), and no process outlives the run."""
    from deployspec import traces

    pidfile = tmp_path / "pids"
    status = main(["contract", "--exec", fake("hangs-scaling-to-zero", pidfile), "--model", "capi", "--timeout", "0.5",
                   "--examples", "30", "--property", "single_active_deployment", "--out", str(tmp_path / "found")])
    assert status == 3, capsys.readouterr().err
    (saved,) = (tmp_path / "found").glob("*--fault--*.json")
    trace = traces.load(saved)
    assert trace["fault"]["action"] == {"type": "scale", "instances": 0}
    assert [s["action"]["type"] for s in trace["steps"]] == ["push"]  # (the app, then the scale that hangs)
    assert trace["extra"]["minimized_by_replay"] is True
    pids = [int(p) for p in pidfile.read_text().split()]
    deadline = time.monotonic() + 5
    while any(alive(p) for p in pids) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not any(alive(p) for p in pids), "a process of the implementation outlived the run"
