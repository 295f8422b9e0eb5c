"""Diego, reduced to what the updater can observe: instances settle one at a time."""

from __future__ import annotations

from deployspec.reference.core import Rejected

from .actions import Runtime
from .state import CRASHED, RUNNING, STARTING, CapiState


def settle_instance(state: CapiState, action: Runtime) -> CapiState | Rejected:
    """The lowest-index STARTING instance of the process becomes routable, or
    crashes if its droplet cannot start (a crashing instance stays CRASHED:
    Diego keeps restarting it, and it is never routable)."""
    p = state.process(action.process)
    if p is None:
        return Rejected(f"no web process P{action.process}")
    if STARTING not in p.instances:
        return Rejected(f"P{action.process} has no STARTING instance")
    i = p.instances.index(STARTING)
    status = RUNNING if state.healthy(p.droplet) else CRASHED
    return state.with_process(p.with_instances(p.instances[:i] + (status,) + p.instances[i + 1 :]))
