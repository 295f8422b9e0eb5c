"""The conformance check (``--reference``) against implementations that differ from it in one way.

``conforms_to_capi-safe`` demands that after every step the implementation accepts exactly
what capi-safe accepts (the refusal's wording is free) and observes what capi-safe observes
(deployspec/contract/conformance.py). The fakes of ``fakes_nonconforming.py`` (by name
through ``contract_fakes.py``) each break one clause, and one breaks none:

* ``refuses_idle_ticks`` refuses what capi-safe accepts, observations equal (V1);
* ``refuses_nothing`` accepts what capi-safe refuses, observations equal (V2);
* ``starts_with_one_instance`` accepts and refuses alike but observes otherwise after an
  accepted deploy (V3) (``refuses_but_scales``, otherwise after a refusal both make, breaks the
  protocol itself: a fault, test_contract_faults_python.py);
* ``starts_with_a_droplet`` observes otherwise before the first step;
* ``reworded`` conforms in other words: other refusal reasons, keys in another order;
* ``scales_while_deploying`` accepts what capi-safe refuses where the search's candidates never
  ask: a contract run asks it as a probe (more of those in test_contract_probes.py).

In process (``--python``) and over the protocol (``--exec``), both adapters carry refusals.
"""

from __future__ import annotations

import shlex
import sys
from pathlib import Path

import pytest

from deployspec import traces
from deployspec.cli import main
from deployspec.contract.conformance import _message, differences
from deployspec.models import get_model

FAKES = Path(__file__).with_name("contract_fakes.py")
REFUSED = "Cannot scale this process while a deployment is in flight."

def differs(at: int, label: str, diff: str) -> str:
    return f"after step {at} ({label}) the observation differs from capi-safe: {diff}"


#: factory, the step the divergence is reported at (and its label), the violation's message
#: (the diff's line is the observations' difference, else the message), the shrunk trace's
#: actions, and the seed (30 examples)
DIVERGENCES = [
    ("refuses_idle_ticks", 1, "tick()",
     "step 1 (tick()): capi-safe accepts it, the implementation rejected it (nothing to do)",
     ["push", "tick"], 0),
    # the first refusal there is: the sweep of the initial state's probes tries tick first
    ("refuses_nothing", 0, "tick()",
     "step 0 (tick()): capi-safe rejects it (no app: push first), the implementation accepted it",
     ["tick"], 0),
    # a deploy superseding one in flight: capi-safe starts it within the room the capacity
    # bound leaves (none here: 1 + 1 already desired), the fake with one instance whatever
    ("starts_with_one_instance", 2, "deploy()",
     differs(2, "deploy()", 'processes[2].instances: capi-safe [], implementation ["STARTING"]'),
     ["push", "deploy", "deploy"], 0),
]


def target(how: str, factory: str) -> tuple[str, str]:
    if how == "--python":
        return how, f"contract_fakes:{factory}"
    return how, " ".join(shlex.quote(str(a)) for a in (sys.executable, FAKES, "--serve", factory))


@pytest.fixture
def beside_the_fakes(monkeypatch):
    """``--python contract_fakes:…`` finds the module in the current directory."""
    monkeypatch.setattr(sys, "path", list(sys.path))
    monkeypatch.chdir(FAKES.parent)


def run(capsys, *argv) -> tuple[int, str]:
    status = main([str(a) for a in argv])
    return status, capsys.readouterr().out


def conformance(capsys, how: tuple[str, str], *extra, examples: int = 30, seed: int = 0) -> tuple[int, str]:
    return run(capsys, "contract", *how, "--model", "capi", "--reference", "capi-safe",
               "--property", "conforms_to_capi-safe", "--examples", examples, "--seed", seed, *extra)


