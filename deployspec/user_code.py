"""Code the user hands in by module name (``--python MODULE:FACTORY``, a design of their own):
found as ``python -m`` would find it, from the current folder first, then PYTHONPATH; and
run with streams it cannot close and an ``os._exit`` it cannot end deployspec with."""

from __future__ import annotations

import contextlib
import io
import os
import sys
import threading
from collections.abc import Callable
from typing import Any

from deployspec import streams
from deployspec.text import quoted


def cwd_first_on_path() -> None:
    """Put the current folder on ``sys.path`` (first) unless it is there already."""
    if os.getcwd() not in sys.path and "" not in sys.path:
        sys.path.insert(0, os.getcwd())


def is_module_name(name: str) -> bool:
    """``pkg.mod``, not a file name or a path (``./mod.py``), which no import can take."""
    return all(part.isidentifier() for part in name.split("."))


class ExitCalled(BaseException):
    """``os._exit`` called by the user's code while deployspec ran it: said, not obeyed
    (it would end deployspec at once with the code's status, 0 read as a pass)."""

    def __init__(self, status: Any):
        super().__init__(status)
        self.status = status
        #: the status as a message gives it, worked out here, in the stand-in the code called:
        #: an object of the code's own is shown by its type, never asked to print itself later,
        #: outside the guards (its ``__repr__`` could hang, or call ``os._exit`` for real)
        self.said = quoted(status) if type(status) in (int, bool, str, float, type(None)) else \
            f"a {type(status).__name__}"


@contextlib.contextmanager
def exit_refused():
    """While the user's code runs, ``os._exit`` in this thread raises :class:`ExitCalled`
    (deployspec enters it from its main thread only: the blocks nest, never overlap);
    in another thread (deployspec's last resort ending a run the code hangs, a thread of
    the code's own) or in a child it forked (multiprocessing ends its children so) it
    exits as ever.

    A child the code forked that leaves the block (returns or raises out of the code, as
    ``os.fork()`` itself returns in both) is no deployspec: it ends there, silently, before
    it runs on with a copy of the whole run (``--python os:fork`` printed two reports, and
    two runs judged one implementation), with status 0 or, raising, 1."""
    real, pid, thread = os._exit, os.getpid(), threading.get_ident()

    def refused(status: Any = 0) -> None:
        if os.getpid() != pid or threading.get_ident() != thread:
            real(status)
        raise ExitCalled(status)

    os._exit = refused
    try:
        yield
    except BaseException:
        if os.getpid() != pid:
            real(1)
        raise
    finally:
        os._exit = real
    if os.getpid() != pid:
        real(0)


class DescriptorsMoved(Exception):
    """The user's code closed file descriptor 1 or 2, or pointed it elsewhere (``os.close(1)``,
    ``os.dup2(devnull, 2)``): put back, and said (deployspec's report went nowhere, silently,
    ending with status 2, or 0 and no word at all into /dev/null)."""


#: the standard descriptors :func:`descriptors_kept` guards
STANDARD_FDS = (1, 2)
#: descriptor -> (what it was, a copy of it): made when a block first meets it so, kept for
#: the blocks after (the calls of a run: one look per descriptor each side of a call)
_COPIES: dict[int, tuple[tuple[int, int], int]] = {}


def _what(fd: int) -> tuple[int, int] | None:
    """What descriptor ``fd`` is open on (device, inode), or None when it is closed."""
    try:
        st = os.fstat(fd)
    except OSError:
        return None
    return st.st_dev, st.st_ino


class descriptors_kept:
    """While the user's code runs, stdout's and stderr's descriptors (and ``--json``'s
    document's, while it has one) stay what they were: one closed or pointed elsewhere is put
    back when the block ends, which then raises :class:`DescriptorsMoved` saying which (a
    KeyboardInterrupt goes on as it was). A block within another leaves them to the outer
    one. What a thread of the code does between blocks is beyond it. (A class, not a generator:
    entered on every call of a ``--python`` object, 2 us less each.)"""

    __slots__ = ("before", "fds")

    def __enter__(self) -> None:
        if _HELD:  # within another block (a design loaded by the code): that block keeps them
            self.fds = self.before = ()
            return
        # (and the descriptor --json's document is written to, while stdout's is stderr's:
        # a daemon-like closerange(3, …) that then opened a log sent the document into it)
        document = streams.DOCUMENT_FD
        self.fds = fds = STANDARD_FDS if document is None else (*STANDARD_FDS, document)
        self.before = before = tuple(map(_what, fds))
        for fd, now in zip(fds, before):
            copy = _COPIES.get(fd)
            if now is not None and (copy is None or copy[0] != now):
                if copy is not None:
                    del _COPIES[fd]
                    # closed only if it is still the copy: its number may be a file of the code's now
                    if _what(copy[1]) == copy[0]:
                        with contextlib.suppress(OSError):
                            os.close(copy[1])
                with contextlib.suppress(OSError):  # no descriptor left to copy into: said, not put back
                    _COPIES[fd] = (now, os.dup(fd))
        _HELD.append(self)

    def __exit__(self, kind: type[BaseException] | None, exc: object, tb: object) -> bool:
        if not self.fds:
            return False
        _HELD.remove(self)
        now = tuple(map(_what, self.fds))
        if now == self.before:
            return False
        moved = _put_back(self.fds, self.before, now)
        if not moved or kind is not None and issubclass(kind, KeyboardInterrupt):
            return False
        raise DescriptorsMoved(_said(moved)) from None


