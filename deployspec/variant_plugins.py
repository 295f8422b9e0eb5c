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
against what they declare. A supplier that cannot be loaded, or that hands in
something that is not a variant of a shipped model with a name of its own, is a
usage error: a check that quietly left out the design it was asked about would
read as a pass. What a supplier prints while it loads goes to stderr (stdout is
for ``--json``, and for ``serve``'s replies). Suppliers are loaded once per
process, for every model at once.
"""

from __future__ import annotations

import importlib
import os
from collections.abc import Callable, Iterable, Mapping
from importlib.metadata import entry_points
from types import ModuleType
from typing import Any

from deployspec import reached
from deployspec.models import UsageError
from deployspec.reference.core import InvalidVariant
from deployspec.rule_results import RuleResultError, checked
from deployspec.text import quoted
from deployspec.traces import NAME, NAME_RULE
from deployspec.user_code import (
    DescriptorsMoved,
    ExitCalled,
    at_user_line,
    cwd_first_on_path,
    describe,
    frames_of,
    guarded,
    is_module_name,
    shown,
)

GROUP = "deployspec.variants"
ENV = "DEPLOYSPEC_VARIANTS"

#: name -> (the supplier it came from, the variant), of every model, once loaded (None: not yet)
_handed_in: dict[str, tuple[str, Any]] | None = None
_loading = False


def source_of(name: str) -> str | None:
    """Where the variant ``name`` was handed in from (``deployspec variants``); None for a
    shipped one."""
    found = (_handed_in or {}).get(name)
    return found[0] if found else None


def suppliers() -> list[tuple[str, Callable[[], Any]]]:
    """(where, load) for each entry point of the group, then each module of the variable."""
    points = list(entry_points(group=GROUP))
    found = [(f"entry point {ep.name} ({ep.value})", _loader(ep)) for ep in points]
    _packages.clear()
    _packages.update((f"entry point {ep.name} ({ep.value})", _package_of(ep)) for ep in points)
    installed = {ep.value.partition(":")[0].strip() for ep in points}
    for name in dict.fromkeys(s.strip() for s in os.environ.get(ENV, "").split(",")):  # (once each)
        if name and name not in installed:  # (tried by the variable, then packaged: the same designs)
            found.append((f"{ENV} module {name}", lambda name=name: _import(name)))
    return found


#: where -> the installed package an entry point comes from ("" unknown): a module it names
#: that is not found is the package's to fix, not the current folder's or PYTHONPATH's
_packages: dict[str, str] = {}


def _package_of(ep: Any) -> str:
    try:
        return str(ep.dist.name) if getattr(ep, "dist", None) is not None else ""
    except Exception:  # noqa: BLE001 - metadata without a name: said without it
        return ""


def _not_found_hint(where: str) -> str:
    """Where a module that is not found should have come from."""
    if where in _packages:
        package = f" {_packages[where]}" if _packages[where] else ""
        return (f" (an entry point of the installed package{package}: install it again, or pip uninstall it; "
                "until then every command refuses to start)")
    return f" (modules are found from the current folder, {os.getcwd()}, or PYTHONPATH)"


def _loader(ep: Any) -> Callable[[], Any]:
    """``ep.load``, or for a value that is no ``module:attribute`` (which ``load`` answers
    with an AttributeError on None) what it must be."""
    pattern = getattr(ep, "pattern", None)  # importlib.metadata's own reading of the value
    if pattern is None or pattern.match(ep.value):
        return ep.load

    def refuse() -> Any:
        raise UsageError(f"variants from entry point {ep.name} ({ep.value}): its value must be a module name, "
                         "or MODULE:ATTRIBUTE (a list of variants in the module)")
    return refuse


def _import(name: str) -> ModuleType:
    """The module ``name``. A file name is refused with what to give instead, also when it
    reads as a dotted name (``mydesigns.py``: module ``py`` of a package ``mydesigns``)
    that is not found, as ``./mydesigns.py`` is."""
    not_a_module = UsageError(f"{ENV}: {quoted(name)} is not a module name (a dotted name importable from the "
                              "current folder or PYTHONPATH, without .py or a path)")
    if not is_module_name(name):
        raise not_a_module
    cwd_first_on_path()
    try:
        return importlib.import_module(name)
    except ModuleNotFoundError as exc:
        if name.endswith(".py") and exc.name and f"{name}.".startswith(f"{exc.name}."):  # not a dependency's
            raise not_a_module from None
        raise


def with_outside_variants(model: Any, classes: Mapping[str, type], taken: Iterable[str]) -> dict[str, Any]:
    """The variants of ``model`` (a ``models.Model`` with its shipped ones) and those handed
    in from outside for it, their bounds checked by it. ``classes`` maps each model's name
    to its variant class; ``taken`` is every shipped variant's name, of every model
    (variant names are unique across models: ``models.find_variant``)."""
    variants = dict(model.variants)
    known = {p.name for p in model.properties}
    for where, v in _all_handed_in(classes, set(taken)).values():
        if v.model == model.name:
            variants[v.name] = checked(_plain(where, v, model, known), f"variant {v.name} ({where}): ")
    return variants


def _plain(where: str, v: Any, model: Any, known: set[str]) -> Any:
    """``v`` checked (declarations, bounds) and its sets and dicts read once into plain ones,
    which deployspec then reads as it likes: a subclass's own methods (a ``declares`` whose
    ``__iter__`` raises, a ``config`` whose ``items`` does) run here, once, and what they
    raise is said as the design's, not a traceback of ``deployspec variants``."""
    import attrs

    made = v
    try:
        with guarded():
            _check_declarations(where, v, known)
            v = attrs.evolve(v, declares=frozenset(list(v.declares)), summary=str.__str__(v.summary),
                             upstream=str.__str__(v.upstream), violates_beyond=_plain_beyond(v.violates_beyond))
            return _with_checked_bounds(where, v, model)
    except UsageError as exc:
        raise UsageError(f"{exc}{_named_at(made)}") from None
    except KeyboardInterrupt:
        raise
    except ExitCalled as exc:
        raise UsageError(f"variants from {where}: reading {v.name} called os._exit({exc.said})") from None
    except DescriptorsMoved as exc:
        raise UsageError(f"variants from {where}: reading {v.name} {exc}") from None
    except BaseException as exc:  # noqa: BLE001 - whatever the design's objects raise is said, in one line

        raise UsageError(f"variants from {where}: reading {v.name} raised {describe(exc)}{_in_user_code(exc)}") from None


