"""``deployspec serve --python MODULE:FACTORY``: a Python object behind the protocol, in a
process of its own, so ``contract --exec`` isolates it as it isolates any program."""

import io
import json
import shlex
import subprocess
import sys
from pathlib import Path

import pytest

from deployspec.cli import main

TESTS = Path(__file__).parent


def _served(factory: str) -> str:
    """The --exec command serving ``contract_fakes:factory`` (importable from tests/)."""
    return (f"PYTHONPATH={shlex.quote(str(TESTS))} {shlex.quote(sys.executable)} -m deployspec serve "
            f"--model capi --python contract_fakes:{factory}")


def test_what_a_served_object_prints_stays_off_the_protocol(capfd):
    """Chatty prints in every call: on the served process's stdout that would be a garbled reply."""
    status = main(["contract", "--exec", _served("chatty"), "--model", "capi", "--reference", "capi-safe",
                   "--property", "conforms_to_capi-safe", "--examples", "10", "--seed", "0"])
    out, err = capfd.readouterr()
    assert status == 0, out + err
    assert "holds" in out


def test_an_object_that_ends_its_process_is_a_fault_not_the_end_of_the_run(capsys):
    """In process (--python) os._exit is refused during a call; here it ends the served
    process, as any program's end, and the run reports it."""
    status = main(["contract", "--exec", _served("ends_the_process"), "--model", "capi",
                   "--property", "single_active_deployment", "--examples", "50", "--seed", "0"])
    captured = capsys.readouterr()
    assert status == 3, captured.out
    assert "the implementation exited with status 7 before replying to action" in captured.err


@pytest.mark.parametrize("factory, why", [
    # its coroutine was taken for a refusal's reason: 'not JSON serializable' said nothing
    ("async_perform", ("perform() returned an awaitable (coroutine): an async method? deployspec calls reset, "
                      "perform and observe synchronously")),
    ("reset_answers", "reset() returned 'reset done'; expected None"),  # went unnoticed: every check held
    ("bad_outcome", "perform() returned 422; expected None (accepted) or a reason string (rejected)"),
])
def test_a_served_answer_that_cannot_be_one_is_said_as_in_process(capsys, factory, why):
    status = main(["contract", "--exec", _served(factory), "--model", "capi", "--examples", "5",
                   "--property", "app_stays_available", "--seed", "0"])
    err = capsys.readouterr().err
    assert status == 3 and err.count("\n") == 1, err
    assert why in err


def test_a_factory_that_fails_is_a_fault_saying_why(capsys):
    status = main(["contract", "--exec", _served("factory_exits"), "--model", "capi", "--examples", "5"])
    err = capsys.readouterr().err
    assert status == 3 and err.count("\n") == 1
    assert "before replying to reset; its stderr ends with: deployspec: error: contract_fakes:factory_exits()" in err


def test_a_factory_name_that_is_not_there_is_a_usage_error_of_serve():
    proc = subprocess.run([sys.executable, "-m", "deployspec", "serve", "--model", "capi", "--python", "contract_fakes:nope"],
                          cwd=TESTS, capture_output=True, text=True, timeout=60, check=False)
    assert proc.returncode == 2 and proc.stdout == ""
    assert proc.stderr == "deployspec: error: --python contract_fakes:nope: module contract_fakes has no 'nope'\n"


def test_serve_with_its_input_closed_says_so():
    command = f"{shlex.quote(sys.executable)} -m deployspec serve --model capi --variant capi-safe <&-"
    proc = subprocess.run(["/bin/sh", "-c", command], capture_output=True, text=True, timeout=60, check=False)
    assert proc.returncode == 2
    assert proc.stderr == "deployspec: error: standard input is closed: serve reads its requests there\n"


LOUD = """\
import os
from deployspec.contract.examples import ReferenceImplementation
print("loading loud")  # at import


class Loud(ReferenceImplementation):
    def perform(self, action):
        os.write(1, b"straight to file descriptor 1\\n")  # as a C library would
        return super().perform(action)


def factory():
    return Loud("capi", "capi-safe")
"""


def test_nothing_the_served_code_writes_reaches_the_protocol(capsys, tmp_path):
    """Printed at import, or written to file descriptor 1 under Python's feet: both on stderr."""
    (tmp_path / "loud.py").write_text(LOUD)
    served = (f"PYTHONPATH={shlex.quote(str(tmp_path))} {shlex.quote(sys.executable)} -m deployspec serve "
              "--model capi --python loud:factory")
    status = main(["contract", "--exec", served, "--model", "capi", "--reference", "capi-safe",
                   "--property", "conforms_to_capi-safe", "--examples", "5", "--seed", "0"])
    assert status == 0, capsys.readouterr().out