#: the blocks of :class:`descriptors_kept` running now, outermost first
_HELD: list[descriptors_kept] = []


def standard_fds_put_back() -> None:
    """While the user's code runs in a block of :class:`descriptors_kept`, put stdout's and
    stderr's descriptors back where they were when the block began, from deployspec's copies,
    if the code moved them (best effort): for the last line of a run that ends while the
    code still holds them (``last_resort``). Outside any block they are deployspec's own."""
    if _HELD:
        block = _HELD[0]
        with contextlib.suppress(OSError):
            _put_back(block.fds, block.before, tuple(map(_what, block.fds)))


#: how the descriptors are named in a fault
_NAMES = {1: "1 (stdout)", 2: "2 (stderr)"}


def _put_back(fds: tuple[int, ...], before: tuple, after: tuple) -> dict[str, list[str]]:
    """Put back each standard descriptor that is not what it was; which were closed, which
    pointed elsewhere, which could not be put back (empty: none moved). One closed before
    is none of the code's doing (a file the code opens may take its number)."""
    done: dict[str, list[str]] = {}
    for fd, was, now in zip(fds, before, after):
        if was is None or now == was:
            continue
        name = _NAMES.get(fd, f"{fd} (the --json document's)")
        done.setdefault("closed" if now is None else "elsewhere", []).append(name)
        copy = _COPIES.get(fd)
        # (no copy: no descriptor was left to make one; one no longer on the file: the code
        # closed it too, and its number may be another file's now)
        if copy is not None and copy[0] == was and _what(copy[1]) == was:
            os.dup2(copy[1], fd)
        else:
            done.setdefault("lost", []).append(name)
    return done


def _said(moved: dict[str, list[str]]) -> str:
    """``closed file descriptors 1 (stdout) and 2 (stderr)``, ``pointed file descriptor 2
    (stderr) elsewhere``, or both kinds, then what deployspec did."""
    def descriptors(names: list[str]) -> str:
        return f"file descriptor{'s' if len(names) > 1 else ''} {' and '.join(names)}"

    parts = [f"closed {descriptors(moved['closed'])}"] if "closed" in moved else []
    if "elsewhere" in moved:
        parts.append(f"pointed {descriptors(moved['elsewhere'])} elsewhere")
    done = f"{descriptors(moved['lost'])} could not be put back" if "lost" in moved else "put back"
    return " and ".join(parts) + f" (deployspec writes there; {done})"


@contextlib.contextmanager
def guarded():
    """Around the user's code (a ``--python`` object's calls, a design module's loading):
    what it prints goes to stderr (stdout is ``--json``'s, or ``serve``'s replies'), and it
    can close neither stream nor their descriptors, nor end deployspec with ``os._exit``
    (a silent exit 0 read as a pass in CI)."""
    with lent_streams(stdout=sys.stderr), exit_refused(), descriptors_kept(), path_kept(), recursion_kept():
        yield


@contextlib.contextmanager
def recursion_kept():
    """A recursion limit the user's code lowers comes back up when the block ends (one of 30
    made deployspec's schema check of the next observation a RecursionError traceback, exit 1
    as if violated); one it raises stays, for its own deep calls."""
    before = sys.getrecursionlimit()
    try:
        yield
    finally:
        if sys.getrecursionlimit() < before:
            sys.setrecursionlimit(before)


class path_kept:
    """What the user's code takes off ``sys.path`` (or the list it puts in its place) comes
    back when the block ends, after what it added: deployspec imports some of its own
    modules later, from there (a ``--python`` object that emptied it ended the run with a
    traceback, ``No module named 'hypothesis'``). What it adds stays, for its own imports."""

    __slots__ = ("before", "listed")

    def __enter__(self) -> None:
        self.listed = sys.path
        self.before = tuple(sys.path)

    def __exit__(self, *exc: object) -> bool:
        # (by identity and exact type only: an entry of the code's own would run its __eq__
        # here, after the call's timer, and a sys.path deleted is no list)
        listed, now, before = self.listed, getattr(sys, "path", None), self.before
        if now is listed and len(listed) >= len(before) and all(a is b for a, b in zip(listed, before)):
            return False  # as it was, or only added to at the end
        kept = [p for p in now if type(p) is str] if type(now) is list else []
        listed[:] = kept + [p for p in before if type(p) is str and p not in kept]
        sys.path = listed
        return False


