"""A rule handed in that never returns is stopped and named (``deployspec.rule_watch``):
it had held ``check`` past ``--budget`` and ``replay`` for ever, saying nothing."""

import json
import re
import sys
from pathlib import Path

import pytest

from deployspec import rule_watch
from deployspec.replay import replay

from .cli_runs import run
from .designs_handed_in import EVOLVED
from .helpers import without_steps

#: a select_prior that loops, also through an ``except Exception`` (lines 2-7), and counts its calls
LOOPS = ("CALLS = []\ndef prior(state, canceling, reports):\n    CALLS.append(1)\n    while True:\n"
         "        try:\n            pass\n        except Exception:\n            pass\n")
SAID = re.compile(r"variant loops \(DEPLOYSPEC_VARIANTS module loops\): its rule select_prior \(at loops\.py:2\) "
                  r"did not return within 0\.5 s \(stopped at loops\.py:[4-8]\)")
#: a finding of capi-current that cancels onto a prior process (select_prior runs)
CANCELS = next(Path(__file__).parent.parent.glob("counterexamples/capi/capi-current--cancel_restores_last_good--*.json"))


@pytest.fixture
def loops(hand_in, monkeypatch):
    monkeypatch.setattr(rule_watch, "LIMIT", 0.5)
    monkeypatch.setattr(rule_watch, "_EVERY", 0.05)
    monkeypatch.delitem(sys.modules, "loops", raising=False)  # its CALLS afresh
    hand_in("loops", LOOPS + EVOLVED.format("name='loops', violates_beyond={}, select_prior=prior"))
    import loops

    return loops.CALLS


@pytest.mark.parametrize("engine", ["explore", "hypothesis"])
def test_a_rule_that_loops_is_an_error_naming_it_and_the_line_it_looped_on(capsys, loops, engine):
    status, out, _ = run(capsys, "check", "--model", "capi", "--variant", "loops", "--engine", engine,
                         "--property", "cancel_restores_last_good", "--json")
    (result,) = json.loads(out)["results"]
    assert (status, result["verdict"]) == (1, "error")
    assert SAID.fullmatch(without_steps(result["message"])), result["message"]
    assert result["stats"]["seconds"] >= 0.5  # the time it ran (the progress line said 0.0s)
    # the random search did not try it again to shrink it (each try another LIMIT seconds)
    assert len(loops) == 1


def test_replaying_on_a_rule_that_loops_is_one_line_and_status_2(capsys, loops):
    status, out, err = run(capsys, "replay", str(CANCELS), "--variant", "loops")
    assert status == 2 and out == ""
    (line,) = err.splitlines()
    assert line.startswith(f"deployspec: error: {CANCELS}: ") and SAID.search(line), line


def test_a_rule_that_returns_in_time_is_not_stopped(monkeypatch, hand_in):
    """Only a call that outlives the limit is stopped; the next call is timed afresh."""
    monkeypatch.setattr(rule_watch, "LIMIT", 0.5)
    monkeypatch.setattr(rule_watch, "_EVERY", 0.05)
    hand_in("slow", "import time\nfrom deployspec.reference.capi import rules\n"
            "def prior(state, canceling, reports):\n    time.sleep(0.3)\n"
            "    return rules.running_interim_or_oldest(state, canceling, reports)\n"
            + EVOLVED.format("name='slow', violates_beyond={}, select_prior=prior"))

    trace = json.loads(CANCELS.read_text())
    for _ in range(2):  # select_prior called at least twice, 0.3 s each
        outcome = replay(trace, "slow")
    assert outcome.violation is not None  # as on capi-current: slow, not stopped


