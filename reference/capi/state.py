"""The state of one Cloud Foundry app, its web processes and its deployments.

Mirrors the Cloud Controller's tables (``app/models/runtime/deployment_model.rb``,
``process_model.rb``) plus what Diego reports about each instance. Everything is
frozen and made of tuples, so a state hashes, compares and can be explored,
shrunk and replayed.
"""

from __future__ import annotations

from collections.abc import Iterable

import attrs

# Instance states as the runtime (Diego) reports them. RUNNING means routable.
STARTING = "STARTING"
RUNNING = "RUNNING"
CRASHED = "CRASHED"
INSTANCE_STATES = (STARTING, RUNNING, CRASHED)

# DeploymentModel states.
DEPLOYING = "DEPLOYING"
PREPAUSED = "PREPAUSED"
PAUSED = "PAUSED"
DEPLOYED = "DEPLOYED"
CANCELING = "CANCELING"
CANCELED = "CANCELED"
DEPLOYMENT_STATES = (DEPLOYING, PREPAUSED, PAUSED, DEPLOYED, CANCELING, CANCELED)
PROGRESSING_STATES = frozenset({DEPLOYING, PREPAUSED, PAUSED})
ACTIVE_STATES = PROGRESSING_STATES | {CANCELING}

# status_value / status_reason.
ACTIVE = "ACTIVE"
FINALIZED = "FINALIZED"
SUPERSEDED = "SUPERSEDED"
DEGENERATE = "DEGENERATE"
STATUS_VALUES = (ACTIVE, FINALIZED)
STATUS_REASONS = (DEPLOYING, PAUSED, DEPLOYED, CANCELED, CANCELING, SUPERSEDED, DEGENERATE)

ROLLING = "rolling"
CANARY = "canary"


@attrs.frozen
class Process:
    """A web process: desired instances are ``len(instances)``, one status each.

    ``id`` is the creation order (the real ``created_at, id`` ordering), never reused.
    Scaling down removes the highest indices, as Diego stops them.
    """

    id: int
    droplet: int
    instances: tuple[str, ...] = ()

    @property
    def desired(self) -> int:
        return len(self.instances)

    def count(self, status: str) -> int:
        return sum(1 for i in self.instances if i == status)

    def scaled_to(self, n: int) -> Process:
        n = max(n, 0)
        if n <= len(self.instances):
            return attrs.evolve(self, instances=self.instances[:n])
        return attrs.evolve(self, instances=self.instances + (STARTING,) * (n - len(self.instances)))


@attrs.frozen
class Deployment:
    """A row of the deployments table, with the fields the updater reads.

    ``owic`` is ``original_web_process_instance_count``: what cancel restores
    and what a rolling deployment scales up to.
    """

    id: int
    state: str
    status_value: str
    status_reason: str
    deploying_process: int
    droplet: int
    previous_droplet: int
    owic: int
    max_in_flight: int = 1
    strategy: str = ROLLING
    canary_steps: tuple[int, ...] = ()
    canary_step: int = 0
    web_instances: int | None = None

    @property
    def active(self) -> bool:
        return self.state in ACTIVE_STATES

    @property
    def progressing(self) -> bool:
        return self.state in PROGRESSING_STATES

    def moved_to(self, state: str, value: str, reason: str) -> Deployment:
        return attrs.evolve(self, state=state, status_value=value, status_reason=reason)


@attrs.frozen
class App:
    """The app row: ``droplet`` is the current droplet (what the next deployment ships)."""

    droplet: int
    started: bool = True


@attrs.frozen
class CapiState:
    """One app. ``droplets[i]`` says whether droplet ``i`` can start (healthy).

    A droplet stands for everything a revision carries (droplet and environment),
    so the seed's too-large environment variable is an unhealthy droplet.
    """

    app: App | None = None
    droplets: tuple[bool, ...] = ()
    processes: tuple[Process, ...] = ()
    deployments: tuple[Deployment, ...] = ()
    next_process_id: int = 0

    # ---- reading -------------------------------------------------------
    def process(self, pid: int) -> Process | None:
        for p in self.processes:
            if p.id == pid:
                return p
        return None

    def deployment(self, did: int) -> Deployment | None:
        return self.deployments[did] if 0 <= did < len(self.deployments) else None

    @property
    def oldest_process(self) -> Process | None:
        return self.processes[0] if self.processes else None

    @property
    def newest_process(self) -> Process | None:
        return self.processes[-1] if self.processes else None

    @property
    def active_deployments(self) -> tuple[Deployment, ...]:
        return tuple(d for d in self.deployments if d.active)

    def deployment_of(self, pid: int) -> Deployment | None:
        """The deployment whose deploying process is ``pid`` (the newest if several)."""
        for d in reversed(self.deployments):
            if d.deploying_process == pid:
                return d
        return None

    def healthy(self, droplet: int) -> bool:
        return self.droplets[droplet]

    # ---- writing (each returns a new state) ------------------------------
    def with_process(self, process: Process) -> CapiState:
        return attrs.evolve(
            self, processes=tuple(process if p.id == process.id else p for p in self.processes)
        )

    def with_deployment(self, deployment: Deployment) -> CapiState:
        ds = list(self.deployments)
        ds[deployment.id] = deployment
        return attrs.evolve(self, deployments=tuple(ds))

    def without_processes(self, pids: Iterable[int]) -> CapiState:
        gone = set(pids)
        return attrs.evolve(self, processes=tuple(p for p in self.processes if p.id not in gone))

    def with_new_process(self, droplet: int, instances: int) -> tuple[CapiState, Process]:
        p = Process(id=self.next_process_id, droplet=droplet, instances=(STARTING,) * instances)
        return (
            attrs.evolve(self, processes=self.processes + (p,), next_process_id=p.id + 1),
            p,
        )
