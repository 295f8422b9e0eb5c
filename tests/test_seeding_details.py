"""``fixed_constants``' cache handling a mutation pass found unpinned (engines/seeding.py):
values Hypothesis drew from the unpinned pool must not outlive the pin's edges; and
blocks open in several threads at once (the count of open blocks, under its lock)."""

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


def test_blocks_overlapping_across_threads_unpin_when_the_last_one_ends():
    """Two searches in two threads: the first to finish must not lift the other's pin."""
    import threading

    original = providers._get_local_constants
    first_in, second_in, first_out = threading.Event(), threading.Event(), threading.Event()
    seen = {}

    def first():
        with fixed_constants():
            first_in.set()
            second_in.wait(5)
        first_out.set()

    def second():
        first_in.wait(5)
        with fixed_constants():
            second_in.set()
            first_out.wait(5)
            seen["after the first left"] = providers._get_local_constants

    threads = [threading.Thread(target=first), threading.Thread(target=second)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(10)
    assert seen["after the first left"] is not original
    assert seen["after the first left"]() == providers.Constants()
    assert providers._get_local_constants is original


def test_many_threads_entering_and_leaving_at_once_leave_the_hook_as_it_was():
    """The count of open blocks is read and written under one lock: with switches forced
    between bytecodes, an unlocked count loses updates and leaves the pool pinned (or
    unpins it under a running search)."""
    import sys
    import threading

    from deployspec.engines import seeding

    original = providers._get_local_constants
    interval = sys.getswitchinterval()
    sys.setswitchinterval(1e-6)
    try:
        def churn():
            for _ in range(10000):
                with fixed_constants():
                    pass

        threads = [threading.Thread(target=churn) for _ in range(6)]
        for t in threads:
            t.start()
        for t in threads:
            t.join(60)
    finally:
        sys.setswitchinterval(interval)
    assert seeding._depth == 0
    assert providers._get_local_constants is original
