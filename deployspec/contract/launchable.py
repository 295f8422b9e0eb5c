"""How ``/bin/sh`` starts an ``--exec`` command's program, and whether it could.

A mistyped path (``--exec ./ctl`` for ``./ctl.py``, a build that has not run, a script
without its executable bit) is a usage error: without this check the shell exits 127 or
126 at the first request and the run reports an implementation fault (exit 3), which
reads as a bug of the program rather than of the command line.

Only a command whose first word is a plain word is judged: shell syntax (``cd d && ./x``,
``$HOME/x``, ``~/x``, a builtin such as ``exec``) is left to the shell, whose failure is
then reported as a fault at start, as before.

A simple command runs as ``exec COMMAND``: dash forks even a single command, and a shell
in between holds the program's stdin open (its closing it looked like a hang) and turns
its death by a signal into an exit status 128+N.
"""

from __future__ import annotations

import os
import re
import shlex
import shutil
import subprocess

#: words the shell runs itself (POSIX special and regular builtins, keywords, and the common
#: extensions): never refused, and never put after ``exec`` (which would run /bin/echo for
#: the builtin echo); a builtin not listed is found by asking the shell (``_the_shell_knows``)
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
#: a command holding any of these may be more than one simple command (a list, a pipeline,
#: a subshell, a substitution): it runs as written
_COMPOUND = re.compile(r"[;&|()`\n]|\$\(")
#: by a script's extension, the program that runs it (the hint for a file without its x bit)
_INTERPRETERS = {".py": "python3", ".sh": "sh", ".js": "node", ".rb": "ruby", ".pl": "perl"}


#: what separates words for the shell (not str.split's other whitespace: dash reads
#: ``A=1\u00a0./impl`` as one assignment)
_BLANKS = " \t"


def _words(text: str) -> list[str]:
    return [w for w in re.split(r"[ \t]+", text) if w]


def _plain_program(command: str) -> tuple[list[str], str] | None:
    """The plain assignments before ``command``'s program (``FOO=1 ./impl``) and the
    command from the program on; None where the shell must read where the program starts:
    an assignment whose value has quotes or ``$`` (``OPTS="--a --b" ./impl``), or a first
    word that is a builtin, a keyword, a redirection or other syntax, or nothing."""
    rest, assigned = command.lstrip(_BLANKS), []
    while _ASSIGNMENT.match(rest):
        word = _words(rest)[0]
        if _SHELL_SYNTAX.search(word):
            return None
        assigned.append(word)
        rest = rest[len(word):].lstrip(_BLANKS)
    words = _words(rest)
    if not words or words[0] in SHELL_WORDS or _SHELL_SYNTAX.search(words[0]):
        return None
    return assigned, rest


def problem(command: str) -> str | None:
    """Why the shell could not start ``command``'s program (``None``: it could, or the
    command is shell syntax this does not judge)."""
    plain = _plain_program(command)
    if plain is None:
        return None
    program = _words(plain[1])[0]
    if "/" not in program:
        if shutil.which(program) or _the_shell_knows(program):
            return None
        here = f" (the file in this folder is ./{program})" if os.path.isfile(program) else ""
        return f"{program}: not found on PATH{here}"
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


def _the_shell_knows(word: str) -> bool:
    """Whether ``/bin/sh`` runs ``word`` itself (a builtin or keyword of this shell, dash's
    ``chdir`` say, which no list here keeps up with)."""
    try:
        return subprocess.run(["/bin/sh", "-c", 'command -v -- "$1" >/dev/null', "sh", word],
                              stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                              timeout=10, check=False).returncode == 0
    except (OSError, subprocess.TimeoutExpired):  # no judgement: the shell says it at the run
        return True


def exec_form(command: str) -> str:
    """``command`` as the shell should run it: with ``exec`` before the program if it is
    one simple command whose first word after plain assignments (``FOO=1``, which the
    shell then hands the program: docs/protocol.md teaches them) is the program, a path
    or a name on PATH (not a redirection, a builtin or a keyword), else as written. An
    assignment whose value the shell must read (quotes, ``$``) leaves it as written."""
    plain = None if _COMPOUND.search(command) else _plain_program(command)
    if plain is None:
        return command
    assigned, rest = plain
    first = _words(rest)[0]
    if "/" not in first and not shutil.which(first):
        return command
    return " ".join([*assigned, "exec", rest]) if assigned else f"exec {command}"
