"""No process the implementation starts outlives the run: signals to the harness, escaped sessions, detached children."""

from __future__ import annotations

import os
import shlex
import subprocess
import sys
import time
from pathlib import Path

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


FORKS_IN_PERFORM = """
import os, time
from deployspec.contract.examples import capi_safe


class Forks:
    def __init__(self):
        self.inner, self.forked = capi_safe(), False

    def reset(self, config):
        return self.inner.reset(config)

    def perform(self, action):
        if not self.forked:
            self.forked = True
            pid = os.fork()
            if pid == 0:
                {child}
            open({pidfile!r}, "w").write(str(pid))
        {hang}
        return self.inner.perform(action)

    def observe(self):
        return self.inner.observe()


def factory():
    return Forks()
"""

#: the child sleeps inside the object's code, holding deployspec's stdout
SLEEPS = "time.sleep(600)"
#: the child forks too, and both sleep: the grandchild is this process's only once its parent is ended
FAMILY = ("grandchild = os.fork()\n"
          "                if grandchild != 0:\n"
          "                    open({pidfile!r} + '.grandchild', 'w').write(str(grandchild))\n"
          "                time.sleep(600)")
#: the parent's call then swallows its timeout: the last resort ends the run
SWALLOWS = ("while True:\n"
            "            try:\n"
            "                time.sleep(600)\n"
            "            except BaseException:\n"
            "                pass")


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="PR_SET_CHILD_SUBREAPER is Linux's")
@pytest.mark.parametrize("child, hang, status", [
    (SLEEPS, "", 0),
    (FAMILY, "", 0),
    (SLEEPS, SWALLOWS, 3),
], ids=["sleeping child", "child and grandchild", "last resort"])
def test_what_a_python_object_forks_is_ended_with_the_run(tmp_path, child, hang, status):
    """A child a --python object forks and that stays inside its code held deployspec's
    stdout: a pipe's reader (``| tee``, a CI's log) waited for it after the run had ended."""
    pidfile = str(tmp_path / "child")
    (tmp_path / "forks.py").write_text(FORKS_IN_PERFORM.format(
        child=child.format(pidfile=pidfile), hang=hang, pidfile=pidfile))
    proc = subprocess.run([sys.executable, "-m", "deployspec", "contract", "--python", "forks:factory",
                           "--model", "capi", "--examples", "2", "--property", "capacity_within_bound",
                           "--timeout", "1"],
                          capture_output=True, text=True, timeout=60, check=False, cwd=tmp_path,
                          env={**os.environ, "PYTHONPATH": str(tmp_path)})
    assert proc.returncode == status, proc.stderr
    pids = [pidfile] + ([pidfile + ".grandchild"] if child is FAMILY else [])
    for path in pids:
        assert ended_soon(int(Path(path).read_text())), f"{path} outlived the run"


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="PR_SET_CHILD_SUBREAPER is Linux's")
def test_what_a_served_python_object_forks_is_ended_when_serving_ends(tmp_path):
    """``serve --python`` behind another harness: at the end of its input the server ended,
    and the object's child held its stdout (the harness's read of the replies waited)."""
    import json

    from deployspec.contract import protocol

    pidfile = str(tmp_path / "child")
    (tmp_path / "forks.py").write_text(FORKS_IN_PERFORM.format(
        child=SLEEPS, hang="", pidfile=pidfile))
    requests = [protocol.reset(1, "capi", {}), protocol.action(2, {"type": "push", "instances": 1})]
    proc = subprocess.run([sys.executable, "-m", "deployspec", "serve", "--model", "capi", "--python",
                           "forks:factory"], input="".join(json.dumps(r) + "\n" for r in requests),
                          capture_output=True, text=True, timeout=60, check=False, cwd=tmp_path,
                          env={**os.environ, "PYTHONPATH": str(tmp_path)})
    assert proc.returncode == 0, proc.stderr
    assert [json.loads(line)["type"] for line in proc.stdout.splitlines()] == ["reset_ok", "performed"]
    assert ended_soon(int(Path(pidfile).read_text())), "the child outlived serving"


LEAVES_ORPHANS = """
import subprocess
from deployspec.contract.examples import capi_safe


class Leaves:
    def __init__(self):
        self.inner = capi_safe()

    def reset(self, config):
        return self.inner.reset(config)

    def perform(self, action):
        subprocess.run(["sh", "-c", "sleep 0.1 &"], check=True)  # its child outlives the shell
        return self.inner.perform(action)

    def observe(self):
        return self.inner.observe()


def factory():
    return Leaves()
"""


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="PR_SET_CHILD_SUBREAPER is Linux's")
def test_what_a_served_object_s_descendants_leave_is_reaped_as_it_goes(tmp_path):
    """Adopted so that they end with serving, the object's orphans were this process's to
    reap: each that ended stayed a zombie until serving ended (a long run can run out of pids)."""
    import json

    from deployspec.contract import protocol

    (tmp_path / "leaves.py").write_text(LEAVES_ORPHANS)
    server = subprocess.Popen([sys.executable, "-m", "deployspec", "serve", "--model", "capi", "--python",
                               "leaves:factory"], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True,
                              cwd=tmp_path, env={**os.environ, "PYTHONPATH": str(tmp_path)})
    try:
        def ask(request) -> dict:
            server.stdin.write(json.dumps(request) + "\n")
            server.stdin.flush()
            return json.loads(server.stdout.readline())

        assert ask(protocol.reset(1, "capi", {}))["type"] == "reset_ok"
        for n in range(2, 5):  # the orphans of each step end within 0.1 s; the next looks after 1.2 s
            assert ask(protocol.action(n, {"type": "push", "instances": 1}))["type"] in ("performed", "rejected")
            time.sleep(1.2)
        zombies = [p for p in Path("/proc").iterdir() if p.name.isdigit() and _parent_and_state(p) == (server.pid, "Z")]
        assert len(zombies) <= 1, zombies  # (the last step's, not looked at yet)
    finally:
        server.stdin.close()
        server.wait(timeout=30)


def _parent_and_state(proc: Path) -> tuple[int, str] | None:
    try:
        fields = (proc / "stat").read_text().rsplit(")", 1)[1].split()
    except OSError:
        return None
    return int(fields[1]), fields[0]


def test_a_signal_during_a_closing_program_s_grace_still_ends_its_group(tmp_path):
    """Ctrl-C in the half second a hung program is given to end left it and its children
    running after the run (the grace's wait was cut short before the kill, and the program
    was already forgotten)."""
    from deployspec.contract import subprocess_adapter
    from deployspec.models import get_model

    pidfile = tmp_path / "pid"
    program = subprocess_adapter.Program(f"sleep 300 & echo $! > {shlex.quote(str(pidfile))}; exec sleep 300",
                                         model=get_model("capi"))
    program.start()
    deadline = time.monotonic() + 10
    while not pidfile.exists() or not pidfile.read_text().strip():
        assert time.monotonic() < deadline
        time.sleep(0.02)
    proc, child = program.proc, int(pidfile.read_text())
    waited = proc.wait

    def interrupted(timeout=None):
        if timeout is not None:  # the grace: a Ctrl-C lands there
            raise KeyboardInterrupt
        return waited()

    proc.wait = interrupted
    with pytest.raises(KeyboardInterrupt):
        program.close()
    assert ended_soon(proc.pid) and ended_soon(child)
    assert program in subprocess_adapter._RUNNING  # (known until its end is seen: atexit's close)
    proc.wait = waited
    program.close()
    assert program.proc is None and program not in subprocess_adapter._RUNNING