@contextlib.contextmanager
def lent_streams(stdout: Any = None):
    """While the user's code runs, ``sys.stdout`` (``stdout``'s lender; by default the
    current stdout's) and ``sys.stderr`` are lenders it may write to and flush, not close:
    deployspec's own messages and results still go out after it. So are the streams the
    process started with, ``sys.__stdout__`` and ``sys.__stderr__``, often the same objects
    (closing one of those ended a run with a traceback, or lost its last lines)."""
    out, err, first_out, first_err = sys.stdout, sys.stderr, sys.__stdout__, sys.__stderr__
    sys.stdout, sys.stderr = borrowed(out if stdout is None else stdout), borrowed(err)
    if first_out is not None:
        sys.__stdout__ = borrowed(first_out)
    if first_err is not None:
        sys.__stderr__ = borrowed(first_err)
    try:
        yield
    finally:
        sys.stdout, sys.stderr, sys.__stdout__, sys.__stderr__ = out, err, first_out, first_err


def borrowed(stream: Any) -> Lent:
    """The one lender of ``stream`` (itself if it is one), kept for the life of the
    process: a thread of the user's code may be inside ``print`` on it when the main
    thread puts the real stream back, and ``print`` does not hold a reference of its own
    (CPython 3.11, gh-130163), so a lender freed then would crash the process."""
    if isinstance(stream, Lent):
        return stream
    lender = _LENDERS.get(id(stream))
    if lender is None or lender._stream is not stream:
        lender = _LENDERS[id(stream)] = Lent(stream)
    return lender


class Lent:
    """A stream lent to the user's code: it may write and flush, not close it (nor the
    streams under it, ``.buffer`` and its ``.raw``), detach or reconfigure it."""

    def __init__(self, stream: Any):
        self._stream = stream

    def close(self) -> None:
        pass

    def detach(self) -> Any:
        raise io.UnsupportedOperation("this stream is deployspec's, lent: it cannot be detached")

    def reconfigure(self, *args: Any, **kwargs: Any) -> None:
        raise io.UnsupportedOperation("this stream is deployspec's, lent: it cannot be reconfigured")

    def __getattr__(self, name: str) -> Any:
        if name in ("buffer", "raw"):
            return borrowed(getattr(self._stream, name))
        return getattr(self._stream, name)


#: the lenders made, by id of the stream lent (they and their streams are never freed)
_LENDERS: dict[int, Lent] = {}


def describe(exc: BaseException) -> str:
    """``Type: message`` in one line, whatever the exception's ``__str__`` does."""
    text = shown(exc, str)
    return f"{type(exc).__name__}: {text}" if text else type(exc).__name__


def shown(value: Any, how: Callable[[Any], str] = repr, n: int = 200) -> str:
    """``repr`` (or ``str``) of something the user's code made, as one short line; it may
    not even print (a 5,000-digit int, a raising ``__repr__``), and printing it runs the
    code's own methods: one that ends the process (``os._exit``, ``SystemExit``: deployspec's
    exit 0 with no report) is refused, wherever deployspec prints it."""
    try:
        with exit_refused():
            lines = str.splitlines(str.strip(how(value)))  # (str's own methods: not a subclass's)
    except (Exception, SystemExit, GeneratorExit, ExitCalled):  # noqa: BLE001
        return f"(an unprintable {type(value).__name__})"
    text = lines[0] if lines else ""
    return text if len(text) <= n else text[:n] + "…"


def at_user_line(exc: BaseException) -> str:
    """`` at FILE:LINE`` of the innermost frame of the user's code, wherever it raised."""
    mine = frames_of(exc)[1]
    return f" at {os.path.basename(mine[-1].filename)}:{mine[-1].lineno}" if mine else ""


def frames_of(exc: BaseException) -> tuple[list, list, tuple[str, ...]]:
    """The traceback's frames, those of the user's code (not deployspec's, attrs' or the
    import machinery's), and the folders of deployspec's own code."""
    import importlib
    import traceback

    import attr
    import attrs

    import deployspec
    from deployspec import reference, rule_results, spec

    own = tuple(os.path.dirname(m.__file__) for m in (deployspec, reference, spec))
    libraries = (*own, *(os.path.dirname(m.__file__) for m in (attr, attrs, importlib)))
    # raised in an explore worker (--workers): its frames there, not those re-raising it here
    frames = getattr(exc, "worker_frames", None) or traceback.extract_tb(exc.__traceback__)
    # the check around each rule of the user's (rule_results) is no place of its own: left out,
    # a call one rule of theirs makes of another with other arguments is said at their line
    wrapper = os.path.splitext(rule_results.__file__)[0]
    frames = [f for f in frames if os.path.splitext(f.filename)[0] != wrapper]
    return frames, [f for f in frames if not f.filename.startswith(("<", *libraries))], own