@pytest.mark.parametrize("how", ["--python", "--exec"])
@pytest.mark.parametrize("factory, at, label, message, kinds, seed", DIVERGENCES, ids=[d[0] for d in DIVERGENCES])
def test_a_divergence_from_the_reference_is_reported_at_its_step(capsys, tmp_path, beside_the_fakes, how,
                                                                 factory, at, label, message, kinds, seed):
    impl = target(how, factory)
    status, out = conformance(capsys, impl, "--out", tmp_path, seed=seed)
    assert status == 1, out
    lines = out.splitlines()
    assert f"capi / implementation: conforms_to_capi-safe violated (engine contract, seed {seed})" in lines
    assert f"  {message}" in lines
    assert f"first divergence from capi-safe at step {at} ({label}):" in lines
    # the diff under the two pictures: the observations' difference, else the message
    assert f"    {message.split(': ', 1)[1] if message.startswith('after') else message}" in lines
    assert "conforms_to_capi-safe  VIOLATED" in out
    (path,) = tmp_path.glob("implementation--conforms_to_capi-safe--*.json")
    trace = traces.load(path)
    assert trace["violation"] == {"step": at, "message": message}
    assert [s["action"]["type"] for s in trace["steps"]] == kinds
    # show gives the file's divergence as the run gave it (a CI artifact, read elsewhere)
    status, shown = run(capsys, "show", path)
    report = out[out.index("first divergence from capi-safe"):out.index("\nsaved: ")].splitlines()
    assert status == 0 and len(report) >= 4 and shown.splitlines()[-len(report):] == report
    # the saved trace reproduces on the implementation, and capi-safe conforms to itself
    status, out = run(capsys, "replay", path, *impl)
    assert status == 1 and "reproduces on" in out
    status, out = run(capsys, "replay", path, "--variant", "capi-safe")
    assert status == 0 and "does not reproduce" in out


@pytest.mark.parametrize("how", ["--python", "--exec"])
def test_an_implementation_that_conforms_in_other_words_passes(capsys, tmp_path, beside_the_fakes, how):
    impl = target(how, "reworded")
    status, out = conformance(capsys, impl)
    assert status == 0, out
    assert "conforms_to_capi-safe  holds" in out and "no check found a violation" in out
    # a refusal the search may not meet, for certain: the trace refuses_nothing breaks on (a
    # tick before the push), refused in other words, the observation after it with every key
    # in another order
    status, out = conformance(capsys, target("--python", "refuses_nothing"), "--out", tmp_path)
    assert status == 1
    (path,) = tmp_path.glob("*.json")
    status, out = run(capsys, "replay", path, *impl)
    assert status == 0, out
    assert "does not reproduce" in out and "conforms_to_capi-safe holds (1 action(s) refused: step " in out


def test_a_divergence_before_the_first_step_is_reported_at_the_initial_observation(capsys, tmp_path,
                                                                                   beside_the_fakes):
    """The fake reports a droplet before any push; after the push its observations are
    capi-safe's. The report names the initial observation and shows the two initial
    observations, not the ones after step 0, which agree."""
    status, out = conformance(capsys, target("--python", "starts_with_a_droplet"), "--out", tmp_path)
    assert status == 1, out
    message = "the initial observation differs from capi-safe: droplets: implementation has an entry with id 0, which capi-safe lacks"
    lines = out.splitlines()
    assert f"  {message}" in lines
    (path,) = tmp_path.glob("*.json")
    assert traces.load(path)["violation"]["message"] == message
    report = lines[lines.index("first divergence from capi-safe at the initial observation:"):]
    assert report[1].split() == ["capi-safe", "-", "-"]  # no web process, no deployment
    assert report[2].split() == ["implementation", "-", "-"]
    assert report[3] == "    droplets: implementation has an entry with id 0, which capi-safe lacks"


@pytest.mark.parametrize("how", ["--python", "--exec"])
def test_an_implementation_that_accepts_a_scale_while_deploying_does_not_conform(capsys, beside_the_fakes, how):
    """capi-safe (like every reference variant) refuses a scale while a deployment is
    DEPLOYING; the fake accepts it and scales the deploying process. conforms_to_capi-safe
    promises that the implementation "accepts exactly the actions capi-safe accepts".
    capi.model.candidate_actions leaves that scale out (for exploring the reference it
    is a stutter); a contract run asks for it as a probe (capi.model.probe_actions)."""
    # 100 examples: at 30 seed 0 finds it alone but not in the whole suite's process (Hypothesis
    # draws some integers from the constants of the modules loaded); at 100 seeds 0-3 find it in both
    status, out = conformance(capsys, target(how, "scales_while_deploying"), examples=100)
    assert status == 1, out
    assert f"capi-safe rejects it ({REFUSED}), the implementation accepted it" in out


