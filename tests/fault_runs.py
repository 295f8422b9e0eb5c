"""Running the fakes' program for the fault tests, and telling whether a process it started still runs."""

from __future__ import annotations

import shlex
import sys
import time
from pathlib import Path

FAKES = Path(__file__).with_name("contract_fakes.py")


def fake(mode: str, pidfile: Path, variant: str = "capi-safe", at: int = 14) -> str:
    """The reference behind the protocol until its ``at``-th action, where it misbehaves."""
    return " ".join(shlex.quote(str(a)) for a in (sys.executable, FAKES, variant, mode, at, pidfile))


def alive(pid: int) -> bool:
    """Running, i.e. not gone and not a zombie waiting for init to reap it."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except FileNotFoundError:
        return False
    return stat.rsplit(")", 1)[1].split()[0] != "Z"


def ended_soon(pid: int, seconds: float = 5.0) -> bool:
    """Whether ``pid`` is gone (or a zombie) within ``seconds``."""
    deadline = time.monotonic() + seconds
    while alive(pid) and time.monotonic() < deadline:
        time.sleep(0.05)
    return not alive(pid)
