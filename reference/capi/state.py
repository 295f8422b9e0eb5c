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


#: the values the writing helpers build, each once (interned): capi-safe's default
#: exploration met 36 processes, 192 deployments and 2 apps in 47,892 states (50,963 since its deployments record a process), and built
#: 93,000, 30,000 and 29,000 of them; a step now finds the object (its hash cached,
#: identity settling equality) instead of building and hashing another. Frozen values:
#: sharing them is what every state already does with its parent's. Objects built by the
#: constructors elsewhere (fixtures, designs of one's own) are equal to these, as before.
#: Keys compare as Python compares (``1 == True == 1.0``), so the helpers take each field
#: in its own type (ints, strings, a bool for ``App.started``), as the model's rules pass
#: them. Each table is cleared when it grows past ``INTERNED_MAX`` (a search over huge bounds).
_INTERNED: dict[tuple, object] = {}
#: (id of a process, n) -> (the process, ``scaled_to(n)``): the process is held, so its id
#: is not reused while the entry is there
_SCALED: dict[tuple[int, int], tuple] = {}
INTERNED_MAX = 50_000


def _interned(key: tuple, build):
    found = _INTERNED.get(key)
    if found is None:
        if len(_INTERNED) >= INTERNED_MAX:
            _INTERNED.clear()
        found = _INTERNED[key] = build(*key[1:])
    return found


@attrs.frozen(cache_hash=True)
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
        return self.instances.count(status)

    def scaled_to(self, n: int) -> Process:
        """This process with ``n`` instances (those past ``n`` dropped, new ones STARTING);
        worked out once per process and count (``_SCALED``)."""
        found = _SCALED.get((id(self), n))
        if found is not None and found[0] is self:
            return found[1]
        if len(_SCALED) >= INTERNED_MAX:
            _SCALED.clear()
        out = self._scaled_to(n)
        _SCALED[(id(self), n)] = (self, out)
        return out

    def _scaled_to(self, n: int) -> Process:
        have = len(self.instances)
        n = max(n, 0)
        if n <= have:
            return self.with_instances(self.instances[:n])
        return self.with_instances(self.instances + (STARTING,) * (n - have))

    def with_instances(self, instances: tuple[str, ...]) -> Process:
        """This process with other instances; itself when they are the same
        (the explorer's hot path: no ``attrs.evolve``, and a no-op stays a no-op)."""
        if instances == self.instances:
            return self
        return _interned((Process, self.id, self.droplet, instances), Process)


