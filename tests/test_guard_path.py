"""What the user's code takes off ``sys.path`` comes back (``deployspec.user_code.path_kept``)."""

from __future__ import annotations

import os
import sys

import pytest

from deployspec.user_code import path_kept


@pytest.mark.parametrize("doing", [
    lambda: sys.path.clear(),
    lambda: setattr(sys, "path", []),
    lambda: setattr(sys, "path", ["/mine"]),
    lambda: sys.path.insert(0, "/mine"),
    lambda: sys.path.remove(sys.path[-1]),
    lambda: sys.path.append(b"/bytes"),  # (not a folder an import can take: dropped only if anything is put back)
])
def test_what_the_code_takes_off_sys_path_comes_back_after_what_it_added(monkeypatch, doing):
    """A ``--python`` object that emptied ``sys.path`` ended the run with a traceback
    (``No module named 'hypothesis'``, imported later by deployspec)."""
    listed = ["/a", "/b", "/c"]
    monkeypatch.setattr(sys, "path", listed)
    with path_kept():
        doing()
        changed = list(sys.path)
    assert sys.path is listed
    assert all(p in listed for p in ("/a", "/b", "/c"))  # what deployspec imports from is back
    assert all(p in listed for p in changed if isinstance(p, str))  # and what the code added stays



def test_sys_path_left_as_it_was_is_not_touched(monkeypatch):
    listed = ["/a", "/b"]
    monkeypatch.setattr(sys, "path", listed)
    with path_kept():
        pass
    assert sys.path is listed and listed == ["/a", "/b"]



def test_an_object_that_empties_sys_path_leaves_the_run_whole(tmp_path):
    import subprocess

    (tmp_path / "pathclearing.py").write_text(
        "import sys\nfrom deployspec.contract.examples import ReferenceImplementation\n"
        "def make():\n    sys.path.clear()\n    return ReferenceImplementation('capi', 'capi-safe')\n")
    run = subprocess.run([sys.executable, "-m", "deployspec", "contract", "--python", "pathclearing:make", "--model",
                          "capi", "--examples", "3", "--property", "single_active_deployment"], capture_output=True,
                         text=True, cwd=tmp_path, env={**os.environ, "PYTHONPATH": str(tmp_path)}, timeout=120,
                         check=False)
    assert run.returncode == 0, run.stderr
    assert "no check found a violation" in run.stdout



class _RaisingEntry:
    def __eq__(self, other):
        raise RuntimeError("an entry of the code's own compared")

    __hash__ = object.__hash__



@pytest.mark.parametrize("doing", [
    lambda: sys.path.insert(0, _RaisingEntry()),
    lambda: delattr(sys, "path"),
])
def test_sys_path_is_put_back_without_running_the_code_s_own_entries(monkeypatch, doing):
    """Comparing an entry of the code's own ran its __eq__ after the call's timer (a hang, or
    a raw exception out of the call); a deleted sys.path was no list."""
    listed = ["/a", "/b"]
    monkeypatch.setattr(sys, "path", listed)
    with path_kept():
        doing()
    assert sys.path is listed and listed == ["/a", "/b"]



def test_a_recursion_limit_the_code_lowers_comes_back_and_one_it_raises_stays():
    """An object that set a limit of 30 made deployspec's next schema check a RecursionError
    traceback, exit 1 as if a property were violated."""
    import inspect

    from deployspec.user_code import recursion_kept

    before = sys.getrecursionlimit()
    try:
        with recursion_kept():
            sys.setrecursionlimit(len(inspect.stack()) + 20)  # (as low as this depth allows)
        assert sys.getrecursionlimit() == before
        with recursion_kept():
            sys.setrecursionlimit(before + 500)
        assert sys.getrecursionlimit() == before + 500
    finally:
        sys.setrecursionlimit(before)


def test_an_object_that_lowers_the_recursion_limit_leaves_the_run_whole(tmp_path):
    import subprocess

    (tmp_path / "shallow.py").write_text(
        "import inspect, sys\nfrom deployspec.contract.examples import ReferenceImplementation\n"
        "class Shallow(ReferenceImplementation):\n"
        "    def perform(self, action):\n        done = super().perform(action)\n"
        "        sys.setrecursionlimit(len(inspect.stack()) + 15)\n        return done\n"
        "def make():\n    return Shallow('capi', 'capi-safe')\n")
    run = subprocess.run([sys.executable, "-m", "deployspec", "contract", "--python", "shallow:make", "--model",
                          "capi", "--examples", "3", "--property", "single_active_deployment", "--no-known"],
                         capture_output=True, text=True, cwd=tmp_path,
                         env={**os.environ, "PYTHONPATH": str(tmp_path)}, timeout=120, check=False)
    assert run.returncode == 0, run.stderr[-2000:]
    assert "no check found a violation" in run.stdout
