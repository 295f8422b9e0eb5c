"""Details of a contract run, of ``serve`` and of the calls into an implementation that a
bug would get wrong quietly.

Found missing by mutation testing of ``contract/server``, ``harness``, ``cli``, ``plugin``,
``timed_call`` and ``subprocess_adapter``: a last request of exactly the line limit, read
at the end of input; ``serve`` leaving a SIGTERM ignored on entry ignored, giving its
handler back, ending with status 3 when the factory fails, and giving the served object
nothing to read; the time the import and the factory get; a check's vacuity judged
by what took effect while it ran; the sweep's time paid by the first check; a Ctrl-C the
object swallowed in the last replay of a shortening; a connection revived after a fault
meeting the program afresh, with its own fault box; a path holding ``--out`` kept in the
plugin's words; SIGALRM given back as it was, and ignored between calls; the watchdog's
full grace; a refusal's reason over ``--exec`` made one printable line.
"""

from __future__ import annotations

import io
import json
import select
import shlex
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest
from deployspec.reference.capi.actions import Cancel

from deployspec.contract import harness, last_resort, plugin, timed_call
from deployspec.contract.examples import ReferenceImplementation
from deployspec.contract.guard import ImplementationFault
from deployspec.contract.server import requests
from deployspec.contract.subprocess_adapter import Program, SubprocessAdapter
from deployspec.models import UsageError, get_model
from deployspec.outputs import writable_dir

from .fakes_sweep import StuckFromTheStart

TESTS = Path(__file__).parent
ROOT = TESTS.parent


def _capi():
    model = get_model("capi")
    return model, harness.config_for(model, None)


# --- serve (server.py, cli.py) ---------------------------------------------------------------


def test_a_last_request_of_exactly_the_limit_without_its_newline_is_a_request():
    """Mutant: ``len(line) < limit`` in ``requests``. A line is at most the limit, not counting
    its newline (docs/protocol.md); the last one, ended by the end of input, is no longer for
    lacking it, and must be answered, not refused as over the limit."""
    assert list(requests(io.BytesIO(b"abcd"), limit=4)) == [b"abcd"]
    assert list(requests(io.BytesIO(b"ab\nabcd"), limit=4)) == [b"ab\n", b"abcd"]


def _serve(*argv: str, **kwargs) -> subprocess.Popen:
    return subprocess.Popen([sys.executable, "-m", "deployspec", "serve", *argv], stdin=subprocess.PIPE,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, **kwargs)


def _reply(proc: subprocess.Popen, request: dict, wait: float = 30.0) -> dict | None:
    """The reply to ``request``, or None when none came within ``wait`` seconds."""
    proc.stdin.write(json.dumps(request).encode() + b"\n")
    proc.stdin.flush()
    if not select.select([proc.stdout], [], [], wait)[0]:
        return None
    line = proc.stdout.readline()
    return json.loads(line) if line else None


RESET = {"id": 1, "type": "reset", "protocol": 1, "model": "capi",
         "config": {"max_instances": 3, "max_deployments": 3, "max_droplets": 3, "max_in_flight": [1],
                    "canary_plans": [], "settle_steps": 80, "max_depth": None}}


def test_serve_started_with_sigterm_ignored_serves_on_through_one():
    """Mutant: ``serve`` taking SIGTERM over although it was ignored on entry. A supervisor
    (or ``nohup``) that ignores SIGTERM for its children keeps them serving through one
    (the CLI's rule, ``sigterm_interrupts``); serve ended quietly instead."""
    proc = _serve("--variant", "capi-safe", preexec_fn=lambda: signal.signal(signal.SIGTERM, signal.SIG_IGN))
    try:
        assert _reply(proc, RESET)["type"] == "reset_ok"
        proc.send_signal(signal.SIGTERM)
        time.sleep(0.2)  # (only lets a handler run first, if there were one: the test cannot pass by it)
        assert (_reply(proc, {"id": 2, "type": "observe"}) or {}).get("type") == "observation"
        proc.stdin.close()
        assert proc.wait(timeout=30) == 0
    finally:
        proc.kill()
        proc.wait()


