"""What a ``--python`` object returns or raises is the object's code too: printing it, or
dropping it, runs its ``__repr__``, ``__str__`` or ``__del__``. All of that happens within the
call, timed and guarded, so it ends as the object's fault, never as deployspec's exit 0 with
no report (what a review found: each case below ended so, hung past --timeout, or printed a
traceback). Run as the user runs it, in a process of its own: a regression exits there, not here."""

from __future__ import annotations

import os
import subprocess
import sys
import time

import pytest

from deployspec.models import get_model

OBJECTS = '''
import os, time
from deployspec.contract.examples import ReferenceImplementation

class ExitRepr:
    def __repr__(self):
        os._exit(0)

class SlowRepr:
    def __repr__(self):
        time.sleep(60)
        return "slow"

class StrExits(Exception):
    def __str__(self):
        raise SystemExit(0)

class ClaimsStr:
    __class__ = property(lambda self: str)

class Obj(ReferenceImplementation):
    def __init__(self, mode):
        super().__init__("capi", "capi-safe")
        self.mode = mode

    def reset(self, config):
        super().reset(config)
        if self.mode == "reset_exit_repr":
            return ExitRepr()

    def perform(self, action):
        if self.mode == "perform_slow_repr":
            return SlowRepr()
        if self.mode == "raise_str_exits":
            raise StrExits()
        if self.mode == "claims_str":
            return ClaimsStr()
        if self.mode == "exit_with_object":
            os._exit(ExitRepr())
        return super().perform(action)

def make():
    return Obj(os.environ["MODE"])
'''


@pytest.mark.parametrize("mode, said", [
    ("reset_exit_repr", "implementation fault at reset: reset() returned (an unprintable ExitRepr); expected None"),
    ("perform_slow_repr", "perform() did not return within 1 s (hung? see --timeout)"),
    ("raise_str_exits", "perform() raised StrExits: (an unprintable StrExits) at objects.py:"),
    ("claims_str", "perform() returned <objects.ClaimsStr object at 0x"),
    ("exit_with_object", "perform() called os._exit(a ExitRepr)"),
])
def test_what_the_object_returns_or_raises_is_said_within_its_call(tmp_path, mode, said):
    (tmp_path / "objects.py").write_text(OBJECTS)
    started = time.monotonic()
    run = subprocess.run([sys.executable, "-m", "deployspec", "contract", "--python", "objects:make", "--model",
                          "capi", "--examples", "3", "--timeout", "1", "--property", "single_active_deployment"],
                         capture_output=True, text=True, cwd=tmp_path, timeout=120, check=False,
                         env={**os.environ, "PYTHONPATH": str(tmp_path), "MODE": mode})
    assert run.returncode == 3, (run.returncode, run.stdout, run.stderr)
    assert said in run.stderr.splitlines()[-1], run.stderr
    assert "FAULT: the implementation failed" in run.stdout
    assert time.monotonic() - started < 30  # the slow __repr__ is cut at --timeout, not waited out


DYING_STATUS = '''
import os
from deployspec.contract.examples import ReferenceImplementation

class Status:
    def __del__(self):
        os._exit(0)

class Obj(ReferenceImplementation):
    def perform(self, action):
        os._exit(Status())

def factory():
    return Obj("capi", "capi-safe")
'''


def test_what_a_refused_os_exit_held_is_let_go_within_the_call(tmp_path):
    """The status handed to os._exit (and the frames the refusal held) lived on in the fault's
    context, and its __del__ ran later with the real os._exit: the pytest plugin's run, a
    failed test per property, ended with status 0."""
    (tmp_path / "dying.py").write_text(DYING_STATUS)
    run = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "--pyargs",
                          "deployspec.stateful_tests.test_contract", "--deployspec-python", "dying:factory",
                          "--deployspec-model", "capi", "--deployspec-examples", "5"],
                         capture_output=True, text=True, cwd=tmp_path, timeout=120, check=False,
                         env={**os.environ, "PYTHONPATH": str(tmp_path)})
    assert run.returncode == 1, (run.returncode, run.stdout[-500:])
    assert f"{len(get_model('capi').properties)} failed" in run.stdout
