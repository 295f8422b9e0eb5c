"""The properties' details a mutation pass found unpinned (spec/capi.py, spec/slots.py,
spec/core.py): what their complaints say when users read them, each property's kind
and doc, and edges of their verdicts.

The pass: ast mutants (comparisons flipped, and/or swapped or dropped, ``not`` dropped,
conditions negated, constants changed, statements deleted, returns of None, tuple
elements dropped, +/- swapped; then the domain's words swapped — production/staging,
RUNNING/STARTING, CANCELING/CANCELED, push/scale, user/platform, … —, before/after,
any/all, max/min; then variables swapped — routable/starting, released/validated,
wanted/have, … — and indexes [0]/[-1]), each run against the property tests,
test_counterexamples, test_designs_judged, test_violates_beyond and test_causes (its
four searches left out).

* capi.py: 498 mutants, 479 killed before, 16 equivalent, 3 gaps killed here;
* slots.py: 276 mutants, 270 killed before, 3 equivalent, 3 gaps killed here;
* core.py: 101 mutants, 88 killed before, 4 equivalent, 9 gaps killed here.

Equivalent: a deleted trailing ``return None`` (7); in cancel_restores_last_good,
``created >= 0`` (adding zero deployments adds nothing) and ``next``'s default 0 for
None (both falsy); the "nothing" of ``_droplets`` (only ever given a non-empty set);
``kind == "deploy"`` dropped beside ``web_instances`` (only a deploy carries it); the
memory of capacity_within_bound, and the initial memory of a state or settled property
(never read); in app_stays_available, ``serving or`` dropped where serving implies a
routable instance (the complaint returned before); ``procs[-1]`` for ``procs[0]``
where there is exactly one; ``have`` for ``wanted`` where they are equal; the canceled
deployment read from the step's before (its id and owic, all that is read, are the
same); the memory returned with a complaint (the run ends at the first violation).
"""

from __future__ import annotations

import inspect
import re
from pathlib import Path

import attrs
import pytest
from deployspec.spec import capi as spec
from deployspec.spec import slots as slots_spec
from deployspec.spec.core import Step, settled_property, state_property, step_label, trace_property

from .helpers import app, dep, proc
from .property_traces import run
from .slots_property_traces import run as slots_run
from .slots_property_traces import slot, world

# --- capi: cancel_restores_last_good ------------------------------------------


def test_a_cancel_names_every_healthy_droplet_the_app_ran_before_the_deployment():
    """The app ran two healthy droplets (P0, P1) when d0 was created: a cancel that leaves
    a third running is told both, in order, as the droplets it could have restored."""
    droplets = (True, True, False)
    two = app([proc(0, 1), proc(1, 1, droplet=1)], [], droplets)
    d0 = dep(0, "DEPLOYING", "DEPLOYING", 2, 1, droplet=2)
    deploying = app(two["processes"] + [proc(2, 1, running=0, starting=1, droplet=2)], [d0], droplets)
    canceling = {**deploying, "deployments": [{**d0, "state": "CANCELING", "status_reason": "CANCELING"}]}
    canceled = app([proc(2, 1, running=0, crashed=1, droplet=2)],
                   [{**d0, "state": "CANCELED", "status_value": "FINALIZED", "status_reason": "CANCELED"}], droplets)
    v = run(spec.cancel_restores_last_good, [deploying, canceling, canceled],
            [("deploy", {}), ("cancel", {}), ("tick", {})], before=two)
    assert v is not None and v.step == 2
    assert v.message == ("cancel of d0 left P2 running droplet 2, not the healthy droplet 0, droplet 1 "
                         "the app ran before the deployment")


# --- capi: how a step is described --------------------------------------------


def test_a_step_is_described_without_its_empty_arguments_whatever_their_type():
    """None, an empty list and an empty tuple are all "not given" (an action built in
    Python may carry a tuple); False is a value and is shown; an argument at its default
    (web_instances 0) is not, as the trace table beside the message names the step."""
    obs = app([proc(0, 1)], [])
    step = Step(3, {"type": "deploy", "canary_steps": (), "failed": [], "revision": None,
                    "web_instances": 0, "new_droplet": False}, "user", None, obs, obs)
    assert step_label(step) == "step 3 (deploy(new_droplet=False))"
    assert step_label(attrs.evolve(step, action={"type": "tick", "failed": [1]})) == "step 3 (tick(failed=d1))"