def _plain_beyond(beyond: Mapping[str, Any]) -> dict[str, Any]:
    """``violates_beyond`` with its texts plain ``str`` (checked to be text: a subclass's own
    ``isprintable`` or ``__format__`` would pass control characters to the terminal)."""
    import attrs

    return {str.__str__(prop): attrs.evolve(b, why=str.__str__(b.why),
                                            trace=None if b.trace is None else str.__str__(b.trace))
            for prop, b in beyond.items()}


def _all_handed_in(classes: Mapping[str, type], taken: set[str]) -> dict[str, tuple[str, Any]]:
    import attrs

    global _handed_in, _loading
    if _handed_in is not None:
        return _handed_in
    if _loading:  # a supplier asked for a model while it was being loaded (get_model at import)
        raise UsageError("variants from outside: a supplier asked for a model while its own variants "
                         "were being loaded (get_model at import?); build variants from "
                         "deployspec.reference, not from get_model")
    _loading = True
    try:
        found: dict[str, tuple[str, Any]] = {}
        for where, load in suppliers():
            for v in _load(where, load, classes):
                if isinstance(v.name, str) and type(v.name) is not str:  # a (str, Enum) member, say: read
                    # as plain text, its own methods never run (a raising __hash__ ended variants with a traceback)
                    made, v = v, attrs.evolve(v, name=str.__str__(v.name))
                    if id(made) in _made_in:
                        _made_in[id(v)] = _made_in[id(made)]
                if not isinstance(v.name, str) or not NAME.fullmatch(v.name):  # (it names trace files)
                    raise UsageError(f"variants from {where}: name {_short(v.name)} must be {NAME_RULE}"
                                     f"{_named_at(v)}")
                if v.name in taken or v.name in found:
                    by = found[v.name][0] if v.name in found else "a shipped variant"
                    raise UsageError(f"variants from {where}: the name {quoted(v.name)} is taken ({by}); "
                                     f"give yours its own{_named_at(v)}")
                found[v.name] = (where, v)
        _handed_in = found
        return found
    finally:
        _loading = False


