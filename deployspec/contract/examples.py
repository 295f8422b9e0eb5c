"""In-process implementations for ``--python``: the reference variants themselves.

``deployspec contract --python deployspec.contract.examples:capi_2022 --model capi``
drives the capi-2022 variant through the Python adapter exactly as it would a
foreign implementation (JSON-shaped actions and observations, schema checks).
Every variant of every model has a factory here, its name with ``-`` as ``_``
(``capi_safe``, ``capi_pr3084``…), so a new model needs nothing added.

:class:`ReferenceImplementation` is also what ``deployspec serve`` puts behind
the wire, and a worked example of the :class:`~.python_adapter.Implementation`
protocol.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from deployspec.models import get_model, model_names
from deployspec.reference.core import Rejected


class ReferenceImplementation:
    """A reference variant behind the JSON-shaped implementation protocol."""

    def __init__(self, model: str, variant: str):
        self.model = get_model(model)
        self.variant = self.model.variant(variant)
        self.name = f"deployspec {variant}"
        self.state: Any = None

    def reset(self, config: Mapping[str, Any]) -> None:
        self.state = self.model.initial_state(self.model.config_from_json(dict(config)))

    def perform(self, action: Mapping[str, Any]) -> str | None:
        if self.state is None:
            raise RuntimeError("perform before reset")
        result = self.variant.step(self.state, self.model.action(action))  # ActionError: a bad request
        if isinstance(result, Rejected):
            return result.reason
        self.state = result
        return None

    def observe(self) -> dict[str, Any]:
        if self.state is None:
            raise RuntimeError("observe before reset")
        return self.model.observe(self.state)


def factory_for(variant: str) -> Callable[[], ReferenceImplementation]:
    for name in model_names():
        if variant in get_model(name).variants:
            return lambda: ReferenceImplementation(name, variant)
    raise KeyError(variant)


def __getattr__(name: str) -> Callable[[], ReferenceImplementation]:
    """``capi_safe`` → the factory of variant ``capi-safe`` (PEP 562); a variant whose own
    name has ``_`` in it (``safe_newest``) by that name first.

    Not the names Python asks a module for itself (``__path__``, asked by ``from …
    import``; ``__wrapped__``, by inspect): those would load every model, and so every
    design handed in, from inside a designs module that imports this one."""
    if name.startswith("__") and name.endswith("__"):
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    for variant in dict.fromkeys((name, name.replace("_", "-"))):
        try:
            return factory_for(variant)
        except KeyError:
            pass
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
