"""Whether ``/bin/sh`` could start an ``--exec`` command's program, asked before a run.

A mistyped path (``--exec ./ctl`` for ``./ctl.py``, a build that has not run, a script
without its executable bit) is a usage error: without this check the shell exits 127 or
126 at the first request and the run reports an implementation fault (exit 3), which
reads as a bug of the program rather than of the command line.

Only a command whose first word is a plain word is judged: shell syntax (``cd d && ./x``,
``$HOME/x``, ``~/x``, a builtin such as ``exec``) is left to the shell, whose failure is
then reported as a fault at start, as before.
"""

from __future__ import annotations

import os
import re
import shlex
import shutil

#: words the shell runs itself (POSIX special and regular builtins, keywords, and the common
#: extensions), which no file on PATH need back
SHELL_WORDS = frozenset({
    ".", ":", "[", "[[", "!", "{", "alias", "bg", "break", "builtin", "case", "cd", "command",
    "continue", "declare", "do", "done", "echo", "elif", "else", "esac", "eval", "exec", "exit",
    "export", "false", "fc", "fg", "fi", "for", "function", "getopts", "hash", "if", "jobs",
    "kill", "let", "local", "newgrp", "printf", "pwd", "read", "readonly", "return", "select",
    "set", "shift", "source", "test", "then", "time", "times", "trap", "true", "type", "typeset",
    "ulimit", "umask", "unalias", "unset", "until", "wait", "while"
})
#: characters after which a word means more than its letters to the shell
_SHELL_SYNTAX = re.compile(r"[\s$`\\\"'*?\[\]{}()<>|&;~!#]")
_ASSIGNMENT = re.compile(r"[A-Za-z_][A-Za-z0-9_]*=")
#: by a script's extension, the program that runs it (the hint for a file without its x bit)
_INTERPRETERS = {".py": "python3", ".sh": "sh", ".js": "node", ".rb": "ruby", ".pl": "perl"}


def problem(command: str) -> str | None:
    """Why the shell could not start ``command``'s program (``None``: it could, or the
    command is shell syntax this does not judge)."""
    words = command.split()
    while words and _ASSIGNMENT.match(words[0]):  # FOO=1 ./impl
        words.pop(0)
    if not words:
        return None
    program = words[0]
    if program in SHELL_WORDS or _SHELL_SYNTAX.search(program):
        return None
    if "/" not in program:
        return None if shutil.which(program) else f"{program}: not found on PATH"
    path = program  # (relative to this directory: the program's too)
    if not os.path.exists(path):
        return f"{program}: no such file"
    if os.path.isdir(path):
        return f"{program}: is a directory"
    if not os.access(path, os.X_OK):
        interpreter = _INTERPRETERS.get(os.path.splitext(program)[1])
        named = f", or name its interpreter: {shlex.quote(f'{interpreter} {program}')}" if interpreter else ""
        return f"{program}: not executable (chmod +x it{named})"
    return None
