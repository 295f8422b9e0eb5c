"""Every ``deployspec`` command the documentation shows (README, docs/, the examples'
READMEs) is one the CLI takes: a renamed or removed option fails here, not in a
user's pipeline. Commands are read from shell and YAML code blocks; placeholders
such as FILE parse as the file names they stand for."""

from __future__ import annotations

import re
import shlex
from pathlib import Path

import pytest

from deployspec.cli import build_parser

ROOT = Path(__file__).resolve().parents[1]
DOCS = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md")), *sorted((ROOT / "examples").glob("*/README.md"))]
SHELL = {"sh", "bash", "shell", "console", "yaml"}
#: a command line: an optional prompt, environment settings, a YAML ``run:``, then deployspec
COMMAND = re.compile(r"^(?:\$ |(?:- )?run: |.* && )?(?:[A-Z_]+=\S+ )*deployspec (.*)$")


def code_blocks(text: str):
    """(language, body) of each fenced block, fences matched in order."""
    language, lines = None, []
    for line in text.splitlines():
        if line.startswith("```"):
            if language is None:
                language, lines = line[3:].strip() or "text", []
            else:
                yield language, "\n".join(lines)
                language = None
        elif language is not None:
            lines.append(line)


def documented_commands() -> list[tuple[str, str]]:
    found = []
    for doc in DOCS:
        for language, body in code_blocks(doc.read_text()):
            if language not in SHELL and language != "text":
                continue
            for line in re.sub(r"\\\n\s*", " ", body).splitlines():
                m = COMMAND.match(line.strip())
                if m and (language != "text" or line.startswith("$ ")):  # a transcript's prompt
                    found.append((doc.relative_to(ROOT).as_posix(), m.group(1)))
    return found


COMMANDS = documented_commands()


def argv_of(args: str) -> list[str]:
    """The command's own arguments: up to a redirection, a pipe or a next command."""
    argv = []
    for token in shlex.split(args, comments=True):
        if token in ("|", "||", "&&", ";") or re.match(r"^[0-9]?>", token):
            break
        argv.append(token)
    return argv


def test_the_documentation_shows_commands_of_every_kind():
    """The reader would not notice that the list went empty; this test would."""
    verbs = {argv_of(args)[0] for _, args in COMMANDS}
    assert verbs == {"check", "replay", "show", "variants", "contract", "serve", "--version"}
    assert len(COMMANDS) > 40


@pytest.mark.parametrize(("doc", "args"), COMMANDS, ids=[f"{d}:{a[:40]}" for d, a in COMMANDS])
def test_a_documented_command_is_one_the_cli_takes(doc, args):
    argv = argv_of(args)
    if argv[0] == "--version":  # argparse prints it and exits 0; any other status is an error
        with pytest.raises(SystemExit) as stop:
            build_parser().parse_args(argv)
        assert stop.value.code == 0
        return
    build_parser().parse_args(argv)  # a usage error raises, naming the option
