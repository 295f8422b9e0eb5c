"""The contract checker's details, each pinned by an implementation that gets one of them wrong.

Mutation testing of the checker (conformance.py, guard.py, harness.py, the adapters) found
places where a bug in it would let a non-conforming implementation pass, or blame the wrong
cause, with no test noticing. Each fake here (most are a reference variant) has one flaw in
such a place: an observation that differs from the reference's where the other fakes never differ
(the app, a deployment's status, a member left out or one too many, the order of a list of
values), a refusal that changes what the other fakes leave alone, a refusal at random that
changes nothing, an answer that is not one, an observation changed in place after it was
returned, a schema violation in a reply the other fakes get right, a check that cannot read
a settled observation, a fault followed by more checks. The checker must reject each,
naming the cause. Every run is short: what breaks in the first step is found by the
sweep of the initial state; the rest needs a few examples at a fixed seed.
"""

from __future__ import annotations

import re
import shlex
import sys
from pathlib import Path

import pytest

from deployspec.cli import main
from deployspec.contract import harness
from deployspec.contract.examples import ReferenceImplementation
from deployspec.models import get_model

SLOTS = Path(__file__).parent.parent / "counterexamples" / "slots"


def _run(factory: str, *, reference: str | None = "capi-safe", properties: list[str] | None = None,
         examples: int = 30, model: str = "capi", on_start=lambda label: None) -> harness.ContractRun:
    """The factory of this module under contract (the conformance check alone by default)."""
    return harness.run(get_model(model), harness.Target("python", f"{__name__}:{factory}"), reference=reference,
                       properties=properties or [f"conforms_to_{reference}"], max_examples=examples, seed=0,
                       on_start=on_start)


def _violation(run: harness.ContractRun) -> dict:
    assert run.fault is None, run.fault.line()
    (r,) = run.results
    assert r.verdict == "violated", r.stats
    return r.trace["violation"]


# --- conformance compares the whole observation ------------------------------------------------


class Altered(ReferenceImplementation):
    """capi-safe, which reports its observations changed by ``alter``."""

    def __init__(self, alter):
        super().__init__("capi", "capi-safe")
        self.alter = alter

    def observe(self):
        return self.alter(super().observe())


def newest_first():
    """Lists each process's instances newest first: which instance started is no longer
    the one the reference started (the lowest STARTING one)."""

    def alter(obs):
        for p in obs["processes"]:
            p["instances"].reverse()
        return obs

    return Altered(alter)


def stale_app_droplet():
    """Never moves the app to a droplet staged after the push."""

    def alter(obs):
        if obs["app"] is not None:
            obs["app"]["droplet"] = 0
        return obs

    return Altered(alter)


def never_finalized():
    """Leaves a finished deployment's status ACTIVE (its state and reason are right)."""

    def alter(obs):
        for d in obs["deployments"]:
            if d["state"] in ("DEPLOYED", "CANCELED"):
                d["status_value"] = "ACTIVE"
        return obs

    return Altered(alter)


#: factory, the kind of the diverging step, the first difference the message names
ALTERED = [
    ("newest_first", "runtime", 'processes[0].instances[0]: capi-safe "RUNNING", implementation "STARTING"'),
    ("stale_app_droplet", "stage", "app.droplet: capi-safe 1, implementation 0"),
    ("never_finalized", "tick", 'deployments[0].status_value: capi-safe "FINALIZED", implementation "ACTIVE"'),
]


@pytest.mark.parametrize("factory, kind, difference", ALTERED, ids=[a[0] for a in ALTERED])
def test_a_difference_in_any_part_of_the_observation_is_a_divergence(factory, kind, difference):
    """The app, a deployment's status, a member left out, the order of a list of values:
    conformance compares each (the other fakes differ in the processes' instance counts or
    the number of droplets), and the message names the path."""
    violation = _violation(_run(factory))
    assert violation["message"].startswith(f"after step {violation['step']} ({kind}"), violation
    assert f"the observation differs from capi-safe: {difference}" in violation["message"], violation


class TagsLatestToo(ReferenceImplementation):
    """slots-pipeline-immutable whose registry also points ``latest`` at every push, as a
    ``docker push`` without a tag does; the schema allows any tag."""

    def __init__(self):
        super().__init__("slots", "slots-pipeline-immutable")

    def observe(self):
        obs = super().observe()
        if obs["registry"]["digests"]:
            obs["registry"]["tags"]["latest"] = obs["registry"]["digests"][-1]["id"]
        return obs


def tags_latest_too():
    return TagsLatestToo()


def test_a_member_only_the_implementation_has_is_a_divergence():
    """Where the schema allows any member (a registry's tags), one the reference lacks is a
    difference as much as one the implementation lacks."""
    reference = "slots-pipeline-immutable"
    violation = _violation(_run("tags_latest_too", reference=reference, model="slots", examples=1))
    assert violation == {"step": 0, "message": (f"after step 0 (push(healthy=True)) the observation differs from "
                                                f"{reference}: registry.tags.latest: {reference} lacks it, "
                                                "implementation 0")}


