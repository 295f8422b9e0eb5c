import multiprocessing as mp

import pytest

from deployspec.profiles import register

register()


@pytest.fixture
def no_worker_left_behind():
    """After the test, no child process of this one is still running (partitioned searches)."""
    yield
    assert mp.active_children() == []
