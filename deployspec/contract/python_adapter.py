"""A Python object under test, in process.

The object speaks the protocol's vocabulary in Python: plain JSON-shaped dicts
in and out, so the same implementation can later be put behind the wire with
:func:`deployspec.contract.server.serve`. ``--python MODULE:FACTORY`` names a
callable that returns such an object; it is called once per run (once per
pytest worker) and ``reset`` brings the object back to the initial state.
"""

from __future__ import annotations

import importlib
import json
import os
import sys
from collections.abc import Callable, Mapping
from typing import Any, Protocol, runtime_checkable

from deployspec.adapter import ImplementationError
from deployspec.contract import protocol
from deployspec.models import UsageError


@runtime_checkable
class Implementation(Protocol):
    """What ``deployspec contract --python MODULE:FACTORY`` drives.

    Example (a complete one is ``deployspec.contract.examples.ReferenceImplementation``)::

        class MyController:
            def reset(self, config: Mapping[str, Any]) -> None:
                self.app = None; self.processes = []; self.deployments = []

            def perform(self, action: Mapping[str, Any]) -> str | None:
                if action["type"] == "scale" and self.deploying():
                    return "Cannot scale this process while a deployment is in flight."
                ...                       # apply it
                return None               # accepted

            def observe(self) -> dict[str, Any]:
                return {"app": ..., "droplets": [...], "processes": [...], "deployments": [...]}

        def factory() -> MyController:     # deployspec contract --python mymodule:factory
            return MyController()
    """

    def reset(self, config: Mapping[str, Any]) -> None:
        """Go to the model's initial state; ``config`` is the model's configuration as JSON."""

    def perform(self, action: Mapping[str, Any]) -> str | None:
        """Apply one action (its JSON form, e.g. ``{"type": "cancel"}``).

        Return None when accepted, or the reason of a legitimate refusal (the
        state must then be unchanged). Raise when the implementation fails.
        """

    def observe(self) -> dict[str, Any]:
        """The current observation, as the model's observation schema describes it."""


def load_factory(spec: str) -> Callable[[], Any]:
    """``MODULE:FACTORY`` → the callable; a bad name is a usage error."""
    module_name, sep, attr = spec.partition(":")
    if not sep or not module_name or not attr:
        raise UsageError(f"--python {spec!r}: expected MODULE:FACTORY, e.g. mypkg.impl:make_controller")
    if os.getcwd() not in sys.path and "" not in sys.path:
        sys.path.insert(0, os.getcwd())  # as `python -m` would: modules beside the user come first
    try:
        module = importlib.import_module(module_name)
    except ModuleNotFoundError as exc:
        if exc.name and module_name.startswith(exc.name):
            raise UsageError(f"--python {spec}: no module named {exc.name!r}") from None
        raise ImplementationError(f"importing {module_name} failed: {exc}") from None
    except Exception as exc:  # noqa: BLE001 - the implementation's own import-time failure
        raise ImplementationError(f"importing {module_name} failed: {type(exc).__name__}: {exc}") from None
    try:
        factory = getattr(module, attr)
    except AttributeError:
        raise UsageError(f"--python {spec}: module {module_name} has no {attr!r}") from None
    if not callable(factory):
        raise UsageError(f"--python {spec}: {attr} is not callable")
    return factory


def instantiate(factory: Callable[[], Any], spec: str) -> Any:
    try:
        impl = factory()
    except Exception as exc:  # noqa: BLE001
        raise ImplementationError(f"{spec}() raised {type(exc).__name__}: {exc}") from None
    missing = [m for m in ("reset", "perform", "observe") if not callable(getattr(impl, m, None))]
    if missing:
        raise ImplementationError(
            f"{spec}() returned a {type(impl).__name__}, which lacks {', '.join(missing)}() "
            f"(see deployspec.contract.python_adapter.Implementation)"
        )
    return impl


class PythonAdapter:
    """The adapter seam over an :class:`Implementation`; its failures become ImplementationError."""

    def __init__(self, impl: Any, model, checker: protocol.ObservationChecker | None = None):
        self.impl = impl
        self.model = model
        self.checker = checker or protocol.ObservationChecker(model)

    def reset(self, config: Any) -> None:
        self._call("reset", config.to_json())

    def perform(self, action) -> str | None:
        outcome = self._call("perform", action.to_json())
        if outcome is None:
            return None
        if isinstance(outcome, str) and outcome:
            return outcome
        raise ImplementationError(
            f"perform() returned {outcome!r}; expected None (accepted) or a reason string (rejected)"
        )

    def observe(self) -> dict:
        obs = self._call("observe")
        try:
            # a copy in plain JSON: the object may mutate what it returned
            obs = json.loads(json.dumps(obs))
        except (TypeError, ValueError) as exc:
            raise ImplementationError(f"observe() returned something that is not JSON: {exc}") from None
        problem = self.checker.check(obs)
        if problem:
            raise ImplementationError(
                f"observation violates the {self.model.name} observation schema: {problem}"
            )
        return obs

    def close(self) -> None:
        pass

    def _call(self, method: str, *args: Any) -> Any:
        try:
            return getattr(self.impl, method)(*args)
        except Exception as exc:  # noqa: BLE001 - the implementation failed
            raise ImplementationError(f"{method}() raised {type(exc).__name__}: {exc}") from None
