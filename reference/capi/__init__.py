"""Cloud Foundry rolling deployments (``cloudfoundry/cloud_controller_ng``)."""

from .actions import VOCABULARY, Cancel, Continue, Deploy, Push, Runtime, Scale, Stage, Tick
from .observe import from_observation, observe
from .state import CapiState
from .variants import VARIANTS, CapiVariant

__all__ = [
    "VARIANTS",
    "VOCABULARY",
    "Cancel",
    "CapiState",
    "CapiVariant",
    "Continue",
    "Deploy",
    "Push",
    "Runtime",
    "Scale",
    "Stage",
    "Tick",
    "from_observation",
    "observe",
]