def test_a_rule_that_swallows_every_interruption_ends_the_program_with_one_line(monkeypatch):
    """``except BaseException`` inside its loop (or Python blocked where it cannot raise):
    the raise never gets out of the rule, and Ctrl-C's would not either. In the deployspec
    program the watcher then ends the process GRACE seconds after its first raise, one line
    and status 2, as for an implementation that will not let go. Here a call blocked in a
    wait stands for it (no asynchronous exception is delivered there), and the ending,
    recorded, lets it go."""
    import threading

    from deployspec.contract import last_resort

    monkeypatch.setattr(rule_watch, "LIMIT", 0.3)
    monkeypatch.setattr(rule_watch, "_EVERY", 0.05)
    monkeypatch.setattr(last_resort, "GRACE", 0.3)
    monkeypatch.setattr(last_resort, "own_process", lambda: True)
    ended, let_go, seen = [], threading.Event(), []
    monkeypatch.setattr(last_resort, "end", lambda line, status: ended.append((line, status)) or let_go.set())

    def a_call_that_will_not_let_go():
        this = rule_watch.Call(sys._getframe(), "select_prior (at mine.py:4)",
                               "variant mine (DEPLOYSPEC_VARIANTS module mine): ")
        try:
            rule_watch.enter(threading.get_ident(), this)
            let_go.wait(10)
            for _ in range(1000):  # the RuleHung raised meanwhile arrives once it runs again
                pass
        except rule_watch.RuleHung:
            seen.append("raised")
        finally:
            with rule_watch.lock:
                this.left = True
                rule_watch.forget(threading.get_ident(), this)

    thread = threading.Thread(target=a_call_that_will_not_let_go)
    thread.start()
    thread.join(10)
    said = ("error: variant mine (DEPLOYSPEC_VARIANTS module mine): its rule select_prior (at mine.py:4) did not return within 0.3 s and could not be interrupted "
            "(it swallows every exception, or waits in a system call)")
    assert ended and set(ended) == {(said, 2)}
    assert seen == ["raised"]


def test_the_limit_and_the_grace_are_counted_in_the_watcher_s_looks(monkeypatch):
    """Read off the clock, the first look after a stop (Ctrl-Z, then fg) found a rule that
    began just before it "running" for the whole stop, and stopped it as hung. The first
    look, at any moment after the call began, is not counted."""
    from deployspec.contract import last_resort

    monkeypatch.setattr(rule_watch, "LIMIT", 1.0)
    monkeypatch.setattr(rule_watch, "_EVERY", 0.5)
    monkeypatch.setattr(last_resort, "GRACE", 1.5)
    this = rule_watch.Call(sys._getframe(), "select_prior (at mine.py:4)")
    said = [rule_watch._due(this) for _ in range(8)]
    assert said == [None, None, "raise", "raise", "raise", "end", "end", "end"]


def test_no_frame_of_the_caller_is_kept_once_the_rule_returned(monkeypatch):
    """The watcher held every thread's stack from one look to the next: a test's variables
    outlived it (a multiprocessing Manager it made stayed alive, failing the next tests'
    check that no process is left behind)."""
    import time
    import weakref

    from deployspec.rule_results import _wrapped

    monkeypatch.setattr(rule_watch, "_EVERY", 0.005)
    rule = _wrapped("CapiVariant.select_prior", lambda state, canceling, reports: 1, (int,))

    class Token:
        pass

    def caller():
        token = Token()
        assert rule(None, None, None) == 1
        until = time.monotonic() + 0.1
        while time.monotonic() < until:  # the watcher would look meanwhile, were a call running
            pass
        return weakref.ref(token)

    assert caller()() is None
    assert rule_watch.running == {}  # forgotten when it returned, not at the watcher's next look


def test_python_runs_on_as_ever_after_a_rule_was_stopped(capsys, loops):
    """Taking back a RuleHung with SetAsyncExc(id, NULL), none pending, left CPython 3.11's
    eval breaker set for good: the next Hypothesis search in the process spun at 100 % CPU
    (a whole test run hung)."""
    import threading

    from hypothesis import find, settings
    from hypothesis import strategies as st

    run(capsys, "check", "--model", "capi", "--variant", "loops", "--engine", "explore",
        "--property", "cancel_restores_last_good", "--json")
    assert len(loops) == 1  # it was stopped
    found = []
    search = threading.Thread(target=lambda: found.append(
        find(st.integers(0, 100), lambda x: x >= 63, settings=settings(database=None, max_examples=200))),
        daemon=True)
    search.start()
    search.join(30)
    assert found == [63]
