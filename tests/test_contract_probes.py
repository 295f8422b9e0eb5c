"""A contract run probes the actions the search's candidates leave out (``model.probe_actions``).

``candidate_actions`` leaves out what every reference design refuses in the observed state,
or what changes nothing there: for exploring the reference those are stutters. An
implementation may still get them wrong, and ``conforms_to_<reference>`` promises that it
accepts exactly what the reference accepts; so the contract machine has one more rule that
tries them (tests/test_probe_actions.py pins which actions they are). Each fake below
(``contract_fakes:NAME``, most of them in ``fakes_probed.py``) differs from the reference on
one probed kind only:

* ``accepts_refused_KIND`` answers "accepted" (and does nothing) where the reference refuses;
* ``refuses_no_op_KIND`` refuses where the reference accepts and nothing changes;
* ``scales_while_deploying`` scales while a deployment progresses, ``ignores_failed_steps``
  runs the updater step a ``tick(failed=…)`` fails.

The reference variants themselves, probed the same way, conform.
"""

from __future__ import annotations

import re
import shlex
import sys
from collections import Counter
from pathlib import Path
from typing import ClassVar

import pytest

from deployspec.contract import harness, recorded
from deployspec.contract.examples import ReferenceImplementation
from deployspec.models import get_model

REJECTS = r"step \d+ \(.*\): {ref} rejects it \(.+\), the implementation accepted it"
NO_OP_REFUSED = r"step \d+ \(.*\): {ref} accepts it, the implementation rejected it \(nothing to do\)"
DIFFERS = r"after step \d+ \(.*\) the observation differs from {ref}: .+"

#: factory, model, reference, the kind probed at the diverging step, the message's form, seed
#: (100 examples each; the seed is one of the ~9 in 10 that find it that soon; what breaks before
#: the push is found by the sweep of the initial state at any seed)
CAUGHT = [
    ("accepts_refused_push", "capi", "push", REJECTS, 0),
    ("accepts_refused_stage", "capi", "stage", REJECTS, 0),  # before the push
    ("accepts_refused_deploy", "capi", "deploy", REJECTS, 0),  # before the push
    ("accepts_refused_tick", "capi", "tick", REJECTS, 0),  # before the push
    ("accepts_refused_cancel", "capi", "cancel", REJECTS, 0),  # nothing to cancel
    ("accepts_refused_continue_", "capi", "continue_", REJECTS, 0),  # nothing PAUSED
    ("accepts_refused_runtime", "capi", "runtime", REJECTS, 0),  # no STARTING instance
    ("scales_while_deploying", "capi", "scale", REJECTS, 1),
    ("ignores_failed_steps", "capi", "tick", DIFFERS, 0),  # the only active deployment's step
    ("refuses_no_op_cancel", "capi", "cancel", NO_OP_REFUSED, 0),  # canceling again
    ("refuses_no_op_scale", "capi", "scale", NO_OP_REFUSED, 0),  # to the count the web process has
    ("slots_accepts_refused_validate", "slots", "validate", REJECTS, 0),
    ("slots_accepts_refused_deliver_webhook", "slots", "deliver_webhook", REJECTS, 0),
    ("slots_accepts_refused_crash_retry", "slots", "crash_retry", REJECTS, 0),
    ("slots_refuses_no_op_restart", "slots", "restart", NO_OP_REFUSED, 0),
    ("slots_refuses_no_op_recycle", "slots", "recycle", NO_OP_REFUSED, 0),
    ("slots_refuses_no_op_crash_retry", "slots", "crash_retry", NO_OP_REFUSED, 4),  # seed 0: 11 s, 4: 4 s
]
REFERENCE = {"capi": "capi-safe", "slots": "slots-pipeline-immutable"}


@pytest.fixture
def beside_the_fakes(monkeypatch):
    """``--python contract_fakes:…`` finds the module in the current directory."""
    monkeypatch.setattr(sys, "path", list(sys.path))
    monkeypatch.chdir(Path(__file__).parent)


def conformance(model: str, spec: str, reference: str, *, examples: int, seed: int):
    run = harness.run(get_model(model), harness.Target("python", spec), reference=reference,
                      properties=[f"conforms_to_{reference}"], max_examples=examples, seed=seed)
    assert run.fault is None, run.fault and run.fault.line()
    (result,) = run.results
    return result