def test_a_conformance_trace_replayed_on_a_variant_names_that_variant_not_the_implementation():
    """``replay T --variant capi-2022`` of a conforms_to_capi-safe trace compares capi-2022
    with capi-safe: the messages said "the implementation" of what was a reference."""
    from deployspec.spec.core import Step

    from deployspec.models import get_model

    capi = get_model("capi")
    config = capi.default_config()
    initial = capi.observe(capi.initial_state(config))
    tick = {"type": "tick", "failed": [], "reports_unavailable": [], "finish_later": [], "late": []}
    for subject, who in (("implementation", "the implementation"), ("capi-2022", "capi-2022")):
        prop = capi.property("conforms_to_capi-safe", config, subject=subject)
        _, message = prop.advance(prop.initial, Step(0, tick, "user", None, initial, initial))
        assert message.startswith("step 0 (tick()): capi-safe rejects it (") and message.endswith(f"), {who} accepted it")
        changed = {**initial, "droplets": [{"id": 0, "healthy": True}]}
        _, message = prop.advance(prop.initial, Step(0, tick, "user", "no app", changed, changed))
        assert message == f"the initial observation differs from capi-safe: droplets: {subject} has an entry with id 0, which capi-safe lacks"


@pytest.mark.parametrize("how", ["--python", "--exec"])
def test_a_swap_that_does_not_wait_for_staging_breaks_the_spec_not_only_conformance(capsys, tmp_path,
                                                                                     beside_the_fakes, how):
    """Promoting a build that fails to start is a release, so the release properties hold; the
    swap's own property (App Service's step 2) breaks at the spec level, no --reference needed,
    and the shrunk trace is the shortest there is: an unhealthy push, staging set, the swap."""
    impl = target(how, "swaps_without_waiting")
    status, out = run(capsys, "contract", *impl, "--model", "slots", "--examples", 30, "--seed", 0,
                      "--out", tmp_path)
    assert status == 1, out
    verdicts = {line.split()[0]: line.split()[1] for line in out.splitlines()
                if line.split() and line.split()[0] in {p.name for p in get_model("slots").properties}}
    assert verdicts == {"production_runs_only_released_images": "holds", "rollback_restores_previous": "holds",
                        "push_does_not_touch_production": "holds", "swap_keeps_production_serving": "VIOLATED",
                        "slot_runs_one_version": "holds", "no_latent_drift": "holds",
                        "pipeline_ships_latest_build": "holds"}
    (path,) = tmp_path.glob("implementation--swap_keeps_production_serving--*.json")
    trace = traces.load(path)
    assert [s["action"] for s in trace["steps"]] == [
        {"type": "push", "healthy": False}, {"type": "set_image", "slot": "staging"}, {"type": "swap"}]
    # the reference stops that swap: the trace does not reproduce on any shipped design
    status, out = run(capsys, "replay", path, "--variant", "slots-pipeline-immutable")
    assert status == 0 and "does not reproduce" in out


def test_a_divergence_message_counts_the_other_differences():
    """C3: the first difference, and how many more."""
    assert _message("after step 2 the observation", "capi-safe", ["a: x", "b: y", "c: z"]) == \
        "after step 2 the observation differs from capi-safe: a: x (and 2 more difference(s))"
    assert _message("w", "v", ["a: x"]) == "w differs from v: a: x"


def test_equal_values_of_another_type_are_a_difference():
    """C4: 1 and True (or 1.0) compare equal in Python, but not as observations."""
    assert differences({"n": 1}, {"n": True}, "ref") == ["n: ref 1, implementation true"]
    assert differences([1], [1.0], "ref") == ["[0]: ref 1, implementation 1.0"]


def test_a_long_value_in_a_difference_is_clipped():
    """C9: a long value (a whole list of processes) is cut to 60 characters, '...' included."""
    (line,) = differences({"p": "x" * 100}, {"p": "y"}, "ref")
    assert line == "p: ref " + ('"' + "x" * 56) + "..., implementation \"y\""


def test_an_exception_object_two_reference_designs_raise_is_blamed_on_the_last():
    """Two designs handed in may share a rule that raises one exception object it keeps; a
    replay of two conformance traces, one on each, blamed the second design's error on the
    first (the first note was kept)."""
    from deployspec.contract.conformance import mark_reference, reference_raised

    shared = KeyError(2)
    mark_reference(shared, "kept-a")
    assert reference_raised(shared) == "kept-a"
    mark_reference(shared, "kept-b")
    assert reference_raised(shared) == "kept-b"
    assert reference_raised(KeyError(2)) is None
