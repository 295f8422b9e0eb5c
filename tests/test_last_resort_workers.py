"""The last resort in a worker of a partitioned search (``--workers``): a rule handed in
that will not let go ends the program with one line and status 2, as without workers;
before, each worker wrote its own line and the run went on to exit 1 with an error cell
naming no rule ("worker 1 of 2 stopped without answering (exit code 2)")."""

import os
import subprocess
import sys
import tempfile

from deployspec.contract import last_resort

#: a design whose prior-process rule never returns and swallows every exception
SWALLOWS = """import attrs
from deployspec.reference.capi.variants import CAPI_SAFE
def prior(*args):
    while True:
        try:
            while True:
                pass
        except BaseException:
            pass
VARIANTS = [attrs.evolve(CAPI_SAFE, name="swallows", select_prior=prior, violates_beyond={})]
"""

#: the program, with the watcher's limits shortened (10 s and 5 s by default)
PROGRAM = """import sys
from deployspec import rule_watch
from deployspec.contract import last_resort
rule_watch.LIMIT, rule_watch._EVERY, last_resort.GRACE = 0.3, 0.05, 0.3
sys.argv[0] = "deployspec"
from deployspec.program import run
run()
"""


def test_a_worker_hands_its_line_to_the_parent_and_writes_nothing_itself():
    read_end, write_end = os.pipe()
    with tempfile.TemporaryFile() as stderr:
        pid = os.fork()
        if pid == 0:  # the worker
            try:
                os.close(read_end)
                os.dup2(stderr.fileno(), 2)
                last_resort.relay = lambda line, status: os.write(write_end, f"{status} {line}".encode())
                last_resort.end("error: its rule r did not return", 2)
            finally:
                os._exit(99)  # only if end returned
        os.close(write_end)
        _, waited = os.waitpid(pid, 0)
        handed = os.read(read_end, 1000).decode()
        os.close(read_end)
        stderr.seek(0)
        assert (os.waitstatus_to_exitcode(waited), handed, stderr.read()) == (
            2, "2 error: its rule r did not return", b"")


def test_the_last_line_is_escaped():
    """It names what others wrote (a design's module, a rule's file): a terminal escape there
    reached the terminal."""
    with tempfile.TemporaryFile() as stderr:
        pid = os.fork()
        if pid == 0:
            try:
                os.dup2(stderr.fileno(), 2)
                last_resort.end("error: variant x (entry point \x1b]0;title\x07): its rule r did not return", 2)
            finally:
                os._exit(99)  # only if end returned
        _, waited = os.waitpid(pid, 0)
        stderr.seek(0)
        assert (os.waitstatus_to_exitcode(waited), stderr.read()) == (
            2, b"deployspec: error: variant x (entry point \\x1b]0;title\\x07): its rule r did not return: stopping\n")


def test_a_rule_that_will_not_let_go_in_a_worker_ends_the_program_once(tmp_path):
    _ended_once(tmp_path, SWALLOWS, "--model", "capi", "--variant", "swallows", "--engine", "explore",
                "--property", "cancel_restores_last_good", "--workers", "2", "--budget", "60", line=3)


def test_the_relay_never_sends_into_a_message_the_search_is_sending():
    """A worker's sends hold a lock the relay waits on, a second at most: two messages
    written at once would reach the parent as one unreadable one."""
    import multiprocessing
    import threading

    from deployspec.partition_worker import Sending

    parent, child = multiprocessing.Pipe()
    sending = Sending(child)
    sending.lock.acquire()  # the search, mid-send
    gave_up = threading.Thread(target=sending.send, args=(("ended", ("x", 2)),), kwargs={"timeout": 0.1})
    gave_up.start()
    gave_up.join(5)
    assert not gave_up.is_alive() and not parent.poll(0.2)
    sending.lock.release()
    sending.send(("ended", ("y", 2)), timeout=0.1)
    assert parent.recv() == ("ended", ("y", 2))


def test_a_rule_that_will_not_let_go_in_a_jobs_process_ends_the_program_once(tmp_path):
    """``--jobs``: its processes are spawned, so they did not know they were the program's,
    and the last resort never came: the run waited for ever on the rule. (The limits are
    shortened by the design's module, which each spawned process loads.)"""
    shortened = ("from deployspec import rule_watch\nfrom deployspec.contract import last_resort\n"
                 "rule_watch.LIMIT, rule_watch._EVERY, last_resort.GRACE = 0.3, 0.05, 0.3\n")
    _ended_once(tmp_path, shortened + SWALLOWS, "--model", "capi", "--variant", "swallows", "--variant", "capi-safe",
                "--engine", "explore", "--property", "cancel_restores_last_good", "--jobs", "2", "--budget", "60",
                line=6)


def test_a_last_resort_writes_the_report_of_what_was_judged(tmp_path):
    """The program ended by a rule that will not let go left an earlier run's --junit report
    in place (and this run's verdicts in none): CI took the old report for this run's."""
    import xml.etree.ElementTree as ET

    report = tmp_path / "r.xml"
    report.write_text('<?xml version="1.0"?><testsuites name="an earlier run" tests="0"/>\n')
    _ended_once(tmp_path, SWALLOWS, "--model", "capi", "--property", "cancel_restores_last_good", "--budget", "0.2",
                "--junit", str(report), line=3)
    root = ET.parse(report).getroot()
    assert root.get("name") == "deployspec check"
    cases = {(s.get("name"), c.get("name")): c for s in root for c in s.iter("testcase")}
    judged = [k for k, c in cases.items() if c.find("skipped") is None and c.find("error") is None]
    assert len(judged) == 5  # the shipped variants, judged before the design's search hung
    [error] = [c.find("error") for c in cases.values() if c.find("error") is not None]
    assert error.get("message").startswith("deployspec check: error: variant swallows (DEPLOYSPEC_VARIANTS module "
                                           "swallows): its rule select_prior (at swallows.py:3) did not return")
    # (not "interrupted": nothing interrupted it, and the error case says what ended it)
    assert cases["check capi · swallows", "cancel_restores_last_good"].find("skipped").get("message") == \
        "not judged: the run was ended"


def _ended_once(tmp_path, design: str, *check: str, line: int) -> None:
    """``check`` with ``design`` handed in ends with the rule's one line and status 2."""
    (tmp_path / "swallows.py").write_text(design)
    env = {**os.environ, "PYTHONPATH": str(tmp_path), "DEPLOYSPEC_VARIANTS": "swallows"}
    done = subprocess.run([sys.executable, "-c", PROGRAM, "check", *check], check=False, capture_output=True,
                          text=True, env=env, timeout=120, cwd=tmp_path)
    said = [ln for ln in done.stderr.splitlines() if "did not return" in ln]
    assert done.returncode == 2, done.stderr
    assert said == [("deployspec: error: variant swallows (DEPLOYSPEC_VARIANTS module swallows): its rule "
                     f"select_prior (at swallows.py:{line}) did not return within 0.3 s and could not be interrupted "
                     "(it swallows every exception, or waits in a system call): stopping")]
    assert "stopped without answering" not in done.stdout + done.stderr
