"""Today's scale action: the up-scaler and the down-scaler, one transaction.

``DeploymentUpdater::Actions::Scale`` with ``UpScaler``, ``DownScaler``,
``ScaleDownOldProcess`` and ``ScaleDownCanceledProcesses`` (cloud_controller_ng
3bbba90, ``lib/cloud_controller/deployment_updater/actions/``; introduced by
PR #3907 2329550f2d and the refactors #4101 baf0ad4a37 / #4212 cfd3d29904; #4124
749e6fc08c added the routable/starting/unhealthy guard and the down-scale target
worked out anew at each step; #4251 487580ba60, "Don't assume a process with > 0
instances exists", added the ``app.web_processes.each(&:lock!)`` the stale counts
below come from).

With T the target total, I the interim target of the deploying process
(T itself for a rolling deployment), M = max_in_flight and (r, s, u) the
deploying process's routable / starting / unhealthy counts:

* down-scaling keeps ``max(T - r, 0)`` instances in the older web processes,
  taken away oldest first; an interim process that reaches 0 is destroyed, the
  app's oldest web process is kept at 0;
* up-scaling needs ``s < M``, ``u == 0`` and ``r >= n - M`` (Diego caught up),
  and sets the deploying process to ``min(r + M, I)``;
* finished once the deploying process has ``n >= I`` and ``r >= I``.

Nothing is written unless one of the two scalers can act. The down-scaler's
counts are stale (``stale_counts``, capi-current): ``Scale#call`` loads and locks
the web processes through ``app`` before ``ScaleDownCanceledProcesses`` zeroes the
canceled ones through other objects, and ``DownScaler`` works on the first ones
(the same ``app``), so it counts the zeroed instances as still there and writes
with Sequel's ``save_changes`` (only columns that differ from its copy): a
reduction it thinks the canceled process absorbs is taken from the older ones,
and a count it writes over a zeroed process revives it (a reading of the code at
3bbba90, no upstream test covers it).
"""

from __future__ import annotations

from collections.abc import Callable

from .instances import InstanceSummary, summarise
from .rules import Retry, zero_canceled_superseded
from .state import DEPLOYING, PREPAUSED, RUNNING, CapiState, Deployment, Process

#: scale_down(state, deploying process id, instances to keep in the others) -> state
DownScale = Callable[[CapiState, int, int], CapiState]


def can_scale_up(summary: InstanceSummary, deploying: Process, max_in_flight: int) -> bool:
    """``UpScaler#can_scale?``: room in flight, nothing unhealthy, Diego caught up."""
    return (
        summary.starting < max_in_flight
        and summary.unhealthy == 0
        and summary.routable >= deploying.desired - max_in_flight
    )


def scaled_up_to(summary: InstanceSummary, max_in_flight: int, interim: int) -> int:
    """``UpScaler#desired_new_instances``."""
    return min(summary.routable + max_in_flight, interim)


def finished_scaling(summary: InstanceSummary, deploying: Process, interim: int) -> bool:
    """``UpScaler#finished_scaling?``: extra starting or unhealthy instances do not matter."""
    return deploying.desired >= interim and summary.routable >= interim


def old_processes(state: CapiState, deploying: int) -> list[Process]:
    """Every web process but the deploying one, oldest first."""
    return [p for p in state.processes if p.id != deploying]


def old_instances(state: CapiState, deploying: int) -> int:
    """Instances of every web process but the deploying one."""
    return sum([len(p.instances) for p in state.processes if p.id != deploying])


def old_instances_to_keep(target: int, summary: InstanceSummary) -> int:
    """``DownScaler#desired_non_deploying_instances``: old + routable new = T."""
    return max(target - summary.routable, 0)


def scale_down_oldest_first(state: CapiState, deploying: int, keep: int) -> CapiState:
    """``DownScaler#scale_down``: take instances from the oldest processes first.

    Upstream's loop also zeroes (destroys, if interim) every empty process it
    passes before the one that absorbs the rest, even when nothing is left to take.
    """
    return _scale_down_in_order(state, old_processes(state, deploying), keep)


def scale_down_idle_first(state: CapiState, deploying: int, keep: int) -> CapiState:
    """capi-safe: as upstream, but older processes with no routable instance
    give up their instances before those that serve, so ``old + routable new = T``
    never leaves the app with nothing routable while a superseded deployment's
    instances are still starting or crashing; and the process an active
    deployment recorded as the one its cancel rolls back to
    (``Deployment.rolls_back_to``) is kept at 0 like the original, not destroyed."""
    old = old_processes(state, deploying)  # oldest first; sorted() keeps that within each group
    owner = state.deployment_of(deploying)
    kept = owner.rolls_back_to if owner is not None and owner.active else None
    return _scale_down_in_order(state, sorted(old, key=lambda p: p.count(RUNNING) > 0), keep, kept)


def _scale_down_in_order(state: CapiState, old: list[Process], keep: int, kept: int | None = None) -> CapiState:
    """Take instances from ``old`` in this order until ``keep`` remain among them;
    ``kept``: a process other than the original that stays at 0 rather than go."""
    reduce = sum(p.desired for p in old) - keep
    if reduce <= 0:
        return state
    original = state.oldest_process
    for p in old:
        if reduce < p.desired:
            return state.with_process(p.scaled_to(p.desired - reduce))
        reduce -= p.desired
        if p.id == kept:
            state = state.with_process(p.scaled_to(0))
        else:
            state = scale_down_old_process(state, p, original)
    return state


