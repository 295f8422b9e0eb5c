"""The slots reference model: pulls, the swap's phases, webhook deliveries, variants."""

import json

import attrs
import pytest
from deployspec.reference.core import Rejected
from deployspec.reference.slots import VARIANTS, from_observation, observe
from deployspec.reference.slots.actions import (
    CrashRetry,
    DeliverWebhook,
    Push,
    Recycle,
    Restart,
    ScaleOut,
    SetImage,
    Swap,
    Validate,
)
from deployspec.reference.slots.model import (
    STARTS,
    SlotsConfig,
    candidate_actions,
    initial_state,
    settle_action,
)
from deployspec.reference.slots.state import Webhook

from deployspec.models import get_model
from deployspec.validation import validator as strict_validator

from .helpers import run_slots as run

SLOTS = get_model("slots")
WEBHOOK, TAG, IMMUTABLE = (VARIANTS[n] for n in
                           ("slots-webhook-tag", "slots-pipeline-tag", "slots-pipeline-immutable"))




def served(state, slot):
    return [(i.digest, i.status) for i in state.site(slot).instances]


def test_every_pull_re_resolves_a_tag_but_not_a_digest():
    steps = [Push(), SetImage("production"), Push(), Restart("production")]
    assert served(run(TAG, steps), "production") == [(1, "running")] * 2
    assert served(run(IMMUTABLE, steps), "production") == [(0, "running")] * 2


def test_recycle_and_scale_out_pull_one_container_each():
    state = run(TAG, [Push(), SetImage("production"), Push(), Recycle("production", 1)])
    assert served(state, "production") == [(0, "running"), (1, "running")]
    state = TAG.step(state, ScaleOut())
    assert [i.digest for i in state.site("production").instances] == [0, 1, 1]
    assert len(state.site("staging").instances) == 3  # the plan is shared by both slots


def test_crash_retry_only_for_a_failing_container():
    state = run(TAG, [Push(healthy=False), SetImage("production")])
    assert served(state, "production") == [(0, "crash_loop")] * 2
    assert isinstance(TAG.step(run(TAG, [Push(), SetImage("production")]), CrashRetry("production", 0)), Rejected)
    state = TAG.step(TAG.step(state, Push()), CrashRetry("production", 0))
    assert served(state, "production") == [(1, "running"), (0, "crash_loop")]


def test_swap_trades_names_and_restarts_both_sites():
    state = run(TAG, [Push(), SetImage("production"), Push(), SetImage("staging"), Push(), Swap()])
    assert (state.site("production").name, state.site("staging").name) == ("B", "A")
    assert served(state, "production") == [(2, "running")] * 2  # phase 1: the source pulled again
    assert served(state, "staging") == [(2, "running")] * 2  # step 6: the old production did too
    assert state.last_swap == "completed"


def test_swap_aborts_when_the_source_fails_to_start():
    state = run(IMMUTABLE, [Push(), SetImage("production"), Push(healthy=False), SetImage("staging")])
    after = IMMUTABLE.step(state, Swap())
    assert after.site("production") == state.site("production")  # the target stays online, untouched
    assert after.last_swap == "aborted" and after.site("staging").name == "B"


def test_abort_still_pulls_again_on_the_source():
    state = run(TAG, [Push(), SetImage("production"), Push(healthy=False), SetImage("staging"), Push()])
    state = attrs.evolve(state, registry=attrs.evolve(state.registry, digests=(True, False, False)))
    after = TAG.step(state, Swap())
    assert after.last_swap == "aborted" and served(after, "staging") == [(2, "crash_loop")] * 2


def test_webhook_posts_to_production_and_pulls_the_configured_reference():
    state = run(WEBHOOK, [Push(), SetImage("production"), SetImage("staging"), Push()])
    assert state.registry.pending == 1 and state.registry.webhook.scope is None
    state = WEBHOOK.step(state, DeliverWebhook())
    assert served(state, "production") == [(1, "running")] * 2
    assert served(state, "staging") == [(0, "running")] * 2  # no webhook points at staging
    assert isinstance(WEBHOOK.step(state, DeliverWebhook()), Rejected)


@pytest.mark.parametrize("scope, fires", [
    (None, True), ("", True),                       # no scope: every push in the registry
    ("app:release", True), ("app:*", True),         # the pushed tag, or every tag of the repository
    ("app", False), ("app:other", False),           # a bare repository is repo:latest
    ("release", False),                             # ... so a bare "release" names a repository
])
def test_a_push_fires_the_webhook_as_acr_reads_its_scope(scope, fires):
    # ACR's Webhook.scope: "foo:*" every tag of foo, "foo:bar" that tag, "foo" is "foo:latest",
    # empty is every event. The model's registry has one repository, the app's.
    state = initial_state(SlotsConfig())
    state = attrs.evolve(state, registry=attrs.evolve(state.registry, webhook=Webhook("production", scope)))
    assert TAG.step(state, Push()).registry.pending == (1 if fires else 0)


