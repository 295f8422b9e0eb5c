"""How the capi model builds and hashes its states on the explorer's hot path
(reference/capi/state.py: ``_state`` sets a state's slots directly, ``CapiState.__hash__``
keeps the hash in a slot of its own): the same states as the constructor's, hashed alike,
and the kept hash never leaves the process."""

from __future__ import annotations

import pickle

import attrs
from deployspec.reference.capi import state as capi_state
from deployspec.reference.capi.state import CapiState

from .test_capi_interned_values import _walk


def _explored(variant_name: str, seed: int):
    """The distinct states of a random walk of the reference (each built by the writing helpers)."""
    last = None
    for state in _walk(variant_name, seed, steps=60):
        if state is not last:
            last = state
            yield state


def _fields(state: CapiState) -> tuple:
    return tuple(getattr(state, a.name) for a in attrs.fields(CapiState))


def test_the_fast_builder_sets_every_field_in_the_constructors_order():
    """A field added to CapiState and not to ``_state`` would leave its slot unset."""
    names = [a.name for a in attrs.fields(CapiState)]
    assert [s.__self__.__name__ for s in capi_state._SETTERS] == names


def test_a_state_built_fast_equals_and_hashes_as_the_constructors():
    seen = 0
    for name in ("capi-2022", "capi-current", "capi-safe"):
        for seed in range(5):
            for state in _explored(name, seed):
                built = CapiState(*_fields(state))  # attrs' __init__: no kept hash until asked
                assert state == built and hash(state) == hash(built) == hash(built)
                assert hash(state) == hash(_fields(state))  # every field, none left out
                assert capi_state._state(*_fields(built)) == state
                assert repr(state) == repr(built)  # the kept hash is no field: not shown
                seen += 1
    assert seen > 200


def test_the_kept_hash_is_not_pickled():
    """String hashes are salted per process: a hash pickled with its state would be wrong in a
    process started apart. Here the slot holds a wrong number; the unpickled state works its
    hash out again."""
    state = list(_explored("capi-safe", 1))[-1]
    right = hash(CapiState(*_fields(state)))
    capi_state._set_hash(state, right + 1)
    assert hash(state) == right + 1
    copy = pickle.loads(pickle.dumps(state))
    assert copy == state and hash(copy) == right
    evolved = attrs.evolve(state, next_process_id=state.next_process_id)
    assert hash(evolved) == right
