"""The user's code may not end deployspec with ``os._exit`` while it runs
(``deployspec.user_code.exit_refused``); what it still may: exit a child it forked, or
another thread."""

from __future__ import annotations

import os
import sys

import pytest

from deployspec.user_code import ExitCalled, exit_refused


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