@pytest.mark.parametrize("sticky, production_restarts", [(False, False), (True, True)])
def test_docker_enable_ci_travels_with_the_content_unless_sticky(sticky, production_restarts):
    config = SlotsConfig(ci_sticky=sticky)
    state = run(WEBHOOK, [Push(), SetImage("production"), SetImage("staging"), Swap(), Push()], config)
    assert state.site("production").setting("DOCKER_ENABLE_CI") is sticky
    assert state.site("staging").setting("DOCKER_ENABLE_CI") is not sticky
    after = WEBHOOK.step(state, DeliverWebhook())
    changed = served(after, "production") != served(state, "production")
    assert changed is production_restarts


def test_pipeline_variants_have_no_webhook():
    for v in (TAG, IMMUTABLE):
        state = run(v, [Push(), SetImage("production"), Push()])
        assert state.registry.webhook is None and state.registry.pending == 0
        assert not state.site("production").setting("DOCKER_ENABLE_CI")


def test_immutable_reference_needs_a_build():
    assert isinstance(IMMUTABLE.step(initial_state(SlotsConfig()), SetImage("staging")), Rejected)
    state = run(IMMUTABLE, [Push(), SetImage("staging")])
    assert state.site("staging").image.digest == 0


def test_validate_records_staging_only_when_it_runs():
    assert isinstance(TAG.step(initial_state(SlotsConfig()), Validate()), Rejected)
    state = run(TAG, [Push(), SetImage("staging"), Validate()])
    assert state.validated == (0,)


def test_variants_differ_only_in_the_reference_rule_and_the_webhook():
    """PR #324 removed the webhook (from Terraform's apply and from where it leaves the
    app); Microsoft's guidance changes the reference the pipeline writes."""
    shared = {"name", "summary", "upstream", "doc", "declares"}
    diff = lambda a, b: {f.name for f in attrs.fields(type(a)) if getattr(a, f.name) != getattr(b, f.name)}
    assert diff(WEBHOOK, TAG) - shared == {"terraform_webhook", "config"}
    assert (WEBHOOK.config, TAG.config) == ({"start": "webhook"}, {})
    assert diff(TAG, IMMUTABLE) - shared == {"reference"}
    # the design proposal's webhook is where its app starts, not what Terraform applies
    designed = VARIANTS["slots-webhook-staging-tag"]
    assert diff(designed, TAG) - shared == {"config"} and designed.config == {"start": "webhook-staging"}


def test_observation_matches_schema_and_round_trips():
    validator = strict_validator(SLOTS.schema())  # as the entrances do: an integer written 2.0 is no integer
    state = run(WEBHOOK, [Push(), SetImage("production"), Push(False), SetImage("staging"), Swap(), Push()],
                SlotsConfig(ci_sticky=True))
    obs = observe(state)
    validator.validate(obs)
    assert observe(from_observation(json.loads(json.dumps(obs)))) == obs


def test_candidates_skip_pulls_that_change_nothing():
    obs = observe(run(TAG, [Push(), SetImage("production")]))
    kinds = {a.kind for a in candidate_actions(obs, SlotsConfig())}
    assert "restart" not in kinds and "recycle" not in kinds and "crash_retry" not in kinds
    obs = observe(run(TAG, [Push(), SetImage("production"), Push()]))
    assert Restart("production") in candidate_actions(obs, SlotsConfig())
    assert Push() not in candidate_actions(obs, SlotsConfig(max_pushes=2))


def test_settling_delivers_and_retries_until_nothing_changes():
    state = run(WEBHOOK, [SetImage("production"), Push()])
    seen = []
    while (a := settle_action(observe(state))) is not None:
        seen.append(a.kind)
        state = WEBHOOK.step(state, a)
    assert seen == ["deliver_webhook"]
    state = run(TAG, [SetImage("staging"), Push()])
    assert settle_action(observe(state)) == CrashRetry("staging", 0)


@pytest.mark.parametrize("data, message", [
    ({"instances": 0}, "instances"),
    ({"ci_sticky": 1}, "true or false"),
    ({"max_pushes": True}, "integer"),
    ({"bogus": 1}, "unknown"),
])
def test_config_from_json_refuses_bad_input(data, message):
    with pytest.raises(ValueError, match=message):
        SlotsConfig.from_json(data)


