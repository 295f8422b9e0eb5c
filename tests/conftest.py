import multiprocessing as mp
import signal

import pytest

from deployspec.profiles import register

register()

# A suite started in the background (`pytest &` in a script) inherits SIGINT ignored, and
# so would every program the tests start: deployspec keeps an ignored SIGINT ignored (as it
# should), and the Ctrl-C tests would see nothing happen. Their programs start with Ctrl-C.
if signal.getsignal(signal.SIGINT) is signal.SIG_IGN:
    signal.signal(signal.SIGINT, signal.default_int_handler)


@pytest.fixture
def no_worker_left_behind():
    """After the test, no child process of this one is still running (partitioned searches)."""
    yield
    assert mp.active_children() == []