def test_sigterm_while_the_object_is_being_made_ends_serving_with_0(tmp_path):
    import os
    import signal
    import time

    marker = tmp_path / "importing"
    (tmp_path / "slow.py").write_text(f"import time\nopen({str(marker)!r}, 'w').close()\ntime.sleep(60)\n"
                                      "def factory():\n    return None\n")
    proc = subprocess.Popen([sys.executable, "-m", "deployspec", "serve", "--model", "capi", "--python", "slow:factory"],
                            cwd=tmp_path, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            text=True)
    deadline = time.monotonic() + 60
    while not marker.exists() and time.monotonic() < deadline:
        time.sleep(0.05)
    os.kill(proc.pid, signal.SIGTERM)
    out, err = proc.communicate(timeout=30)
    assert (proc.returncode, out, err) == (0, "", "")


class _Unprintable(Exception):
    def __str__(self):
        raise ValueError("no text")


class _Raises:
    """Accepts a reset, then raises ``exc`` from perform."""

    def __init__(self, exc: BaseException):
        self.exc = exc

    def reset(self, config):
        pass

    def perform(self, action):
        raise self.exc  # _RAISES_AT

    def observe(self):
        return {"app": None, "droplets": [], "processes": [], "deployments": []}


_RAISES_AT = next(n for n, line in enumerate(Path(__file__).read_text().splitlines(), 1)
                  if line.endswith("# _RAISES_AT"))


def _answers(impl) -> list[dict]:
    from deployspec.contract.server import serve

    requests = io.BytesIO(b'{"id": 0, "type": "reset", "protocol": 1, "model": "capi", "config": {}}\n'
                          b'{"id": 1, "type": "action", "action": {"type": "push", "instances": 1}}\n')
    replies = io.BytesIO()
    assert serve(impl, "capi", stdin=requests, stdout=replies) == 0
    return [json.loads(line) for line in replies.getvalue().splitlines()]


@pytest.mark.parametrize("exc, message", [
    # an object's exit ended serve with status 2, the status of a usage error, and nothing said
    (SystemExit("bye"), "SystemExit: bye"),
    # any other BaseException was a traceback of serve
    (GeneratorExit(), "GeneratorExit"),
    (type("Custom", (BaseException,), {})("custom"), "Custom: custom"),
    # an exception that cannot say what it is was a traceback too
    (_Unprintable(), "_Unprintable: (an unprintable _Unprintable)"),
])
def test_whatever_a_served_object_raises_is_an_error_reply(exc, message):
    """Said as in process: what it raised and the line of the object's code that raised it."""
    assert _answers(_Raises(exc))[1] == {"id": 1, "type": "error",
                                         "message": f"{message} at test_serve_python.py:{_RAISES_AT}"}


class _Exits(Exception):
    def __str__(self):
        raise SystemExit(0)


class _ItemsRaise(dict):
    def items(self):
        raise RuntimeError("no items")


def test_an_error_or_observation_that_runs_its_own_code_when_written_is_an_error_reply():
    """Serialising the reply ran the object's own code outside the error replies: an
    exception whose ``__str__`` exits ended serve with status 0 and no reply; a dict whose
    ``items()`` raises was a traceback; a 9 MiB message made a reply over the protocol's
    line bound (the exception lost). Each is now one error reply, as in process."""
    (reply,) = _answers(_Raises(_Exits()))[1:]
    assert reply == {"id": 1, "type": "error",
                     "message": f"_Exits: (an unprintable _Exits) at test_serve_python.py:{_RAISES_AT}"}
    (reply,) = _answers(_Raises(RuntimeError("x" * 9 * 2**20)))[1:]
    assert reply["type"] == "error" and reply["message"].startswith("RuntimeError: xxx")
    assert len(reply["message"]) < 300

    class Odd(_Raises):
        def observe(self):
            return _ItemsRaise(app=None, droplets=[], processes=[], deployments=[])

    from deployspec.contract.server import serve

    requests = io.BytesIO(b'{"id": 0, "type": "reset", "protocol": 1, "model": "capi", "config": {}}\n'
                          b'{"id": 1, "type": "observe"}\n')
    replies = io.BytesIO()
    assert serve(Odd(None), "capi", stdin=requests, stdout=replies) == 0
    reply = json.loads(replies.getvalue().splitlines()[1])
    assert (reply["id"], reply["type"]) == (1, "error")
    assert "no items" in reply["message"], reply


