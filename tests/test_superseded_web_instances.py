"""A count asked by a deployment in flight (``web_instances``) and a deployment that
supersedes it (docs/explore-findings 3; docs/findings.md, capi-current finding 11).

Upstream's DeploymentCreate gives the new deployment the superseded one's original count
and ignores its ``web_instances`` (cloud_controller_ng 3bbba90, ``deployment_create.rb``;
docs/upstream/cloud-controller.md §4.9), so the count is lost. capi-safe keeps it
(``rules.web_instances_kept``) and splits its canary steps over it. The spec watches the
count a deploy asks for as it watches a scale's, and a cancel gives it back
(``spec.capi.asked``).
"""

from __future__ import annotations

from pathlib import Path

import attrs
import pytest
from deployspec.reference.capi import canary, rules
from deployspec.reference.capi.actions import Cancel, Deploy, Push, Runtime, Scale, Tick
from deployspec.reference.capi.model import CapiConfig, candidate_actions

from deployspec import traces
from deployspec.adapter import ReferenceAdapter
from deployspec.engines.explore import explore_config, search
from deployspec.models import get_model
from deployspec.replay import replay
from deployspec.session import Session

MODEL = get_model("capi")
FINDING = Path(__file__).parent.parent / "docs" / "explore-findings" / "capi-safe--app_stays_available--c466ef369e.json"
#: capi-safe as it was when the finding was made: the count asked as given, nothing kept
SAFE_AS_ASKED = attrs.evolve(MODEL.variant("capi-safe"), name="safe-as-asked",
                             web_instances_of=rules.web_instances_as_asked)


def session(variant) -> Session:
    """A session on a reference design (a name or a variant), every property watching."""
    v = MODEL.variant(variant) if isinstance(variant, str) else variant
    return Session(MODEL, ReferenceAdapter(MODEL, v), MODEL.properties, MODEL.default_config(v))


def counts(s: Session) -> list[int]:
    return [len(p["instances"]) for p in s.obs["processes"]]


def test_the_finding_reproduces_on_capi_current_and_no_longer_on_capi_safe():
    """``push(1); scale(0); deploy(web_instances=1); runtime(P1); deploy(); tick()``: today's
    second deployment targets the original count, 0, and the app serving one goes to none."""
    trace = traces.load(FINDING)
    outcome = replay(trace, variant="capi-current")
    assert outcome.reproduced and outcome.violation.step == 5
    assert outcome.violation.message == "no routable web instance left after step 5 (tick())"
    assert not replay(trace, variant="capi-safe").reproduced
    as_asked = session(SAFE_AS_ASKED).play([MODEL.action(s["action"]) for s in trace["steps"]], False)
    assert as_asked is not None and as_asked.property == "app_stays_available" and as_asked.step == 5


@pytest.mark.parametrize("variant, ends_at", [("capi-safe", 3), ("capi-current", 2)])
def test_a_count_asked_by_a_superseded_deployment(variant, ends_at):
    """The silent form: push 2, ``deploy(web_instances=3)``, ``deploy()`` while the first is
    in flight. capi-safe's second deployment takes the app to 3; today's to the original 2,
    and the user, told the first deploy was accepted, is never told its count was dropped."""
    s = session(variant)
    s.perform(Push(2))
    s.perform(Runtime(0))
    s.perform(Deploy(max_in_flight=1, web_instances=3))
    s.perform(Deploy())
    assert s.obs["deployments"][-1]["web_instances"] == (3 if variant == "capi-safe" else None)
    v = s.settle()
    assert counts(s) == [ends_at]
    if variant == "capi-safe":
        assert v is None
    else:
        assert v.property == "user_scale_not_lost"
        assert v.message.endswith("but the last accepted deploy asked for 3")


def test_capi_safe_does_not_keep_the_count_of_a_deployment_being_canceled():
    """The cancel took that count back: the next deployment targets the original count."""
    s = session("capi-safe")
    s.perform(Push(2))
    s.perform(Runtime(0))
    s.perform(Deploy(web_instances=3))
    s.perform(Cancel())
    s.perform(Deploy())
    assert s.obs["deployments"][-1]["web_instances"] is None
    assert s.settle() is None and counts(s) == [2]


