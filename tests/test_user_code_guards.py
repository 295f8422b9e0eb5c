"""What the user's code may not do to deployspec while it runs (``deployspec.user_code``):
close the streams deployspec writes its results and messages to, or end the process with
``os._exit``; and what it still may: exit a child it forked."""

from __future__ import annotations

import io
import os
import sys

import pytest

from deployspec.user_code import ExitCalled, Lent, borrowed, exit_refused, lent_streams


def test_os_exit_is_refused_in_this_process_and_the_real_one_is_back_after():
    real = os._exit
    with pytest.raises(ExitCalled) as caught, exit_refused():
        os._exit(0)
    assert caught.value.status == 0 and os._exit is real


def test_a_child_the_code_forked_exits_as_ever():
    """multiprocessing ends its forked children with os._exit: refused there, the child
    would run on in deployspec's code."""
    with exit_refused():
        pid = os.fork()
        if pid == 0:
            os._exit(5)
        _, status = os.waitpid(pid, 0)
    assert os.waitstatus_to_exitcode(status) == 5


@pytest.mark.parametrize("raising, status", [(False, 0), (True, 1)])
def test_a_child_the_code_forked_ends_where_it_leaves_the_block(raising, status):
    """``os.fork()`` returns in both processes: a child that comes back out of the user's
    code (returning or raising) would run on as a second deployspec."""
    pid = os.fork()
    if pid == 0:  # a process of its own, so that this test's process runs on whatever happens
        try:
            with exit_refused():
                child = os.fork()
                if child == 0 and raising:
                    raise RuntimeError("out of the code")
            if child == 0:
                os.write(1, b"the forked child ran on past the block\n")
                os._exit(7)
            _, st = os.waitpid(child, 0)
            os._exit(40 + os.waitstatus_to_exitcode(st))
        finally:
            os._exit(9)
    _, st = os.waitpid(pid, 0)
    assert os.waitstatus_to_exitcode(st) == 40 + status


def test_another_thread_exits_as_ever():
    """deployspec's last resort ends a run whose call swallowed its timeout with os._exit from
    a timer thread: refused, the run hung for ever."""
    import threading

    real = os._exit
    pid = os.fork()
    if pid == 0:  # a process of its own: a second thread tries it while the main one is in the block
        try:
            with exit_refused():
                threading.Thread(target=os._exit, args=(6,)).start()
                threading.Event().wait(10)
        finally:
            real(1)
    _, status = os.waitpid(pid, 0)
    assert os.waitstatus_to_exitcode(status) == 6


def test_lent_streams_cannot_be_closed_and_the_real_ones_are_back_after():
    out, err = io.StringIO(), io.StringIO()
    real = sys.stdout, sys.stderr
    sys.stdout, sys.stderr = out, err
    try:
        with lent_streams(stdout=err):
            print("to stderr")
            sys.stdout.close()
            sys.stderr.close()
            print("still", file=sys.stderr)
        assert (sys.stdout, sys.stderr) == (out, err)
    finally:
        sys.stdout, sys.stderr = real
    assert not err.closed and err.getvalue() == "to stderr\nstill\n" and out.getvalue() == ""


def test_a_stream_has_one_lender_and_a_lender_is_not_lent_again():
    stream = io.StringIO()
    lender = borrowed(stream)
    assert isinstance(lender, Lent) and borrowed(stream) is lender and borrowed(lender) is lender


def test_the_binary_stream_under_a_lent_one_is_lent_too_and_neither_detaches():
    """``sys.stdout.buffer.close()`` in a design module silenced deployspec's stderr."""
    stream = io.TextIOWrapper(io.BytesIO(), encoding="utf-8")
    lender = borrowed(stream)
    lender.buffer.close()
    assert not stream.buffer.closed and isinstance(lender.buffer, Lent)
    with pytest.raises(io.UnsupportedOperation):
        lender.detach()
    lender.write("still")
    lender.flush()
    assert stream.buffer.getvalue() == b"still"


