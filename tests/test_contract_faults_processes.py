"""No process the implementation starts outlives the run: signals to the harness, escaped sessions, detached children."""

from __future__ import annotations

import shlex
import subprocess
import sys
import time

import pytest

from .fault_runs import alive, ended_soon, fake


def test_sigterm_to_the_harness_ends_the_implementation_too(tmp_path):
    import signal
    import subprocess

    pidfile = tmp_path / "pids"
    harness_proc = subprocess.Popen(
        [sys.executable, "-m", "deployspec", "contract", "--exec", fake("hang", pidfile), "--model", "capi",
         "--timeout", "60", "--examples", "5"], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    deadline = time.monotonic() + 60
    while len(pidfile.read_text().split() if pidfile.exists() else []) < 2 and time.monotonic() < deadline:
        time.sleep(0.05)  # until the fake hangs (and has started its child)
    harness_proc.send_signal(signal.SIGTERM)
    assert harness_proc.wait(timeout=30) == 130
    assert "interrupted" in harness_proc.stderr.read()
    pids = [int(p) for p in pidfile.read_text().split()]
    deadline = time.monotonic() + 5
    while any(alive(p) for p in pids) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not any(alive(p) for p in pids)


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="PR_SET_CHILD_SUBREAPER is Linux's")
def test_a_process_escaping_into_its_own_session_is_ended_with_the_implementation(tmp_path):
    """The deployspec program adopts what the implementation leaves behind in a
    session of its own (out of reach of its process group), and ends it too."""
    pidfile = tmp_path / "escaped"
    script = tmp_path / "escapes.py"
    script.write_text(
        "import subprocess, sys\n"
        "p = subprocess.Popen(['sleep', '600'], start_new_session=True)\n"
        f"open({str(pidfile)!r}, 'w').write(str(p.pid))\n"
        "sys.exit(0)\n")
    proc = subprocess.run([sys.executable, "-m", "deployspec", "contract", "--exec",
                           f"{shlex.quote(sys.executable)} {shlex.quote(str(script))}", "--model", "capi",
                           "--examples", "2", "--timeout", "2"], capture_output=True, text=True, timeout=60,
                          check=False)
    assert proc.returncode == 3, proc.stderr
    assert ended_soon(int(pidfile.read_text())), "the escaped process outlived the run"


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="PR_SET_CHILD_SUBREAPER is Linux's")
def test_a_process_detached_as_the_program_starts_is_ended_too(tmp_path):
    pidfile = tmp_path / "detached"
    server = f"{shlex.quote(sys.executable)} -m deployspec serve --model capi --variant capi-safe"
    command = f"setsid -f sh -c 'echo $$ > {pidfile}; exec sleep 600'; exec {server}"
    proc = subprocess.run([sys.executable, "-m", "deployspec", "contract", "--exec", command, "--model", "capi",
                           "--examples", "2", "--property", "capacity_within_bound"],
                          capture_output=True, text=True, timeout=60, check=False)
    assert proc.returncode == 0, proc.stderr
    assert ended_soon(int(pidfile.read_text())), "the detached process outlived the run"
