"""The ``deployspec`` program's first moments: Ctrl-C and SIGTERM are held from
before the command line's modules load until its arguments are read, then taken
as the command's interruption (status 130; with ``--junit``, a report saying so).

Loading takes about 0.3 s, and a command loads its engines before its first search.
A CI job's timeout or cancel landing then ended the run without the report the job
uploads (an earlier run's could pass for it), and Ctrl-C printed a traceback. This
module imports nothing of deployspec's, so the signals are held from the start.
"""

from __future__ import annotations

import signal
import time
from typing import NoReturn


def run() -> NoReturn:
    """The ``deployspec`` console script and ``python -m deployspec``."""
    started = time.time()  # the run's, as its report gives it
    held: list[int] = []

    def hold(signum, frame):
        held.append(signum)

    entry = {}
    for sig in (signal.SIGINT, signal.SIGTERM):
        handler = signal.getsignal(sig)
        if handler is not signal.SIG_IGN:  # a signal ignored on entry stays ignored
            entry[sig] = handler
            signal.signal(sig, hold)
    from deployspec import cli

    cli.run(held, entry, started)