def test_serve_gives_sigterm_back_as_it_found_it():
    """Mutant: the handler ``serve`` installs for SIGTERM left in place after it. Called in
    process (``main(["serve", …])``), a later SIGTERM would raise serve's own exception
    wherever the caller then is. Only under signals: the context manager itself."""
    from deployspec.contract.serve_command import _sigterm_ends_serving

    def theirs(signum, frame):
        pass

    previous = signal.signal(signal.SIGTERM, theirs)
    try:
        with _sigterm_ends_serving():
            assert signal.getsignal(signal.SIGTERM) is not theirs
        assert signal.getsignal(signal.SIGTERM) is theirs
    finally:
        signal.signal(signal.SIGTERM, previous)


def test_serve_ends_with_status_3_when_the_factory_fails():
    """Mutant: status 2 for a factory that raises. The docs: a factory that raises ends
    ``serve`` with status 3 (its fault), a name that is not there with 2 (a usage error);
    the contract test that runs it behind --exec sees only the fault line, not the status."""
    done = subprocess.run([sys.executable, "-m", "deployspec", "serve", "--model", "capi", "--python",
                           "contract_fakes:factory_exits"], cwd=TESTS, stdin=subprocess.DEVNULL,
                          capture_output=True, text=True, timeout=60, check=False)
    assert done.returncode == 3 and done.stdout == ""
    assert done.stderr.startswith("deployspec: error: contract_fakes:factory_exits()") and done.stderr.count("\n") == 1


class ReadsItsInput(ReferenceImplementation):
    """capi-safe, whose reset reads its standard input to the end (a prompt, a library that
    reads stdin): ``serve`` gives it nothing there, the protocol's requests being deployspec's."""

    def reset(self, config):
        if sys.stdin.read():
            raise AssertionError("the object read a request of the protocol")
        super().reset(config)


def reads_its_input():
    return ReadsItsInput("capi", "capi-safe")


def test_a_served_object_reading_its_input_reads_nothing():
    """Mutant: serve not giving the served object /dev/null as its input. The object's read
    then waits on the protocol's own pipe (or takes requests from it): the reset is never
    answered. The docs: its ``input()`` reads nothing."""
    proc = _serve("--model", "capi", "--python", f"{__name__}:reads_its_input", cwd=ROOT)
    try:
        reply = _reply(proc, RESET, wait=20)
        assert reply is not None and reply["type"] == "reset_ok", reply
    finally:
        proc.kill()
        proc.wait()


# --- the harness (harness.py) ----------------------------------------------------------------


def slow_to_make():
    time.sleep(0.5)
    return ReferenceImplementation("capi", "capi-safe")


def test_the_factory_gets_the_startup_time_not_only_the_call_timeout():
    """Mutant: the import and the factory timed by ``--timeout`` alone. The docs: they get at
    least 30 s (a factory that connects, loads, compiles), whatever the per-call timeout."""
    model, _ = _capi()
    with harness.Connection(harness.Target("python", f"{__name__}:slow_to_make"), model, timeout=0.05) as conn:
        assert conn.impl is not None


class RefusesDeploys(ReferenceImplementation):
    """capi-safe, refusing every deploy: a check holds vacuously."""

    def perform(self, action):
        return "no deploys here" if action["type"] == "deploy" else super().perform(action)


def refuses_deploys():
    return RefusesDeploys("capi", "capi-safe")


def test_a_check_is_vacuous_by_what_took_effect_while_it_ran():
    """Mutant: ``took_effect`` compared with zero, not with the count before the check. Deploys
    that took effect in an earlier check (the connection counts over the run) judged nothing
    of this one: it holds vacuously all the same, and must say so."""
    model, config = _capi()
    (prop,) = harness.plan_checks(model, None, ["single_active_deployment"], config)
    with harness.Connection(harness.Target("python", f"{__name__}:refuses_deploys"), model) as conn:
        conn.took_effect["deploy"] = 3  # what checks before this one saw
        r = harness.check_one(conn, prop, config=config, budget=None, seed=0, max_examples=5)
    assert r.verdict == "holds" and r.stats["vacuous"] == ["deploy"]


