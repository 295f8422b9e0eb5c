"""The machine's ``wait`` rule: users stay away while the platform takes some of its own
steps, then the example goes on. States the platform reaches only after several of its
steps (a canary's pause) are reached with steps left to act on them."""

from __future__ import annotations

from deployspec.contract import harness
from deployspec.contract.examples import capi_safe
from deployspec.models import get_model


class NeverContinues:
    """capi-safe, but a paused canary is never continued: ``continue_`` is refused."""

    def __init__(self):
        self.inner = capi_safe()

    def reset(self, config):
        self.inner.reset(config)

    def perform(self, action):
        if action["type"] == "continue_":
            return "continuing a canary is not supported"
        return self.inner.perform(action)

    def observe(self):
        return self.inner.observe()


def test_a_controller_that_never_continues_a_canary_does_not_conform():
    """Without the rule the search reached a PAUSED canary once in a run of 250 examples
    and this controller conformed in 7 of 10 seeds (100 examples each); seed 1 among them."""
    run = harness.run(get_model("capi"), harness.Target("python", f"{__name__}:NeverContinues"),
                      reference="capi-safe", properties=["conforms_to_capi-safe"], max_examples=100, seed=1,
                      known=False)
    (r,) = run.results
    assert r.verdict == "violated", r.stats
    steps = r.trace["steps"]
    assert steps[-1]["action"]["type"] == "continue_"
    assert any(d["state"] == "PAUSED" for d in steps[-2]["observation"]["deployments"])  # the step before


def test_a_trace_holds_the_platforms_steps_not_a_wait():
    """What ``wait`` did is recorded as the actions the platform took (``runtime``, ``tick``)."""
    run = harness.run(get_model("capi"), harness.Target("python", "deployspec.contract.examples:capi_2022"),
                      properties=["app_stays_available"], max_examples=30, seed=0, known=False)
    (r,) = run.results
    assert r.verdict == "violated"
    kinds = {s["action"]["type"] for s in r.trace["steps"]}
    assert kinds <= set(get_model("capi").vocabulary) and "wait" not in kinds