LOUD_DESIGN = """
import os
import attrs
from deployspec.reference.slots import VARIANTS as SHIPPED

os.write(1, b"loading: fd 1\\n")


def loud(state):
    os.write(1, b"rule: fd 1\\n")
    return SHIPPED["slots-pipeline-immutable"].reference(state)


VARIANTS = [attrs.evolve(SHIPPED["slots-pipeline-immutable"], name="loud", reference=loud)]
"""

LOUD_OBJECT = """
import os
from deployspec.contract.examples import capi_safe


class Loud:
    def __init__(self):
        self.inner = capi_safe()

    def __getattr__(self, name):
        os.write(1, b"object: fd 1\\n")
        return getattr(self.inner, name)


def factory():
    return Loud()
"""


@pytest.mark.parametrize("argv, module, source", [
    (["check", "--model", "slots", "--variant", "loud", "--property", "no_latent_drift", "--budget", "0.3"],
     "louddesign", LOUD_DESIGN),
    (["check", "--model", "slots", "--variant", "loud", "--property", "no_latent_drift", "--budget", "0.3",
      "--jobs", "2", "--engine", "all"], "louddesign", LOUD_DESIGN),
    (["contract", "--python", "loudobject:factory", "--model", "capi", "--examples", "3",
      "--property", "single_active_deployment"], "loudobject", LOUD_OBJECT),
])
def test_what_user_code_writes_to_file_descriptor_1_stays_out_of_the_json_document(tmp_path, argv, module, source):
    """Not only ``print``: ``os.write(1, …)`` (or a C library) in a design handed in or a
    ``--python`` object went into the document on stdout; it goes to stderr now."""
    import json
    import subprocess

    (tmp_path / f"{module}.py").write_text(source)
    env = {**os.environ, "PYTHONPATH": str(tmp_path)}
    if module == "louddesign":
        env["DEPLOYSPEC_VARIANTS"] = module
    run = subprocess.run([sys.executable, "-m", "deployspec", *argv, "--json"], capture_output=True,
                         text=True, cwd=tmp_path, env=env, timeout=120, check=False)
    assert run.returncode == 0, run.stderr
    assert json.loads(run.stdout)["exit_status"] == 0
    assert ": fd 1" in run.stderr and ": fd 1" not in run.stdout


FORKING = """
import os
from deployspec.contract.examples import capi_safe


def factory():
    os.fork()  # both processes come back with an object
    return capi_safe()
"""

FORKING_DESIGN = """
import os
import attrs
from deployspec.reference.slots import VARIANTS as SHIPPED

os.fork()  # at import: both processes come back into deployspec
VARIANTS = [attrs.evolve(SHIPPED["slots-pipeline-immutable"], name="forking")]
"""


@pytest.mark.parametrize("argv, module, source, status, header", [
    (["contract", "--python", "os:fork", "--model", "capi"], None, None, 3, "contract capi"),
    (["contract", "--python", "forking:factory", "--model", "capi", "--examples", "3",
      "--property", "single_active_deployment"], "forking", FORKING, 0, "contract capi"),
    (["check", "--model", "slots", "--variant", "forking", "--property", "no_latent_drift", "--budget", "0.3"],
     "forkingdesign", FORKING_DESIGN, 0, "variant  no_latent_drift"),
])
def test_a_process_the_user_code_forked_does_not_run_on_as_deployspec(tmp_path, argv, module, source, status,
                                                                      header):
    """The child of a fork in the user's code came back into deployspec and ran the whole
    command again: two reports (the pipe's end waits for both), two runs. One now."""
    import subprocess

    env = {**os.environ, "PYTHONPATH": str(tmp_path)}
    if source is not None:
        (tmp_path / f"{module}.py").write_text(source)
    if module == "forkingdesign":
        env["DEPLOYSPEC_VARIANTS"] = module
    run = subprocess.run([sys.executable, "-m", "deployspec", *argv], capture_output=True, text=True,
                         cwd=tmp_path, env=env, timeout=120, check=False)
    assert run.returncode == status, run.stderr
    out = run.stdout + run.stderr
    assert out.count(header) == 1, out