# --- a refusal changes nothing, and answers the same every time ---------------------------------


class RefusesButCancels(ReferenceImplementation):
    """capi-safe that carries out a cancel and answers it with a refusal: the app's droplet
    and the deployment's state change, no process does (the updater's next tick would)."""

    def __init__(self):
        super().__init__("capi", "capi-safe")

    def perform(self, action):
        reason = super().perform(action)
        return "a cancel was already requested" if action["type"] == "cancel" and reason is None else reason


def refuses_but_cancels():
    return RefusesButCancels()


class LiveView(RefusesButCancels):
    """The same, handing out one observation dict that it keeps up to date in place, as an
    object exposing its own live state does: the dict it returned before the refusal is
    changed by it too."""

    def __init__(self):
        super().__init__()
        self.view = {}

    def observe(self):
        self.view.clear()
        self.view.update(super().observe())
        return self.view


def live_view():
    return LiveView()


@pytest.mark.parametrize("factory", ["refuses_but_cancels", "live_view"])
def test_a_refusal_that_changes_the_app_or_a_deployment_is_a_fault(factory):
    """A refusal must leave the whole observation as it was, not only the processes and
    droplets (what ``refuses_but_scales`` and the ``dirty-refusal`` program change). What an
    object returns is copied at once: changing it in place later does not hide the change."""
    run = _run(factory, reference=None, properties=["single_active_deployment"])
    assert run.fault is not None, [r.verdict for r in run.results]
    assert run.fault.where.endswith(" (cancel())") and run.fault.history[-1] == "cancel() REJECTED"
    assert run.fault.cause.startswith("rejected (a cancel was already requested), yet the observation changed "
                                      "(a refusal must leave the state unchanged"), run.fault.cause
    assert re.search(r'deployments\[\d\]\.state: before "DEPLOYING", after "CANCELING"', run.fault.cause), run.fault.cause


class RefusesIdleTicksNowAndThen(ReferenceImplementation):
    """capi-safe that refuses every other tick with nothing to do, counted over its whole
    life: a refusal at random of a step that changes nothing either way, so every
    observation is capi-safe's and no spec property can mind."""

    ticks = 0

    def __init__(self):
        super().__init__("capi", "capi-safe")

    def perform(self, action):
        if action["type"] == "tick" and self.variant.step(self.state, self.model.action(action)) == self.state:
            RefusesIdleTicksNowAndThen.ticks += 1
            if RefusesIdleTicksNowAndThen.ticks % 2 == 0:
                return "busy, try later"
        return super().perform(action)


def refuses_idle_ticks_now_and_then():
    return RefusesIdleTicksNowAndThen()


def test_a_refusal_at_random_is_non_determinism_even_where_the_observations_agree():
    """docs/contract.md: "a refusal at random is this fault even where no property breaks".
    The same steps from a reset, accepted once and refused the next time with the same
    observation, did not give the same answer."""
    RefusesIdleTicksNowAndThen.ticks = 0
    run = _run("refuses_idle_ticks_now_and_then", reference=None, properties=["single_active_deployment"])
    assert run.fault is not None, [r.verdict for r in run.results]
    assert re.search(r" \(tick\([^()]*\)\)$", run.fault.where), run.fault.line()  # a tick, of any kind
    said = run.fault.cause.removeprefix("non-deterministic behaviour: the same steps, run again from a reset, gave "
                                        "a different result: this step ")
    assert said.startswith(("was refused (busy, try later), where it was accepted before (",
                            "was accepted, where it was refused before (")), run.fault.cause


def test_the_same_first_step_after_resets_with_two_configurations_is_no_non_determinism(capsys):
    """Two slots traces, each resetting with its own start (empty slots; cobalt's webhook),
    both begin with ``push(healthy=True)``, which queues a webhook delivery only in the
    second: two answers to the same step, both right. Only the same steps after a reset with
    the same configuration must answer alike (as only such a reset must come back to the
    same initial observation, test_contract_faults_kept.py)."""
    files = [str(SLOTS / "slots-pipeline-tag--slot_runs_one_version--20a2d8d0f1.json"),  # empty start
             str(SLOTS / "slots-webhook-tag--no_latent_drift--068fa48ff9.json")]  # webhook start
    status = main(["replay", *files, "--python", "deployspec.contract.examples:slots_webhook_tag"])
    out, err = capsys.readouterr()
    assert (status, err) == (1, "")
    assert out.count(": reproduces on --python") == 2, out


# --- what the implementation answers must be an answer ------------------------------------------


