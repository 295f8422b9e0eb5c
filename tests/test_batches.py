"""Batches of states between workers: equal values back, shared parts sent once."""

from __future__ import annotations

import pickle

import attrs
import pytest

from deployspec import batches


@attrs.frozen
class Plain:
    a: int
    b: tuple = ()


@attrs.frozen
class Odd:
    _private: int
    later: int = attrs.field(init=False, default=7)
    named: int = attrs.field(kw_only=True, default=0)


@pytest.mark.parametrize("value", [
    [Plain(1, (Plain(2),)), Plain(1, (Plain(2),))],
    [Odd(3, named=4)],
    [(Plain(5), frozenset({1, 2}), None, "text")],
])
def test_batches_rebuild_equal_values(value):
    assert pickle.loads(batches.dumps(value)) == value


def test_shared_sub_objects_are_sent_once_per_batch():
    inner = Plain(1, tuple(range(50)))
    one = len(batches.dumps([Plain(2, (inner,))]))
    many = len(batches.dumps([Plain(k, (inner,)) for k in range(20)]))
    assert many < 20 * one / 2
