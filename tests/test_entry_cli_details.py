"""Details of the command line's argument checks and of main()'s exit statuses that a
mutation pass over deployspec.cli found unpinned. The commands are stood in for: each
test makes one raise what a real run can meet."""

from __future__ import annotations

import argparse
import errno
import signal

import pytest

from deployspec import argtypes, cli, interruption, streams
from deployspec.models import UsageError

# --- argument checks -----------------------------------------------------------------


@pytest.mark.parametrize("text", ["0", "-1", "86400", "1e9", "nan", "inf", "-inf"])
def test_a_budget_outside_zero_to_a_day_is_refused(text):
    """--budget 0, a day or more, or nan (which compares false to everything) would never end or never start."""
    with pytest.raises(argparse.ArgumentTypeError, match="more than 0 and less than 86400"):
        argtypes.seconds(text)


@pytest.mark.parametrize("text, value", [("0.001", 0.001), ("86399.5", 86399.5), ("2", 2.0)])
def test_a_budget_inside_the_range_is_taken(text, value):
    """The edges just inside the range are valid budgets."""
    assert argtypes.seconds(text) == value


@pytest.mark.parametrize("text, bound", [
    ("start=release", ("start", "release")), ("max_in_flight=[1,2]", ("max_in_flight", [1, 2])),
    ("name=a_b-c", ("name", "a_b-c")), ("a=-0.5", ("a", -0.5)),
])
def test_a_bound_is_a_json_value_or_a_bare_word(text, bound):
    """NAME=VALUE gives JSON, or a bare word as a string (start=release)."""
    assert argtypes.bound(text) == bound


@pytest.mark.parametrize("text, message", [
    ("=3", "expected NAME=VALUE"), ("max", "expected NAME=VALUE"),
    ("start=release now", "not a JSON value"), ("start=a.b", "not a JSON value"),
])
def test_a_bound_without_a_name_or_with_a_bad_word_is_refused(text, message):
    """A value that is neither JSON nor one bare word is a typo, not a string to search with."""
    with pytest.raises(argparse.ArgumentTypeError, match=message):
        argtypes.bound(text)


def test_quoted_text_is_whole_up_to_the_limit_and_cut_past_it():
    """An error quotes a value of up to 60 characters whole; longer is cut at 60 and its length said."""
    assert argtypes.quoted_arg("x" * 60) == repr("x" * 60)
    assert argtypes.quoted_arg("x" * 61) == repr("x" * 60) + "... (61 characters)"


def test_integer_bounds_are_inclusive():
    """--jobs 1 and --jobs 64 are allowed; 0 and 65 are not."""
    jobs = argtypes.int_between(1, 64)
    assert (jobs("1"), jobs("64"), argtypes.int_at_least(0)("0")) == (1, 64, 0)
    with pytest.raises(argparse.ArgumentTypeError, match="at most 64, got 65"):
        jobs("65")
    with pytest.raises(argparse.ArgumentTypeError, match=">= 1, got 0"):
        jobs("0")


@pytest.mark.parametrize("text", ["+" + "9" * 5000, " " + "9" * 5000, "-" + "9" * 5000])
def test_a_signed_or_spaced_huge_integer_is_too_large_not_malformed(text):
    """int() takes signs and spaces: past its 4,300 digits the number is too large, not 'not an integer'."""
    with pytest.raises(argparse.ArgumentTypeError, match="too large"):
        argtypes.int_at_least(0)(text)


# --- main's exit statuses ------------------------------------------------------------


@pytest.fixture
def command(monkeypatch):
    """Make ``check`` and ``variants`` raise ``exc``; the real stdout is never replaced."""
    monkeypatch.setattr(interruption, "by", None)
    monkeypatch.setattr(streams, "drop_stdout", lambda: None)

    def raising(exc):
        def cmd(args):
            raise exc
        monkeypatch.setitem(cli.COMMANDS, "check", cmd)
        monkeypatch.setitem(cli.COMMANDS, "variants", cmd)
        monkeypatch.setitem(cli.COMMANDS, "serve", cmd)

    return raising