def test_config_round_trips():
    config = SlotsConfig(ci_sticky=True, max_pushes=3)
    assert SlotsConfig.from_json(config.to_json()) == config


def test_bad_slot_name_is_a_one_line_action_error():
    with pytest.raises(ValueError, match="slot must be production or staging, got 'prod'"):
        SLOTS.action({"type": "set_image", "slot": "prod"})


def test_the_single_region_start_puts_both_slots_on_the_release_tag():
    """cobalt c4127bad73 appdev.tf: both slots on :release, built by the template itself."""
    state = initial_state(SlotsConfig(start="release", instances=2))
    obs = observe(state)
    for slot in ("production", "staging"):
        assert obs["slots"][slot]["image"] == {"tag": "release"}
        assert [i["digest"] for i in obs["slots"][slot]["instances"]] == [0, 0]
    assert obs["registry"]["tags"] == {"release": 0}
    assert SlotsConfig.from_json({"start": "release"}).start == "release"
    with pytest.raises(ValueError, match="start must be one of empty, release, release-unbuilt, webhook"):
        SlotsConfig.from_json({"start": "full"})


def test_the_single_region_start_before_its_build_lands_fails_on_the_missing_tag():
    """c4127bad73 appdev.tf orders nothing between the template's build and the slots:
    started first, both sit on a tag that does not exist yet, and the build is the first push."""
    state = initial_state(SlotsConfig(start="release-unbuilt", instances=2))
    obs = observe(state)
    assert obs["registry"]["digests"] == [] and obs["registry"]["webhook"] is None
    for slot in ("production", "staging"):
        assert obs["slots"][slot]["image"] == {"tag": "release"}
        assert obs["slots"][slot]["instances"] == [{"digest": None, "status": "crash_loop"}] * 2
    # the build is a push: within max_pushes, and the crash retries are on offer
    kinds = [a.kind for a in candidate_actions(obs, SlotsConfig(start="release-unbuilt", max_pushes=1))]
    assert kinds.count("push") == 2
    assert "push" not in [a.kind for a in candidate_actions(obs, SlotsConfig(start="release-unbuilt",
                                                                             max_pushes=0))]


def test_the_webhook_start_is_cobalt_before_pr_324():
    """242e0a9a76: Terraform created production on :release with DOCKER_ENABLE_CI and a
    registry-wide webhook at its CD URL, built nothing (isolated-service template), and
    gave the staging slot no content; slots-webhook-tag starts there."""
    assert SLOTS.default_config(SLOTS.variant("slots-webhook-tag")).start == "webhook"
    assert SLOTS.default_config(SLOTS.variant("slots-pipeline-tag")).start == "empty"
    state = initial_state(SlotsConfig(start="webhook", instances=1))
    obs = observe(state)
    assert obs["registry"]["webhook"] == {"target": "production", "scope": None}
    production, staging = obs["slots"]["production"], obs["slots"]["staging"]
    assert production["image"] == {"tag": "release"}
    assert production["settings"] == [{"name": "DOCKER_ENABLE_CI", "value": True, "sticky": False}]
    assert production["instances"] == [{"digest": None, "status": "crash_loop"}]
    assert staging["image"] is None and staging["settings"] == []
    assert staging["instances"] == [{"digest": None, "status": "empty"}]
    # the first push reaches production through the webhook, with no set_image at all
    webhook = VARIANTS["slots-webhook-tag"]
    delivered = webhook.step(webhook.step(state, Push(True)), DeliverWebhook())
    assert [i.digest for i in delivered.site("production").instances] == [0]


def test_the_webhook_staging_start_is_the_design_proposal_and_scenario_4():
    """#212 (35e73dae): the release tag's webhook deploys to the staging slot; both slots
    on :release with DOCKER_ENABLE_CI, nothing built yet. #316 scenario 4 as the issue
    tells it: the push fires B's webhook, B runs the build, and A's own retry takes it
    into production; the delivery itself leaves production alone."""
    designed = VARIANTS["slots-webhook-staging-tag"]
    assert SLOTS.default_config(designed).start == "webhook-staging"
    state = initial_state(SlotsConfig(start="webhook-staging", instances=1))
    obs = observe(state)
    assert obs["registry"]["webhook"] == {"target": "staging", "scope": "app:release"}
    for slot in ("production", "staging"):
        assert obs["slots"][slot]["image"] == {"tag": "release"}
        assert obs["slots"][slot]["settings"] == [{"name": "DOCKER_ENABLE_CI", "value": True, "sticky": False}]
        assert obs["slots"][slot]["instances"] == [{"digest": None, "status": "crash_loop"}]
    pushed = designed.step(state, Push(True))
    delivered = designed.step(pushed, DeliverWebhook())
    assert served(delivered, "staging") == [(0, "running")]
    assert served(delivered, "production") == served(pushed, "production") == [(None, "crash_loop")]
    retried = designed.step(delivered, CrashRetry("production", 0))
    assert served(retried, "production") == [(0, "running")]
    from deployspec.scenario import record

    config, story = SLOTS.default_config(designed), (Push(True), DeliverWebhook(), CrashRetry("production", 0))
    trace = record(SLOTS, designed.name, config, SLOTS.property("production_runs_only_released_images"),
                   story, title="scenario 4 as told", settle=False)
    assert len(trace["steps"]) == 3  # broken at the retry, not before
    with pytest.raises(ValueError, match="holds"):
        record(SLOTS, designed.name, config, SLOTS.property("push_does_not_touch_production"), story,
               title="scenario 4 as told")


