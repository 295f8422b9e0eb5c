"""The kinds of a Cloud Controller design's step rules, and the checks of the two switches
that go with one rule only (``CapiVariant``'s validators: a design of one's own is
refused where it was made, not run as another)."""

from __future__ import annotations

import inspect
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, Protocol

from deployspec.reference.core import InvalidVariant

from . import scaling
from .state import CapiState, Deployment

if TYPE_CHECKING:
    from .variants import CapiVariant

#: a cancel step: ``(variant, state, deployment, reports) -> state`` (``reports``: Diego answered)
Step = Callable[["CapiVariant", CapiState, Deployment, bool], CapiState]


class ScaleStep(Protocol):
    """A scale step: a cancel step's arguments and ``finish``, which the dispatcher gives
    as False (a finished step leaves Finalize or the PAUSED write to the next tick) only
    to a design with ``finish_after_commit``."""

    def __call__(self, variant: CapiVariant, state: CapiState, deployment: Deployment, reports: bool,
                 finish: bool = True) -> CapiState: ...


def finish_taken(instance: Any, attribute: Any, value: bool) -> None:
    """With ``finish_after_commit`` the dispatcher calls ``scale_step(…, finish=False)``:
    a step that cannot take it would fail at the first finished step, not where it was made."""
    step = instance.scale_step
    try:
        params = inspect.signature(step).parameters.values()
    except (TypeError, ValueError):  # no signature to read (a builtin): left to the call
        return
    if value and not any(p.name == "finish" or p.kind is p.VAR_KEYWORD for p in params):
        raise InvalidVariant(
            f"{instance.name}: finish_after_commit=True has the dispatcher call scale_step with "
            f"finish=False, which {getattr(step, '__name__', step)!s} does not take "
            "(a scale step of the kind of updater.scale_or_canary_step does)")


def stale_counts_oldest_first(instance: Any, attribute: Any, value: bool) -> None:
    """``down_counts_stale`` is a reading of upstream's DownScaler, which goes oldest first
    over the copies it read (``scaling.scale_down_with_stale_counts``): with it, a design's
    own ``scale_down`` would run only in the steps whose clean-up wrote nothing."""
    if value and instance.scale_down is not scaling.scale_down_oldest_first:
        raise InvalidVariant(
            f"{instance.name}: down_counts_stale=True models upstream's oldest-first DownScaler, so it "
            f"cannot go with scale_down={getattr(instance.scale_down, '__name__', instance.scale_down)!s}; "
            "give down_counts_stale=False with a scale_down of your own (as capi-safe does)")