@attrs.frozen(cache_hash=True)
class Deployment:
    """A row of the deployments table, with the fields the updater reads.

    ``owic`` is ``original_web_process_instance_count``: what cancel restores
    and what a rolling deployment scales up to. ``rolls_back_to`` is no column
    upstream: the web process a design of one's own (capi-safe) records, when the
    deployment is created, as the one a cancel rolls back to (None: none recorded).
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
    rolls_back_to: int | None = None

    @property
    def active(self) -> bool:
        return self.state in ACTIVE_STATES

    @property
    def progressing(self) -> bool:
        return self.state in PROGRESSING_STATES

    def moved_to(self, state: str, value: str, reason: str) -> Deployment:
        """This deployment in another state; itself if it is already there.
        Built with the constructor: ``attrs.evolve`` costs more than the step."""
        if state == self.state and value == self.status_value and reason == self.status_reason:
            return self
        # a deployment that ended rolls back to nothing: states that differ only in what
        # it had recorded are one
        rolls_back_to = self.rolls_back_to if state in ACTIVE_STATES else None
        return _interned((
            Deployment, self.id, state, value, reason, self.deploying_process, self.droplet,
            self.previous_droplet, self.owic, self.max_in_flight, self.strategy,
            self.canary_steps, self.canary_step, self.web_instances, rolls_back_to,
        ), Deployment)


@attrs.frozen(cache_hash=True)
class App:
    """The app row: ``droplet`` is the current droplet (what the next deployment ships)."""

    droplet: int
    started: bool = True

    @staticmethod
    def of(droplet: int, started: bool = True) -> App:
        """``App(droplet, started)``, the same object each time (interned)."""
        return _interned((App, droplet, started), App)


class _Fingerprinted:
    """A slot for a state's hash, worked out at its first use. Not an attrs field: attrs
    pickles fields only, so a state unpickled in another process (whose string hashes
    are salted otherwise) works its hash out again."""

    __slots__ = ("_hash",)


@attrs.frozen
class CapiState(_Fingerprinted):
    """One app. ``droplets[i]`` says whether droplet ``i`` can start (healthy).

    A droplet stands for everything a revision carries (droplet and environment),
    so the seed's too-large environment variable is an unhealthy droplet.
    """

    app: App | None = None
    droplets: tuple[bool, ...] = ()
    processes: tuple[Process, ...] = ()
    deployments: tuple[Deployment, ...] = ()
    next_process_id: int = 0
    #: what the running dispatch still has to do, in the updater's memory, not in
    #: the database; the next tick does it first, then dispatches again:
    #: ``(deployment id, DEPLOYED | PAUSED, listed)``: the finish of a step whose scale
    #: transaction committed (capi-current: ``Updater#scale``/``#canary`` at 3bbba90
    #: run Finalize or write PAUSED after it; ``tick(finish_later=…)``); ``listed``:
    #: the processes Finalize will destroy as loaded in the transaction, or None
    #: (``updater.finalize``);
    #: ``(deployment id, DEPLOYING, None)``: a scale step the dispatcher's snapshot
    #: sent, not yet started (``tick(late=…)``), run on the deployment as it is then
    pending: tuple[tuple[int, str, tuple[int, ...] | None], ...] = ()

    def __hash__(self) -> int:
        """The fields' hash, kept in ``_hash``: the explorer hashes every new state, and
        attrs' ``cache_hash`` costs a third more the first time (it wraps the number in an int
        subclass so that pickles leave it out; ``_hash`` is no field, so they do here too).
        The tuple is the fields' own, in their order (a test holds it to them)."""
        try:
            h = self._hash
        except AttributeError:  # built by the constructor (its ``__init__`` is attrs')
            h = None
        if h is None:
            h = hash((self.app, self.droplets, self.processes, self.deployments, self.next_process_id,
                      self.pending))
            _set_hash(self, h)
        return h

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

    # ---- writing (each returns a new state, or this one if nothing changes) ----
    # The constructor, not ``attrs.evolve`` (which introspects the class on every
    # call): these are the explorer's hot path, and returning ``self`` for a no-op
    # makes a self-loop an identity the explorer recognises at once.
    def with_app(self, app: App) -> CapiState:
        if app is self.app or app == self.app:
            return self
        return _state(app, self.droplets, self.processes, self.deployments, self.next_process_id, self.pending)

    def with_process(self, process: Process) -> CapiState:
        processes = _edited(_put_process, self.processes, process)
        if processes is self.processes:
            return self
        return _state(self.app, self.droplets, processes, self.deployments, self.next_process_id, self.pending)

    def with_processes(self, processes: tuple[Process, ...]) -> CapiState:
        """This state with another tuple of web processes; itself if it is this one."""
        if processes is self.processes:
            return self
        return _state(self.app, self.droplets, processes, self.deployments, self.next_process_id, self.pending)

    def with_deployment(self, deployment: Deployment) -> CapiState:
        ds = self.deployments
        if ds[deployment.id] is deployment:  # (an id out of range raises IndexError, as ever)
            return self
        ds = _edited(_put_deployment, ds, deployment)
        return _state(self.app, self.droplets, self.processes, ds, self.next_process_id, self.pending)

    def with_staged(self, healthy: bool) -> CapiState:
        """A new droplet, current for the app (which must exist)."""
        app = App.of(len(self.droplets), self.app.started)
        return _state(app, self.droplets + (healthy,), self.processes, self.deployments, self.next_process_id,
                      self.pending)

    def with_new_deployment(self, deployment: Deployment) -> CapiState:
        return _state(
            self.app, self.droplets, self.processes, _edited(_appended, self.deployments, deployment),
            self.next_process_id, self.pending,
        )

    def without_processes(self, pids: Iterable[int]) -> CapiState:
        gone = frozenset(pids)
        if not gone:
            return self
        processes = _edited(_without, self.processes, gone)
        if processes is self.processes:
            return self
        return _state(self.app, self.droplets, processes, self.deployments, self.next_process_id, self.pending)

    def with_new_process(self, droplet: int, instances: int) -> tuple[CapiState, Process]:
        p = _interned((Process, self.next_process_id, droplet, (STARTING,) * instances), Process)
        processes = _edited(_appended, self.processes, p)
        state = _state(self.app, self.droplets, processes, self.deployments, p.id + 1, self.pending)
        return state, p

    def with_pending(self, pending: tuple[tuple[int, str, tuple[int, ...] | None], ...]) -> CapiState:
        if pending == self.pending:
            return self
        return _state(self.app, self.droplets, self.processes, self.deployments, self.next_process_id, pending)


