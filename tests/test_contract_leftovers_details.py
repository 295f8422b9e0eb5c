"""What a program under test leaves behind, and the last resort against one that will
not let go: details a mutation pass over deployspec/contract/leftovers.py and
last_resort.py found unpinned (the stderr tail's reading, ending and encoding,
the reaper asked only in the deployspec program, which children are reaped or
ended and how, the last resort's flush, line, status and cancellation)."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

from deployspec import interruption
from deployspec.contract import last_resort, leftovers

from .cli_runs import BUFFERED

# --- a program's stderr, and the processes it leaves behind --------------------------------


def _open_fds() -> set[str]:
    return set(os.listdir("/proc/self/fd"))


def test_stderr_keeps_4096_bytes_by_default_and_reads_bytes_that_are_not_utf8():
    fds = _open_fds()
    tail = leftovers.StderrTail()
    assert tail.keep == 4096
    os.write(tail.write_end, b"a\xffb\n")
    tail.started()
    assert tail.tail(settle=True) == "a\udcffb\n"  # what it wrote last, though it wrote it just now (the byte kept)
    assert not tail._reader.is_alive()
    tail.close()  # again: nothing closed twice
    assert _open_fds() == fds  # both ends closed


def test_a_tail_stops_reading_though_a_process_the_program_left_holds_its_stderr():
    fds = _open_fds()
    tail = leftovers.StderrTail()
    holder = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"], stderr=tail.write_end)
    try:
        tail.started()
        tail.close()
        started = time.monotonic()
        tail._reader.join(5)
        assert not tail._reader.is_alive() and time.monotonic() - started < 2
        assert _open_fds() == fds
    finally:
        holder.kill()
        holder.wait()


def test_a_tail_closed_before_any_program_started_leaves_nothing_open():
    fds = _open_fds()
    tail = leftovers.StderrTail()
    tail.close()
    tail._reader.join(5)
    assert not tail._reader.is_alive() and _open_fds() == fds


@pytest.fixture
def child():
    """Start a child process of this one (``python -c CODE``); each is killed and reaped after the test."""
    started = []

    def start(code: str = "import time; time.sleep(60)") -> subprocess.Popen:
        proc = subprocess.Popen([sys.executable, "-c", code])
        started.append(proc)
        return proc

    yield start
    for proc in started:
        proc.kill()
        proc.wait()


def _gone(pid: int) -> bool:
    """Reaped: not even a zombie left (a child this process has not waited for is one)."""
    return not Path(f"/proc/{pid}").exists()


def _zombie(pid: int) -> bool:
    """Ended, and not yet waited for."""
    return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0] == "Z"


def _wait_until(predicate, seconds: float = 10.0) -> bool:
    deadline = time.monotonic() + seconds
    while not predicate() and time.monotonic() < deadline:
        time.sleep(0.02)
    return predicate()


def test_adopting_is_asked_only_in_the_deployspec_program(monkeypatch):
    monkeypatch.setattr(leftovers, "_ADOPTING", None)
    assert leftovers.adopting() is False and leftovers._ADOPTING is None  # pytest's process adopts nothing


def test_children_are_found_whatever_their_name_says(child):
    """A name (``comm``) may hold ')' and spaces: the fields after the last ')' are read."""
    odd = child("import time\nopen('/proc/self/comm', 'w').write('x) S 1 1 (')\ntime.sleep(60)")
    assert _wait_until(lambda: Path(f"/proc/{odd.pid}/comm").read_text().startswith("x)"))
    assert odd.pid in leftovers.children()


def test_children_skips_a_process_gone_meanwhile(monkeypatch, child):
    real = os.listdir
    proc = child()
    monkeypatch.setattr(os, "listdir", lambda path: ["4194305", "self", *real(path)])  # past pid_max
    assert proc.pid in leftovers.children()


def test_reap_exited_reaps_only_new_children_that_ended_and_waits_for_none(child):
    known = leftovers.children()
    mine = child("raise SystemExit(3)")  # the implementation's own: its status is its Popen's
    escaped = child("pass")
    running = child("import time; time.sleep(3)")
    assert _wait_until(lambda: _zombie(escaped.pid) and _zombie(mine.pid))
    started = time.monotonic()
    leftovers.reap_exited(known | {mine.pid})
    assert time.monotonic() - started < 1  # the running one is not waited for
    assert _gone(escaped.pid) and not _gone(running.pid)
    assert mine.wait(10) == 3


def test_end_escaped_kills_and_reaps_the_new_children_even_one_ignoring_sigterm(child):
    known = leftovers.children()
    mine = child()
    stubborn = child("import signal, time\nsignal.signal(signal.SIGTERM, signal.SIG_IGN)\ntime.sleep(3)")
    time.sleep(0.3)  # (its handler set)
    started = time.monotonic()
    leftovers.end_escaped(known | {mine.pid})
    assert time.monotonic() - started < 2
    assert _gone(stubborn.pid) and mine.poll() is None


def test_a_child_already_reaped_or_gone_is_no_error(monkeypatch):
    monkeypatch.setattr(leftovers, "children", lambda: {os.getppid()})  # not this process's child
    monkeypatch.setattr(os, "kill", lambda pid, sig: None)
    leftovers.reap_exited(set())
    leftovers.end_escaped(set())

    def gone(pid, sig):
        raise ProcessLookupError

    monkeypatch.setattr(os, "kill", gone)
    leftovers.end_escaped(set())


# --- the last resort ----------------------------------------------------------------------


def test_the_grace_is_the_one_the_docs_give():
    text = " ".join((Path(__file__).parents[1] / "docs" / "contract.md").read_text().split())
    assert f"has still not returned {last_resort.GRACE:g} s after its timeout ends the whole run" in text
    assert f"ends the run {last_resort.GRACE:g} s later too (exit 130)" in text


def test_own_process_is_the_deployspec_program_s(monkeypatch):
    assert last_resort.own_process() is False
    monkeypatch.setattr(interruption, "OWN_PROCESS", True)
    assert last_resort.own_process() is True


def _last_resort(code: str) -> subprocess.CompletedProcess:
    """A Python process that arms the last resort (its GRACE 0.2 s) as ``code`` says."""
    prelude = "import io, os, sys, time\nfrom deployspec.contract import last_resort\nlast_resort.GRACE = 0.2\n"
    return subprocess.run([sys.executable, "-c", prelude + textwrap.dedent(code)], capture_output=True,
                          timeout=60, check=False, env=BUFFERED)


def test_the_last_resort_flushes_what_was_printed_says_one_line_and_ends_with_its_status():
    done = _last_resort("""
        print("the verdict so far")
        sys.stdout = io.TextIOWrapper(os.fdopen(os.dup(1), "wb"))  # as lent out: buffered elsewhere
        print("and what the object printed")
        last_resort.last_resort("x \\udcff y", 7)
        time.sleep(30)
    """)
    assert done.returncode == 7
    assert done.stdout.decode() == "the verdict so far\nand what the object printed\n"
    assert done.stderr == b"deployspec: x \\xff y: stopping\n"  # the byte, as the streams show it


def test_the_last_resort_ends_the_process_though_stdout_and_stderr_fail():
    done = _last_resort("""
        print("lost")
        sys.stdout.close()  # flushing it raises
        os.close(2)
        last_resort.last_resort("x", 7)
        time.sleep(30)
    """)
    assert done.returncode == 7


def test_a_last_resort_cancelled_in_time_does_nothing_and_keeps_no_process_alive():
    done = _last_resort("""
        last_resort.GRACE = 1.0
        last_resort.last_resort("x", 7).cancel()
        time.sleep(1.5)
        print("went on")
        last_resort.GRACE = 30.0
        last_resort.last_resort("y", 8)  # not cancelled: the process still ends when its work does
    """)
    assert (done.returncode, done.stdout, done.stderr) == (0, b"went on\n", b"")
