"""The seam between engines and the system under test.

Every engine drives an :class:`Adapter`: the reference variants, a Python
object under test and a subprocess speaking the JSON-lines protocol all sit
behind the same calls (``reset``, ``perform``, ``observe``; ``close``).
"""

from __future__ import annotations

from typing import Any, Protocol, runtime_checkable

from deployspec.reference.core import Action, Rejected


class ImplementationError(Exception):
    """The implementation under test failed (crashed, hung, answered garbage).

    ``during``: the request it failed on, when an adapter sends several at once (a
    reset with its observation): a report names that one, not the first."""

    during: str | None = None
    #: whether it gave no answer within the timeout (asking again costs that long)
    hung: bool = False

    @classmethod
    def no_answer(cls, text: str) -> ImplementationError:
        """The error of a call that did not return, or a request not answered, in time."""
        error = cls(text)
        error.hung = True
        return error


class StopServing(BaseException):
    """Raised inside an implementation's call (by a signal handler: ``serve``'s SIGTERM)
    to end serving it; what else a served call raises is an ``error`` reply."""


@runtime_checkable
class Adapter(Protocol):
    def reset(self, config: Any) -> None:
        """Start from the model's initial state under this configuration."""

    def perform(self, action: Action) -> str | None:
        """Apply one action: None when accepted, the refusal's reason when rejected."""

    def observe(self) -> dict:
        """The current observation (the model's JSON Schema describes it)."""

    def close(self) -> None:
        """Release whatever the adapter holds (processes, files)."""


class ReferenceAdapter:
    """A reference variant behind the adapter seam."""

    def __init__(self, model, variant):
        self.model = model
        self.variant = variant
        self.state = None

    def reset(self, config: Any) -> None:
        self.state = self.model.initial_state(config)

    def perform(self, action: Action) -> str | None:
        result = self.variant.step(self.state, action)
        if isinstance(result, Rejected):
            return result.reason
        self.state = result
        return None

    def observe(self) -> dict:
        return self.model.observe(self.state)

    def close(self) -> None:
        pass
