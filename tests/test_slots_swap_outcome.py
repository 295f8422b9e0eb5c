"""A swap that reports itself completed trades the sites (``swap_keeps_production_serving``).
A soundness review's implementation whose swap back moved nothing, and said it completed,
passed every property on the fixed design: a rollback that rolls nothing back."""

from __future__ import annotations

import sys

import attrs

from .cli_runs import run
from .wrapped_reference import WrappedReference


class SwapBackDoesNothing(WrappedReference):
    """slots-pipeline-immutable, but a swap while the second site serves production moves
    nothing and reports itself completed."""

    model, variant, name = "slots", "slots-pipeline-immutable", "a swap back that moves nothing"

    def perform(self, action):
        if action["type"] == "swap" and self.inner.state.production == 1:
            self.inner.state = attrs.evolve(self.inner.state, last_swap="completed")
            return None
        return self.inner.perform(action)


def test_a_swap_back_that_moves_nothing_but_says_it_completed_breaks_swap_keeps_production_serving(
        capsys, monkeypatch):
    monkeypatch.setattr(sys.modules[__name__], "stuck", SwapBackDoesNothing, raising=False)
    status, out, _ = run(capsys, "contract", "--python", f"{__name__}:stuck", "--model", "slots",
                         "--property", "swap_keeps_production_serving", "--examples", "300")
    assert status == 1 and "reports completed but production still routes to site" in out, out