def _load(where: str, load: Callable[[], Any], classes: Mapping[str, type]) -> list[Any]:
    """What one supplier hands in: its list of variants, each a variant of a shipped model."""
    try:
        with guarded():
            obj = load()
            module = getattr(obj, "__file__", None) if isinstance(obj, ModuleType) else None
            if isinstance(obj, ModuleType):
                if not hasattr(obj, "VARIANTS"):
                    raise UsageError(f"variants from {where}: the module has no VARIANTS (a list of variants)")
                obj = obj.VARIANTS
            if isinstance(obj, Mapping):
                wrong = [k for k, v in obj.items() if getattr(v, "name", None) != k]
                if wrong:
                    raise UsageError(f"variants from {where}: VARIANTS maps {_short(wrong[0])} to a variant "
                                     "of another name (keys must be the names)")
                obj = obj.values()
            if isinstance(obj, (str, bytes)) or not isinstance(obj, Iterable):
                raise UsageError(f"variants from {where}: VARIANTS must be a list of variants, "
                                 f"not {type(obj).__name__}")
            items = list(obj)
            if isinstance(module, str):
                _made_in.update((id(v), module) for v in items)
    except (UsageError, KeyboardInterrupt):
        raise
    except SystemExit as exc:
        raise UsageError(f"variants from {where}: cannot load: it called sys.exit({shown(exc.code, quoted)})") from None
    except ExitCalled as exc:
        raise UsageError(f"variants from {where}: cannot load: it called os._exit({exc.said})") from None
    except DescriptorsMoved as exc:
        raise UsageError(f"variants from {where}: cannot load: it {exc}") from None
    except InvalidVariant as exc:  # a field of the wrong kind (its validator), said where it was made
        raise UsageError(f"variants from {where}: {exc}{at_user_line(exc)}") from None
    except BaseException as exc:  # noqa: BLE001 - whatever the user's code raises is said, in one line
        hint = (_not_found_hint(where) if isinstance(exc, ModuleNotFoundError)
                else _in_user_code(exc) + _fields_of(exc, classes))
        raise UsageError(f"variants from {where}: cannot load: {describe(exc)}{hint}") from None
    kinds = tuple(classes.values())
    for v in items:
        if isinstance(v, kinds) and type(v) not in kinds:
            shipped = next(c for c in kinds if isinstance(v, c))
            raise UsageError(f"variants from {where}: {_short(getattr(v, 'name', v))}: a subclass of "
                             f"{shipped.__name__} ({type(v).__name__}) is not taken: a design differs by its "
                             f"rules and sets of states, each a field: attrs.evolve a shipped design with "
                             "yours (docs/variants.md lists them)")
        if not isinstance(v, kinds) or classes.get(getattr(v, "model", None)) is not type(v):
            raise UsageError(f"variants from {where}: {type(v).__name__} {_short(v)} is not a variant "
                             f"(attrs.evolve one of {', '.join(c.__name__ for c in kinds)}; docs/variants.md)")
    return items


#: id of a variant handed in by a module -> the module's file (the variants stay alive
#: in ``_handed_in``, so their ids do too)
_made_in: dict[int, str] = {}


def _named_at(v: Any) -> str:
    """`` at FILE:LINE`` where the module that handed ``v`` in writes its name (a ``name=``
    argument, else the text anywhere but a docstring; in a package, its modules too),
    for a refusal found after the module loaded (its declarations, bounds, name), which
    no traceback places; "" if not found."""
    path, name = _made_in.get(id(v)), getattr(v, "name", None)
    if path is None or type(name) is not str:
        return ""
    files = [path]
    if os.path.basename(path) == "__init__.py":  # (a package may hand in its modules' variants)
        folder = os.path.dirname(path)
        files += sorted(os.path.join(d, f) for d, _, fs in os.walk(folder) for f in fs
                        if f.endswith(".py") and os.path.join(d, f) != path)[:200]
    for file in files:
        line = _line_naming(file, name)
        if line is not None:
            shown = os.path.basename(path) if file == path else os.path.relpath(file, os.path.dirname(path))
            return f" at {shown}:{line}"
    return ""


