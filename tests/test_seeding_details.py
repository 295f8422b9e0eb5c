"""``fixed_constants``' cache handling a mutation pass found unpinned (engines/seeding.py):
values Hypothesis drew from the unpinned pool must not outlive the pin's edges."""

from __future__ import annotations

from hypothesis.internal.conjecture import providers

from deployspec.engines.seeding import fixed_constants


def test_values_cached_from_the_unpinned_pool_are_dropped_when_the_pin_goes_in():
    """A cached draw made before the search would bring the user's literals back into it."""
    providers.CONSTANTS_CACHE.cache["drawn before"] = ("global", "local")
    with fixed_constants():
        assert "drawn before" not in providers.CONSTANTS_CACHE.cache


def test_values_cached_under_the_pin_are_dropped_when_it_is_lifted():
    """After the search, draws use the real pool again, not the pinned empty one."""
    with fixed_constants():
        providers.CONSTANTS_CACHE.cache["drawn pinned"] = ("global", "empty")
    assert "drawn pinned" not in providers.CONSTANTS_CACHE.cache


def test_the_pinned_pool_is_empty_and_the_real_one_comes_back():
    """Within the block no local constant can be drawn; after it the original hook is back."""
    original = providers._get_local_constants
    with fixed_constants():
        assert providers._get_local_constants() == providers.Constants()
    assert providers._get_local_constants is original
