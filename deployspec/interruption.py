"""An interruption a search must not lose.

Within ``contract.cli.sigterm_interrupts`` Ctrl-C and SIGTERM raise
KeyboardInterrupt wherever the main thread is. Python cannot raise it from a
garbage-collector callback (Hypothesis registers one to time its draws) or a
``__del__``: there it is printed as "Exception ignored" and dropped, and the
search would run on until the last resort ended the process without its report.
So the signal is also kept here until the block ends, and a search asks at each
step (:func:`raise_if_pending`) whether it was stopped.
"""

from __future__ import annotations

#: the signal that stopped the command in progress, until ``sigterm_interrupts`` ends
pending: int | None = None


def raise_if_pending() -> None:
    if pending is not None:
        raise KeyboardInterrupt
