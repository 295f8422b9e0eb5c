"""The program's standard streams: which paths name them, which were closed when it
started, and keeping them writable to the end (non-blocking pipes a parent shared,
a failed final flush)."""

from __future__ import annotations

import contextlib
import io
import os
import sys
from collections.abc import Iterator
from typing import Any

#: the standard streams the process started without ("stdout", "stderr"): /dev/null
#: stands in their place, so that no file opened later takes their descriptor
CLOSED_AT_START: set[str] = set()
_STREAM_NAMES = {"stdout": ("/dev/stdout", "/dev/fd/1", "/proc/self/fd/1"),
                 "stderr": ("/dev/stderr", "/dev/fd/2", "/proc/self/fd/2")}


def standard_stream_named(path: str) -> str | None:
    """"stdout" or "stderr" if ``path`` names this process's standard output or error."""
    where = os.path.abspath(path)
    return next((name for name, names in _STREAM_NAMES.items() if where in names), None)


def _names_stdout(path: str) -> bool:
    """Whether ``path``, or a link it leads through, names standard output (a link to
    /dev/stdout: its target is not a file of its own, and while :func:`document_only`
    holds descriptor 1 for stderr, it leads there)."""
    where = os.path.abspath(path)
    for _ in range(40):  # (a loop of links ends here)
        if standard_stream_named(where) == "stdout" or where == f"/proc/{os.getpid()}/fd/1":
            return True
        if not os.path.islink(where):
            return False
        where = os.path.normpath(os.path.join(os.path.dirname(where), os.readlink(where)))
    return False


def is_stdout(path: str) -> bool:
    """Whether writing to ``path`` writes where standard output goes: it names it
    (:func:`standard_stream_named`, through links too), or it is the very file (the file
    the shell sends stdout to). /dev/null is no one's: anything may write there."""
    if _names_stdout(path):
        return True
    try:
        there, out = os.stat(path), os.fstat(1 if DOCUMENT_FD is None else DOCUMENT_FD)
    except (OSError, ValueError):  # not there yet, or no stdout: not the same file
        return False
    if (there.st_dev, there.st_ino) != (out.st_dev, out.st_ino):
        return False
    try:
        null = os.stat(os.devnull)
    except OSError:
        return True
    return (there.st_dev, there.st_ino) != (null.st_dev, null.st_ino)


#: where standard output went when :func:`document_only` took file descriptor 1 over
#: (None: it did not)
DOCUMENT_FD: int | None = None
#: where deployspec's own output goes while ``sys.stdout`` is lent to the user's code as
#: stderr (a ``--python`` run: ``timed_call.lending``); None: ``sys.stdout``
OWN_STDOUT: Any = None


def own_stdout() -> Any:
    """The stream deployspec's own output (verdicts, a report sent to ``-``) goes to."""
    return sys.stdout if OWN_STDOUT is None else OWN_STDOUT


@contextlib.contextmanager
def document_only() -> Iterator[None]:
    """Standard output carries the ``--json`` document alone: meanwhile file descriptor 1
    is stderr's, so what writes to it below Python's ``sys.stdout`` (``os.write(1, …)``
    in a design of one's own or a ``--python`` object, a C library, a worker process)
    goes to stderr, and ``sys.stdout`` writes to where stdout went."""
    global DOCUMENT_FD
    real = sys.stdout
    try:
        real.flush()
        moved = real.fileno() == 1
    except (OSError, ValueError, io.UnsupportedOperation):  # no descriptor (a test's capture)
        moved = False
    if not moved:  # sys.stdout is not descriptor 1 (a program's redirect_stdout, a --json inside one):
        yield      # what writes to descriptor 1 is not the document's
        return
    document = os.dup(1)
    try:
        os.dup2(2, 1)
    except OSError:  # no stderr to send it to: as it was
        os.close(document)
        yield
        return
    ours = sys.stdout = io.TextIOWrapper(io.FileIO(document, "w", closefd=False), encoding=real.encoding,
                                         errors=real.errors, line_buffering=real.line_buffering)
    DOCUMENT_FD = document
    try:
        yield
    finally:
        DOCUMENT_FD = None
        try:
            ours.flush()  # (a closed pipe: BrokenPipeError, said by cli.main as ever)
        except BaseException:
            with contextlib.suppress(Exception):  # closed, so no flush at its collection fails again
                ours.close()
            raise
        finally:
            if sys.stdout is ours:  # (a --python run leaves its lender there: timed_call.lending)
                sys.stdout = real
            os.dup2(document, 1)
            os.close(document)


class Outlasting:
    """Standard output for a run that writes a report elsewhere (``--junit``): a pipe
    closed early (``| head``) costs the rest of the display, not the run. What is
    written after is dropped, the run goes on to write its report (a CI's record,
    which must not be an earlier run's), and ``cut`` says so (exit 141 all the same).
    Anything else is the stream's own."""

    def __init__(self, stream):
        self._stream = stream
        self.cut = False

    def write(self, text: str) -> int:
        if not self.cut:
            try:
                self._stream.write(text)
            except BrokenPipeError:
                self._sever()
        return len(text)

    def flush(self) -> None:
        if not self.cut:
            try:
                self._stream.flush()
            except BrokenPipeError:
                self._sever()

    def _sever(self) -> None:
        self.cut = True
        with contextlib.suppress(OSError, ValueError, io.UnsupportedOperation):
            _to_null(self._stream.fileno())  # what it still holds goes there, not to a failing flush

    def __getattr__(self, name: str):
        return getattr(self._stream, name)


@contextlib.contextmanager
def outlasting() -> Iterator[Outlasting]:
    """``sys.stdout`` an :class:`Outlasting` meanwhile (put back after, if still ours)."""
    real = sys.stdout
    ours = sys.stdout = Outlasting(real)
    try:
        yield ours
    finally:
        if sys.stdout is ours:
            sys.stdout = real


def closed_stream_named(path: str) -> str | None:
    """The standard stream ``path`` names if the process started without it (writing
    there would write into the /dev/null in its place), else None."""
    where = os.path.abspath(path)
    return next((name for name in CLOSED_AT_START if where in _STREAM_NAMES[name]), None)


def blocking_streams() -> list[int]:
    """Make stdout and stderr blocking if a parent left them non-blocking (Node.js and
    some CI runners share theirs): Python then drops what a full pipe refuses, and a
    report came out cut at the pipe's size with status 0. Returns the descriptors changed."""
    changed = []
    for fd in (1, 2):
        try:
            if not os.get_blocking(fd):
                os.set_blocking(fd, True)
                changed.append(fd)
        except OSError:  # closed (said where it matters), or not a descriptor
            pass
    return changed


def set_blocking(fd: int, blocking: bool) -> None:
    try:
        os.set_blocking(fd, blocking)
    except OSError:
        pass


def flush() -> None:
    for stream in (sys.stdout, sys.stderr):
        try:
            if stream is not None:
                stream.flush()
        except (OSError, ValueError):  # a closed or broken stream: nothing more to say
            pass


def drop_stdout() -> None:
    """Point stdout at /dev/null so the interpreter's final flush cannot fail again."""
    with contextlib.suppress(OSError, ValueError, io.UnsupportedOperation):
        _to_null(sys.stdout.fileno())


def _to_null(fd: int) -> None:
    null = os.open(os.devnull, os.O_WRONLY)
    try:
        os.dup2(null, fd)
    finally:
        os.close(null)
