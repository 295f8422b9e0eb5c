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
from .test_variant_plugins import EVOLVED

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
    assert SAID.fullmatch(result["message"]), result["message"]
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
