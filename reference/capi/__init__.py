"""Cloud Foundry rolling deployments (``cloudfoundry/cloud_controller_ng``)."""

from .actions import VOCABULARY, Cancel, Continue, Deploy, Push, Runtime, Scale, Stage, Tick
from .observe import from_observation, observe
from .state import CapiState
from .variants import VARIANTS, CapiVariant

__all__ = [
    "VOCABULARY", "Cancel", "Continue", "Deploy", "Push", "Runtime", "Scale", "Stage", "Tick",
    "from_observation", "observe", "CapiState", "VARIANTS", "CapiVariant",
]
