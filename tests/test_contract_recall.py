"""Answers recalled in a contract run (deployspec/contract/recall.py): a run of steps the
implementation answered once is not asked again, and it is never asked more than without recall."""

from __future__ import annotations

import sys

from hypothesis import given, settings
from hypothesis import strategies as st

from deployspec.adapter import ReferenceAdapter
from deployspec.cli import main
from deployspec.contract.guard import FaultBox, GuardedAdapter
from deployspec.contract.recall import Answers, RecallingAdapter
from deployspec.models import get_model

MODEL = get_model("capi")
CONFIG = MODEL.default_config()


class Counting(ReferenceAdapter):
    """capi-safe, counting what it is asked."""

    def __init__(self):
        super().__init__(MODEL, MODEL.variant("capi-safe"))
        self.calls = 0

    def reset(self, config):
        self.calls += 1
        super().reset(config)

    def perform(self, action):
        self.calls += 1
        return super().perform(action)


def _play(adapter, picks: list[int]) -> list:
    """An example: reset, then each pick chooses among the actions the model offers there."""
    adapter.reset(CONFIG)
    seen = [adapter.observe()]
    for pick in picks:
        offered = MODEL.candidate_actions(seen[-1], CONFIG)
        reason = adapter.perform(offered[pick % len(offered)])
        seen += [reason, adapter.observe()]
    return seen


@settings(max_examples=60, deadline=None)
@given(st.lists(st.lists(st.integers(0, 30), max_size=12), min_size=1, max_size=8),
       st.lists(st.integers(0, 7), max_size=8))
def test_recalled_answers_are_the_implementations_and_never_cost_more(examples, others):
    """Each example gets the answers the implementation gives (compared with a fresh run), and
    the implementation is asked at most as many resets and steps as without recall, however
    examples repeat each other's prefixes and whoever else drives it in between (``others``: an
    example by an adapter that asks every step, as the sweep and the shortening do)."""
    inner, box, took = Counting(), FaultBox(), {}
    answers = Answers(lambda checking: GuardedAdapter(inner, box, checking, took), took)
    without = 0
    for i, picks in enumerate(examples):
        got = _play(RecallingAdapter(answers, "p"), picks)
        assert got == _play(ReferenceAdapter(MODEL, MODEL.variant("capi-safe")), picks)
        without += 1 + len(picks)
        if i < len(others) and others[i] % 2:
            answers.forget_standing()
            _play(GuardedAdapter(inner, box, "p", took), examples[others[i] % len(examples)])
            without += 1 + len(examples[others[i] % len(examples)])
    assert inner.calls <= without
    assert answers.asked + answers.recalled >= sum(1 + len(p) for p in examples)


def test_a_repeated_example_is_recalled_and_still_counts_what_took_effect():
    inner, box, took = Counting(), FaultBox(), {}
    answers = Answers(lambda checking: GuardedAdapter(inner, box, checking, took), took)
    picks = [0, 0, 1, 2, 0]
    _play(RecallingAdapter(answers, "p"), picks)
    asked, counted = inner.calls, dict(took)
    assert counted, "the first run changed something"
    _play(RecallingAdapter(answers, "q"), picks)
    assert inner.calls == asked  # not asked again
    assert took == {kind: 2 * n for kind, n in counted.items()}  # a check's vacuity note reads these
    _play(RecallingAdapter(answers, "q"), picks + [0])  # one step more: asked from where it stands
    assert inner.calls == asked + 1


def test_a_contract_run_asks_each_example_once_over_its_checks(tmp_path, monkeypatch, capsys):
    """Every check searches with the same seed: without recall the second check asked the
    implementation all the steps the first did again; now it asks none of them."""
    (tmp_path / "counted_impl.py").write_text(
        "from deployspec.contract.examples import ReferenceImplementation\n"
        "class Counted(ReferenceImplementation):\n"
        "    performs = 0\n"
        "    def perform(self, action):\n"
        "        Counted.performs += 1\n"
        "        return super().perform(action)\n"
        "def make():\n"
        "    return Counted('capi', 'capi-safe')\n")
    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(sys, "path", list(sys.path))
    runs = {}
    for props in (["single_active_deployment"], ["single_active_deployment", "app_stays_available"]):
        args = ["contract", "--python", "counted_impl:make", "--model", "capi", "--examples", "40", "--seed", "3"]
        for p in props:
            args += ["--property", p]
        assert main(args + ["--json"]) == 0
        capsys.readouterr()
        module = sys.modules.pop("counted_impl")
        runs[len(props)] = module.Counted.performs
    assert runs[1] > 200  # the first check's examples reached the implementation
    assert runs[2] == runs[1]  # the second check's same examples did not, not even once


def test_an_adapter_that_asks_every_step_moves_the_implementation_away(monkeypatch, tmp_path):
    """The sweep, a shortening and a replay drive the implementation past recall; the next
    search step asked of it must first bring it back (a reset and the steps to where it was)."""
    from deployspec.contract.harness import Connection, Target

    conn = Connection(Target("python", "deployspec.contract.examples:capi_safe"), MODEL)
    with conn:
        picks = [0, 0, 1, 2]
        first = _play(conn.recalling_adapter("p"), picks)
        _play(conn.adapter("p"), [0, 0, 0, 0, 0, 0])  # elsewhere now
        longer = _play(conn.recalling_adapter("p"), picks + [1, 0])
    assert longer[:len(first)] == first
    assert longer == _play(ReferenceAdapter(MODEL, MODEL.variant("capi-safe")), picks + [1, 0])
