"""cobalt #316's four scenarios: the committed traces are what the scenarios build, and
the scenario x variant table in docs/findings.md is what replaying them shows (each design
from where its own Terraform leaves the app)."""

import json
import re
from pathlib import Path

import attrs
import pytest
from deployspec.reference.slots.actions import CrashRetry, Push
from deployspec.reference.slots.scenarios import SCENARIOS, build

from deployspec import traces
from deployspec.cli import main
from deployspec.models import get_model
from deployspec.replay import replay
from deployspec.scenario import record

ROOT = Path(__file__).parent.parent
DIR = ROOT / "counterexamples" / "slots"
SLOTS = get_model("slots")
NAMES = [s.name for s in SCENARIOS]


@pytest.mark.parametrize("scenario", SCENARIOS, ids=NAMES)
def test_committed_trace_is_the_scenario(scenario):
    committed = traces.load(DIR / f"{scenario.name}.json")
    fresh = json.loads(json.dumps(build(scenario)))
    for key in ("variant", "config", "property", "violation", "steps", "title"):
        assert committed[key] == fresh[key], key


def _table() -> dict[tuple[str, str], str]:
    """Rows of the findings table: (scenario number, variant) -> 'breaks'/'holds'."""
    text = (ROOT / "docs" / "findings.md").read_text()
    head = next(line for line in text.splitlines() if line.startswith("| scenario"))
    variants = [c.strip().strip("`") for c in head.strip("|").split("|")[1:]]
    out = {}
    for line in text.splitlines():
        m = re.match(r"\| (\d) ", line)
        if m:
            cells = [c.strip() for c in line.strip("|").split("|")[1:]]
            for v, cell in zip(variants, cells):
                out[(m.group(1), v)] = "breaks" if cell.startswith("**breaks") else "holds"
    return out


def test_findings_table_is_what_replay_shows():
    table = _table()
    assert len(table) == len(SCENARIOS) * len(SLOTS.variants)
    for i, scenario in enumerate(SCENARIOS, 1):
        trace = traces.load(DIR / f"{scenario.name}.json")
        for variant in SLOTS.variants:
            shown = "breaks" if replay(trace, variant=variant).reproduced else "holds"
            assert table[(str(i), variant)] == shown, (scenario.name, variant)


def test_replay_on_another_design_starts_where_its_terraform_leaves_the_app():
    """A scenario recorded from cobalt's app before PR #324 (production on :release, the
    webhook) replays on the pipeline designs from their own start, with no content: the
    setup is the design's. A start the search was given on purpose stays."""
    trace = traces.load(DIR / "scenario-4-first-deployment.json")
    assert trace["config"]["start"] == "webhook"
    for variant in ("slots-pipeline-tag", "slots-pipeline-immutable"):
        initial = replay(trace, variant=variant).session.initial
        assert initial["slots"]["production"]["image"] is None, variant
        assert initial["registry"]["webhook"] is None, variant
    on_purpose = json.loads(json.dumps(trace))
    on_purpose["config"]["start"] = "release-unbuilt"  # a --bound: both slots on the tag
    outcome = replay(on_purpose, variant="slots-pipeline-immutable")
    assert outcome.session.initial["slots"]["production"]["image"] == {"tag": "release"}
    assert outcome.reproduced  # the template's mutable tag, not the design's


def test_replay_says_when_a_design_started_from_its_own_start(capsys):
    path = str(DIR / "scenario-4-first-deployment.json")
    assert main(["replay", path, "--variant", "slots-pipeline-immutable"]) == 0
    assert "does not reproduce on slots-pipeline-immutable (from its own start)" in capsys.readouterr().out
    assert main(["replay", path]) == 1
    # on its own design, from the start it records, which the line names: a design that
    # pins digests meets the tag Terraform left there too (--bound start=… for another, said once)
    lines = capsys.readouterr().out.splitlines()
    assert "reproduces on slots-webhook-tag (from start=webhook, as recorded): " in lines[0]
    assert lines[1:] == ["(--bound start=NAME replays from another start, another place Terraform leaves the app)"]