class StuckOnAMissingDroplet:
    """Written from scratch: a pushed app with a deployment DEPLOYING a droplet that the
    observation does not list (the schema cannot say so), refusing every action, so nothing
    ever moves. Only a settled check reads that droplet: ``deployment_converges``."""

    def reset(self, config):
        pass

    def perform(self, action):
        return "nothing moves here"

    def observe(self):
        return {"app": {"droplet": 0, "started": True}, "droplets": [{"id": 0, "healthy": True}],
                "processes": [{"id": 0, "droplet": 0, "instances": ["RUNNING"]},
                              {"id": 1, "droplet": 5, "instances": []}],
                "deployments": [{"id": 0, "state": "DEPLOYING", "status_value": "ACTIVE",
                                 "status_reason": "DEPLOYING", "deploying_process": 1, "droplet": 5,
                                 "previous_droplet": 0, "owic": 1, "max_in_flight": 1, "strategy": "rolling",
                                 "canary_steps": [], "canary_step": 0, "web_instances": None}]}


def stuck_on_a_missing_droplet():
    return StuckOnAMissingDroplet()


def test_a_settled_observation_a_property_cannot_read_is_a_fault():
    """As a step's observation is (``inconsistent``, test_contract_faults_python.py): a
    settled check that cannot read the observation is the implementation's fault, named,
    neither a traceback nor a pass."""
    run = _run("stuck_on_a_missing_droplet", reference=None, properties=["deployment_converges"], examples=5)
    assert run.fault is not None, [(r.verdict, r.message) for r in run.results]
    assert run.fault.line() == ("implementation fault at the settled observation while checking "
                                "deployment_converges: the observation is inconsistent: deployment_converges cannot "
                                "read it (IndexError: list index out of range)")


class AcceptsWithAnEmptyReason(ReferenceImplementation):
    """capi-safe that answers "" for an accepted action, as if any false value meant yes."""

    def __init__(self):
        super().__init__("capi", "capi-safe")

    def perform(self, action):
        reason = super().perform(action)
        return "" if reason is None else reason


def accepts_with_an_empty_reason():
    return AcceptsWithAnEmptyReason()


def test_an_empty_reason_is_no_answer():
    """perform returns None (accepted) or a reason (refused), which the protocol's
    ``rejected`` reply needs to be one character at least. "" is neither, whichever the
    object meant."""
    run = _run("accepts_with_an_empty_reason", reference=None, properties=["single_active_deployment"], examples=5)
    assert run.fault is not None, [r.verdict for r in run.results]
    assert run.fault.line() == ("implementation fault at step 0 (push(instances=1)) while checking "
                                "single_active_deployment: perform() returned ''; expected None (accepted) or a "
                                "reason string (rejected)")


#: capi-safe behind the protocol, its replies of one type (``python PROGRAM TYPE``) carrying an
#: observation with one more member, which the observation schema does not allow
TAMPERING = """
import json, sys
from deployspec.contract.examples import ReferenceImplementation
from deployspec.contract.server import Server

server = Server(ReferenceImplementation("capi", "capi-safe"), "capi")
for line in sys.stdin.buffer:
    reply = server.reply_to(line)
    if reply["type"] == sys.argv[1]:
        reply["observation"]["version"] = "1.2"
    sys.stdout.write(json.dumps(reply) + "\\n")
    sys.stdout.flush()
"""


@pytest.mark.parametrize("tampered, where", [("observation", "the initial observation"), ("rejected", "step 0 (tick())")])
def test_an_observation_outside_the_schema_is_a_fault_in_every_reply_that_carries_one(tmp_path, tampered, where):
    """The initial observation (the reply to ``observe`` after a reset) and a ``rejected``
    reply's are checked as a ``performed`` one's is (``bad-schema``, test_contract_faults_exec.py),
    and the fault says so, not what comes of it: nothing, as no property reads the member,
    or a refusal whose observation changed."""
    program = tmp_path / "tampering.py"
    program.write_text(TAMPERING)
    command = shlex.join([sys.executable, str(program), tampered])
    run = harness.run(get_model("capi"), harness.Target("exec", command), properties=["single_active_deployment"],
                      max_examples=5, seed=0, timeout=30)
    assert run.fault is not None, [r.verdict for r in run.results]
    # (the first initial observation comes before any check: a fault at start)
    during = "" if tampered == "observation" else " while checking single_active_deployment"
    assert run.fault.line() == (f"implementation fault at {where}{during}: "
                                "observation violates the capi observation schema: top level: Additional "
                                "properties are not allowed ('version' was unexpected)")


# --- the run ----------------------------------------------------------------------------


def test_a_fault_ends_the_run_and_no_later_check_is_started():
    """The first fault ends the run (exit 3): the checks after it are "not run", never
    started on an implementation that has failed (each would end at once in the same fault,
    and a violation kept with it would be reported again for each)."""
    started = []
    run = _run("accepts_with_an_empty_reason", reference=None, examples=5, on_start=started.append,
               properties=["single_active_deployment", "app_stays_available", "deployment_converges"])
    assert run.exit_status == harness.FAULT
    assert run.fault.checking == "single_active_deployment" and run.results == []
    assert started == ["implementation · single_active_deployment"]
