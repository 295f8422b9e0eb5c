"""Variants from outside deployspec: a design of your own, checked like the shipped ones.

A variant is data plus the rules a design differs by, so a proposed fix is an
``attrs.evolve`` of a shipped variant (docs/variants.md). Two ways to hand one in:

* an installed package declares the entry point group ``deployspec.variants``
  (``[project.entry-points."deployspec.variants"] mine = "mypkg.designs"``): the
  object named is a module with a ``VARIANTS`` list, or the list itself;
* ``DEPLOYSPEC_VARIANTS=mypkg.designs[,other]`` names such modules, importable
  from the current folder or PYTHONPATH, for a try without packaging.

Every command then knows them (``variants``, ``check``, ``replay``, ``serve``,
``contract --reference``), and ``check`` with no ``--variant`` judges them
against what they declare. A source that cannot be loaded, or that hands in
something that is not a variant of a shipped model with a name of its own, is a
usage error: a check that quietly left out the design it was asked about would
read as a pass.
"""

from __future__ import annotations

import importlib
import os
import re
import sys
from collections.abc import Callable, Iterable, Mapping
from importlib.metadata import entry_points
from types import ModuleType
from typing import Any

from deployspec.models import UsageError

GROUP = "deployspec.variants"
ENV = "DEPLOYSPEC_VARIANTS"
#: a variant's name goes into trace file names (``NAME--property--hash.json``) and command lines
NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,63}")

#: variant name -> where it came from, for ``deployspec variants``
SOURCES: dict[str, str] = {}


def sources() -> list[tuple[str, Callable[[], Any]]]:
    """(where, load) for each entry point of the group, then each module of the variable."""
    found = [(f"entry point {ep.name} ({ep.value})", ep.load) for ep in entry_points(group=GROUP)]
    for name in dict.fromkeys(s.strip() for s in os.environ.get(ENV, "").split(",")):  # (once each)
        if name:
            found.append((f"{ENV} module {name}", lambda name=name: _import(name)))
    return found


def _import(name: str) -> ModuleType:
    if os.getcwd() not in sys.path and "" not in sys.path:
        sys.path.insert(0, os.getcwd())  # as `python -m` would: modules beside the user come first
    return importlib.import_module(name)


def with_outside_variants(model_name: str, shipped: Mapping[str, Any], properties: Iterable[str],
                          models: Mapping[str, type]) -> dict[str, Any]:
    """``shipped`` and the outside variants of ``model_name``. ``models`` maps each model's
    name to its variant class (a variant of another model is left to that one)."""
    variants = dict(shipped)
    known = set(properties)
    for where, load in sources():
        for v in _handed_in(where, load, models):
            if v.model != model_name:
                continue
            _check(where, v, variants, known)
            variants[v.name] = v
            SOURCES[v.name] = where
    return variants


def _handed_in(where: str, load: Callable[[], Any], models: Mapping[str, type]) -> list[Any]:
    try:
        obj = load()
    except Exception as exc:  # noqa: BLE001 - whatever the user's module raises is said, in one line
        raise UsageError(f"variants from {where}: cannot load: {type(exc).__name__}: {exc}") from None
    if isinstance(obj, ModuleType):
        if not hasattr(obj, "VARIANTS"):
            raise UsageError(f"variants from {where}: the module has no VARIANTS (a list of variants)")
        obj = obj.VARIANTS
    items = list(obj.values()) if isinstance(obj, Mapping) else obj
    if isinstance(items, (str, bytes)) or not isinstance(items, Iterable):
        raise UsageError(f"variants from {where}: VARIANTS must be a list of variants, not {type(obj).__name__}")
    items = list(items)
    kinds = tuple(models.values())
    for v in items:
        if not isinstance(v, kinds) or models.get(getattr(v, "model", None)) is not type(v):
            raise UsageError(f"variants from {where}: {type(v).__name__} {_short(v)} is not a variant "
                             f"(attrs.evolve one of {', '.join(c.__name__ for c in kinds)}; docs/variants.md)")
    return items


def _check(where: str, v: Any, variants: Mapping[str, Any], known: set[str]) -> None:
    if not isinstance(v.name, str) or not NAME.fullmatch(v.name):
        raise UsageError(f"variants from {where}: name {_short(v.name)} must be 1-64 letters, digits, "
                         "'.', '_' or '-' (it names trace files)")
    if v.name in variants:
        taken = SOURCES.get(v.name, "a shipped variant")
        raise UsageError(f"variants from {where}: the name {v.name!r} is taken ({taken}); give yours its own")
    claimed = set(v.declares) | set(v.violates_beyond)
    unknown = sorted(claimed - known)
    if unknown:
        raise UsageError(f"variants from {where}: {v.name} declares unknown properties {', '.join(unknown)} "
                         f"(known: {', '.join(sorted(known))})")


def _short(value: Any) -> str:
    from deployspec.text import printable_line

    return printable_line(repr(value), 80)
