"""Details of the progress said on stderr (deployspec.progress) that the mutation pass found
unpinned: how often a line is said, the bar on a terminal, and what it does not swallow."""

import io
import sys
from types import SimpleNamespace

import pytest

from deployspec.progress import Progress

RESULT = SimpleNamespace(variant="v", property="p", engine="e", verdict="holds", stats={"seconds": 0.1})


@pytest.fixture
def clock(monkeypatch):
    """The seconds progress.py reads, set by the test."""
    now = [0.0]
    monkeypatch.setattr("deployspec.progress.time.perf_counter", lambda: now[0])
    return now


def test_a_search_s_lines_are_every_so_often_from_its_start_and_from_the_last_line(capsys, clock):
    """A log gets a line per ``every`` seconds of each search, not one per layer once the
    first ``every`` seconds are over, nor one at the start of a search that follows a long one."""
    p = Progress(total=2, every=10.0)
    clock[0] = 100.0
    p.start("second")  # after a long first search
    for clock[0], text in [(105.0, "a"), (110.0, "b"), (112.0, "c"), (119.0, "d"), (120.0, "e")]:
        p.searching(text)
    assert capsys.readouterr().err.splitlines() == ["  second: b", "  second: e"]


def test_a_closed_stderr_makes_progress_go_quiet(monkeypatch):
    """Printing to a closed stream raises ValueError (not OSError): the run goes on."""
    stream = io.StringIO()
    monkeypatch.setattr("sys.stderr", stream)
    p = Progress(total=1, every=0.0)
    stream.close()  # (by the time the search has something to say)
    p.searching("depth 1 · 2 states")
    assert p.quiet


def test_an_exception_inside_is_not_swallowed():
    """A failure (or Ctrl-C) within the checks run under progress still ends the run."""
    with pytest.raises(RuntimeError, match="boom"), Progress(total=1):
        raise RuntimeError("boom")


class Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


def test_on_a_terminal_the_bar_shows_the_check_and_is_cleared_without_lines(monkeypatch):
    """The bar names the check running (not "checking" throughout), says no result line
    beside it (the results follow on stdout), and is erased at the end."""
    term = Terminal()
    monkeypatch.setattr("sys.stderr", term)
    with Progress(total=1) as p:
        p.start("capi-safe · p · explore")
        p.searching("depth 3 · 120 states")
        p.done(RESULT)
    drawn = term.getvalue()
    assert "capi-safe · p · explore" in drawn and "depth 3 · 120 states" in drawn
    assert "[1/1]" not in drawn
    assert drawn.endswith("\x1b[2K")  # the last line erased: the bar does not stay above the results


def test_an_unfinished_proof_is_holds_star_as_in_the_table(capsys, clock):
    """A budget-stopped search said 'holds' in a CI log, where the table said 'holds*'."""
    p = Progress(total=2, every=10.0)
    clock[0] = 5.0  # a long run: each line as it comes
    p.done(SimpleNamespace(**{**vars(RESULT), "stats": {"seconds": 1.0, "complete": False}}))
    p.done(SimpleNamespace(**{**vars(RESULT), "stats": {"seconds": 1.0, "complete": True}}))
    assert capsys.readouterr().err.splitlines() == ["[1/2] v · p · e: holds* (1.0s)", "[2/2] v · p · e: holds (1.0s)"]


def test_on_a_terminal_the_bar_counts_the_searches_done(monkeypatch):
    """P07 of the second probe (the bar never advanced): it read 0/2 throughout."""
    term = Terminal()
    monkeypatch.setattr(sys, "stderr", term)
    with Progress(total=2) as p:
        p.start("capi-safe · p · explore")
        p.done(RESULT)
    assert "1/2" in term.getvalue()


def test_a_run_under_a_second_says_only_its_last_line(capsys, clock):
    """P16 of the second probe (any run taken as long): a run of half a second said every line."""
    p = Progress(total=2)
    clock[0] = 0.5
    p.done(RESULT)
    p.done(RESULT)
    assert capsys.readouterr().err == "[2/2] v · p · e: holds (0.1s)\n"
