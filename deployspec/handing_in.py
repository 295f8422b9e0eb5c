"""The words a command printed for another shell needs before it to know the designs this
process had handed in (``DEPLOYSPEC_VARIANTS``, and the ``PYTHONPATH`` its modules were
found on): every replay, close-look and finishing command deployspec prints, and the HTML
page's replay line, lead with them."""

from __future__ import annotations

import os
import shlex
import sys

from deployspec import variant_plugins
from deployspec.variant_plugins import ENV


def handing_in(variant: str | None = None) -> str:
    """What a command printed for another shell needs before it to know the designs this
    variable handed in: ``DEPLOYSPEC_VARIANTS=mydesigns ``, led by ``PYTHONPATH=…`` where a
    module it names was found there and not in the current folder (a run started as
    ``PYTHONPATH=src DEPLOYSPEC_VARIANTS=mine deployspec check`` printed replay commands
    that could not find ``mine``). "" where ``variant`` is shipped or an installed package's;
    ``variant`` None: the variable as this process has it, whatever it hands in."""
    if variant is not None and not (variant_plugins.source_of(variant) or "").startswith(f"{ENV} module "):
        return ""
    value = os.environ.get(ENV, "")
    if not value:
        return ""
    path = os.environ.get("PYTHONPATH", "")
    lead = f"PYTHONPATH={shlex.quote(path)} " if path and _found_beyond_cwd(value) else ""
    return f"{lead}{ENV}={shlex.quote(value)} "


def _found_beyond_cwd(value: str) -> bool:
    """Whether a module the variable names was imported from another folder of ``sys.path``
    than the current one (``PYTHONPATH=src``: ``src/mine.py`` lies under the current folder,
    but ``mine`` is not found from it)."""
    here = os.path.realpath(os.getcwd())
    for name in (n.strip() for n in value.split(",")):
        file = getattr(sys.modules.get(name), "__file__", None)
        if isinstance(file, str) and _import_root(name, file) != here:
            return True
    return False


def _import_root(name: str, file: str) -> str:
    """The folder of ``sys.path`` that module ``name`` (at ``file``) was imported from: up one
    folder per dot of its name, and one more for a package's ``__init__``."""
    root = os.path.dirname(os.path.realpath(file))
    levels = name.count(".") + (1 if os.path.basename(file).startswith("__init__.") else 0)
    for _ in range(levels):
        root = os.path.dirname(root)
    return root
