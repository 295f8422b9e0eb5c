"""The sweep of the initial state: every first step, tried once, before the random search.

Probes before the first push were the rarest steps of a contract run (an
example leaves that state at once): 17 of the seeds 0-19 caught an
implementation that accepts a ``tick`` there in 100 examples, 9 in 10. So
each candidate and each probe of the first observation is performed once,
from a reset, and the platform then settles: what breaks in one step is found
whatever the seed and ``--examples``.

The implementation is driven once per connection and configuration, with no
property watching (``record``): the recordings hold every observation, and
properties judge observations only, so each check judges them afterwards
(``judge``) without resetting the implementation again.
"""

from __future__ import annotations

import json
import time
from typing import Any

import attrs

from deployspec.session import Session

#: how many actions of one kind at most, as the machine's rules can address (``PICKS``)
PER_KIND = 64


@attrs.frozen
class Recording:
    """One first step from a reset, and the settle phase after it, as the implementation did them."""

    action: Any
    initial: dict
    steps: tuple[dict, ...]


@attrs.frozen
class Sweep:
    recordings: tuple[Recording, ...]
    #: seconds spent driving the implementation
    seconds: float


class _Replayed(Exception):
    """The recording ran out or differs from what the judging session asks."""


class RecordedAdapter:
    """A recording behind the adapter seam: what the implementation answered, again."""

    def __init__(self, recording: Recording):
        self.recording = recording
        self.at = -1

    def reset(self, config: Any) -> None:
        self.at = -1

    def perform(self, action) -> str | None:
        self.at += 1
        steps = self.recording.steps
        if self.at >= len(steps) or steps[self.at]["action"] != action.to_json():
            raise _Replayed(action)
        return steps[self.at]["rejected"]

    def observe(self) -> dict:
        return self.recording.initial if self.at < 0 else self.recording.steps[self.at]["observation"]

    def close(self) -> None:
        pass


def searchable_actions(model, obs: dict, config) -> list:
    """What a contract search can send from an observation: the candidates, then the
    probes, at most ``PER_KIND`` of a kind."""
    out, count = [], {}
    for action in model.candidate_actions(obs, config) + model.probe_actions(obs, config):
        count[action.kind] = count.get(action.kind, 0) + 1
        if count[action.kind] <= PER_KIND:
            out.append(action)
    return out


def record(model, adapter_factory, config) -> Sweep:
    """Drive the implementation through each first step and its settle phase.

    Raises ``ImplementationFault`` (through the guarded adapters)."""
    started = time.perf_counter()
    opening = Session(model, adapter_factory(), (), config)
    try:
        first = opening.obs
    finally:
        opening.adapter.close()
    try:
        actions = searchable_actions(model, first, config)
    except Exception:  # noqa: BLE001 - an observation the model cannot read: the search's
        actions = []   # properties report it
    recordings = []
    for action in actions:
        session = Session(model, adapter_factory(), (), config)
        try:
            session.perform(action)
            session.settle()
        finally:
            session.adapter.close()
        recordings.append(Recording(action, session.initial, tuple(session.steps)))
    return Sweep(tuple(recordings), time.perf_counter() - started)


def judge(model, sweep: Sweep, prop, config) -> tuple[Session | None, int]:
    """The session of the first recording that violates ``prop`` (None if none), and
    how many recordings were judged."""
    for n, rec in enumerate(sweep.recordings, 1):
        session = Session(model, RecordedAdapter(rec), (prop,), config)
        try:
            if session.perform(rec.action) is None:
                session.settle()
        except _Replayed:  # the settle phase went otherwise than recorded: judge it no further
            continue
        if session.violation is not None:
            return session, n
    return None, len(sweep.recordings)


def key(config) -> str:
    return json.dumps(config.to_json(), sort_keys=True)
