"""``--python MODULE:FACTORY``: the factory found, imported (timed, as any call into
the object) and called, and what it returned checked to be an implementation.

A name that can name no module (a file, a path) or names none is a usage error
(exit 2) saying what MODULE must be; an import that fails in the user's code is
the implementation's fault.
"""

from __future__ import annotations

import importlib
import inspect
import os
import shlex
from collections.abc import Callable
from typing import Any

from deployspec.adapter import ImplementationError
from deployspec.contract.timed_call import call
from deployspec.models import UsageError
from deployspec.text import quoted
from deployspec.user_code import at_user_line, cwd_first_on_path, describe, is_module_name

#: the module whose attributes are the factories of the variants (``capi_safe``)
EXAMPLES = "deployspec.contract.examples"


def _no_variant(attr: str) -> str:
    """What to say of a factory of ``EXAMPLES`` that is no variant's: the closest one's
    name, and how a design of one's own comes to be one."""
    from deployspec.models import HANDED_IN, did_you_mean, get_model, model_names

    names = [v.replace("-", "_") for m in model_names() for v in get_model(m).variants]
    return f"{did_you_mean(attr, names)} (no variant of that name here: {HANDED_IN})"


def split_spec(spec: str) -> tuple[str, str]:
    """``MODULE:FACTORY`` → (module, factory); a malformed one is a usage error."""
    module_name, sep, attr = spec.partition(":")
    if not sep or not module_name or not attr:
        raise UsageError(f"--python {quoted(spec)}: expected MODULE:FACTORY, e.g. mypkg.impl:make_controller")
    return module_name, attr


def load_factory(spec: str, timeout: float | None = None, passing: tuple = ()) -> Callable[[], Any]:
    """``MODULE:FACTORY`` → the callable; a bad name is a usage error, a failing import a fault
    (but ``passing``, raised through as ``call`` does)."""
    module_name, attr = split_spec(spec)
    if not is_module_name(module_name):  # a file name or a path: no import can work
        raise not_found(spec, module_name)
    cwd_first_on_path()
    try:
        module = call(importlib.import_module, module_name, what=f"importing {module_name}",
                      timeout=timeout, passing=(ModuleNotFoundError, *passing))
    except ModuleNotFoundError as exc:
        if exc.name and f"{module_name}.".startswith(f"{exc.name}."):  # the module itself, not a dependency
            raise not_found(spec, exc.name) from None
        raise ImplementationError(f"importing {module_name} raised {describe(exc)}{at_user_line(exc)}") from None
    try:  # (called as the user's code: a module's own __getattr__ may import, raise or exit)
        factory = call(getattr, module, attr, what=f"looking up {attr} in {module_name}",
                       timeout=timeout, passing=(AttributeError, *passing))
    except AttributeError:
        hint = _no_variant(attr) if module_name == EXAMPLES else ""
        raise UsageError(f"--python {spec}: module {module_name} has no {quoted(attr)}{hint}") from None
    if not callable(factory):
        raise UsageError(f"--python {spec}: {attr} is not callable")
    return factory


def not_found(spec: str, missing: str) -> UsageError:
    """The usage error for a module not found, saying what MODULE must be, and for a
    file name or a path the module name meant: ``--python`` imports a module (so its
    own imports work as in the user's code); it does not run a file."""
    module_name, attr = split_spec(spec)
    hint = "MODULE is a module name importable from the current directory or PYTHONPATH, without .py or a path"
    stem = module_name.removesuffix(".py")
    folder, _, name = stem.replace(os.sep, "/").rpartition("/")
    parts = [p for p in folder.split("/") if p not in ("", ".")]
    if os.path.isabs(stem) or ".." in parts:  # elsewhere: that folder on the path
        meant = name
        where = f" with PYTHONPATH={shlex.quote(folder or '/')}"
    else:  # beside the user: a package path
        meant, where = ".".join([*parts, name]), ""
    if meant != module_name and all(p.isidentifier() for p in meant.split(".")):
        hint += f": did you mean --python {meant}:{attr}{where}?"
    return UsageError(f"--python {spec}: no module named {quoted(missing)} ({hint})")


def instantiate(factory: Callable[[], Any], spec: str, timeout: float | None = None, passing: tuple = ()) -> Any:
    impl = call(factory, what=f"{spec}()", timeout=timeout, passing=passing)

    def awaitable() -> bool:  # (isinstance reads the object's __class__: its code, fenced)
        if inspect.iscoroutine(impl):  # closed, so Python does not warn that it never ran
            impl.close()
        return inspect.isawaitable(impl)

    if call(awaitable, what=f"looking at what {spec}() returned", timeout=timeout, passing=passing):
        raise ImplementationError(f"{spec}() returned an awaitable ({type(impl).__name__}): an async factory? "
                                  "deployspec calls the factory synchronously")
    missing = [m for m in ("reset", "perform", "observe")
               if not callable(_attribute(impl, m, what=f"looking up {m} on what {spec}() returned",
                                          timeout=timeout, passing=passing))]
    if missing:
        raise ImplementationError(
            f"{spec}() returned {'None' if impl is None else _a(type(impl).__name__)}, which lacks {', '.join(missing)}() "
            f"(see deployspec.contract.python_adapter.Implementation)"
        )
    return impl


def _attribute(impl: Any, name: str, *, what: str, timeout: float | None = None, passing: tuple = ()) -> Any:
    """``getattr(impl, name, None)``, as the implementation's code (its ``__getattr__``):
    an exception that is an Exception (a proxy's KeyError) means it has no such method;
    SystemExit or another BaseException, or a hang, is its fault (:func:`call`)."""
    def lookup() -> Any:
        try:
            return getattr(impl, name, None)
        except Exception:  # noqa: BLE001
            return None

    return call(lookup, what=what, timeout=timeout, passing=passing)


def _a(noun: str) -> str:
    """``noun`` with its indefinite article: "an object", "a list", "a UUID" (a type's name in
    a message; one starting with u is read "you": UUID, UserDict)."""
    return f"{'an' if noun[:1].lower() in 'aeio' else 'a'} {noun}"
