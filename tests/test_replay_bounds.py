"""``replay --bound NAME=VALUE``: a trace replayed with some of its configuration changed,
e.g. from another start (slots: where Terraform leaves the app)."""

import json
import sys
from pathlib import Path

import pytest

from .cli_runs import SEED, run

SLOTS = Path(__file__).parent.parent / "counterexamples" / "slots"
#: found from cobalt's start (start=webhook): a push, then the webhook's delivery
WEBHOOK = SLOTS / "slots-webhook-tag--production_runs_only_released_images--81eea19543.json"


def test_a_slots_trace_from_another_start(capsys):
    assert json.loads(WEBHOOK.read_text())["config"]["start"] == "webhook"
    status, out, _ = run(capsys, "replay", str(WEBHOOK))
    assert status == 1
    # From empty slots there is no webhook until the pipeline's set_image makes one: nothing to deliver.
    status, out, _ = run(capsys, "replay", str(WEBHOOK), "--bound", "start=empty")
    assert status == 0
    assert out == (f"{WEBHOOK}: does not reproduce on slots-webhook-tag (from another start than recorded; "
                   'with start="empty"): production_runs_only_released_images holds (1 action(s) refused: step 1 '
                   'deliver_webhook(): no webhook delivery pending)\n')


def test_another_design_replayed_with_a_bound_that_keeps_its_start_says_its_own_start(capsys):
    """The fix's own start (its Terraform) is why it began elsewhere, not a --bound that
    leaves the start alone; a bound that moves the start is said as such."""
    status, out, _ = run(capsys, "replay", str(WEBHOOK), "--variant", "slots-pipeline-immutable",
                         "--bound", "settle_steps=3")
    assert status == 0 and "on slots-pipeline-immutable (from its own start; with settle_steps=3): " in out
    status, out, _ = run(capsys, "replay", str(WEBHOOK), "--bound", "settle_steps=3")
    assert status == 1 and "on slots-webhook-tag (from start=webhook, as recorded; with settle_steps=3): " in out
    hint = "(--bound start=NAME replays from another start, another place Terraform leaves the app)"
    assert out.splitlines()[-1] == hint  # once, under the lines
    status, out, _ = run(capsys, "replay", str(WEBHOOK), "--bound", "start=webhook")
    assert status == 1 and len(out.splitlines()) == 1  # a start given: nothing to tell
    status, out, _ = run(capsys, "replay", str(WEBHOOK), "--json")
    assert status == 1 and json.loads(out)  # the document alone
    # two instances: not the fix's own start either
    status, out, _ = run(capsys, "replay", str(WEBHOOK), "--variant", "slots-pipeline-immutable",
                         "--bound", "instances=2")
    assert status == 0 and "on slots-pipeline-immutable (from another start than recorded; with instances=2): " in out


def test_an_implementation_s_own_start_is_not_put_down_to_a_bound_that_keeps_the_start(capsys, monkeypatch):
    """This fake starts with a droplet, whatever the bounds: its own start, not settle_steps=3's."""
    monkeypatch.setattr(sys, "path", list(sys.path))
    monkeypatch.chdir(Path(__file__).parent)  # --python finds contract_fakes in the current folder
    status, out, _ = run(capsys, "replay", str(SEED), "--python", "contract_fakes:starts_with_a_droplet",
                         "--bound", "settle_steps=3")
    assert status == 0 and "(from its own start; with settle_steps=3): app_stays_available holds" in out


def test_a_bound_of_the_search_is_refused(capsys):
    """A replay runs the recorded actions: max_deployments=1 would not stop the trace's second deploy."""
    status, out, err = run(capsys, "replay", str(SEED), "--bound", "max_deployments=1")
    assert (status, out) == (2, "")
    assert err == (f"deployspec: error: {SEED}: --bound max_deployments: bounds what a search tries; a replay "
                   "runs the recorded actions (it takes: settle_steps)\n")


def test_a_bound_the_replay_uses_is_said_with_the_verdict(capsys):
    status, out, _ = run(capsys, "replay", str(SEED), "--bound", "settle_steps=5")
    assert status == 1 and "reproduces on capi-2022 (with settle_steps=5): app_stays_available at step 5" in out


def test_a_bound_given_twice_with_two_values_is_refused(capsys):
    status, _, err = run(capsys, "replay", str(WEBHOOK), "--bound", "start=empty", "--bound", "start=release")
    assert (status, err) == (2, 'deployspec: error: --bound start: given twice ("empty" and "release")\n')
    assert run(capsys, "replay", str(WEBHOOK), "--bound", "start=empty", "--bound", "start=empty")[0] == 0


def test_a_bound_that_does_not_fit_is_said_before_any_program_starts(capsys, tmp_path):
    started = tmp_path / "started"
    status, out, err = run(capsys, "replay", str(WEBHOOK), "--exec", f"touch {started}; cat", "--bound", "start=nowhere")
    assert status == 2 and out == "" and not started.exists()
    assert err == (f"deployspec: error: {WEBHOOK}: --bound: start must be one of empty, release, "
                   "release-unbuilt, webhook, webhook-staging, got 'nowhere'\n")


def test_a_bound_of_the_other_model_names_the_file(capsys):
    status, _, err = run(capsys, "replay", str(SEED), str(WEBHOOK), "--bound", "start=empty")
    assert status == 2
    # (it listed every field as known, the search's bounds too, which a replay refuses)
    assert err == f"deployspec: error: {SEED}: --bound start: no bound of capi (a replay takes: settle_steps)\n"
    status, _, err = run(capsys, "replay", str(SEED), "--bound", "settle_step=3")
    assert (status, err) == (2, (f"deployspec: error: {SEED}: --bound settle_step: no bound of capi: did you mean "
                                 "'settle_steps'? (a replay takes: settle_steps)\n"))


@pytest.mark.parametrize("command", [["check", "--model", "capi", "--variant", "capi-safe"],
                                     ["contract", "--exec", "cat", "--model", "capi"]])
def test_check_and_contract_refuse_a_bound_given_twice_too(capsys, command):
    status, _, err = run(capsys, *command, "--bound", "max_instances=1", "--bound", "max_instances=2")
    assert (status, err) == (2, "deployspec: error: --bound max_instances: given twice (1 and 2)\n")
    # as JSON compares: true is not 1 (Python's True == 1 let the second win, the run went on with 1)
    status, _, err = run(capsys, *command, "--bound", "max_instances=true", "--bound", "max_instances=1")
    assert (status, err) == (2, "deployspec: error: --bound max_instances: given twice (true and 1)\n")


def test_an_implementation_trace_without_a_reference_replays_on_a_variant(capsys, tmp_path):
    """RC11: a trace a contract run found with the default reference (no --reference in its
    extra.implementation) starts from the model's default: known, so --variant replays it."""
    t = json.loads(SEED.read_text())
    t["variant"] = "my-impl"
    t["extra"] = {"implementation": {"kind": "python", "spec": "m:f"}}
    f = tmp_path / "impl.json"
    f.write_text(json.dumps(t))
    status, out, err = run(capsys, "replay", str(f), "--variant", "capi-2022")
    assert (status, err) == (1, ""), err
    assert "reproduces on capi-2022" in out
