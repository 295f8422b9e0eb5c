"""What a program under test leaves behind, and how deployspec keeps it small.

* its stderr: read by a thread as it comes, of which only the last bytes are
  kept (:class:`StderrTail`) for the one-line report of a fault;
* processes it started in a session of their own, out of reach of its process
  group: the ``deployspec`` program adopts them when the program ends (Linux's
  child subreaper, :func:`adopting`) and ends them with it (:func:`end_escaped`).
"""

from __future__ import annotations

import os
import select
import signal
import sys
import threading
import time

from deployspec.text import decoded


class StderrTail:
    """The program's stderr, of which only the last ``keep`` bytes are kept: a
    thread reads the pipe as the program writes (a chatty server on a long run,
    or a flood, must not fill a disk or block on a full pipe)."""

    def __init__(self, keep: int = 4096):
        self.keep = keep
        self._read_end, self.write_end = os.pipe()
        self._data = bytearray()
        self._lock = threading.Lock()
        self._stopped = False
        self._reader = threading.Thread(target=self._read, name="deployspec-stderr", daemon=True)
        self._reader.start()

    def started(self) -> None:
        """The program has its copy of the write end (or did not start): close ours,
        so the reader sees the end of the output when the program's group is gone."""
        if self.write_end >= 0:
            os.close(self.write_end)
            self.write_end = -1

    def _read(self) -> None:
        try:
            while not self._stopped:
                if not select.select([self._read_end], [], [], 0.25)[0]:
                    continue
                chunk = os.read(self._read_end, 65536)
                if not chunk:
                    break
                with self._lock:
                    self._data += chunk
                    del self._data[:-self.keep]
        except OSError:
            pass
        finally:
            os.close(self._read_end)

    def tail(self, settle: bool = False) -> str:
        """The last bytes written, as text; ``settle``: the program has ended, so
        wait a moment for what it wrote last to be read (not for ever: a child
        that outlived it may hold the pipe open)."""
        if settle:
            self._reader.join(0.3)
        with self._lock:
            return decoded(self._data)

    def close(self) -> None:
        """Stop reading (a process the program detached may hold the pipe open for
        ever: the thread and the read end must not live as long)."""
        self.started()
        self._stopped = True


#: whether this process adopts orphans (None: not asked yet)
_ADOPTING: bool | None = None


def adopting() -> bool:
    """Make this process the reaper of its orphaned descendants (Linux,
    PR_SET_CHILD_SUBREAPER), once: a process the implementation started in a
    session of its own (out of reach of its process group) becomes this
    process's child when the implementation ends, and is ended with it.

    Only in the ``deployspec`` program itself (``cli.run``): in a pytest process
    or a user's own program, other children are not deployspec's to end."""
    global _ADOPTING
    from deployspec import interruption

    if _ADOPTING is None and interruption.OWN_PROCESS:
        _ADOPTING = False
        if sys.platform.startswith("linux"):
            try:
                import ctypes

                _ADOPTING = ctypes.CDLL(None, use_errno=True).prctl(36, 1, 0, 0, 0) == 0
            except (OSError, AttributeError):
                pass
    return bool(_ADOPTING)


def children() -> set[int]:
    """This process's children now (from /proc)."""
    me, out = os.getpid(), set()
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                with open(f"/proc/{entry}/stat") as f:
                    fields = f.read().rsplit(")", 1)[1].split()
            except OSError:
                continue  # gone meanwhile
            if int(fields[1]) == me:
                out.add(int(entry))
    return out


def reap_exited(known: set[int]) -> None:
    """Reap the children gained since ``known`` was taken that have ended."""
    for pid in children() - known:
        try:
            os.waitpid(pid, os.WNOHANG)
        except ChildProcessError:
            pass


def end_escaped(known: set[int], rounds: int = 8) -> None:
    """Kill and reap the children this process gained since ``known`` was taken
    (adopted descendants of an implementation that has just been ended). A child
    killed leaves its own children to this process (the subreaper): they are
    ended in the next round, up to ``rounds`` generations."""
    for _ in range(rounds):
        try:
            gained = children() - known
        except OSError:  # (no /proc to read: the last resort's thread must still end the process)
            return
        if not gained:
            return
        for pid in gained:
            try:
                os.kill(pid, signal.SIGKILL)
                os.waitpid(pid, 0)
            except OSError:  # gone, reaped meanwhile, or not ours to kill (it changed its user)
                pass


#: the children this process had before a Python object under test was loaded (None:
#: no object loaded, or not the ``deployspec`` program): what it forks is ended with it
_BEFORE_OBJECT: set[int] | None = None


def watch_object_children() -> None:
    """Before a ``--python`` object is loaded, in the ``deployspec`` program: note the
    children there are, so that what the object forks (a child still inside the
    object's code holds deployspec's stdout: a pipe's reader would wait for it) is
    ended with the run (:func:`end_object_children`), as an ``--exec`` program's
    group is."""
    global _BEFORE_OBJECT
    if _BEFORE_OBJECT is None and adopting():
        _BEFORE_OBJECT = children()


#: when :func:`reap_object_children` last looked
_REAPED_AT = 0.0


def reap_object_children() -> None:
    """Reap the object's descendants that ended, at most once a second (this process adopts
    them, :func:`watch_object_children`: a long run must not pile up zombies), as an
    ``--exec`` program's are."""
    global _REAPED_AT
    if _BEFORE_OBJECT is not None and time.monotonic() - _REAPED_AT > 1.0:
        _REAPED_AT = time.monotonic()
        try:
            reap_exited(_BEFORE_OBJECT)
        except OSError:
            pass


def end_object_children() -> None:
    """End what the object forked (:func:`watch_object_children`); nothing if none was loaded."""
    global _BEFORE_OBJECT
    known, _BEFORE_OBJECT = _BEFORE_OBJECT, None
    if known is not None:
        end_escaped(known)
