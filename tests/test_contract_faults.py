"""The harness when the implementation fails: one clear line, exit 3, nothing left running.

The misbehaving programs are ``contract_fakes.py``: the reference server until
the 5th action, then a crash, a hang, garbage, a wrong id, a schema violation…
"""

from __future__ import annotations

import json
import os
import shlex
import subprocess
import sys
import time
from pathlib import Path

import pytest

from deployspec import traces
from deployspec.cli import main
from deployspec.contract import harness
from deployspec.models import get_model

FAKES = Path(__file__).with_name("contract_fakes.py")
PREFIX = "deployspec: implementation fault at step 0 (cancel()) while checking single_active_deployment: "


def fake(mode: str, pidfile: Path, variant: str = "capi-safe", at: int = 14) -> str:
    """The reference behind the protocol until its ``at``-th action, where it misbehaves."""
    return " ".join(shlex.quote(str(a)) for a in (sys.executable, FAKES, variant, mode, at, pidfile))


def alive(pid: int) -> bool:
    """Running, i.e. not gone and not a zombie waiting for init to reap it."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except FileNotFoundError:
        return False
    return stat.rsplit(")", 1)[1].split()[0] != "Z"


def ended_soon(pid: int, seconds: float = 5.0) -> bool:
    """Whether ``pid`` is gone (or a zombie) within ``seconds``."""
    deadline = time.monotonic() + seconds
    while alive(pid) and time.monotonic() < deadline:
        time.sleep(0.05)
    return not alive(pid)


def contract(capsys, command: str, *extra: str) -> tuple[int, str]:
    status = main(["contract", "--exec", command, "--model", "capi", "--timeout", "0.5",
                   "--examples", "5", "--property", "single_active_deployment", *extra])
    return status, capsys.readouterr().err


@pytest.mark.parametrize("mode, cause", [
    ("crash", ("the implementation exited with status 1 before replying to action cancel; its stderr ends "
              "with: fake: simulated crash (TypeError: cannot read 'instances' of undefined)")),
    ("hang", "no reply to action cancel within 0.5 s (hung? see --timeout)"),
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
])
def test_each_fault_is_one_line_exit_3_and_leaves_no_process(capsys, tmp_path, mode, cause):
    pidfile = tmp_path / "pids"
    status, err = contract(capsys, fake(mode, pidfile))
    assert status == 3
    assert len(err.strip().splitlines()) == 2, err
    first, second = err.strip().splitlines()
    if mode == "error-flood":
        assert first.startswith(PREFIX + cause) and len(first) <= len(PREFIX) + len("the implementation reported an error on action cancel: ") + 301 and "\x1b" not in first
    else:
        assert first == PREFIX + cause
    # the fake misbehaves at its 14th action: the cancel the sweep of the initial state
    # probes (after the three pushes, each settled, then tick, two stages, a deploy)
    assert second == "  steps since reset: cancel()"
    pids = [int(p) for p in pidfile.read_text().split()]
    assert len(pids) == (2 if mode in ("hang", "spawn-and-crash") else 1)
    deadline = time.monotonic() + 5  # init reaps the orphaned zombies in its own time
    while any(alive(p) for p in pids) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not any(alive(p) for p in pids), "a process of the implementation outlived the run"


def test_a_program_that_stops_reading_is_said_to_have_closed_its_stdin(capsys, tmp_path):
    status, err = contract(capsys, "exec " + fake("closes-stdin", tmp_path / "pids"))  # no shell holding the pipe
    assert status == 3
    assert "the implementation closed its stdin before replying to " in err.splitlines()[0]


def test_a_command_that_cannot_start_is_a_fault(capsys):
    status, err = contract(capsys, "/nonexistent/impl --serve")
    assert status == 3
    assert err.startswith("deployspec: implementation fault at reset while checking single_active_deployment: "
                          "the implementation exited with status 127 before replying to reset; its stderr ends with:")


def test_counterexamples_found_before_a_fault_are_kept(tmp_path):
    """capi-2022 breaks single_active_deployment; then the next check's first reset fails."""
    from deployspec.contract import examples

    state = {"broken": False}

    class BreaksLater(examples.ReferenceImplementation):
        def reset(self, config):
            if state["broken"]:
                raise OSError("disk full")
            super().reset(config)

    sys.modules[__name__].breaks_later = lambda: BreaksLater("capi", "capi-2022")
    run = harness.run(get_model("capi"), harness.Target("python", f"{__name__}:breaks_later"),
                      properties=["single_active_deployment", "app_stays_available"],
                      max_examples=10, seed=2, out_dir=str(tmp_path),
                      on_result=lambda r: state.update(broken=True))
    assert run.exit_status == 3
    assert run.fault.line() == ("implementation fault at reset while checking app_stays_available: "
                                "reset() raised OSError: disk full")
    (result,) = run.results
    assert result.verdict == "violated"
    assert traces.load(result.counterexample)["property"] == "single_active_deployment"