def _line_naming(file: str, name: str) -> int | None:
    """The line of ``file`` that writes ``name=NAME`` (or, failing that, the text NAME
    outside a docstring), or None."""
    import ast

    try:
        with open(file, "rb") as source:
            tree = ast.parse(source.read())
    except (OSError, SyntaxError, ValueError):
        return None
    docstrings = {id(node.body[0].value) for node in ast.walk(tree)
                  if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef))
                  and node.body and isinstance(node.body[0], ast.Expr) and isinstance(node.body[0].value, ast.Constant)}
    said = [n for n in ast.walk(tree) if isinstance(n, ast.Constant) and n.value == name and id(n) not in docstrings]
    named = [k.value for k in ast.walk(tree) if isinstance(k, ast.keyword) and k.arg == "name" and k.value in said]
    found = named or said
    return min(n.lineno for n in found) if found else None


def _fields_of(exc: BaseException, classes: Mapping[str, type]) -> str:
    """The fields a variant class has, when ``exc`` is its refusal of another name (a
    capi rule given to a SlotsVariant, a misspelt rule): which names it takes."""
    import re

    import attrs

    from deployspec.models import closest

    for cls in classes.values():
        if isinstance(exc, TypeError) and str(exc).startswith(f"{cls.__name__}.__init__() got an unexpected"):
            fields = [f.name for f in attrs.fields(cls)]
            given = re.search(r"argument '(\w+)'", str(exc))
            close = closest(given.group(1), fields) if given else None
            # (the guess first: a long line is cut in its middle, in the list)
            guess = f"did you mean {close}? " if close is not None else ""
            return f" ({guess}a {cls.__name__}'s fields: {', '.join(fields)}; docs/variants.md)"
    return ""


def _check_declarations(where: str, v: Any, known: set[str]) -> None:
    """``declares`` a set of property names, ``violates_beyond`` a dict of them to ``Beyond``;
    the texts and dicts that describe the design of the types they are shown as."""
    from deployspec.reference.core import Beyond

    if isinstance(v.declares, str) or not isinstance(v.declares, (set, frozenset)):
        raise UsageError(f"variants from {where}: {v.name}'s declares must be a set of property "
                         f"names, not {type(v.declares).__name__}")
    if not isinstance(v.violates_beyond, Mapping) or \
            not all(isinstance(b, Beyond) for b in v.violates_beyond.values()):
        raise UsageError(f"variants from {where}: {v.name}'s violates_beyond must map property names "
                         "to Beyond(...) (where the violation shows), or be {}")
    # what deployspec variants (and its --json, docs/json.md) says of the design
    wrong = [f"{field} must be text" for field in ("summary", "upstream") if not isinstance(getattr(v, field), str)]
    wrong += [f"{field} must be a dict" for field in ("config", "explore") if not isinstance(getattr(v, field), Mapping)]
    for prop, b in v.violates_beyond.items():
        if not isinstance(b.why, str) or not isinstance(b.trace, (str, type(None))) or not isinstance(b.config, Mapping):
            wrong.append(f"violates_beyond[{quoted(prop)}] must be Beyond(config=dict, trace=text or None, why=text)")
    if wrong:
        raise UsageError(f"variants from {where}: {v.name}'s {wrong[0]}")
    for field, names in (("declares", v.declares), ("violates_beyond", v.violates_beyond)):
        unknown = sorted(str(p) for p in set(names) - known)  # (named by field: a misspelt key of
        if unknown:                                            # violates_beyond is not in declares)
            raise UsageError(f"variants from {where}: {v.name}'s {field} names unknown properties "
                             f"{', '.join(unknown)} (known: {', '.join(sorted(known))})")


