"""Writing files so that a failure never leaves half a file behind.

Every file deployspec writes (counterexamples, pictures, exports) goes through
:func:`write_atomically`: the text goes to a temporary file in the target's
folder, is flushed to disk, and only then takes the target's name, in one
rename (or hard link, when an existing file must never be replaced). A full
disk, a read-only folder or an interrupt leaves the old file, if any, as it
was, and no temporary file behind.
"""

from __future__ import annotations

import errno
import os
import tempfile
from pathlib import Path

from deployspec.text import ESCAPE

#: the machine's limit on open files met (``ulimit -n``): no file's fault, nor a program's
OUT_OF_FILES = frozenset({errno.EMFILE, errno.ENFILE})
#: the machine's limits: open files, and memory (a fork refused)
MACHINE_LIMITS = OUT_OF_FILES | {errno.ENOMEM}


#: how the name of a file being written begins, until it is renamed into place
TEMPORARY = ".tmp-"


def write_atomically(path: str | os.PathLike, text: str, *, replace: bool = True) -> bool:
    """Write ``text`` (UTF-8) to ``path``; return False if ``replace`` is False and
    the name was taken meanwhile (the file there is left alone).

    The new file gets the permissions a plain ``open`` would give it (the
    umask's), or those of the file it replaces, not ``mkstemp``'s 0600.
    Text that cannot be encoded (a lone surrogate read from JSON) is written
    escaped rather than failing, as on the output streams (``\\xff`` for a byte
    of a name that was not UTF-8: :data:`deployspec.text.ESCAPE`). Raises OSError as ``open`` would.
    """
    path = Path(path)
    # not named *.json: a crash (SIGKILL, power) leaves it, and a replay of the folder must
    # not read it as a trace
    fd, tmp = tempfile.mkstemp(prefix=TEMPORARY, suffix=path.suffix + ".part", dir=path.parent)
    try:
        with os.fdopen(fd, "w", encoding="utf-8", errors=ESCAPE) as f:
            f.write(text)
            f.flush()
            os.fsync(f.fileno())
        os.chmod(tmp, _mode_for(path))
        if replace:
            os.replace(tmp, path)
            return True
        try:
            os.link(tmp, path)  # atomic, and never replaces an existing file
        except FileExistsError:
            return False
        return True
    finally:
        try:
            os.unlink(tmp)
        except FileNotFoundError:
            pass  # renamed into place


def _mode_for(path: Path) -> int:
    try:
        return path.stat().st_mode & 0o7777
    except OSError:
        umask = os.umask(0)
        os.umask(umask)
        return 0o666 & ~umask


def check_writable_dir(path: str | os.PathLike) -> None:
    """Raise OSError unless a file can be created in the folder ``path`` (which exists)."""
    fd, tmp = tempfile.mkstemp(prefix=TEMPORARY, dir=path)
    os.close(fd)
    os.unlink(tmp)