@pytest.mark.parametrize("factory, prop, cause", [
    # the deploy the sweep of the initial state probes, before any push
    ("raising", "app_stays_available", ("step 0 (deploy()) while checking app_stays_available: perform() "
                                       "raised KeyError: 'deploying_web_process'")),
    ("bad_outcome", "app_stays_available", ("perform() returned 422; expected None (accepted) or a reason "
                                           "string (rejected)")),
    ("unprintable", "app_stays_available", ("perform() returned (an unprintable int); expected None "
                                           "(accepted) or a reason string (rejected)")),
    ("bad_observation", "app_stays_available", ("observation violates the capi observation schema: "
                                               "processes/0/instances/0: 'UP'")),
    ("deep_observation", "app_stays_available", ("step 1 (deploy()) while checking app_stays_available: "
                                                "observe() returned something that is not JSON: it is nested "
                                                "too deeply")),
    ("inconsistent", "cancel_restores_last_good", ("the observation is inconsistent: cancel_restores_last_good "
                                                  "cannot read it (IndexError: ")),
    ("forgetful", "app_stays_available", ("at the initial observation while checking app_stays_available: "
                                         "reset did not bring the implementation back to its initial state: "
                                         "app: the first reset null, this one {")),
    ("moody", "app_stays_available", ("at a repeated example while checking app_stays_available: "
                                     "non-deterministic behaviour")),
    ("not_an_implementation", "app_stays_available", ("at start: contract_fakes:not_an_implementation() "
                                                     "returned a object, which lacks reset, perform, observe()")),
    # its exit is not the harness's: SystemExit and GeneratorExit are faults too
    ("exits", "app_stays_available", ("step 0 (deploy()) while checking app_stays_available: perform() "
                                     "raised SystemExit: 0")),
    ("generator_exits", "app_stays_available", ("step 1 (deploy()) while checking app_stays_available: "
                                               "observe() raised GeneratorExit\n")),
    ("factory_exits", "app_stays_available", "at start: contract_fakes:factory_exits() raised SystemExit: 4"),
])
def test_python_implementation_faults(capsys, monkeypatch, factory, prop, cause):
    monkeypatch.setattr(sys, "path", list(sys.path))
    monkeypatch.chdir(FAKES.parent)  # MODULE is found beside the user, as with `python -m`
    status = main(["contract", "--python", f"contract_fakes:{factory}", "--model", "capi", "--examples", "30",
                   "--seed", "2", "--property", prop])
    err = capsys.readouterr().err
    assert status == 3, err
    first, *rest = err.strip().splitlines()
    assert cause in first + "\n"
    assert all(line.startswith("  steps since reset: ") for line in rest) and len(rest) <= 1


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


