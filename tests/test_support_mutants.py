"""Behaviours of the contract run's support modules and the model registry that a mutation
pass over ``contract/sweep.py``, ``contract/recall.py``, ``contract/leftovers.py``,
``contract/last_resort.py``, ``contract/examples.py``, ``variant_plugins.py``, ``models.py``
and ``exception_notes.py`` found unpinned: each round of ending what an implementation left
behind reaps the children it killed, a bound of the wrong JSON type (``true`` for a number)
is refused as such, and the worked example of the implementation interface says it was
called before its reset. Each test was written against a hand-made mutant the rest of the
suite let through; its docstring names it."""

from __future__ import annotations

import subprocess
import sys

import pytest

from deployspec.contract import leftovers
from deployspec.contract.examples import ReferenceImplementation

from .cli_runs import run
from .test_contract_leftovers_details import _gone

# --- leftovers.py: what an implementation leaves behind --------------------------------------


def test_each_round_of_ending_escaped_children_reaps_those_it_killed():
    """A round kills each child gained and waits for it: none is left a zombie for a later
    round to find (past the last round, for as long as the program lives: a long ``serve``).
    (Mutant L13: ``os.waitpid(pid, os.WNOHANG)`` after the kill, which finds a child just
    killed still dying, and the default eight rounds mostly hid it.)"""
    known = leftovers.children()
    procs = [subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"]) for _ in range(3)]
    try:
        leftovers.end_escaped(known, rounds=1)
        assert [p.pid for p in procs if not _gone(p.pid)] == []
    finally:
        for p in procs:
            if not _gone(p.pid):
                p.kill()
                p.wait()


# --- models.py: --bound ----------------------------------------------------------------------


def test_a_bound_of_true_for_a_number_is_refused_as_of_the_wrong_type(capsys):
    """JSON's ``true`` is no number, though Python's ``True`` is an ``int``: the bound is told
    what type it takes, as any other value of the wrong type is. (Mutant M9: ``isinstance``
    for the type check, which let the bool through to a message about the bound's range.)"""
    status, out, err = run(capsys, "check", "--model", "capi", "--variant", "capi-safe",
                           "--bound", "max_instances=true")
    # (the example is the first engine's configuration: the same every run, whatever the hash seed)
    assert (status, out, err) == (2, "", "deployspec: error: --bound max_instances: expected int like 3, got true\n")


# --- contract/examples.py: the worked example of the interface -------------------------------


@pytest.mark.parametrize("method, args", [("perform", ({"type": "tick"},)), ("observe", ())])
def test_the_example_implementation_called_before_its_reset_says_so(method, args):
    """docs/contract.md names ``ReferenceImplementation`` the complete example of the
    interface: a wrapper that calls it out of order is told so, not handed an
    AttributeError from inside the model. (Mutant E1: no check in ``perform``; its twin
    in ``observe`` likewise.)"""
    impl = ReferenceImplementation("capi", "capi-safe")
    with pytest.raises(RuntimeError, match=f"^{method} before reset$"):
        getattr(impl, method)(*args)
