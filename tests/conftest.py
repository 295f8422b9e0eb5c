import multiprocessing as mp
import os
import signal
import sys

import pytest

from deployspec import models, variant_plugins
from deployspec.profiles import load

from .designs_handed_in import DESIGNS

load()

# Tables fit the screen COLUMNS gives (deployspec.terminal): the outputs the suite expects
# are a pipe's, whichever terminal runs it. (Tests of the fitting set it themselves.)
os.environ.pop("COLUMNS", None)


# A suite started in the background (`pytest &` in a script) inherits SIGINT ignored, and
# so would every program the tests start: deployspec keeps an ignored SIGINT ignored (as it
# should), and the Ctrl-C tests would see nothing happen. Their programs start with Ctrl-C.
if signal.getsignal(signal.SIGINT) is signal.SIG_IGN:
    signal.signal(signal.SIGINT, signal.default_int_handler)


@pytest.fixture
def no_worker_left_behind():
    """After the test, no child process of this one is still running (partitioned searches)."""
    yield
    assert mp.active_children() == []


@pytest.fixture
def outside(monkeypatch):
    """Models and designs loaded afresh, with the designs folder importable; returns a
    setter for the variable (the machine's own entry points stay out)."""
    monkeypatch.setattr(models, "_CACHE", {})
    monkeypatch.setattr(variant_plugins, "_handed_in", None)
    monkeypatch.syspath_prepend(str(DESIGNS))
    monkeypatch.setattr(variant_plugins, "entry_points", lambda group: [])

    used: set[str] = set()

    def use(modules: str) -> None:
        monkeypatch.setenv(variant_plugins.ENV, modules)
        models._CACHE.clear()
        variant_plugins._handed_in = None
        # each test's own module of that name: another test's, imported before, is no design of this one's
        names = {m.strip() for m in modules.split(",") if m.strip()}
        for name in names:
            sys.modules.pop(name, None)
        used.update(names)

    yield use
    for name in used:
        sys.modules.pop(name, None)


@pytest.fixture
def hand_in(outside, tmp_path, monkeypatch):
    """Write ``module``.py with ``source`` into a folder on the path and hand it in."""

    def write(module: str, source: str) -> None:
        (tmp_path / f"{module}.py").write_text(source)
        monkeypatch.syspath_prepend(str(tmp_path))
        outside(module)

    return write