def _with_checked_bounds(where: str, v: Any, model: Any) -> Any:
    """``v`` with its ``config`` checked as ``--bound`` is (``Model.with_bounds``: names, types,
    ranges) over the model's defaults, and the configuration ``--engine explore`` runs it
    with (the model's exploration bounds, then the variant's ``explore``) too;
    the values held as the configuration holds them (a list given for a tuple). A bound
    the search cannot take would otherwise run as another (an unknown ``start`` as the
    empty one) or end the search as an error blamed on the design's rules."""
    import attrs

    from deployspec.engines.explore import explore_config

    config = _bounds(where, v, "config", model, model.config_type(), v.config)
    v = attrs.evolve(v, config={name: getattr(config, name) for name in v.config})
    # what check's matrix compares a proof's bounds with (declarations.covers): bounds, as JSON
    beyond = {}
    for prop, b in v.violates_beyond.items():
        given = _bounds(where, v, f"violates_beyond[{quoted(prop)}] config", model, model.config_type(), b.config)
        beyond[prop] = attrs.evolve(b, config={name: given.to_json()[name] for name in b.config})
    v = attrs.evolve(v, violates_beyond=beyond)
    own = v.explore
    if not own:  # the exploration bounds with the config over them (the field named is config)
        added = [f"{k}={val}" for k, val in getattr(model.config_type, "EXPLORE", {}).items() if k not in v.config]
        field = "config with the exploration bounds" + (f" ({', '.join(added)})" if added else "")
        _bounds(where, v, field, model, explore_config(model, v), {})
        return attrs.evolve(v, explore={})  # (a plain dict, as the shipped variants' and --json's)
    explored = _bounds(where, v, "explore", model, explore_config(model, attrs.evolve(v, explore={})), own)
    return attrs.evolve(v, explore={name: getattr(explored, name) for name in own})


def _bounds(where: str, v: Any, field: str, model: Any, base: Any, given: Mapping) -> Any:
    """``base`` with the bounds ``given`` (``v``'s ``field``), as JSON values like --bound's."""
    import json

    values = {}
    for name, value in given.items():
        if not isinstance(name, str):
            raise UsageError(f"variants from {where}: {v.name}'s {field}: {_short(name)} is not a bound's name")
        try:
            values[name] = json.loads(json.dumps(value, allow_nan=False))
        except (TypeError, ValueError):
            raise UsageError(f"variants from {where}: {v.name}'s {field} {name}: {_short(value)} is not "
                             "a value a bound takes (numbers, true/false, text, lists)") from None
    try:
        return model.with_bounds(base, values, given=f"{v.name}'s {field}")
    except UsageError as exc:
        raise UsageError(f"variants from {where}: {exc}") from None


def fault(variant: str, exc: BaseException) -> str | None:
    """One line for an exception a variant handed in from outside raised (its rules are
    the user's code), naming where in that code; None for a shipped variant's (a bug of
    deployspec's own, whose traceback is wanted)."""
    where = source_of(variant)
    if where is None:
        return None
    if isinstance(exc, RuleResultError):  # no fault of the code where it was noticed
        return f"variant {variant} ({where}): {exc}{reached.said(exc)}"
    return f"variant {variant} ({where}) raised {describe(exc)}{_in_user_code(exc)}{reached.said(exc)}"


def _in_user_code(exc: BaseException) -> str:
    """`` at FILE:LINE`` of the innermost frame of the user's code; raised in deployspec's
    own code instead, that place, and the question to ask (a rule's result of the right
    kind but not of the right sense, a process not in the state, fails there; the wrong
    kind or a call it cannot take is caught at the rule: ``rule_results``)."""
    frames, mine, own = frames_of(exc)
    if frames and mine and frames[-1] is mine[-1]:
        return f" at {os.path.basename(mine[-1].filename)}:{mine[-1].lineno}"
    if frames and frames[-1].filename.startswith(own):
        last = frames[-1]
        return (f" (in deployspec's {os.path.basename(last.filename)}:{last.lineno}: does a rule of yours "
                "take the arguments, and return what, the rule it replaces does?)")
    return at_user_line(exc)


def _short(value: Any) -> str:
    from deployspec.text import printable_line

    return printable_line(shown(value, quoted), 80)