# --- slots: how a change of production's containers is worded -----------------


def test_eight_containers_are_all_shown_with_no_count_of_more():
    """The first eight containers are named; "… N more" is only for those past them."""
    eight = [0] * 8
    v = slots_run("push_does_not_touch_production", world(slot("A", *eight), slot("B", 0), tag=0),
                  ({"type": "deliver_webhook"}, world(slot("A", *eight[1:], None), slot("B", 0), tag=0)))
    assert v is not None and v.message == (
        "deliver_webhook at step 0 changed production (site A) from [" + ", ".join(["d0 running"] * 8)
        + "] to [" + ", ".join(["d0 running"] * 7) + ", empty]")


def test_a_push_that_changes_production_is_told_by_production_s_digests_not_staging_s():
    v = slots_run("push_does_not_touch_production", world(slot("A", 0), slot("B", 2), tag=0),
                  ({"type": "push", "healthy": True}, world(slot("A", 1), slot("B", 2), tag=1)))
    assert v is not None and v.message == "push at step 0 changed production (site A) from d0 to d1"


# --- slots: what the unreleased-digest complaint names -------------------------


def test_an_unreleased_digest_is_reported_with_what_is_validated_after_the_step():
    """The complaint describes the world the step left: a validation in that very step
    (here one that also changed production, as a nonconforming implementation may) counts."""
    v = slots_run("production_runs_only_released_images", world(slot("A", 0), slot("B", 1), tag=1),
                  ({"type": "validate"}, world(slot("A", 1), slot("B", 1), tag=1, validated=[1])))
    assert v is not None and v.message == ("production runs d1 after step 0 (validate), not what the latest release put there "
                                           "(released: d0; validated in staging: d1)")


# --- core: the property kinds ---------------------------------------------------


def _catalogue() -> dict[str, str]:
    """Each property's kind as docs/properties.md lists it: ``| `name` | kind | ...``."""
    text = (Path(__file__).parent.parent / "docs" / "properties.md").read_text()
    return dict(re.findall(r"^\| `(\w+)` \| (state|trace|settled) \|", text, re.MULTILINE))


@pytest.mark.parametrize("prop", spec.PROPERTIES + slots_spec.PROPERTIES, ids=lambda p: p.name)
def test_every_property_has_the_kind_the_catalogue_gives_and_its_function_s_docstring(prop):
    """The kind decides how the engines judge a property (a settled one is judged after
    the platform settles): it must be the catalogue's, and the doc the function's own."""
    assert prop.kind == _catalogue()[prop.name]
    fn = {"state": lambda: inspect.getclosurevars(prop.advance).nonlocals["fn"],
          "trace": lambda: prop.advance, "settled": lambda: prop.at_settled}[prop.kind]()
    assert fn.__name__ == prop.name and prop.doc == inspect.getdoc(fn) != ""


def _undocumented_state(obs):
    return None


def _undocumented_trace(memory, step):
    return memory, None


@pytest.mark.parametrize("make", [lambda: state_property("capi")(_undocumented_state),
                                  lambda: trace_property("capi", None)(_undocumented_trace),
                                  lambda: settled_property("capi")(_undocumented_state)],
                         ids=["state", "trace", "settled"])
def test_a_property_without_a_docstring_has_an_empty_doc_not_none(make):
    """A plug-in's property may have no docstring: its doc is then empty text, as ``Property.doc: str`` says."""
    assert make().doc == ""


def test_a_count_in_a_message_agrees_with_its_noun():
    """"1 instances", "web instance(s)": a user read such counts twice."""
    from deployspec.spec.core import counted

    assert [counted(n, "web instance") for n in (0, 1, 2)] == ["0 web instances", "1 web instance", "2 web instances"]
