"""Where a command's results go: each file or folder an option names, checked before
the work (a usage error then costs nothing) and written after it, never half a file.

``--out`` folders (:func:`writable_dir`), ``-o`` and ``--junit`` files
(:func:`output_path`, :func:`write_output`): devices, FIFOs and this process's own
descriptors (``/dev/stdout`` redirected to a log) are written into, never replaced.
"""

from __future__ import annotations

import os
import stat
import sys
from pathlib import Path

from deployspec import files
from deployspec.models import UsageError
from deployspec.text import ESCAPE


def writable_dir(path: str, report: Path | None = None) -> None:
    """``--out``: made if missing, and checked to take files before any search.
    Not ``-``: it names standard output for a file (``-o``, ``--junit``), which
    cannot hold a folder of traces; a folder named ``-`` is not what was meant. Not the file ``report`` (``--junit``,
    checked first by :func:`deployspec.junit.path_of`): a name not taken yet passes
    as a report to be, and --out would make it a folder the report, written last,
    could not replace; nor a folder under it (making it makes the report's name a
    folder too); refused here, before the run, not after it."""
    if not path:
        raise UsageError("--out: empty (give a directory, or leave --out out to save nothing)")
    if path == "-":
        raise UsageError("--out -: standard output cannot hold a folder of traces; give a directory")
    clash = None if report is None else _report_clash(path, report)
    if clash == "same":
        raise UsageError(f"--out {path}: also the --junit report's name; give the report a file of its own")
    if clash == "inside":
        raise UsageError(f"--out {path}: under the --junit report's name, which would have to become a "
                         "folder; give the report a file of its own")
    p = Path(path)
    try:  # (exists() itself fails on a name too long)
        if p.exists() and not p.is_dir():
            raise UsageError(f"--out {path}: exists and is not a directory")
        if p.is_symlink() and not p.exists():
            raise UsageError(f"--out {path}: a link to nothing ({os.readlink(p)})")
        p.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise UsageError(f"--out {path}: cannot create: {exc.strerror or exc}") from None
    try:  # now, not after a search that found something to save
        files.check_writable_dir(p)
    except OSError as exc:
        raise UsageError(f"--out {path}: cannot write there: {exc.strerror or exc}") from None


def _report_clash(named: str, report: Path) -> str | None:
    """"same" when ``named`` (a folder to be) is the report's name, links followed;
    "inside" when it lies under it (``--junit a --out a/b``: making it makes ``a`` a
    folder); None otherwise (a report inside the folder is fine)."""
    try:
        folder, file = os.path.realpath(named), os.path.realpath(report)
    except (OSError, ValueError):  # (a name too long; a NUL): not the report's, which passed
        folder, file = os.path.abspath(named), os.path.abspath(report)
    if folder == file:
        return "same"
    return "inside" if folder.startswith(file.rstrip(os.sep) + os.sep) else None


#: what ``-`` names
STDOUT = "/dev/stdout"


def _stdout(flag: str) -> Path:
    from deployspec.streams import closed_stream_named

    if closed_stream_named(STDOUT):
        raise UsageError(f"{flag} -: standard output is closed")
    return Path(STDOUT)


def output_path(named: str, flag: str, empty: str = "give a file name", made: str | None = None) -> Path:
    """The file an option names to write to, checked before any work: not empty, not
    a folder, not a closed standard stream, in a folder that exists and takes files
    (or is ``made``, the ``--out`` folder the command makes and checks next:
    ``--out results --junit results/junit.xml`` in a fresh checkout).
    Returned absolute: written where it was named, whatever folder the run moves to
    (a --python object shares the process). ``-`` is standard output, as for most tools."""
    if named == "-":
        return _stdout(flag)
    path = Path(named)
    if named.endswith(("/", os.sep)):  # pathlib drops the slash: "new/" would become a file "new"
        raise UsageError(f"{flag} {named}: ends with /, a folder; give a file name")
    if not named:  # (Path("") is ".", the current folder)
        raise UsageError(f"{flag}: empty ({empty})")
    from deployspec.streams import closed_stream_named

    stream = closed_stream_named(named)
    if stream is not None:  # (with stderr closed, said nowhere: the status alone)
        raise UsageError(f"{flag} {named}: standard {'output' if stream == 'stdout' else 'error'} is closed")
    if _is_standard_input(named):
        raise UsageError(f"{flag} {named}: is standard input (a file read, not one to write); name another")
    try:
        if path.is_dir():
            raise UsageError(f"{flag} {named}: is a directory")
        folder = path.resolve().parent
        if not folder.is_dir() and made is not None and not os.path.lexists(made) and \
                str(folder) == os.path.realpath(made):
            return Path(os.path.abspath(named))
        if not folder.is_dir():
            raise UsageError(f"{flag} {named}: no folder {folder}")
        if _descriptor(path):
            if not os.path.exists(path):  # (a redirection forgotten: ``7>report.xml``)
                raise UsageError(f"{flag} {named}: no such open file descriptor in this process")
        elif not (path.exists() and not path.resolve().is_file()):
            try:  # (a device, a FIFO, a descriptor is opened, not replaced)
                files.check_writable_dir(folder)
            except OSError as exc:  # (/proc refuses new files with ENOENT: "no such file" of one that is there)
                raise UsageError(f"{flag} {named}: cannot create a file in {folder}: {exc.strerror or exc}") from None
    except OSError as exc:
        raise UsageError(f"{flag} {named}: cannot write: {exc.strerror or exc}") from None
    except RuntimeError as exc:  # pathlib's "Symlink loop" (Python 3.11)
        raise UsageError(f"{flag} {named}: cannot write: {exc}") from None
    return Path(os.path.abspath(named))