def test_a_cancel_gives_back_the_count_the_deploy_asked_for():
    """After ``scale(0)`` a deploy asks for one instance and is canceled: the app goes back to
    none, which is what the user has asked for since (no loss of availability, no lost count).
    Judged by the property, the same steps without the cancel's give-back would break both."""
    s = session("capi-safe")
    for action in (Push(1), Scale(0), Deploy(web_instances=1), Runtime(1), Cancel(), Tick()):
        assert s.perform(action) is None, action
    assert s.settle() is None and counts(s) == [0]


def test_a_finished_deployment_leaves_nothing_for_a_later_cancel_to_give_back():
    """``deploy(web_instances=3)`` finishes at 3; a later plain deploy, canceled, goes back to
    3, not to the 2 that stood before the finished one (``asked`` forgets it once no
    deployment is active)."""
    s = session("capi-safe")
    s.perform(Push(2))
    s.perform(Deploy(web_instances=3))
    assert s.settle() is None and counts(s) == [3]
    s.perform(Deploy())
    s.perform(Cancel())
    assert s.settle() is None and counts(s) == [3]


def test_capi_safe_splits_a_canary_step_over_the_count_asked():
    """N is the count the deployment takes the app to, and the originals kept are at most
    the original count (upstream's N is the smaller one, with one original more)."""
    assert canary.step_plan_without_extra(0, 1, (100,)) == ((1, 0),)
    assert canary.step_plan_without_extra(0, 1, ()) == ((1, 0),)
    assert canary.step_plan_without_extra(1, 3, (10,)) == ((1, 1),)
    assert canary.step_plan_without_extra(2, 3, (50,)) == ((2, 1),)
    # below owic: upstream's N (web_instances) without its extra original, ((1, 2),)
    assert canary.step_plan_without_extra(3, 2, (50,)) == ((1, 1),)
    assert canary.step_plan_without_extra(3, 1, ()) == ((1, 0),)  # no steps: one canary of the 1 asked
    # upstream: N = min(owic, web_instances) = 0, and a canary step has at least one
    assert canary.step_plan(0, 1, (100,)) == ((1, 0),)


def test_the_bound_offers_deploys_with_each_count():
    """``web_instances`` offers a deploy per count (and max_in_flight, and canary plan),
    after the one that names none; a configuration without it offers none and saves none."""
    obs = session("capi-safe").obs | {"app": {"droplet": 0, "started": True},
                                       "droplets": [{"id": 0, "healthy": True}],
                                       "processes": [{"id": 0, "droplet": 0, "instances": ["RUNNING"]}]}
    config = CapiConfig(web_instances=(1, 3), canary_plans=((50,),))
    deploys = [a for a in candidate_actions(obs, config) if a.kind == "deploy"]
    assert [(a.web_instances, a.strategy) for a in deploys] == [
        (0, "rolling"), (1, "rolling"), (3, "rolling"), (0, "canary"), (1, "canary"), (3, "canary")]
    assert config.to_json()["web_instances"] == [1, 3]
    assert CapiConfig.from_json(config.to_json()) == config
    assert "web_instances" not in CapiConfig().to_json()
    assert all(a.web_instances == 0 for a in candidate_actions(obs, CapiConfig()) if a.kind == "deploy")
    with pytest.raises(ValueError, match="web_instances must be a list of integers >= 1, got"):
        CapiConfig.from_json({"web_instances": [0]})


@pytest.mark.parametrize("prop", ["app_stays_available", "user_scale_not_lost"])
def test_capi_safe_holds_with_a_count_asked_in_the_search(prop):
    """The explorer, with a deploy of ``web_instances=1`` offered (one instance, one droplet,
    so it finishes in about a second): capi-safe holds (today's rule loses the app in the
    first test's trace, which these bounds contain)."""
    config = attrs.evolve(explore_config(MODEL, MODEL.variant("capi-safe")),
                          web_instances=(1,), max_instances=1, max_droplets=1)
    r = search(MODEL, "capi-safe", MODEL.property(prop), budget=120, seed=0, out_dir=None, config=config)
    assert r.verdict == "holds" and r.stats["complete"] is True, r.message
    assert r.stats["states"] > 5000