def test_the_immutable_design_needs_terraform_to_leave_no_mutable_tag():
    """From the single-region start production keeps :release until the first
    release: push, swap, swap back ends on the new build. From the empty start
    (the isolated-service template) the same property is proven."""
    from deployspec.engines.explore import explore_config, search
    from deployspec.models import get_model

    model = get_model("slots")
    prop = model.property("rollback_restores_previous")
    config = explore_config(model, model.variant("slots-pipeline-immutable"))
    assert config.start == "empty"
    held = search(model, "slots-pipeline-immutable", prop, budget=60, seed=0, out_dir=None, config=config)
    assert held.verdict == "holds" and held.stats["complete"]
    broken = search(model, "slots-pipeline-immutable", prop, budget=60, seed=0, out_dir=None,
                    config=attrs.evolve(config, start="release"))
    assert broken.verdict == "violated" and broken.trace_length == 3
    assert [s["action"]["type"] for s in broken.trace["steps"]] == ["push", "swap", "swap"]


@pytest.mark.parametrize("name, start", [
    *(("slots-webhook-tag", s) for s in STARTS if s != "webhook-staging"),
    *(("slots-webhook-staging-tag", s) for s in STARTS if s != "webhook"),
    *(("slots-pipeline-tag", s) for s in STARTS if not s.startswith("webhook")),
])
def test_the_tag_designs_break_what_they_declare_from_every_start(name, start):
    """Where Terraform leaves the slots (no content, both on :release built or not,
    or cobalt's app before PR #324) does not change the tag designs' verdicts. (A start
    with another design's webhook is not one of a design's starts: PR #324's design on the
    app as it was before PR #324, or the coded webhook's Terraform, which adds its webhook
    only where there is none, on the app of the design proposal's staging webhook.)

    The design's own start is searched within its exploration bounds (the verdicts
    ``check --engine explore`` gives); the others within two pushes, where every violation
    shows (in at most 327 states) and each property that holds is proven: with three, the
    holding searches from ``release`` reach 244,352 states (two minutes, one of them
    stopped by its budget)."""
    from deployspec.engines.explore import explore_config, search
    from deployspec.models import get_model

    model = get_model("slots")
    variant = model.variant(name)
    config = explore_config(model, variant)
    if start != config.start:
        config = attrs.evolve(config, start=start, max_pushes=2)
    results = {p.name: search(model, name, p, budget=60, seed=0, out_dir=None, config=config)
               for p in model.properties}
    assert {p for p, r in results.items() if r.verdict == "violated"} == set(variant.declares)
    assert all(r.stats["complete"] for r in results.values())  # proofs, not a budget's word


def test_production_runs_what_it_ran_at_the_start_without_a_release():
    """What Terraform put in production counts as released: a first step that
    changes nothing there is no violation."""
    from deployspec.spec.core import Monitor, Step

    from deployspec.models import get_model

    model = get_model("slots")
    state = initial_state(SlotsConfig(start="release", instances=1))
    after = VARIANTS["slots-pipeline-tag"].step(state, Validate())
    step = Step(0, Validate().to_json(), "user", None, observe(state), observe(after))
    assert Monitor((model.property("production_runs_only_released_images"),)).advance(step) is None
    restarted = VARIANTS["slots-pipeline-tag"].step(VARIANTS["slots-pipeline-tag"].step(after, Push(True)),
                                                    Restart("production"))
    later = Step(1, Restart("production").to_json(), "user", None, observe(after), observe(restarted))
    m = Monitor((model.property("production_runs_only_released_images"),))
    assert m.advance(step) is None and m.advance(later) is not None  # the pushed d1 was never released
