"""How wide the reader's screen is, and fitting a wide table's columns into it.

The capi matrix is 264 characters wide; a terminal of 80 or 120 wraps every row
into stripes no one can read. Where the width is known (a terminal, or
``COLUMNS`` set), tables are split into blocks of columns that fit; where it is
not (a pipe, a file, a CI log), a row stays one line, for grep and for logs that
do not wrap.
"""

from __future__ import annotations

import os
import sys


def columns() -> int | None:
    """The width output should fit: ``COLUMNS`` when it is a positive number, else the
    width of the terminal standard output is, else None (no limit)."""
    given = os.environ.get("COLUMNS", "").strip()
    if given.isdigit() and int(given) > 0:
        return int(given)
    try:
        if not sys.stdout.isatty():
            return None
        return os.get_terminal_size(sys.stdout.fileno()).columns or None
    except (OSError, ValueError, AttributeError):  # closed, replaced by an object without a file
        return None


def column_groups(widths: list[int], room: int | None, gap: int = 2) -> list[list[int]]:
    """The indices of ``widths`` in consecutive groups, each as many columns (with ``gap``
    before each) as fit in ``room``, and at least one; all in one group when ``room`` is None."""
    if room is None:
        return [list(range(len(widths)))]
    groups: list[list[int]] = [[]]
    used = 0
    for i, w in enumerate(widths):
        if groups[-1] and used + gap + w > room:
            groups.append([])
            used = 0
        groups[-1].append(i)
        used += gap + w
    return groups
