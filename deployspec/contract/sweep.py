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
(``judge``) without resetting the implementation again. The committed
counterexamples' runs are recorded and judged the same way (``record_runs``,
``known.py``; both phases: ``recorded.py``).
"""

from __future__ import annotations

import json
import time
from typing import Any

import attrs

from deployspec import reached
from deployspec.contract.guard import ImplementationFault
from deployspec.session import Session

#: how many actions of one kind at most, as the machine's rules can address (``PICKS``)
PER_KIND = 64


@attrs.frozen
class Recording:
    """A run from a reset (one first step, or a committed trace's actions: ``known.py``)
    and the settle phase after it, as the implementation did them."""

    actions: tuple[Any, ...]
    initial: dict
    steps: tuple[dict, ...]
    #: where the actions came from (a committed trace's name; the sweep's: none)
    source: str = ""


@attrs.frozen
class Sweep:
    recordings: tuple[Recording, ...]
    #: seconds spent driving the implementation
    seconds: float

    def took_effect(self) -> frozenset[str]:
        """The kinds of action accepted somewhere in the recordings with a change to show
        for it: what a check that judged them all and held did judge (``holds ?`` is
        about the rest)."""
        kinds = set()
        for rec in self.recordings:
            before = rec.initial
            for step in rec.steps:
                if step["rejected"] is None and step["observation"] != before:
                    kinds.add(step["action"]["type"])
                before = step["observation"]
        return frozenset(kinds)


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
    return record_runs(model, adapter_factory, config, [("", (action,)) for action in actions], started)


def record_runs(model, adapter_factory, config, runs, started: float | None = None) -> Sweep:
    """Drive the implementation through each run (``(source, actions)``) from a reset, as far
    as the search could have sent its actions (``searchable``), then its settle phase.

    Raises ``ImplementationFault`` (through the guarded adapters)."""
    started = time.perf_counter() if started is None else started
    recordings = []
    for source, actions in runs:
        session = Session(model, adapter_factory(), (), config)
        done: list = []
        try:
            for action in actions:
                if not searchable(model, session.obs, action, config):
                    break  # what no search would send here: the run ends before it
                session.perform(action)
                done.append(action)
            session.settle()
        except ImplementationFault as fault:  # its steps are this trace's: say which, to replay it
            fault.replaying = fault.replaying or source or None
            raise
        finally:
            session.adapter.close()
        recordings.append(Recording(tuple(done), session.initial, tuple(session.steps), source))
    return Sweep(tuple(recordings), time.perf_counter() - started)


def searchable(model, obs: dict, action, config) -> bool:
    """Whether a contract search could send ``action`` from ``obs``: a shortened or a
    committed trace can name what does not exist here (``runtime(P1)`` without the deploy
    that made P1), or what the configuration does not offer."""
    try:
        return action in searchable_actions(model, obs, config)
    except Exception:  # noqa: BLE001 - an observation the model cannot read: not this candidate
        return False


def judge(model, sweep: Sweep, prop, config) -> tuple[Session | None, int]:
    """The session of the first recording that violates ``prop`` (None if none), and
    how many recordings were judged (the violating one last)."""
    for n, rec in enumerate(sweep.recordings, 1):
        session = Session(model, RecordedAdapter(rec), (prop,), config)
        done, settling = 0, False
        try:
            for action in rec.actions:
                done += 1
                if session.perform(action) is not None:
                    break
            else:
                settling = True
                session.settle()
        except _Replayed:  # the settle phase went otherwise than recorded: judge it no further
            continue
        except (Exception, SystemExit) as exc:  # a rule of the conformance check's reference design
            from deployspec.engines.hypothesis_engine import where_raised  # (hypothesis: only now)

            # the steps that reached it, as the search says them (a fault's own report says where)
            reached.note(exc, where_raised([a.to_json() for a in rec.actions[:done]], settling))
            raise
        if session.violation is not None:
            return session, n
    return None, len(sweep.recordings)


def key(config) -> str:
    return json.dumps(config.to_json(), sort_keys=True)
