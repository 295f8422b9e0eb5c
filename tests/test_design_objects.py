"""What a design module raises or hands back is its own code too: printing it runs its
``__str__`` or ``__repr__``. One that calls ``os._exit`` there ended ``deployspec check`` with
status 0 and no output (a review's reproductions: while loading, in a rule's exception that
Hypothesis printed, in a rule's wrong result). Now each is said as unprintable. Run as the
user runs it, in a process of its own: a regression exits there, not here."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

DESIGN = '''
import os, sys
import attrs
from deployspec.reference.capi.variants import CAPI_SAFE

MODE = os.environ["MODE"]

class ExitRepr:
    def __repr__(self):
        os._exit(0)
    __str__ = __repr__

class E(Exception):
    def __str__(self):
        os._exit(0)

def hold(state):
    if MODE == "rule_raises":
        raise E()
    if MODE == "rule_returns":
        return ExitRepr()
    return state

if MODE == "import_raises":
    raise E()
if MODE == "import_exits_with":
    sys.exit(ExitRepr())

VARIANTS = [attrs.evolve(CAPI_SAFE, name="exiting", before_dispatch=hold, declares=frozenset())]
if MODE == "lists_an_object":
    VARIANTS.append(ExitRepr())
'''


def _check(tmp_path, mode: str, engine: str = "hypothesis") -> subprocess.CompletedProcess:
    (tmp_path / "exitingdesign.py").write_text(DESIGN)
    return subprocess.run([sys.executable, "-m", "deployspec", "check", "--variant", "exiting", "--property",
                           "single_active_deployment", "--engine", engine, "--budget", "2", "--json"],
                          capture_output=True, text=True, cwd=tmp_path, timeout=120, check=False,
                          env={**os.environ, "PYTHONPATH": str(tmp_path), "MODE": mode,
                               "DEPLOYSPEC_VARIANTS": "exitingdesign"})


@pytest.mark.parametrize("mode, said", [
    ("import_raises", "cannot load: E: (an unprintable E) at exitingdesign.py:"),
    ("import_exits_with", "cannot load: it called sys.exit((an unprintable ExitRepr))"),
    ("lists_an_object", "ExitRepr (an unprintable ExitRepr) is not a variant"),
])
def test_a_module_whose_objects_end_the_process_when_printed_is_refused_in_one_line(tmp_path, mode, said):
    run = _check(tmp_path, mode)
    assert run.returncode == 2 and run.stdout == "", (run.returncode, run.stderr)
    (line,) = run.stderr.splitlines()
    assert said in line


@pytest.mark.parametrize("engine", ["hypothesis", "explore"])
@pytest.mark.parametrize("mode, said", [
    ("rule_raises", ("variant exiting (DEPLOYSPEC_VARIANTS module exitingdesign) raised E: (an unprintable E) at "
                    "exitingdesign.py:")),
    ("rule_returns", "its rule before_dispatch (at exitingdesign.py:"),
])
def test_a_rule_whose_exception_or_result_ends_the_process_when_printed_is_an_error(tmp_path, mode, said, engine):
    run = _check(tmp_path, mode, engine)
    assert run.returncode == 1, (run.returncode, run.stderr)
    (result,) = json.loads(run.stdout)["results"]
    assert result["verdict"] == "error" and said in result["message"]
    if mode == "rule_returns":
        assert "returned ExitRepr (an unprintable ExitRepr), where the rule it replaces returns" in result["message"]