@pytest.mark.parametrize("source, cause", [
    ("raise ImportError('no native lib')", "importing impl raised ImportError: no native lib"),
    ("def f(:", "importing impl raised SyntaxError: "),
    ("import nonexistent_dependency_zz", ("importing impl raised ModuleNotFoundError: "
                                         "No module named 'nonexistent_dependency_zz'")),
    ("import sys; sys.exit(7)", "importing impl raised SystemExit: 7"),
    ("import time; time.sleep(60)", "importing impl did not return within 0.3 s (hung? see --timeout)"),
])
def test_an_implementation_that_fails_to_import_is_a_fault_at_start(capsys, monkeypatch, tmp_path, source,
                                                                    cause):
    (tmp_path / "impl.py").write_text(source + "\n\ndef f():\n    pass\n")
    monkeypatch.setattr(sys, "path", list(sys.path))
    monkeypatch.setattr(sys, "modules", dict(sys.modules))
    monkeypatch.setattr(harness, "STARTUP_TIMEOUT", 0.3)  # the import's allowance, 30 s as a program's
    monkeypatch.chdir(tmp_path)
    for argv in (["contract", "--python", "impl:f", "--model", "capi", "--examples", "2", "--timeout", "0.3"],
                 ["replay", str(next((FAKES.parents[1] / "counterexamples" / "capi").glob("*.json"))),
                  "--python", "impl:f", "--timeout", "0.3"]):
        status = main(argv)
        err = capsys.readouterr().err
        assert status == 3, err
        assert f"implementation fault at start: {cause}" in err
        assert len(err.strip().splitlines()) == 1 and "Traceback" not in err


@pytest.fixture
def hangs(monkeypatch):
    monkeypatch.setattr(sys, "path", list(sys.path))
    monkeypatch.chdir(FAKES.parent)
    yield
    fakes = sys.modules.get("contract_fakes")
    if fakes is not None:
        fakes.Hangs.hung, fakes.Hangs.calls_after_hang = False, 0


def test_a_hanging_python_implementation_is_a_fault_and_is_not_called_again(capsys, hangs):
    import signal

    alarm = signal.getsignal(signal.SIGALRM)
    started = time.monotonic()
    status = main(["contract", "--python", "contract_fakes:hangs", "--model", "capi", "--examples", "5",
                   "--timeout", "0.3", "--property", "app_stays_available"])
    err = capsys.readouterr().err
    assert status == 3, err
    assert err.splitlines()[0] == ("deployspec: implementation fault at step 0 (deploy()) while checking "
                                   "app_stays_available: perform() did not return within 0.3 s (hung? see --timeout)")
    assert time.monotonic() - started < 5
    # no settle in the machine's teardown, no close(): a failed object is left alone
    assert sys.modules["contract_fakes"].Hangs.calls_after_hang == 0
    assert signal.getsignal(signal.SIGALRM) == alarm  # the timeout's SIGALRM handler is given back


@pytest.mark.parametrize("sig", ["SIGTERM", "SIGINT"])
def test_the_first_signal_stops_a_run_whose_python_implementation_hangs(tmp_path, sig):
    import os
    import signal
    import subprocess

    hanging = tmp_path / "hanging"
    proc = subprocess.Popen(
        [sys.executable, "-m", "deployspec", "contract", "--python", "contract_fakes:hangs", "--model", "capi",
         "--timeout", "60", "--examples", "5"], cwd=FAKES.parent, stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE, text=True, env={**os.environ, "DEPLOYSPEC_FAKE_HANGING": str(hanging)})
    deadline = time.monotonic() + 60
    while not hanging.exists() and time.monotonic() < deadline:
        time.sleep(0.02)
    proc.send_signal(getattr(signal, sig))
    try:
        status = proc.wait(timeout=10)
    except subprocess.TimeoutExpired:
        proc.kill()
        raise AssertionError(f"one {sig} did not end the run") from None
    assert status == 130
    assert proc.stderr.read().strip() == "deployspec: interrupted"


def test_replay_reports_an_observation_the_property_cannot_read_as_a_fault(capsys, monkeypatch):
    """As contract does: deployments numbered from 1 make cancel_restores_last_good read past a list."""
    monkeypatch.setattr(sys, "path", list(sys.path))
    monkeypatch.chdir(FAKES.parent)
    trace = FAKES.parents[1] / "counterexamples" / "capi" / "capi-pr3072--cancel_restores_last_good--00a7edc34d.json"
    status = main(["replay", str(trace), "--python", "contract_fakes:inconsistent"])
    err = capsys.readouterr().err
    assert status == 3, err
    assert err == (f"deployspec: {trace}: implementation fault at step 8 (tick()) while checking "
                   "cancel_restores_last_good: the observation is inconsistent: cancel_restores_last_good "
                   "cannot read it (IndexError: list index out of range)\n")


