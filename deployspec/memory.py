"""What a search reads of its own memory: resident now and at peak, and the address
space left under a limit (``ulimit -v``); Linux's ``/proc/self/statm``, else ``getrusage``.

A search asks :func:`memory_stop` every few hundred nodes, so one check reads
``statm`` once for both of its questions."""

from __future__ import annotations

import resource
import sys

MIB = 2**20
_PAGE = resource.getpagesize()

#: address space (MiB) a search keeps in hand under a limit (``ulimit -v``): below it, it
#: stops on its memory budget rather than meet MemoryError, which CPython 3.11 can turn into
#: an endless loop that no signal but SIGKILL ends (cpython#132508)
ADDRESS_SPACE_RESERVE_MB = 64.0


def _statm() -> tuple[int, int] | None:
    """(address space, resident) of this process in bytes, or None off Linux."""
    try:
        with open("/proc/self/statm") as f:
            size, resident = f.read().split()[:2]
        return int(size) * _PAGE, int(resident) * _PAGE
    except (OSError, ValueError):
        return None


def peak_rss_mb() -> float:
    """Peak resident memory of this process (``ru_maxrss`` counts KiB on Linux, bytes on macOS)."""
    unit = 1 if sys.platform == "darwin" else 1024
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * unit / MIB


def current_rss_mb() -> float:
    """Resident memory now (Linux /proc), else the peak so far."""
    return _resident_mb(_statm())


def _resident_mb(read: tuple[int, int] | None) -> float:
    return read[1] / MIB if read else peak_rss_mb()


def _short(size: int | None) -> bool:
    soft = resource.getrlimit(resource.RLIMIT_AS)[0]
    if soft == resource.RLIM_INFINITY or size is None:
        return False
    return (soft - size) / MIB < max(ADDRESS_SPACE_RESERVE_MB, soft / MIB / 10)


def address_space_short() -> bool:
    """Whether the address space left under RLIMIT_AS is below the reserve (or a tenth of the limit)."""
    read = _statm()
    return _short(read[0] if read else None)


def memory_stop(budget_mb: float, inherited_mb: float = 0.0) -> str | None:
    """Why a search must stop for memory, if it must: ``"memory"`` when its resident memory
    beyond ``inherited_mb`` (what a forked worker started with) is over ``budget_mb``,
    ``"address_space"`` when the address space left is short; else None."""
    read = _statm()
    if _resident_mb(read) - inherited_mb > budget_mb:
        return "memory"
    if _short(read[0] if read else None):
        return "address_space"
    return None