@pytest.mark.parametrize("factory, model, kind, form, seed", CAUGHT, ids=[c[0] for c in CAUGHT])
def test_an_implementation_that_differs_on_a_probed_action_does_not_conform(beside_the_fakes, factory,
                                                                            model, kind, form, seed):
    reference = REFERENCE[model]
    r = conformance(model, f"contract_fakes:{factory}", reference, examples=100, seed=seed)
    assert r.verdict == "violated", r.stats
    violation = r.trace["violation"]
    assert re.fullmatch(form.format(ref=reference), violation["message"]), violation["message"]
    step = r.trace["steps"][violation["step"]]
    assert step["action"]["type"] == kind
    # the search's candidates leave that action out there: only a probe tried it (the trace,
    # shortened by replay on the fake, may end in an action that no probe lists, such as
    # runtime(0) before the push, refused by the reference all the same)
    m = get_model(model)
    config = m.config_from_json(r.trace["config"])
    before = r.trace["steps"][violation["step"] - 1]["observation"] if violation["step"] else r.trace["initial"]
    assert m.action(step["action"]) not in m.candidate_actions(before, config)


@pytest.mark.parametrize("factory, model, kind", [("accepts_refused_push", "capi", "push"),
                                                   ("slots_accepts_refused_validate", "slots", "validate")])
def test_over_the_protocol_too(factory, model, kind):
    """The probes go over the wire like any action (``contract_fakes.py --serve NAME``)."""
    fakes = Path(__file__).with_name("contract_fakes.py")
    command = " ".join(shlex.quote(str(a)) for a in (sys.executable, fakes, "--serve", factory))
    reference = REFERENCE[model]
    run = harness.run(get_model(model), harness.Target("exec", command), reference=reference,
                      properties=[f"conforms_to_{reference}"], max_examples=100, seed=0)
    assert run.fault is None, run.fault and run.fault.line()
    (r,) = run.results
    assert r.verdict == "violated"
    assert re.fullmatch(REJECTS.format(ref=reference), r.trace["violation"]["message"])
    assert r.trace["steps"][r.trace["violation"]["step"]]["action"]["type"] == kind


@pytest.mark.parametrize("model, variant", [(m, v) for m in ("capi", "slots") for v in get_model(m).variants])
def test_every_reference_variant_conforms_to_itself_probes_included(model, variant):
    spec = f"deployspec.contract.examples:{variant.replace('-', '_')}"
    r = conformance(model, spec, variant, examples=30, seed=0)
    assert r.verdict == "holds", r.message


class Counting(ReferenceImplementation):
    """capi-safe, counting the steps it is asked for and which of them are probes."""

    seen: ClassVar[Counter] = Counter()

    def reset(self, config):
        super().reset(config)
        self.config = self.model.config_from_json(dict(config))

    def perform(self, action):
        a = self.model.action(action)
        probe = a in self.model.probe_actions(self.observe(), self.config)
        Counting.seen["steps"] += 1
        Counting.seen[f"probe {a.kind}" if probe else "candidate"] += 1
        return super().perform(action)


def test_probes_are_a_minority_of_the_steps_and_each_state_gets_its_own(beside_the_fakes):
    """A probe is one move among the verbs' and never comes twice in a row: about one step
    in eight is a probe (seed 0: 1,806 of 13,553 steps), so the search still goes as deep
    as it did. Every kind is probed where it is left out (before the push: all but push)."""
    Counting.seen.clear()
    sys.modules[__name__].counting = lambda: Counting("capi", "capi-safe")
    r = conformance("capi", f"{__name__}:counting", "capi-safe", examples=300, seed=0)
    assert r.verdict == "holds"
    seen = Counting.seen
    probes = seen["steps"] - seen["candidate"]
    assert 0.05 < probes / seen["steps"] < 0.3, seen
    probed = {k.split()[1] for k in seen if k.startswith("probe ")}
    assert probed >= {"push", "cancel", "continue_", "scale", "tick", "runtime"}, seen
    assert probed & {"stage", "deploy"}, seen  # only before the push


#: kinds the reference refuses before the push, each on a fake that accepts that kind only
BEFORE_THE_PUSH = ["accepts_refused_tick", "accepts_refused_stage", "accepts_refused_deploy",
                   "accepts_refused_cancel", "accepts_refused_continue_"]


