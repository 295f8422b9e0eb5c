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
other way.
"""

from __future__ import annotations

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


@contextmanager
def fixed_constants() -> Iterator[None]:
    """Within the block, Hypothesis draws no constants from local modules."""
    if not _pinnable():
        yield
        return
    original = _providers._get_local_constants
    empty = _providers.Constants()
    # values computed from the unpinned pool are cached per draw kind: drop them
    # on the way in and on the way out
    _providers.CONSTANTS_CACHE.cache.clear()
    _providers._get_local_constants = lambda: empty
    try:
        yield
    finally:
        _providers._get_local_constants = original
        _providers.CONSTANTS_CACHE.cache.clear()