def test_a_python_implementation_that_swallows_the_timeout_still_ends_the_run(tmp_path):
    """A bare ``except:`` swallows the timeout's interruption: GRACE seconds later
    the run ends anyway, one line, exit 3, instead of never."""
    from deployspec.contract.last_resort import GRACE

    started = time.monotonic()
    proc = subprocess.Popen(
        [sys.executable, "-m", "deployspec", "contract", "--python", "contract_fakes:swallows", "--model", "capi",
         "--examples", "5", "--timeout", "0.5", "--property", "app_stays_available"],
        cwd=FAKES.parent, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    _out, err = proc.communicate(timeout=60)
    assert proc.returncode == 3, err
    assert err.strip().splitlines()[-1] == (
        f"deployspec: implementation fault: perform() did not return within 0.5 s, and went on for {GRACE:g} s "
        "more after being interrupted (does it catch every exception?): stopping")
    assert "Traceback" not in err
    assert time.monotonic() - started < 0.5 + GRACE + 15


@pytest.mark.parametrize("sig", ["SIGTERM", "SIGINT"])
def test_a_signal_ends_the_run_even_when_the_implementation_swallows_it(tmp_path, sig):
    import signal

    hanging = tmp_path / "hanging"
    proc = subprocess.Popen(
        [sys.executable, "-m", "deployspec", "contract", "--python", "contract_fakes:swallows", "--model", "capi",
         "--examples", "5", "--timeout", "600", "--property", "app_stays_available"],
        cwd=FAKES.parent, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
        env={**os.environ, "DEPLOYSPEC_FAKE_HANGING": str(hanging)})
    deadline = time.monotonic() + 60
    while not hanging.exists() and time.monotonic() < deadline:
        time.sleep(0.05)
    proc.send_signal(getattr(signal, sig))
    _out, err = proc.communicate(timeout=60)
    assert proc.returncode == 130, err
    assert err.strip().splitlines()[-1] == (
        "deployspec: interrupted, and the implementation did not let go: stopping")


def test_odd_objects_from_a_python_implementation_are_read_safely(capsys, monkeypatch, tmp_path):
    """A reason that is a str subclass with a raising ``__len__`` (and a terminal
    escape), a proxy whose ``__getattr__`` raises KeyError: no traceback, the run's verdict."""
    monkeypatch.setattr(sys, "path", list(sys.path))
    monkeypatch.chdir(FAKES.parent)
    for factory, check in (("odd_reason", "conforms_to_capi-safe"), ("proxy", "single_active_deployment")):
        status = main(["contract", "--python", f"contract_fakes:{factory}", "--model", "capi", "--examples", "5",
                       "--property", check, "--reference", "capi-safe", "--json", "--out", str(tmp_path)])
        out = capsys.readouterr().out
        results = json.loads(out)["results"]
        assert status == (1 if factory == "odd_reason" else 0), out
        if factory == "odd_reason":  # it refuses the cancels capi-safe accepts: a divergence, with the reason
            (conformance,) = results
            assert "(\\x1b[31mno\\x1b[0m cancel today)" in conformance["message"]
            steps = traces.load(conformance["counterexample"])["steps"]
            refused = [s["rejected"] for s in steps if s.get("rejected")]
            assert refused and all(r == "\\x1b[31mno\\x1b[0m cancel today" for r in refused)
    seed = next((FAKES.parents[1] / "counterexamples" / "capi").glob("capi-2022--single_active*.json"))
    assert main(["replay", str(seed), "--python", "contract_fakes:proxy"]) == 0
    assert "Traceback" not in capsys.readouterr().err


def test_an_observation_that_cannot_be_read_is_a_fault(capsys, monkeypatch):
    monkeypatch.setattr(sys, "path", list(sys.path))
    monkeypatch.chdir(FAKES.parent)
    status = main(["contract", "--python", "contract_fakes:odd_observation", "--model", "capi", "--examples", "5",
                   "--property", "single_active_deployment"])
    err = capsys.readouterr().err
    assert status == 3
    assert err.splitlines()[0].endswith(
        "observe() returned an object (_Observation) that raised RuntimeError: broken items() when read")


def test_what_a_python_implementation_prints_stays_off_the_json_output(capfd, monkeypatch):
    monkeypatch.setattr(sys, "path", list(sys.path))
    monkeypatch.chdir(FAKES.parent)
    status = main(["contract", "--python", "contract_fakes:chatty", "--model", "capi", "--examples", "5",
                   "--property", "single_active_deployment", "--json"])
    out, err = capfd.readouterr()
    assert status == 0
    assert json.loads(out)["results"][0]["verdict"] == "holds"
    assert "DEBUG perform" in err


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


def test_a_violation_seen_before_a_crash_while_shrinking_is_kept(capsys, tmp_path):
    """capi-2022 behind the protocol, crashing at its 150th action: while
    Hypothesis shrinks the violation it found. The fault ends the run (exit 3);
    the violation is reported and saved all the same, as it was found."""
    status = main(["contract", "--exec", fake("crash", tmp_path / "pids", variant="capi-2022", at=150),
                   "--model", "capi", "--timeout", "2", "--examples", "20", "--seed", "0",
                   "--property", "single_active_deployment", "--out", str(tmp_path / "found"), "--json"])
    out = json.loads(capsys.readouterr().out)
    assert status == 3 and "exited with status 1" in out["fault"]["cause"]
    (found,) = out["results"]
    assert found["verdict"] == "violated"
    trace = traces.load(found["counterexample"])
    assert trace["property"] == "single_active_deployment" and len(trace["steps"]) == found["trace_length"]


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


def test_verdicts_printed_before_a_last_resort_are_not_lost(tmp_path):
    """replay A B on an object that swallows its timeout in B: A's verdict, already
    printed, reaches stdout (which the object's call had borrowed) before the end."""
    seed = FAKES.parents[1] / "counterexamples" / "capi" / "capi-2022--app_stays_available--a940739cf1.json"
    steps = len(traces.load(seed)["steps"])
    env = {k: v for k, v in os.environ.items() if k != "PYTHONUNBUFFERED"}  # so a lost flush shows
    proc = subprocess.run(
        [sys.executable, "-m", "deployspec", "replay", str(seed), str(seed), "--python", "contract_fakes:swallows",
         "--timeout", "0.5"], cwd=FAKES.parent, capture_output=True, text=True, timeout=60, check=False,
        env={**env, "DEPLOYSPEC_FAKE_SWALLOW_AFTER": str(steps + 2)})
    assert proc.returncode == 3, proc.stderr
    assert proc.stdout.count(str(seed)) == 1 and "stopping" in proc.stderr


def test_only_the_deployspec_program_ends_itself_as_a_last_resort(monkeypatch):
    """In pytest or a user's program (``cli.OWN_PROCESS`` False), an overdue call that
    swallows the interruption is not met with ``os._exit``: that would end their process."""
    from deployspec import cli
    from deployspec.contract import python_adapter

    armed = []

    def swallows_once():
        try:
            time.sleep(1)
        except BaseException:  # noqa: BLE001 - swallowed, as the implementation under test does
            armed.append(python_adapter._overdue_exit)
        return "returned"

    assert python_adapter.call(swallows_once, what="perform()", timeout=0.05) == "returned"
    monkeypatch.setattr(cli, "OWN_PROCESS", True)
    assert python_adapter.call(swallows_once, what="perform()", timeout=0.05) == "returned"
    not_own, own = armed
    assert not_own is None and own is not None
    assert python_adapter._overdue_exit is None and own.finished.is_set()  # stood down when it returned


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


def test_a_non_deterministic_implementation_leaves_the_json_output_whole(capfd, monkeypatch):
    """Hypothesis would print the steps of a flaky example on stdout; the search keeps it quiet."""
    monkeypatch.setattr(sys, "path", list(sys.path))
    monkeypatch.chdir(FAKES.parent)
    status = main(["contract", "--python", "contract_fakes:moody", "--model", "capi", "--examples", "30",
                   "--seed", "2", "--property", "app_stays_available", "--json"])
    out, err = capfd.readouterr()
    assert status == 3
    assert json.loads(out)["fault"]["where"] == "a repeated example"
    assert "Steps leading up to this error" not in out + err
