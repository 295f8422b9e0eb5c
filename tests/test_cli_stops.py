"""How a command stops: SIGTERM and Ctrl-C (status 130, no process left behind), and running out of memory (one line)."""

import os
import subprocess
import sys
import time

import pytest

from .cli_runs import SEED, deployspec, run


def _command_line(pid: str) -> str:
    try:
        with open(f"/proc/{pid}/cmdline", "rb") as f:
            return f.read().replace(b"\0", b" ").decode(errors="replace")[:200]
    except OSError:
        return f"{pid} (gone)"


def test_sigterm_stops_check_and_its_search_processes():
    import signal
    import time

    proc = deployspec("check", "--model", "capi", "--variant", "capi-safe", "--engine", "explore",
                       "--jobs", "2", stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    children: list[str] = []
    deadline = time.monotonic() + 60  # until the pool has started (slow on a busy machine)
    while len(children) < 2 and time.monotonic() < deadline:
        time.sleep(0.2)
        children = subprocess.run(["pgrep", "-P", str(proc.pid)], capture_output=True, text=True,
                                  check=False).stdout.split()
    time.sleep(1)  # the pool is busy
    proc.send_signal(signal.SIGTERM)
    status = proc.wait(30)
    err = proc.stderr.read()
    proc.stderr.close()
    assert status == 130 and err.rstrip().endswith("deployspec: interrupted"), (status, err[-2000:])
    assert children, "the pool had started its processes"
    deadline = time.monotonic() + 10
    while any(os.path.exists(f"/proc/{c}") for c in children) and time.monotonic() < deadline:
        time.sleep(0.1)
    alive = [c for c in children if os.path.exists(f"/proc/{c}")]
    assert not alive, f"outlived check: {[_command_line(c) for c in alive]}"


def _serving():
    proc = deployspec("serve", "--model", "capi", "--variant", "capi-safe", stdin=subprocess.PIPE,
                       stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    proc.stdin.write('{"id": 1, "type": "observe"}\n')
    proc.stdin.flush()
    assert proc.stdout.readline()  # it runs, and answers
    return proc


def _ended(proc) -> tuple[int, str]:
    status = proc.wait(30)
    err = proc.stderr.read()
    for stream in (proc.stdin, proc.stdout, proc.stderr):
        stream.close()
    return status, err


@pytest.mark.parametrize("signum, outcome", [
    ("SIGTERM", (0, "")),  # how a supervisor stops a server: its normal end, as the end of input
    ("SIGINT", (130, "deployspec: interrupted\n")),  # Ctrl-C
])
def test_serve_ends_quietly_on_sigterm_and_is_interrupted_by_ctrl_c(signum, outcome):
    import signal

    proc = _serving()
    proc.send_signal(getattr(signal, signum))
    assert _ended(proc) == outcome


def _waiting_with_sigterm_caught(pid: int) -> bool:
    """The process has its SIGTERM handler (SigCgt) and sleeps (waiting for input)."""
    try:
        with open(f"/proc/{pid}/status") as f:
            fields = dict(line.split(":", 1) for line in f if ":" in line)
    except OSError:
        return False
    caught = int(fields["SigCgt"], 16) >> (15 - 1) & 1
    return bool(caught) and fields["State"].split()[0] == "S"


def test_sigterm_stops_any_other_command_as_ctrl_c_does():
    """Not only check and contract: here show, waiting for a trace on a pipe."""
    import signal

    proc = deployspec("show", "/dev/stdin", stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    deadline = time.monotonic() + 60
    while not _waiting_with_sigterm_caught(proc.pid) and time.monotonic() < deadline:
        time.sleep(0.05)
    proc.send_signal(signal.SIGTERM)
    assert _ended(proc) == (130, "deployspec: interrupted\n")


def test_a_sigint_ignored_on_entry_stays_ignored():
    """As for a command started with & in a script: Ctrl-C is not deployspec's to take."""
    import signal
    import time

    proc = deployspec("check", "--model", "capi", "--variant", "capi-safe", "--engine", "explore",
                       "--property", "app_stays_available", stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                       preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_IGN))
    time.sleep(1.5)
    proc.send_signal(signal.SIGINT)
    assert proc.wait(120) == 0, proc.stderr.read()
    proc.stderr.close()


@pytest.mark.parametrize("argv, hint", [
    (["show", str(SEED)], False),
    (["check", "--model", "capi", "--variant", "capi-safe", "--engine", "explore"], True),
])
def test_out_of_memory_is_one_line_and_hints_at_bounds_only_for_a_search(capsys, monkeypatch, argv, hint):
    from deployspec import check, traces

    def exhausted(*args, **kwargs):
        raise MemoryError

    monkeypatch.setattr(traces, "load", exhausted)
    monkeypatch.setattr(check, "run", exhausted)
    status, _, err = run(capsys, *argv)
    expected = "deployspec: error: out of memory" + (" (tighter bounds, --bound, or a --budget?)" if hint else "")
    assert (status, err) == (1, expected + "\n")


@pytest.mark.parametrize("workers", ["1", "2"])
def test_a_search_under_an_address_space_limit_stops_on_its_memory_budget(workers):
    """Under ``ulimit -v`` a search meeting MemoryError hung at 100 % CPU in 5 of 15 runs,
    deaf to Ctrl-C and SIGTERM: CPython 3.11 retries an allocation it needs to unwind to a
    handler, for ever (cpython#132508). It stops while a reserve is left, as on its budget,
    and says which limit stopped it."""
    import json
    import resource

    def limited():
        resource.setrlimit(resource.RLIMIT_AS, (300 << 20, resource.RLIM_INFINITY))

    proc = subprocess.run(
        [sys.executable, "-m", "deployspec", "check", "--model", "capi", "--variant", "capi-safe", "--engine",
         "explore", "--bound", "max_instances=3", "--property", "cancel_restores_last_good", "--workers",
         workers, "--json"], preexec_fn=limited, capture_output=True, text=True, timeout=120, check=False)
    (result,) = json.loads(proc.stdout)["results"]
    assert proc.returncode == 0 and result["verdict"] == "holds", proc.stderr[-2000:]
    assert (result["stats"]["complete"], result["stats"]["stopped"]) == (False, "address_space")
    assert "(incomplete: address-space limit (ulimit -v) nearly reached" in result["message"]


def test_the_interpreter_failing_near_a_memory_limit_is_one_line(capsys, monkeypatch):
    """Under ``ulimit -v`` CPython sometimes raises SystemError ("returned NULL
    without setting an exception") instead of MemoryError."""
    from deployspec import traces

    def failing(*args, **kwargs):
        raise SystemError("<built-in method x> returned NULL without setting an exception")

    monkeypatch.setattr(traces, "load", failing)
    status, _, err = run(capsys, "show", str(SEED))
    assert status == 1 and err.count("\n") == 1
    assert err.startswith("deployspec: error: the interpreter failed (<built-in method x> returned NULL")


@pytest.mark.parametrize("argv", [
    ["contract", "--exec", f"{sys.executable} -m deployspec serve --model capi --variant capi-safe",
     "--model", "capi", "--examples", "3"],
    ["check", "--model", "capi", "--variant", "capi-safe", "--property", "single_active_deployment",
     "--property", "app_stays_available", "--jobs", "2", "--budget", "0.3"],
])
def test_a_machine_limit_is_named_not_blamed_on_the_output_or_the_implementation(argv):
    """With few file descriptors, a failed spawn was 'the implementation' (status 3),
    a failed pool 'cannot write the output'."""
    import resource

    def few_files():
        resource.setrlimit(resource.RLIMIT_NOFILE, (10, 10))

    proc = deployspec(*argv, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, preexec_fn=few_files)
    _, err = proc.communicate(timeout=120)
    hint = "ulimit -n, or fewer --jobs" if "--jobs" in argv else "ulimit -n"  # (--jobs: only where it was used)
    assert (proc.returncode, err.splitlines()[-1]) == (
        2, f"deployspec: error: out of system resources: Too many open files ({hint}?)")


HOST = """\
import signal
import sys
from deployspec.cli import main
{setup}
try:
    status = main(["contract", "--exec", "touch {started}; sleep 100", "--model", "capi", "--examples", "5"])
except KeyboardInterrupt:
    print("the host's KeyboardInterrupt", flush=True)
    sys.exit(7)
print("the host went on after status", status, flush=True)
"""


@pytest.mark.parametrize("signum, setup, outcome", [
    ("SIGTERM", "", -15),  # the host's SIGTERM handling: by default, the end of the process
    ("SIGTERM", "signal.signal(signal.SIGTERM, lambda *_: sys.exit(9))", 9),  # its own handler
    ("SIGINT", "", 7),  # Python's Ctrl-C: the host's KeyboardInterrupt, to handle as it does
    ("SIGINT", "signal.signal(signal.SIGINT, signal.SIG_DFL)", -2),  # a host that dies of Ctrl-C
])
def test_main_in_a_host_process_hands_the_interruption_back(tmp_path, signum, setup, outcome):
    """pytest or a user's program calling main(): a CI timeout's SIGTERM during a contract
    run ended it with status 130 and the host carried on, so the job did not stop."""
    import signal

    started = tmp_path / "started"
    proc = subprocess.Popen([sys.executable, "-c", HOST.format(started=started, setup=setup)], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True)
    deadline = time.monotonic() + 60
    while not started.exists() and time.monotonic() < deadline:
        time.sleep(0.05)
    proc.send_signal(getattr(signal, signum))
    out, err = proc.communicate(timeout=30)
    assert proc.returncode == outcome, (out, err)
    assert "went on" not in out and err.endswith("deployspec: interrupted\n"), err


def test_an_interruption_python_could_not_raise_stops_the_search_at_its_next_step(capsys):
    """A signal that arrives in a garbage-collector callback (Hypothesis keeps one, for the
    rest of the process) raises there, where Python drops the exception ("Exception
    ignored"): the search went on, ended with a verdict (or Hypothesis's "inconsistent
    data generation"), and the last resort ended the process without its --junit
    report. Now the search raises it again at its next step, and stderr stays quiet."""
    import gc
    import signal

    from deployspec import check, interruption
    from deployspec.interruption import sigterm_interrupts

    sent, returned = [], []

    def in_the_collector(phase, info):
        if phase == "start" and not sent:
            sent.append(signal.SIGTERM)
            os.kill(os.getpid(), signal.SIGTERM)  # its handler runs here, inside the callback

    try:
        with pytest.raises(KeyboardInterrupt), sigterm_interrupts():
            # (added here, not before the block: a collection in between would have sent
            # SIGTERM with its default in place, ending the test's process)
            gc.callbacks.append(in_the_collector)
            gc.collect()
            returned.append(True)  # the interruption was dropped in the callback
            check.judge("capi", "capi-2022", "hypothesis", "single_active_deployment", budget=None, seed=0,
                        out_dir=None, bounds=None, distinct=False, engines=("hypothesis",), workers=1)
    finally:
        if in_the_collector in gc.callbacks:
            gc.callbacks.remove(in_the_collector)
    assert sent and returned, "the signal was dropped in the collector's callback, as in a search"
    assert interruption.pending is None  # for what runs after, in this process
    assert "Exception ignored" not in capsys.readouterr().err


SWALLOWING = '''
import os, signal
import attrs
from deployspec.reference.capi.variants import CAPI_SAFE

sent = []


def swallowing(state):
    """capi-safe's rule, but the first call is interrupted (a signal sent here) and swallows it."""
    if not sent:
        sent.append(1)
        try:
            os.kill(os.getpid(), signal.SIGTERM)
            sum(range(10))
        except BaseException:
            pass
    return CAPI_SAFE.previous_deployment(state)


VARIANTS = [attrs.evolve(CAPI_SAFE, name="safe-swallow", previous_deployment=swallowing)]
'''


EXITING = SWALLOWING.replace("safe-swallow", "safe-exit").replace(
    "        except BaseException:\n            pass\n",
    "        except BaseException:  # turned into an exit\n            raise SystemExit(1)\n")


def test_an_interruption_a_design_s_rule_turns_into_an_exit_still_stops_a_replay(tmp_path):
    """The rule catches the SIGTERM meant for the run and calls sys.exit: replay reported
    the design's error (exit 2, 'raised SystemExit: 1'), not the interruption."""
    assert "raise SystemExit(1)" in EXITING
    (tmp_path / "exiting.py").write_text(EXITING)
    env = dict(os.environ, DEPLOYSPEC_VARIANTS="exiting", PYTHONPATH=str(tmp_path))
    proc = subprocess.run([sys.executable, "-m", "deployspec", "replay", str(SEED), "--variant", "safe-exit"],
                          capture_output=True, text=True, env=env, check=False, timeout=120)
    assert proc.returncode == 130, (proc.stdout, proc.stderr)
    assert proc.stderr.rstrip().endswith("deployspec: interrupted") and "SystemExit" not in proc.stderr, proc.stderr


@pytest.mark.parametrize("argv", [
    # (a search of 10 s or more, which the last resort would end after 5 s without the report)
    ["check", "--model", "capi", "--variant", "safe-swallow", "--engine", "explore",
     "--property", "cancel_restores_last_good", "--bound", "max_instances=3"],
    ["replay", str(SEED), "--variant", "safe-swallow"],
])
def test_an_interruption_a_design_s_rule_swallows_still_stops_the_run(tmp_path, argv):
    """A rule of one's own with a bare `except:` took the SIGTERM meant for the run: the
    explorer searched on (until the last resort ended the process without its report) and
    replay gave its verdicts, exit 0 and a passing report."""
    import xml.etree.ElementTree as ET

    (tmp_path / "swallow.py").write_text(SWALLOWING)
    env = dict(os.environ, DEPLOYSPEC_VARIANTS="swallow", PYTHONPATH=str(tmp_path))
    report = tmp_path / "r.xml"
    started = time.monotonic()
    proc = subprocess.run([sys.executable, "-m", "deployspec", *argv, "--junit", str(report)],
                          capture_output=True, text=True, env=env, check=False, timeout=120)
    assert proc.returncode == 130, (proc.stdout, proc.stderr)
    assert proc.stderr.rstrip().endswith("deployspec: interrupted") and "let go" not in proc.stderr, proc.stderr
    assert time.monotonic() - started < 30
    assert any(c.get("name") == "interrupted" for c in ET.parse(report).getroot().iter("testcase"))


def test_one_search_out_of_memory_is_its_error_and_the_others_stand(capsys, monkeypatch):
    """Under ``ulimit -v`` one large search ran out of memory and the run ended with
    "error: out of memory": no --json document, no report, the searches judged before
    it thrown away (a --workers search's was already an error of its own)."""
    import json

    from deployspec import check

    real = check._judge

    def judge(model, variant, engine, prop, **kwargs):
        if prop == "app_stays_available":
            raise MemoryError
        return real(model, variant, engine, prop, **kwargs)

    monkeypatch.setattr(check, "_judge", judge)
    status, out, _ = run(capsys, "check", "--model", "capi", "--variant", "capi-2022", "--engine", "explore",
                         "--property", "app_stays_available", "--property", "single_active_deployment", "--json")
    verdicts = {r["property"]: (r["verdict"], r.get("message")) for r in json.loads(out)["results"]}
    assert status == 1
    assert verdicts["app_stays_available"] == ("error", "out of memory (tighter bounds, --bound, or a --budget?)")
    assert verdicts["single_active_deployment"][0] == "violated"