def test_the_first_check_pays_for_the_sweep_and_says_so():
    """Mutant: ``sweep_seconds`` 0 for the check that drove the sweep too. The docs: the time
    spent driving the implementation for that check (0 after the first)."""
    model, _ = _capi()
    run = harness.run(model, harness.Target("python", "deployspec.contract.examples:capi_safe"),
                      properties=["single_active_deployment", "app_stays_available"], max_examples=3)
    first, second = (r.stats["sweep_seconds"] for r in run.results)
    assert first > 0 and second == 0


class SwallowsCtrlC(StuckFromTheStart):
    """Breaks ``deployment_converges`` with no step (the sweep finds it, no search runs), and
    swallows a Ctrl-C that comes during its reset number ``at`` (a bare ``except:``)."""

    at = 0
    resets = 0

    def reset(self, config):
        SwallowsCtrlC.resets += 1
        if SwallowsCtrlC.resets == SwallowsCtrlC.at:
            try:
                signal.raise_signal(signal.SIGINT)
            except KeyboardInterrupt:
                pass
        super().reset(config)


def swallows_ctrl_c():
    return SwallowsCtrlC("capi", "capi-safe")


def test_a_ctrl_c_the_object_swallowed_stops_the_run_after_the_check(monkeypatch):
    """Mutant: no look at a pending interruption once a check returns. The search and the
    shortening look before each step or replay; a Ctrl-C the object swallowed in the last
    replay that shortens a trace the sweep found was lost: the run went on and ended with its
    verdicts, as if never stopped."""
    from deployspec import interruption

    model, _ = _capi()
    target = harness.Target("python", f"{__name__}:swallows_ctrl_c")
    monkeypatch.setattr(SwallowsCtrlC, "resets", 0)
    run = harness.run(model, target, properties=["deployment_converges"], max_examples=1)
    assert run.results[0].stats["found_by"] == "sweep"
    monkeypatch.setattr(SwallowsCtrlC, "at", SwallowsCtrlC.resets)  # the same run's last reset: a replay's
    monkeypatch.setattr(SwallowsCtrlC, "resets", 0)
    with interruption.kept((signal.SIGINT,)), pytest.raises(KeyboardInterrupt):
        harness.run(model, target, properties=["deployment_converges"], max_examples=1)
    assert SwallowsCtrlC.resets == SwallowsCtrlC.at


LIVES = textwrap.dedent("""
    import os

    from deployspec.contract.examples import ReferenceImplementation

    LIFE = os.path.join(os.path.dirname(os.path.abspath(__file__)), "life")


    class Lives(ReferenceImplementation):
        \"\"\"capi-safe, failing at the first deploy of an app, with the number of its life.\"\"\"

        def __init__(self):
            super().__init__("capi", "capi-safe")
            self.life = int(open(LIFE).read()) + 1 if os.path.exists(LIFE) else 1
            with open(LIFE, "w") as f:
                f.write(str(self.life))

        def perform(self, action):
            if action["type"] == "deploy" and self.observe()["app"] is not None:
                raise RuntimeError(f"life {self.life} failed")
            return super().perform(action)


    def make():
        return Lives()
""")


def test_a_check_after_a_fault_meets_the_program_afresh_and_is_told_its_own_fault(tmp_path, monkeypatch):
    """Mutants: ``Connection.revive`` keeping the program's death (every later check failed at
    once with the first one's cause), or keeping the answers recalled, whose adapter holds
    the old fault box (a new fault was reported as the first one). The pytest plugin revives
    the connection after a fault so that the next test starts the program again; each test
    must report its own fault. (The sweep meets no deploy of an app: the search does.)"""
    (tmp_path / "lives.py").write_text(LIVES)
    monkeypatch.chdir(tmp_path)
    model, config = _capi()
    (prop,) = harness.plan_checks(model, None, ["single_active_deployment"], config)
    target = harness.Target("exec", f"{shlex.quote(sys.executable)} -m deployspec serve --model capi --python lives:make")
    causes = []
    with harness.Connection(target, model) as conn:
        for _ in range(2):
            with pytest.raises(ImplementationFault) as caught:
                harness.check_one(conn, prop, config=config, budget=None, seed=0, max_examples=50)
            causes.append(caught.value.cause)
            conn.revive()
    assert "RuntimeError: life 1 failed" in causes[0] and "RuntimeError: life 2 failed" in causes[1], causes