def scale_down_with_stale_counts(state: CapiState, read: list[Process], keep: int) -> CapiState:
    """``DownScaler#scale_down`` oldest first over ``read``, the copies of the old
    processes loaded before the clean-up, writing into ``state``: a count equal to
    the copy's is not written (``save_changes``), any other one is, over whatever
    the clean-up wrote; a process taken to 0 is destroyed unless it is the original.

    "The original" is asked of the copy: ``ScaleDownOldProcess#is_original_web_process?``
    (``actions/scale_down_old_process.rb`` at 3bbba90) is ``process == app.oldest_web_process``,
    and Sequel's ``Model#==`` compares every column's value, not the key. The other side
    is loaded after the clean-up (``deployment.lock!`` cleared ``deployment.app``, loaded
    again by ``ScaleDownCanceledProcesses``), so an oldest process the clean-up zeroed in
    this step (a canceled deployment's, become the oldest once Finalize destroyed the
    ones before it) no longer equals its copy: it is destroyed as an interim one."""
    reduce = sum(p.desired for p in read) - keep
    if reduce <= 0:
        return state
    original = state.oldest_process
    for p in read:
        now = state.process(p.id)
        if reduce < p.desired:
            if reduce:  # p.desired - reduce differs from the copy: written
                state = state.with_process(now.scaled_to(p.desired - reduce))
            return state
        reduce -= p.desired
        state = scale_down_old_process(state, now, original if now.desired == p.desired else None)
    return state


def _note_listing(listed: list[int] | None, state: CapiState, read: list[Process], keep: int) -> None:
    """Fill ``listed`` with ``state``'s processes if the oldest-first loop over ``read``
    takes its first process to 0 (it stops at once otherwise): the moment
    ``ScaleDownOldProcess`` asks for the oldest web process and the list is loaded."""
    if listed is None or not read:
        return
    reduce = sum(p.desired for p in read) - keep
    if reduce > 0 and reduce >= read[0].desired:
        listed.extend(p.id for p in state.processes)


def scale_down_old_process(state: CapiState, process: Process, original: Process | None) -> CapiState:
    """``ScaleDownOldProcess`` to 0: the original web process stays (at 0), an interim one
    goes (``original`` None: none is taken for it)."""
    if original is not None and process.id == original.id:
        return state.with_process(process.scaled_to(0))
    return state.without_processes([process.id])


def scale(
    state: CapiState,
    deployment: Deployment,
    reports: bool,
    *,
    target: int,
    interim: int,
    scale_down: DownScale = scale_down_oldest_first,
    cleanup: Callable[[CapiState, Deployment], CapiState] = zero_canceled_superseded,
    stale_counts: bool = False,
    listed: list[int] | None = None,
) -> tuple[CapiState, bool]:
    """``Scale#call``: the new state and whether the deploying process is finished.

    ``cleanup`` is ``ScaleDownCanceledProcesses``, run once the step writes;
    ``stale_counts``: the down-scaler works on the counts read before it (oldest first);
    ``listed``: see :func:`scale_process`."""
    if not reports:
        # The summary is read before the transaction; when Diego cannot answer,
        # the step raises (or returns false) and nothing is written.
        return state, False
    if deployment.state not in (DEPLOYING, PREPAUSED):
        return state, False  # superseded or canceled since the dispatcher's snapshot
    return scale_process(
        state,
        deployment.deploying_process,
        deployment.max_in_flight,
        target=target,
        interim=interim,
        scale_down=scale_down,
        before_down=lambda s: cleanup(s, deployment),
        stale_counts=stale_counts,
        listed=listed,
    )


def scale_process(
    state: CapiState,
    deploying_id: int,
    max_in_flight: int,
    *,
    target: int,
    interim: int,
    scale_down: DownScale,
    before_down: Callable[[CapiState], CapiState] = lambda s: s,
    stale_counts: bool = False,
    listed: list[int] | None = None,
) -> tuple[CapiState, bool]:
    """The body of ``Scale#call`` for one growing process and the others.

    ``listed``, a list: filled with the web processes (ids, creation order) as they
    are when the down-scaler first takes a process to 0, if it does (the moment
    ``ScaleDownOldProcess`` loads ``app.web_processes``, which Finalize reuses)."""
    deploying = state.process(deploying_id)
    if deploying is None:
        raise Retry("the deploying web process is gone")
    summary = summarise(deploying)
    m = max_in_flight
    keep = old_instances_to_keep(target, summary)
    up = can_scale_up(summary, deploying, m)
    down = old_instances(state, deploying_id) > keep
    if not up and not down:
        return state, False
    cleaned = before_down(state)
    if cleaned is not state and stale_counts:  # the down-scaler goes on with what it read
        if down:
            read = old_processes(state, deploying_id)
            _note_listing(listed, cleaned, read, keep)
            cleaned = scale_down_with_stale_counts(cleaned, read, keep)
        state, down = cleaned, False
    elif cleaned is not state:  # the clean-up wrote: count again
        state, down = cleaned, old_instances(cleaned, deploying_id) > keep
    if down:
        _note_listing(listed, state, old_processes(state, deploying_id), keep)
        state = scale_down(state, deploying_id, keep)
    if finished_scaling(summary, deploying, interim):
        return state, True
    if up:
        state = state.with_process(deploying.scaled_to(scaled_up_to(summary, m, interim)))
    return state, False
