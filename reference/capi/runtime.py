"""Diego, reduced to what the updater can observe: instances settle one at a time."""

from __future__ import annotations

from deployspec.reference.core import Rejected

from .actions import Runtime
from .state import CRASHED, INTERNED_MAX, RUNNING, STARTING, CapiState


def settle_instance(state: CapiState, action: Runtime) -> CapiState | Rejected:
    """The lowest-index STARTING instance of the process becomes routable, or
    crashes if its droplet cannot start (a crashing instance stays CRASHED:
    Diego keeps restarting it, and it is never routable).

    What it reads and writes is the processes and the droplets' health, so it is worked
    out once per tuple of processes (``state._edited`` interns them), process and droplets
    (``_SETTLED``; capi-safe's default bounds settle 535 distinct ones 36,961 times)."""
    processes = state.processes
    key = (id(processes), action.process, state.droplets)
    found = _SETTLED.get(key)
    if found is None:
        after = _settled(state, action)
        if len(_SETTLED) >= INTERNED_MAX:
            _SETTLED.clear()
        left = after if after.__class__ is Rejected else after.processes
        found = _SETTLED[key] = (processes, left)
    if found[1].__class__ is Rejected:
        return found[1]
    return state.with_processes(found[1])


#: (id of a tuple of processes, the process, the droplets) -> (the tuple, what settling leaves
#: of it, or the refusal); the tuple is held, so its id is not reused while the entry is here
_SETTLED: dict[tuple, tuple] = {}


def _settled(state: CapiState, action: Runtime) -> CapiState | Rejected:
    p = state.process(action.process)
    if p is None:
        return Rejected(f"no web process P{action.process}")
    if STARTING not in p.instances:
        return Rejected(f"P{action.process} has no STARTING instance")
    i = p.instances.index(STARTING)
    status = RUNNING if state.healthy(p.droplet) else CRASHED
    return state.with_process(p.with_instances(p.instances[:i] + (status,) + p.instances[i + 1 :]))
