"""Azure App Service deployment slots fed by a container registry (microsoft/cobalt #316)."""

from .actions import (
    VOCABULARY,
    CrashRetry,
    DeliverWebhook,
    Push,
    Recycle,
    Restart,
    ScaleOut,
    SetImage,
    Swap,
    Validate,
)
from .observe import from_observation, observe
from .state import SlotsState
from .variants import VARIANTS, SlotsVariant

__all__ = [
    "VARIANTS",
    "VOCABULARY",
    "CrashRetry",
    "DeliverWebhook",
    "Push",
    "Recycle",
    "Restart",
    "ScaleOut",
    "SetImage",
    "SlotsState",
    "SlotsVariant",
    "Swap",
    "Validate",
    "from_observation",
    "observe",
]