@pytest.mark.parametrize("exc, which, status, said", [
    (UsageError("no"), "variants", 2, "error: no"),
    (BrokenPipeError(errno.EPIPE, "pipe"), "check", 141, None),
    (BrokenPipeError(errno.EPIPE, "pipe"), "variants", 0, None),
    (OSError(errno.ENOMEM, "no memory"), "variants", 1, "error: out of memory"),
    (OSError(errno.EMFILE, "Too many open files"), "check", 2, "out of system resources: Too many open files"),
    (OSError(errno.ENFILE, "Too many open files in system"), "check", 2, "out of system resources"),
    (OSError(errno.EACCES, "Permission denied", "out.svg"), "variants", 2, "error: out.svg: Permission denied"),
    (OSError(errno.ENOSPC, "No space left on device"), "variants", 2, "cannot write the output: No space left"),
    (MemoryError(), "check", 1, "error: out of memory (tighter bounds"),
    (SystemError("bad call"), "variants", 1, "the interpreter failed (bad call; out of memory?)"),
])
def test_each_failure_ends_with_its_status(capsys, command, exc, which, status, said):
    """Scripts and CI tell a verdict (1), a usage or input error (2) and a cut pipe (141) apart by the status."""
    command(exc)
    assert cli.main([which]) == status
    err = capsys.readouterr().err
    assert (said in err and err.count("\n") == 1) if said else err == ""


def test_a_missing_current_folder_is_said_as_such(capsys, command, monkeypatch):
    """A FileNotFoundError without a file name, in a deleted folder, names the folder, not the output."""
    command(FileNotFoundError(errno.ENOENT, "No such file or directory"))
    monkeypatch.setattr(cli, "_cwd_exists", lambda: False)
    assert cli.main(["variants"]) == 2
    assert "the current folder no longer exists" in capsys.readouterr().err


def test_an_interruption_in_a_host_s_process_is_the_host_s(capsys, command, monkeypatch):
    """In pytest or a user's program, Ctrl-C is re-raised, not turned into a status the host carries on after."""
    command(KeyboardInterrupt())
    monkeypatch.setattr(interruption, "OWN_PROCESS", False)
    with pytest.raises(KeyboardInterrupt):
        cli.main(["variants"])
    monkeypatch.setattr(interruption, "OWN_PROCESS", True)
    assert cli.main(["variants"]) == 130
    assert capsys.readouterr().err.count("interrupted") == 2


@pytest.mark.parametrize("held, argv, status", [
    (signal.SIGTERM, ["variants"], 130), (signal.SIGINT, ["variants"], 130),
    (signal.SIGINT, ["serve", "--model", "capi", "--variant", "capi-safe"], 130),
    (signal.SIGTERM, ["serve", "--model", "capi", "--variant", "capi-safe"], 0),
])
def test_a_signal_held_while_loading_interrupts_the_command_once_it_is_read(capsys, command, monkeypatch,
                                                                            held, argv, status):
    """A CI timeout during start-up is "interrupted", 130 (serve's SIGTERM is its normal stop), and no command runs."""
    command(AssertionError("the command ran"))
    monkeypatch.setattr(interruption, "OWN_PROCESS", True)
    monkeypatch.setattr(interruption, "HELD", ([held], {}, 0.0))
    assert cli.main(argv) == status
    assert ("interrupted" in capsys.readouterr().err) == (status == 130)


@pytest.mark.parametrize("text", ["--5", "+-5", "²", "1.5"])
def test_a_malformed_integer_is_not_called_too_large(text):
    """--seed=--5 is a typo to fix, not a number too large: the message must say which."""
    with pytest.raises(argparse.ArgumentTypeError, match="not an integer"):
        argtypes.int_at_least(0)(text)