@pytest.mark.parametrize("factory", BEFORE_THE_PUSH)
@pytest.mark.parametrize("seed", [0, 1, 2])
def test_the_initial_state_is_swept_whatever_the_seed_and_examples(beside_the_fakes, factory, seed):
    """Every probe of the initial state is tried once before the random search
    (``contract/sweep.py``): one example is enough, at any seed."""
    r = conformance("capi", f"contract_fakes:{factory}", "capi-safe", examples=1, seed=seed)
    assert r.verdict == "violated" and r.stats["found_by"] == "sweep"
    assert [s["action"]["type"] for s in r.trace["steps"]] == [factory.removeprefix("accepts_refused_")]
    assert r.trace["violation"]["step"] == 0


def test_a_sweep_that_finds_nothing_leaves_it_to_the_search(beside_the_fakes):
    """scales_while_deploying conforms before the push: the search finds it, later."""
    r = conformance("capi", "contract_fakes:scales_while_deploying", "capi-safe", examples=100, seed=1)
    assert r.verdict == "violated" and "found_by" not in r.stats and r.stats["examples"] >= 1
    assert r.stats["swept"] >= 14  # every first step was judged, none broke it
    assert r.trace["violation"]["step"] >= 2


def test_the_summary_says_the_sweep_found_it(beside_the_fakes, capsys):
    from deployspec.cli import main

    status = main(["contract", "--python", "contract_fakes:accepts_refused_tick", "--model", "capi",
                   "--reference", "capi-safe", "--property", "conforms_to_capi-safe", "--examples", "1"])
    out = capsys.readouterr().out
    assert status == 1
    row = next(line for line in out.splitlines() if line.startswith("conforms_to_capi-safe"))
    assert row.split()[1:] == ["VIOLATED", "first", "step"]  # no search ran: no steps, no steps/s


def test_a_first_step_that_does_not_matter_is_shortened_away(beside_the_fakes, tmp_path):
    """stuck_from_the_start breaks deployment_converges with no step at all: the sweep finds
    it after its first step, and replay on the implementation removes that step."""
    run = harness.run(get_model("capi"), harness.Target("python", "contract_fakes:stuck_from_the_start"),
                      properties=["deployment_converges"], max_examples=5, out_dir=str(tmp_path))
    (r,) = run.results
    assert r.verdict == "violated" and r.stats["found_by"] == "sweep"
    assert r.trace["settle_from"] == 0 and r.trace["extra"]["minimized_by_replay"] is True
    assert r.trace["violation"]["message"] == "d0 (healthy droplet 0) is still DEPLOYING after settling"


def test_the_implementation_is_swept_once_per_connection(beside_the_fakes):
    """Each check judges the same recordings: the implementation is reset for the sweep
    only by the first."""
    sys.path.insert(0, str(Path(__file__).parent))  # (a copy: the fixture restores it) not only
    import contract_fakes  # when an earlier test of this process imported it: xdist has no '' on the path

    model = get_model("capi")
    resets = contract_fakes.RESETS
    resets.clear()
    conn = harness.Connection(harness.Target("python", "contract_fakes:counting"), model)
    config = harness.config_for(model, None)
    with conn:
        found, first = recorded.first_found(conn, model.property("single_active_deployment"), config, 0,
                                              lambda t: t, recorded.SWEEP)
        after_first = len(resets)
        found2, second = recorded.first_found(conn, model.property("user_scale_not_lost"), config, 0,
                                                lambda t: t, recorded.SWEEP)
    assert found is None and found2 is None
    assert after_first == first["swept"] + 1 >= 10  # the opening reset, then one per first step
    assert len(resets) == after_first and second["sweep_seconds"] == 0
    assert second["swept"] == first["swept"]


def test_at_most_64_first_steps_of_a_kind_as_the_search_can_address():
    """An (implementation's) initial observation listing many processes asks for many
    runtime steps; the machine's rules address 64 of a kind at most, and so does the sweep."""
    from deployspec.contract.sweep import PER_KIND, searchable_actions

    model = get_model("capi")
    obs = {"app": {"droplet": 0, "started": True}, "droplets": [{"id": 0, "healthy": True}],
           "processes": [{"id": i, "droplet": 0, "instances": ["STARTING"]} for i in range(100)],
           "deployments": []}
    kinds = Counter(a.kind for a in searchable_actions(model, obs, model.default_config()))
    assert kinds["runtime"] == PER_KIND == 64 and kinds["push"] == 3  # the probes of push: kept