def test_an_interruption_still_ends_serving():
    """Ctrl-C in a call is not the object's error (as in process)."""
    with pytest.raises(KeyboardInterrupt):
        _answers(_Raises(KeyboardInterrupt()))


def test_a_served_object_that_exits_is_reported_as_its_error(capsys):
    """Through the wire as in process: a fault saying what the object raised, not an exit
    status 2 of the served process."""
    status = main(["contract", "--exec", _served("exits"), "--model", "capi",
                   "--property", "single_active_deployment", "--examples", "20", "--seed", "0"])
    err = capsys.readouterr().err
    assert status == 3 and err.count("\n") == 1, err
    assert "the implementation reported an error on action deploy: SystemExit: 0" in err


@pytest.mark.parametrize("variant, model", [("capi-safe", "capi"), ("slots-pipeline-immutable", "slots")])
def test_a_served_variant_brings_its_model_as_check_does(variant, model):
    """``serve --variant V`` needed ``--model`` too, though a variant's name says its model
    (``check --variant V`` finds it); the reset names the model, which must be the variant's."""
    reset = json.dumps({"type": "reset", "id": 0, "protocol": 1, "model": model, "config": {}})
    proc = subprocess.run([sys.executable, "-m", "deployspec", "serve", "--variant", variant], input=reset + "\n",
                          capture_output=True, text=True, timeout=60, check=False)
    assert (proc.returncode, proc.stderr) == (0, "")
    assert json.loads(proc.stdout) == {"id": 0, "type": "reset_ok", "protocol": 1,
                                       "implementation": f"deployspec {variant}"}


@pytest.mark.parametrize("argv, says", [
    (["serve", "--python", "contract_fakes:chatty"],
     "serve --python needs --model: the model the object implements (capi, slots)"),
    (["serve", "--variant", "nope"], "unknown variant 'nope' (known: capi-2022"),
    (["serve", "--model", "slots", "--variant", "capi-safe"], "'capi-safe' is a variant of model capi, not slots"),
])
def test_what_serve_cannot_serve_is_said_in_one_line(argv, says):
    proc = subprocess.run([sys.executable, "-m", "deployspec", *argv], cwd=TESTS, stdin=subprocess.DEVNULL,
                          capture_output=True, text=True, timeout=60, check=False)
    assert (proc.returncode, proc.stdout) == (2, "")
    assert proc.stderr.startswith(f"deployspec: error: {says}") and proc.stderr.count("\n") == 1, proc.stderr


def test_a_served_object_that_closes_its_streams_ends_serving_quietly():
    """It closed the served process's sys.stdout: both replies went out, then a traceback and exit 1."""
    requests = [{"id": 1, "type": "reset", "protocol": 1, "model": "capi", "config": {}},
                {"id": 2, "type": "action", "action": {"type": "push", "instances": 1}},
                {"id": 3, "type": "action", "action": {"type": "deploy", "max_in_flight": 1}}]
    proc = subprocess.run([sys.executable, "-m", "deployspec", "serve", "--model", "capi", "--python",
                           "contract_fakes:closes_its_streams"], cwd=TESTS, capture_output=True, text=True,
                          input="".join(json.dumps(r) + "\n" for r in requests), check=False)
    assert (proc.returncode, proc.stderr) == (0, "")
    assert [json.loads(line)["type"] for line in proc.stdout.splitlines()] == ["reset_ok", "performed", "performed"]


def test_keys_that_become_one_name_as_json_are_refused_served_and_in_process():
    """``{1: …, "1": …}`` is written as an object naming "1" twice. Over --exec a harness
    refuses that line; served from a Python object (and in process) it was read back by
    json.loads, which keeps the last: a different observation, accepted."""
    from deployspec.contract.python_adapter import PythonAdapter
    from deployspec.contract.server import serve
    from deployspec.models import get_model

    tags = {1: "sha256:aa", "1": "sha256:bb"}

    class Twice(_Raises):
        def observe(self):
            return {"registry": {"tags": tags}}

    requests = io.BytesIO(b'{"id": 0, "type": "reset", "protocol": 1, "model": "slots", "config": {}}\n'
                          b'{"id": 1, "type": "observe"}\n')
    replies = io.BytesIO()
    assert serve(Twice(None), "slots", stdin=requests, stdout=replies) == 0
    reply = json.loads(replies.getvalue().splitlines()[1])
    assert reply == {"id": 1, "type": "error",
                     "message": 'observe() returned something that is not JSON: an object names "1" twice'}
    adapter = PythonAdapter(Twice(None), get_model("slots"))
    with pytest.raises(Exception, match='not JSON: an object names "1" twice'):
        adapter.observe()
