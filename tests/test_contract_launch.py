"""A program ``--exec`` names that the shell could not start is a usage error (exit 2),
said before the run, not an implementation fault at its first request (exit 3)."""

from __future__ import annotations

import os
import shutil
import sys

import pytest

from deployspec.cli import main
from deployspec.contract import launchable

TRACE = os.path.join(os.path.dirname(__file__), "..", "counterexamples", "capi",
                     "capi-2022--app_stays_available--a940739cf1.json")


@pytest.fixture
def folder(tmp_path, monkeypatch):
    """A folder with a runnable program, a script without its x bit and a subfolder."""
    monkeypatch.chdir(tmp_path)
    (tmp_path / "impl").write_text("#!/bin/sh\nexit 0\n")
    (tmp_path / "impl").chmod(0o755)
    (tmp_path / "impl.py").write_text("print('hi')\n")
    (tmp_path / "impl.py").chmod(0o644)
    (tmp_path / "build").mkdir()
    return tmp_path


@pytest.mark.parametrize("command, why", [
    ("./missing --serve", "./missing: no such file"),
    ("FOO=1 BAR=2 ./missing", "./missing: no such file"),
    ("./build", "./build: is a directory"),
    ("./impl.py --serve", "./impl.py: not executable (chmod +x it, or name its interpreter: 'python3 ./impl.py')"),
    ("no-such-program-zz --serve", "no-such-program-zz: not found on PATH"),
    # (a user trial: the program in this folder, named as a shell would look it up on PATH)
    ("impl.py --serve", "impl.py: not found on PATH (the file in this folder is ./impl.py)"),
])
def test_a_program_the_shell_cannot_start_is_named(folder, command, why):
    assert launchable.problem(command) == why


@pytest.mark.parametrize("command", [
    "./impl --serve", f"{sys.executable} ./impl.py", "python3 x.py" if shutil.which("python3") else "sh x",
    "FOO=1 ./impl",
    # shell syntax is the shell's to judge: a builtin, a folder change, expansions, quotes
    "exec ./missing", "cd build && ./missing", "$HOME/missing", "~/missing", "'./missing'", "./miss\\ ing",
    "(./missing)", "./missing;", "  ", "# ./missing",
    # an assignment whose value the shell reads (quotes, substitutions): where it ends is the shell's
    'OPTS="--a --b --c" ./impl', "FOO=$(echo a b) ./impl", "FOO=a\\ b ./impl",
    # a builtin of this machine's /bin/sh that no list names (dash's chdir)
    "chdir build && ./missing" if os.path.realpath("/bin/sh").endswith("dash") else "cd build && ./missing",
])
def test_what_the_shell_can_start_or_must_judge_is_not_refused(folder, command):
    assert launchable.problem(command) is None


def test_contract_refuses_it_before_the_run(folder, capsys):
    status = main(["contract", "--exec", "./missing --serve", "--model", "capi", "--examples", "1"])
    out, err = capsys.readouterr()
    assert status == 2
    assert err == "deployspec: error: --exec './missing --serve': ./missing: no such file\n"
    assert out == ""  # no table of checks not run


def test_replay_refuses_it_before_the_replay(folder, capsys):
    status = main(["replay", TRACE, "--exec", "./impl.py"])
    out, err = capsys.readouterr()
    assert status == 2 and out == ""
    assert err.startswith("deployspec: error: --exec './impl.py': ./impl.py: not executable (chmod +x it")


def test_a_program_that_starts_and_fails_is_still_a_fault(folder, capsys):
    """The check is only of starting: a program that starts and exits is the implementation's fault."""
    status = main(["contract", "--exec", "./impl --serve", "--model", "capi", "--examples", "1"])
    _, err = capsys.readouterr()
    assert status == 3
    assert "the implementation exited with status 0 before replying to reset" in err


@pytest.mark.parametrize("command, runs", [
    ("./impl --serve", "exec ./impl --serve"),
    ("  ./impl 2>log", "exec   ./impl 2>log"),
    # more than one simple command, an assignment, a builtin or keyword: as written
    ("./impl; echo done", None), ("./impl | tee log", None), ("./impl && true", None),
    ("(./impl)", None), ("./impl `x`", None), ("./impl $(x)", None), ("./impl\necho", None),
    ("exec ./impl", None),
    # plain assignments stay before exec, which hands them to the program (as docs/protocol.md
    # teaches them: the shell stayed in between, holding stdin and turning a signal into 139)
    ("FOO=1 ./impl", "FOO=1 exec ./impl"), ("A=1  B=x/y ./impl --serve", "A=1 B=x/y exec ./impl --serve"),
    ('OPTS="--a --b" ./impl', None), ("A=1\u00a0./impl", None), ("A=1\x0c./impl", None), ("FOO=$HOME/x ./impl", None), ("FOO=1", None), ("FOO=1 cd x", None), ("cd build", None), ("if true; then ./impl; fi", None),
    ("# ./impl", None), ("", None),
    # a redirection first: what follows may be an assignment, which exec would take for the program
    ("2>/dev/null FOO=1 ./impl", None), ("no-such-program-zz --serve", None),
])
def test_a_simple_command_runs_as_the_shells_exec(command, runs):
    assert launchable.exec_form(command) == (command if runs is None else runs)


@pytest.mark.parametrize("prefix, unset", [("", "segv"), ("BUG=segv ", "none")])
def test_a_program_killed_by_a_signal_is_said_so(folder, capsys, prefix, unset):
    """Not 'exited with status 139', the number a shell in between turned the signal into;
    also after an assignment, which the program still gets (it segfaults only with it)."""
    (folder / "segv.py").write_text(f"import os, signal\nif os.environ.get('BUG', '{unset}') == 'segv':\n"
                                    "    os.kill(os.getpid(), signal.SIGSEGV)\n")
    status = main(["contract", "--exec", f"{prefix}{sys.executable} segv.py", "--model", "capi", "--examples", "1"])
    _, err = capsys.readouterr()
    assert status == 3
    assert "the implementation was killed by signal 11 before replying to reset" in err
