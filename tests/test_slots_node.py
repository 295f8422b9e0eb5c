"""examples/slots-node: an App Service pipeline in plain Node.js, checked over the protocol.

By default it is cobalt's design before PR #324 (a registry-wide webhook to
production's CI/CD URL, both slots on the mutable tag `:release`), so the contract
run must find cobalt #316 in it, and it must conform to the slots-webhook-tag
reference variant step by step. With --immutable it is the fix
(slots-pipeline-immutable) and holds every property.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from deployspec import traces
from deployspec.cli import main

SERVER = Path(__file__).resolve().parents[1] / "examples" / "slots-node" / "server.js"
TAGGED = f"node {SERVER}"
IMMUTABLE = f"node {SERVER} --immutable"
pytestmark = pytest.mark.skipif(shutil.which("node") is None,
                                reason="node is not installed: the example is a Node.js program")


def test_the_contract_run_ships_an_unreviewed_image(capsys, tmp_path):
    # cobalt's Terraform start: production on :release (not built yet), DOCKER_ENABLE_CI, the webhook.
    status = main(["contract", "--exec", TAGGED, "--model", "slots", "--bound", 'start="webhook"',
                   "--property", "production_runs_only_released_images", "--examples", "10", "--seed", "0",
                   "--out", str(tmp_path), "--name", "slots-node"])
    out = capsys.readouterr().out
    assert status == 1, out
    (path,) = tmp_path.glob("slots-node--production_runs_only_released_images--*.json")
    trace = traces.load(path)
    # cobalt #316 scenario 4: a push, and its webhook delivery restarts production on the new image.
    assert [s["action"] for s in trace["steps"]] == [{"type": "push", "healthy": True}, {"type": "deliver_webhook"}]
    assert trace["violation"]["step"] == 1 and trace["settle_from"] == 1
    assert trace["config"]["start"] == "webhook"
    production = trace["steps"][1]["observation"]["slots"]["production"]
    assert production["site"] == "A" and production["image"] == {"tag": "release"}
    assert [i["digest"] for i in production["instances"]] == [0, 0]
    assert trace["extra"]["implementation"]["name"] == "slots-node"
    assert "production runs d0 after step 1 (deliver_webhook), not what the latest release put there" in out
    # The fix, from cobalt's start, still has the webhook Terraform made; from its own (empty) start it holds.
    assert main(["replay", str(path), "--exec", IMMUTABLE]) == 1
    assert main(["replay", str(path), "--exec", IMMUTABLE, "--bound", "start=empty"]) == 0
    assert "(from another start than recorded; with start=\"empty\"): production_runs_only" in capsys.readouterr().out


def test_without_a_start_the_pipeline_itself_creates_the_webhook(capsys, tmp_path):
    # No start given: empty slots; the pipeline's set_image(production), cobalt's Terraform for the
    # site, adds DOCKER_ENABLE_CI and the registry-wide webhook.
    # (seed 0; seed 1's search finds first that a swap ships what staging pulled, unvalidated)
    status = main(["contract", "--exec", TAGGED, "--model", "slots", "--property", "production_runs_only_released_images",
                   "--examples", "10", "--seed", "0", "--out", str(tmp_path)])
    out = capsys.readouterr().out
    assert status == 1, out
    (path,) = tmp_path.glob("implementation--production_runs_only_released_images--*.json")
    trace = traces.load(path)
    assert "start" not in trace["config"]
    # the release's set_image made the webhook, the push fired it: production pulls the build
    # at the next step that (re)starts a container there (the violation's cause names it)
    kinds = [s["action"]["type"] for s in trace["steps"]]
    assert kinds[:2] == ["set_image", "push"] and len(kinds) == 3
    assert trace["violation"]["cause"] == kinds[2] in ("deliver_webhook", "crash_retry", "restart", "recycle")
    # The immutable mode replays it without breaking anything: its set_image has nothing to deploy yet.
    assert main(["replay", str(path), "--exec", IMMUTABLE]) == 0, capsys.readouterr().out


def test_it_conforms_to_slots_webhook_tag(capsys):
    status = main(["contract", "--exec", TAGGED, "--model", "slots", "--reference", "slots-webhook-tag",
                   "--property", "conforms_to_slots-webhook-tag", "--examples", "40", "--seed", "1"])
    out = capsys.readouterr().out
    assert status == 0, out


def test_the_immutable_mode_holds_every_property(capsys):
    status = main(["contract", "--exec", IMMUTABLE, "--model", "slots", "--reference", "slots-pipeline-immutable",
                   "--examples", "10", "--seed", "1"])
    out = capsys.readouterr().out
    assert status == 0, out
    verdicts = {line.split()[0]: line.split()[1] for line in out.splitlines()
                if line.startswith(("conforms_to_", "production_", "rollback_", "push_", "swap_", "slot_", "no_"))}
    assert verdicts == dict.fromkeys(["conforms_to_slots-pipeline-immutable", "production_runs_only_released_images",
                                      "rollback_restores_previous", "push_does_not_touch_production",
                                      "swap_keeps_production_serving", "slot_runs_one_version", "no_latent_drift"],
                                     "holds"), out


def test_every_shipped_slots_finding_replays_on_the_example_from_its_own_start(capsys):
    """Each start of the protocol's table, webhook-staging included (the example refused
    it: a fault that ended the replay of the shipped folder after 8 of 17 files); each
    line names the start the trace records."""
    shipped = SERVER.parents[2] / "counterexamples" / "slots"
    status = main(["replay", str(shipped), "--exec", TAGGED])
    lines = capsys.readouterr().out.splitlines()
    assert status == 1 and len(lines) == len(list(shipped.glob("*.json"))) + 1  # and how to replay elsewhere
    assert lines[-1].startswith("(--bound start=NAME replays from another start")
    staged = [ln for ln in lines if "slots-webhook-staging-tag--" in ln]
    assert staged and all("(from start=webhook-staging, as recorded" in ln for ln in staged)
