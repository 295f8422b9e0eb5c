"""Code the user hands in by module name (``--python MODULE:FACTORY``, a design of their own):
found as ``python -m`` would find it, from the current folder first, then PYTHONPATH."""

from __future__ import annotations

import os
import sys


def cwd_first_on_path() -> None:
    """Put the current folder on ``sys.path`` (first) unless it is there already."""
    if os.getcwd() not in sys.path and "" not in sys.path:
        sys.path.insert(0, os.getcwd())


def is_module_name(name: str) -> bool:
    """``pkg.mod``, not a file name or a path (``./mod.py``), which no import can take."""
    return all(part.isidentifier() for part in name.split("."))