def json_named(path: Path, named: str, also: tuple[str, ...] = ()) -> str | None:
    """What makes a write to ``path`` land on a ``.json`` file (one not ending in ``also``),
    which a replay of its folder reads as a trace: "a .json name", or "links to X: a .json
    name" (``report.xml`` linking to a saved trace would be written over it); None when
    neither. A descriptor (``/dev/stdout`` into ``> x.json``) is the shell's redirection,
    not a link of the user's to a trace."""
    def is_json(n: str) -> bool:
        return n.lower().endswith(".json") and not n.lower().endswith(also)

    if is_json(named):
        return "a .json name"
    try:
        target = os.path.realpath(path) if path.is_symlink() and not _descriptor(path) else None
    except OSError:  # (a name too long: the write says so)
        target = None
    return f"links to {target}: a .json name" if target and is_json(target) else None


#: the names of standard input
_STDIN_NAMES = ("/dev/stdin", "/dev/fd/0", "/proc/self/fd/0")


def _is_standard_input(named: str) -> bool:
    """Whether ``named`` is standard input: by its name, or as the very file it was
    redirected from (``show - -o t.json < t.json`` wrote the table over the trace it read;
    a descriptor is written into, so ``-o /dev/fd/0`` appended to it)."""
    if os.path.abspath(named) in _STDIN_NAMES:
        return True
    try:
        given, read = os.stat(named), os.fstat(0)
    except (OSError, ValueError):  # (no such file yet; standard input closed)
        return False
    return stat.S_ISREG(read.st_mode) and (given.st_dev, given.st_ino) == (read.st_dev, read.st_ino)


#: where this process's open files are named: written into, never replaced (``> log`` would be lost)
_DESCRIPTORS = ("/dev/fd/", "/proc/self/fd/")


def _descriptor(path: Path) -> bool:
    """Whether ``path`` names one of this process's open files (standard streams included)."""
    from deployspec.streams import standard_stream_named

    return standard_stream_named(str(path)) is not None or os.path.abspath(path).startswith(_DESCRIPTORS)


def write_output(path: Path, text: str, flag: str, named: str) -> bool:
    """Write ``text`` to a file :func:`output_path` accepted (``named``: as the user
    gave it, for messages): atomically (a failure leaves what was there), through a
    symlink to the file it names, or into a device, a FIFO or an open descriptor.
    True where it wrote a file (not a stream, a device or a descriptor).
    Standard output and error are written through their streams, in order with what
    was printed: their names resolve to whatever they were redirected to, a file
    that must keep what it holds."""
    from deployspec.streams import own_stdout, standard_stream_named

    stream = None
    try:
        stream = standard_stream_named(str(path))
        if stream is not None:  # a closed pipe (``| head``) stays BrokenPipeError: output cut short, 141
            out = own_stdout() if stream == "stdout" else getattr(sys, stream)
            out.write(text)
            out.flush()
        elif _descriptor(path) or (path.exists() and not path.resolve().is_file()):
            with open(path, "a" if _descriptor(path) else "w", encoding="utf-8", errors=ESCAPE) as f:
                f.write(text)
        else:  # through a symlink to the file it names: the link stays a link
            files.write_atomically(path.resolve() if path.is_symlink() else path, text)
            return True
    except BrokenPipeError:
        if stream is None:  # a pipe named by path (/dev/fd/N of another one): not the output's
            raise UsageError(f"{flag} {named}: cannot write: Broken pipe") from None
        raise
    except OSError as exc:
        raise UsageError(f"{flag} {named}: cannot write: {exc.strerror or exc}") from None
    except RuntimeError as exc:  # pathlib's "Symlink loop" (Python 3.11)
        raise UsageError(f"{flag} {named}: cannot write: {exc}") from None
    return False
