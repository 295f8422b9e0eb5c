"""Behaviours of the Z3 check of the selection rule and of the state machines that a
mutation pass over ``spec/selection/``, ``engines/z3_engine.py``, ``engines/product.py``
and ``stateful_tests/machine.py`` found unpinned (62 mutants, 55 killed, 2 equivalent,
1 in dead code): each test was written against a hand-made mutant the rest of the suite
let through; its docstring names it."""

from __future__ import annotations

import pytest
import z3
from deployspec.reference.capi.actions import Push
from deployspec.spec import selection as sel
from deployspec.spec.core import state_property
from deployspec.stateful_tests.machine import build_machine
from hypothesis.errors import UnsatisfiedAssumption

from deployspec.engines import z3_confirm, z3_engine
from deployspec.models import get_model

from .helpers import Recorded

CAPI = get_model("capi")
SAFE_CONFIG = CAPI.default_config(CAPI.variant("capi-safe"))


@state_property("capi")
def always_broken(obs):
    """Breaks after every step, with no cause named."""
    return "broken"


@pytest.mark.filterwarnings("ignore::hypothesis.errors.HypothesisDeprecationWarning")  # reject() outside a run
def test_a_step_that_breaks_a_property_a_known_way_ends_the_example():
    """A step whose violation is one already found (``skip``) mutes the monitor; the
    machine then rejects the example instead of driving the platform on, since nothing
    new can come of it (mutant M1: the ``reject()`` after a muted step left out)."""
    m = build_machine(CAPI, Recorded, (always_broken,), SAFE_CONFIG,
                      skip=frozenset({("always_broken", None)}))()
    with pytest.raises(UnsatisfiedAssumption):
        m.do(Push(1))


def test_the_probes_are_computed_afresh_after_every_step():
    """The probe actions offered after a step are those of the new observation, not the
    ones cached before the step (mutant M7: ``do`` resets only the verbs' offers)."""
    m = build_machine(CAPI, Recorded, (), SAFE_CONFIG, probes=True)()
    before = m.probed()
    m.push(pick=0)
    after = m.probed()
    expected = {}
    for a in CAPI.probe_actions(m.session.obs, SAFE_CONFIG):
        expected.setdefault(a.kind, []).append(a)
    assert after == expected and after != before


def test_every_view_the_z3_engine_tries_to_confirm_shows_the_property_s_symptom(monkeypatch):
    """For a spec property with a symptom (``sel.SYMPTOMS``: a necessary condition for a
    cancel step to break it), the engine looks only for symbolic counterexamples that show
    it: a view without it cannot be confirmed and only spends the budget (mutant Z8: the
    symptom not passed to ``Problem.minimal``). The rule here keeps the newest running
    process: it breaks survivor_not_newer, but never takes the app down."""
    tried = []

    def confirm(model, variant, view, prop, **kw):
        tried.append(view)
        return z3_confirm.Confirmation(view, prop.name, None, {}, why="not searched (test)")

    monkeypatch.setattr(z3_engine, "confirm", confirm)
    monkeypatch.setattr(z3_engine.CancelViews, "of", classmethod(lambda cls, *a, **kw: None))
    newest_running = lambda s: sel._newest(s, lambda i: s.running[i] > 0, z3.IntVal(sel.RETRY))
    safe = sel.VARIANTS["capi-safe"]
    encoding = sel.VariantEncoding(sel.RuleEncoding(safe.rule.rule, newest_running), safe.family)
    prop = CAPI.property("app_stays_available")
    r = z3_engine.search(CAPI, "capi-safe", prop, budget=60, seed=0, out_dir=None,
                         processes=4, deployments=3, encodings={"capi-safe": encoding})
    assert r.stats["selection"]["survivor_not_newer"]["verdict"] == "violated"
    assert r.verdict == "unconfirmed" and tried == []


def test_a_view_s_owner_of_a_process_two_deployments_name_is_the_newer_one():
    """A state rebuilt from an observation reuses the id of a destroyed process
    (``next_process_id`` = highest live id + 1), so two deployments can name the same
    deploying process; the view, like ``CapiState.deployment_of``, gives it to the newer
    one (mutant V2: the older one won)."""
    from deployspec.reference.capi.observe import from_observation

    dep = {"droplet": 0, "previous_droplet": 0, "owic": 1, "deploying_process": 1}
    state = from_observation({
        "app": {"droplet": 0, "started": True}, "droplets": [{"id": 0, "healthy": True}],
        "processes": [{"id": 0, "droplet": 0, "instances": ["RUNNING"]},
                      {"id": 1, "droplet": 0, "instances": ["STARTING"]}],
        "deployments": [
            {"id": 0, "state": "DEPLOYED", "status_value": "FINALIZED", "status_reason": "SUPERSEDED", **dep},
            {"id": 1, "state": "CANCELING", "status_value": "ACTIVE", "status_reason": "CANCELING", **dep}]})
    view = sel.SelectionView.of(state, state.deployments[1], True)
    assert view.owners == (sel.PUSHED, state.deployment_of(1).id) == (sel.PUSHED, 1)
