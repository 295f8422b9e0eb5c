"""A seed that means the same search in every process.

Hypothesis (since 6.13x) sometimes draws a "local constant" instead of a random
value: an int, float or string literal found in the source of any module loaded
from outside site-packages and the standard library. Which modules those are
depends on the process: an editable install of deployspec, the user's own
contract implementation or conftest, what else was imported before. So the same
``--seed`` gave different searches, and different counterexamples, from the CLI
and from pytest, or after a user edited a literal in their own code (measured:
``user_scale_not_lost`` on capi-2022, seed 0, 9,604 steps to the violation in a
bare process, 3,338 after importing one local module of integer literals).

``fixed_constants()`` pins that pool to empty while a search runs, so the draws
depend on the seed alone. The hook is private to Hypothesis
(``hypothesis.internal.conjecture.providers._get_local_constants``); when a
version has no such hook there is nothing to pin, and
``tests/test_seeding.py`` fails if a new version draws local constants some
other way. Blocks may nest or overlap across threads (the first pins, the last
unpins); Hypothesis caches the values drawn from the pool per thread, and only
the entering thread's cache is dropped: deployspec searches in one thread per
process.
"""

from __future__ import annotations

import threading
from collections.abc import Iterator
from contextlib import contextmanager

try:  # the pool exists since Hypothesis 6.13x
    from hypothesis.internal.conjecture import providers as _providers
except ImportError:  # pragma: no cover - a layout without it draws no local constants
    _providers = None


def _pinnable() -> bool:
    return _providers is not None and all(
        hasattr(_providers, name) for name in ("_get_local_constants", "Constants", "CONSTANTS_CACHE")
    )


_lock = threading.Lock()
_depth = 0  # blocks open now (nested, or in several threads): the first pins, the last unpins
_original = None


@contextmanager
def fixed_constants() -> Iterator[None]:
    """Within the block, Hypothesis draws no constants from local modules."""
    if not _pinnable():
        yield
        return
    _enter()
    try:
        yield
    finally:
        _leave()


def _enter() -> None:
    global _depth, _original
    with _lock:
        if _depth == 0:
            _original = _providers._get_local_constants
            empty = _providers.Constants()
            _providers._get_local_constants = lambda: empty
            # values computed from the unpinned pool are cached per draw kind: drop
            # them once the pin is in place (and again when it is lifted)
            _providers.CONSTANTS_CACHE.cache.clear()
        _depth += 1


def _leave() -> None:
    global _depth, _original
    with _lock:
        _depth -= 1
        if _depth == 0:
            _providers._get_local_constants = _original
            _original = None
            _providers.CONSTANTS_CACHE.cache.clear()