def test_an_implementations_trace_replays_from_the_start_of_its_runs_reference():
    """A contract trace is named after the implementation; the configuration its run
    sent was ``--reference``'s own (``extra.implementation.reference``), so on another
    variant only the bounds given on purpose stay."""
    from deployspec.replay import recorded_on

    trace = json.loads(json.dumps(traces.load(DIR / "slots-webhook-tag--push_does_not_touch_production--fd9d9af5d7.json")))
    trace["variant"] = "implementation"
    trace["extra"] = {"implementation": {"python": "impl:make", "name": "impl", "reference": "slots-webhook-tag"}}
    assert recorded_on(trace, SLOTS) == "slots-webhook-tag"
    outcome = replay(trace, variant="slots-pipeline-tag")
    assert outcome.session.initial["registry"]["webhook"] is None and not outcome.reproduced
    assert outcome.session.config.instances == trace["config"]["instances"] == 1  # a bound of the search
    # without a reference the run sent the model's default (start=empty): start=webhook was chosen
    trace["extra"]["implementation"]["reference"] = None
    assert recorded_on(trace, SLOTS) is None
    assert replay(trace, variant="slots-pipeline-tag").reproduced
    trace["extra"] = {"implementation": "garbage"}  # a hand-edited file: the model's default
    assert recorded_on(trace, SLOTS) is None


def test_scenario_4_breaks_the_pipeline_tag_design_from_the_single_region_template():
    """PR #324's single-region template when the slots start before its own build: the
    build is the first push, and production's crash retry pulls it (#316 scenario 4)."""
    model = SLOTS
    config = attrs.evolve(model.default_config(model.variant("slots-pipeline-tag")), start="release-unbuilt")
    trace = record(model, "slots-pipeline-tag", config, model.property("production_runs_only_released_images"),
                   (Push(), CrashRetry("production", 0)), title="scenario 4, SR template", settle=False)
    assert len(trace["steps"]) == 2
    assert trace["steps"][-1]["observation"]["slots"]["production"]["instances"][0]["digest"] == 0


def test_replay_exit_statuses(capsys):
    files = [str(p) for p in sorted(DIR.glob("*.json"))]
    assert main(["replay", *files]) == 1
    out = capsys.readouterr().out
    assert out.count("reproduces on slots-") == len(files)
    assert main(["replay", *files, "--variant", "slots-pipeline-immutable"]) == 0
    assert "reproduces on" not in capsys.readouterr().out.replace("does not reproduce on", "")


def test_show_draws_a_scenario(capsys):
    assert main(["show", str(DIR / "scenario-1-rollback-by-swap.json")]) == 0
    out = capsys.readouterr().out
    assert "cobalt #316 scenario 1" in out and ">>  6  swap()" in out and "registry" in out


def test_bounds_that_do_not_fit_the_target_design_are_a_one_line_usage_error(monkeypatch):
    """The combined configuration is checked as a trace's own is: a trace's
    ``instances=3`` on a design whose own plan holds at most two is no
    configuration, said in one line, not replayed from a state no search could reach."""
    from deployspec.models import UsageError

    trace = json.loads(json.dumps(traces.load(DIR / "scenario-4-first-deployment.json")))
    trace["config"] |= {"instances": 3}  # given on purpose: the default is 2 (of at most 3)
    target = SLOTS.variant("slots-pipeline-immutable")
    monkeypatch.setitem(SLOTS.variants, target.name, attrs.evolve(target, config={"max_instances": 2}))
    with pytest.raises(UsageError, match=r"^cannot replay on slots-pipeline-immutable: the trace's bounds "
                                         r"\(instances=3\).*need 1 <= instances <= max_instances, got instances=3, max_instances=2$"):
        replay(trace, variant="slots-pipeline-immutable")
    monkeypatch.setitem(SLOTS.variants, target.name, target)
    production = replay(trace, variant="slots-pipeline-immutable").session.initial["slots"]["production"]
    assert len(production["instances"]) == 3  # the bound given on purpose, within the design's own


def test_a_found_trace_replays_with_more_instances_than_its_search_had(capsys):
    """Explored traces record max_instances=2 (the explorer's bound), and replay took
    instances but not max_instances: no replay of one could run 3 instances, though
    max_instances bounds only what a search tries."""
    found = str(DIR / "slots-pipeline-tag--slot_runs_one_version--20a2d8d0f1.json")
    assert main(["replay", found, "--bound", "instances=3", "--bound", "max_instances=2"]) == 2
    assert capsys.readouterr().err.endswith("need 1 <= instances <= max_instances, got instances=3, max_instances=2\n")
    assert main(["replay", found, "--bound", "instances=3", "--bound", "max_instances=3"]) == 1
    assert "with instances=3, max_instances=3): slot_runs_one_version at step 3" in capsys.readouterr().out
    assert main(["replay", found, "--bound", "instances=3"]) == 1  # (max_instances follows instances given alone)
    assert "with instances=3): slot_runs_one_version at step 3" in capsys.readouterr().out