# --- the plugin's words (plugin.py) ----------------------------------------------------------


def test_a_path_that_holds_an_option_s_name_is_kept_as_it_is(tmp_path):
    """Mutant: ``ours`` without its look-behind. ``--out`` in a folder's name (``a--out``) is
    part of the path, not the CLI's option: only the option is named as the plugin's."""
    taken = tmp_path / "a--out"
    taken.write_text("")
    with pytest.raises(UsageError) as caught:
        writable_dir(str(taken))
    assert plugin.ours(str(caught.value)) == f"--deployspec-out {taken}: exists and is not a directory"


# --- timed calls (timed_call.py) -------------------------------------------------------------


def test_sigalrm_is_given_back_as_it_was_when_the_object_is_closed():
    """Mutant: ``release_alarm`` setting SIGALRM ignored. After a run in pytest or a user's
    program, their SIGALRM is theirs again as it was (default: it ends the process), not
    ignored for good."""
    model, _ = _capi()
    previous = signal.signal(signal.SIGALRM, signal.SIG_DFL)
    try:
        with harness.Connection(harness.Target("python", "deployspec.contract.examples:capi_safe"), model):
            assert signal.getsignal(signal.SIGALRM) is not signal.SIG_DFL  # deployspec's while the object is open
        assert signal.getsignal(signal.SIGALRM) is signal.SIG_DFL
    finally:
        signal.signal(signal.SIGALRM, previous)


def test_an_alarm_between_calls_is_not_taken_for_a_hang():
    """Mutant: the alarm's handler raising whether or not a call is timed. Between calls
    (an alarm the object set for itself, one landing just as a call returned) there is no
    call to interrupt: deployspec's own code must go on. Only under signals."""
    model, _ = _capi()
    with harness.Connection(harness.Target("python", "deployspec.contract.examples:capi_safe"), model):
        assert signal.getsignal(signal.SIGALRM) is timed_call._overdue  # (else the signal would end pytest)
        signal.raise_signal(signal.SIGALRM)  # nothing is timed now


def test_the_watchdog_waits_its_whole_grace_after_the_first_look_that_sees_a_call_overdue():
    """Mutant: the look that first sees the call overdue counted in the grace. It saw it at
    some moment of the look before, so a call was ended up to one look early (4.5 s for 5).
    In a process of its own, with the watchdog's clock and its sleep replaced."""
    code = textwrap.dedent("""
        import types
        from deployspec import interruption
        from deployspec.contract import last_resort, timed_call

        interruption.OWN_PROCESS = True
        now = [0.0]
        def sleep(seconds):
            now[0] += seconds
        timed_call.time = types.SimpleNamespace(sleep=sleep, monotonic=lambda: now[0])
        class Ended(BaseException):
            pass
        def end(line, status):
            raise Ended
        last_resort.end = end
        timed_call._running = timed_call._Watched("perform()", 1.0, 100.0)
        try:
            timed_call._watch()
        except Ended:
            print(now[0] - 100.0)
    """)
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60, check=False)
    assert done.returncode == 0, done.stderr
    assert float(done.stdout) >= last_resort.GRACE


# --- a program's refusal (subprocess_adapter.py) ---------------------------------------------


def test_a_refusal_s_reason_over_exec_is_one_printable_line():
    """Mutant: the reason of a ``rejected`` reply kept as sent. It goes into the trace and the
    reports as one printable line, escaped and clipped, as a --python object's does."""
    model, config = _capi()
    program = Program(f"{sys.executable} -m deployspec serve --model capi --python contract_fakes:odd_reason",
                      model=model, cwd=str(TESTS))
    try:
        adapter = SubprocessAdapter(program)
        adapter.reset(config)
        adapter.observe()
        assert adapter.perform(Cancel()) == "\\x1b[31mno\\x1b[0m cancel today"
    finally:
        program.close()
