"""A shipped design's tick, worked out once per value of what it reads.

The updater's dispatch (``updater.py``, ``scaling.py``, ``rules.py``, ``canary.py``)
reads a state's web processes, deployments and pending work, and nothing else: not
the app, not the droplets. The explorer ticks each such value in 2.3 states on average
(capi-safe's default bounds: 35,650 distinct of 80,630 ticks), so a shipped design's
result is kept per (design, tick, those three): 11 % of the bare search's instructions
(docs/performance-log.md, session 60). A design of one's own may read anything: its
ticks always run (``variants._tick``).

That the shipped dispatch reads nothing else is checked, not trusted: with
``DEPLOYSPEC_CHECK_MEMO=1`` (the test suite sets it, ``conftest.py``) each tick the
memo keeps runs on a state whose app and droplets refuse to be read, so a rule that
starts reading them fails the tests instead of being answered from the wrong entry.
"""

from __future__ import annotations

import os

from . import updater
from .state import CapiState, _state

#: (id of a shipped design, ids of a tick, of the processes and of the deployments, pending) ->
#: (the tick, the processes, the deployments, None when it changes nothing, else the processes,
#: deployments and pending it leaves); the objects are held, so their ids are not reused while
#: the entry is here (states share one tuple per value: ``state._edited``); cleared past
#: ``MOST`` entries (10 MiB at 35,650)
_TICKS: dict[tuple, tuple] = {}
MOST = 100_000
#: whether a kept tick runs where reading the app or the droplets fails (module docstring)
CHECKED = os.environ.get("DEPLOYSPEC_CHECK_MEMO") == "1"


def dispatched(variant, state: CapiState, action) -> CapiState:
    """``updater.dispatch(variant, state, action)`` of a shipped ``variant``, from the memo."""
    processes, deployments = state.processes, state.deployments
    key = (id(variant), id(action), id(processes), id(deployments), state.pending)
    found = _TICKS.get(key)
    if found is not None:
        if found[3] is None:
            return state
        processes, deployments, pending = found[3]
        return _state(state.app, state.droplets, processes, deployments, state.next_process_id, pending)
    seen = _unreadable(state) if CHECKED else state
    after = updater.dispatch(variant, seen, action)
    if after is seen:
        left = None
    elif after.app is seen.app and after.droplets is seen.droplets and after.next_process_id == seen.next_process_id:
        left = (after.processes, after.deployments, after.pending)
    else:  # (it wrote something else: no shipped design does) not kept, and worked out on the state itself
        return updater.dispatch(variant, state, action) if CHECKED else after
    if len(_TICKS) >= MOST:
        _TICKS.clear()
    _TICKS[key] = (action, processes, deployments, left)
    if left is None:
        return state
    return after if not CHECKED else _state(state.app, state.droplets, *left[:2], state.next_process_id, left[2])


class _Unread:
    """A state's app or droplets where the memo says dispatch does not look: any read fails."""

    __slots__ = ("name",)

    def __init__(self, name: str) -> None:
        object.__setattr__(self, "name", name)

    def _read(self, *_args):
        raise AssertionError(f"a shipped design's tick read the state's {object.__getattribute__(self, 'name')}, "
                             "which tick_memo does not key by: add it to the key (reference/capi/tick_memo.py)")

    def __getattr__(self, _attr):
        self._read()

    __getitem__ = __iter__ = __len__ = __contains__ = __bool__ = __index__ = _read


_APP, _DROPLETS = _Unread("app"), _Unread("droplets")


def _unreadable(state: CapiState) -> CapiState:
    return _state(_APP, _DROPLETS, state.processes, state.deployments, state.next_process_id, state.pending)