#: (how, id of a tuple of processes or deployments, id of the argument, or the argument) ->
#: (the tuple, the argument, what ``how`` makes of them): each tuple the writing helpers make
#: is made once per tuple and change, and interned (``_TUPLES``), so the states of a search
#: share one object per tuple of processes (capi-safe's default bounds: 312 values, built
#: 31,292 times before) and per tuple of deployments, and a memo of what reads them can key
#: them by identity (``variants._tick``). The tuple and the argument are held, so their ids
#: are not reused while the entry is here; cleared past ``INTERNED_MAX`` entries.
_EDITED: dict[tuple, tuple] = {}
#: a tuple the helpers made -> that tuple (one object per value)
_TUPLES: dict[tuple, tuple] = {}


def _edited(how, items: tuple, arg) -> tuple:
    """``how(items, arg)``, worked out once per ``items`` and ``arg`` (by identity; a frozenset
    ``arg`` by value) and interned; ``items`` itself when ``how`` leaves it as it is."""
    key = (how, id(items), arg if arg.__class__ is frozenset else id(arg))
    found = _EDITED.get(key)
    if found is not None and found[0] is items:
        return found[2]
    out = how(items, arg)
    if out is not items:
        if len(_TUPLES) >= INTERNED_MAX:
            _TUPLES.clear()
        out = _TUPLES.setdefault(out, out)
    if len(_EDITED) >= INTERNED_MAX:
        _EDITED.clear()
    _EDITED[key] = (items, arg, out)
    return out


def _put_process(processes: tuple[Process, ...], process: Process) -> tuple[Process, ...]:
    """``processes`` with ``process`` in place of the one with its id (of each, should ids
    repeat: never in the model, a hand-made state); ``processes`` itself if there is none,
    or it is that very process."""
    pid = process.id
    if not any(p.id == pid and p is not process for p in processes):
        return processes
    return tuple(process if p.id == pid else p for p in processes)


def _put_deployment(deployments: tuple[Deployment, ...], deployment: Deployment) -> tuple[Deployment, ...]:
    """``deployments`` with ``deployment`` in place of the one at its id (its index)."""
    i = deployment.id
    if i < 0:
        i += len(deployments)
    return deployments[:i] + (deployment,) + deployments[i + 1 :]


def _appended(items: tuple, item) -> tuple:
    return items + (item,)


def _without(processes: tuple[Process, ...], gone: frozenset[int]) -> tuple[Process, ...]:
    """``processes`` but those whose id is in ``gone``; ``processes`` itself if none is."""
    kept = tuple(p for p in processes if p.id not in gone)
    return processes if len(kept) == len(processes) else kept


_set_hash = _Fingerprinted._hash.__set__
_new = object.__new__
#: each field's slot setter, in the order of ``_state``'s arguments (a test holds them to the fields)
_SETTERS = tuple(CapiState.__dict__[name].__set__
                 for name in ("app", "droplets", "processes", "deployments", "next_process_id", "pending"))


def _state(app, droplets, processes, deployments, next_process_id, pending) -> CapiState:
    """``CapiState(…)`` for the writing helpers (the explorer's hot path): the same state,
    its slots set directly, ``_hash`` included, so its first hash takes the plain path
    (a state from attrs' ``__init__``, a pickle or ``attrs.evolve`` has no ``_hash`` yet and
    is hashed through an AttributeError the first time: 0.9 against 1.6 µs to build and hash)."""
    s = _new(CapiState)
    set_app, set_droplets, set_processes, set_deployments, set_next, set_pending = _SETTERS
    set_app(s, app)
    set_droplets(s, droplets)
    set_processes(s, processes)
    set_deployments(s, deployments)
    set_next(s, next_process_id)
    set_pending(s, pending)
    _set_hash(s, None)
    return s
