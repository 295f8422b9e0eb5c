"""A contract run names the action kinds that took effect nowhere in it: whatever the
implementation does with them, no check judged it (a slots run from empty slots with
pinned digests: no restart, recycle or crash retry changes anything)."""

from __future__ import annotations

import json

import pytest

from deployspec.cli import main
from deployspec.contract import harness
from deployspec.models import get_model

REFERENCE = {"capi": "capi-safe", "slots": "slots-pipeline-immutable"}


def contract(capsys, *argv: str) -> tuple[int, str]:
    status = main(["contract", *argv])
    return status, capsys.readouterr().out


def test_a_slots_run_from_empty_slots_names_what_it_never_exercised(capsys):
    status, out = contract(capsys, "--python", "deployspec.contract.examples:slots_pipeline_immutable",
                           "--model", "slots", "--examples", "20", "--property", "no_latent_drift")
    assert status == 0, out
    assert ("never took effect: deliver_webhook, restart, recycle, crash_retry (refused, or changing nothing, at "
            "every step of the run: no check judged what they do); the reference designs give them something to "
            "do with --bound start=release (restart, recycle, crash_retry), --bound start=webhook "
            "(deliver_webhook)") in out.splitlines()


def test_a_bound_the_run_already_sent_is_not_suggested(capsys):
    status, out = contract(capsys, "--python", "deployspec.contract.examples:slots_pipeline_immutable",
                           "--model", "slots", "--examples", "20", "--property", "push_does_not_touch_production",
                           "--bound", "start=release")
    assert status == 0, out
    (note,) = [line for line in out.splitlines() if line.startswith("never took effect")]
    assert note.startswith("never took effect: deliver_webhook (") and note.endswith(
        "with --bound start=webhook (deliver_webhook)")


def test_a_kind_the_run_never_asked_for_is_not_said_to_be_refused(capsys):
    """With the plan at its largest from the start no scale-out is offered: it was said
    "refused, or changing nothing, at every step" though never sent (a user's report)."""
    status, out = contract(capsys, "--python", "deployspec.contract.examples:slots_pipeline_immutable",
                           "--model", "slots", "--examples", "20", "--property", "no_latent_drift",
                           "--bound", "instances=3", "--bound", "max_instances=3", "--json")
    assert status == 0
    report = json.loads(out)
    assert report["asked"]["scale_out"] == 0 < report["asked"]["restart"]
    status, out = contract(capsys, "--python", "deployspec.contract.examples:slots_pipeline_immutable",
                           "--model", "slots", "--examples", "20", "--property", "no_latent_drift",
                           "--bound", "instances=3", "--bound", "max_instances=3")
    (note,) = [line for line in out.splitlines() if line.startswith("never took effect")]
    refused, never = note.split("; ")[:2]
    assert "scale_out" not in refused and "restart" in refused
    assert never.startswith("never asked: scale_out (this configuration gave the searches no such action")


def test_json_counts_each_kind(capsys):
    status, out = contract(capsys, "--python", "deployspec.contract.examples:capi_safe", "--model", "capi",
                           "--examples", "20", "--property", "single_active_deployment", "--json")
    assert status == 0
    took = json.loads(out)["took_effect"]
    assert list(took) == list(get_model("capi").vocabulary)
    assert took["continue_"] == 0  # the default configuration offers no canary
    assert all(n > 0 for kind, n in took.items() if kind != "continue_"), took


def test_a_run_where_every_kind_took_effect_says_nothing_of_it(capsys):
    status, out = contract(capsys, "--python", "deployspec.contract.examples:capi_safe", "--model", "capi",
                           "--reference", "capi-safe", "--examples", "30", "--property", "conforms_to_capi-safe")
    assert status == 0, out
    assert "never took effect" not in out


@pytest.mark.parametrize("model, suggested, kinds, already", [
    (model, *entry) for model in ("capi", "slots") for entry in get_model(model).widening])
def test_each_suggested_bound_gives_its_kinds_something_to_do_on_the_reference(model, suggested, kinds, already):
    """What the note suggests holds: under the bound, the reference design's own object
    has each kind take effect in a short run; and the configuration it makes is one the
    note counts as offering them (the default is not)."""
    from deployspec.argtypes import bound

    name, value = bound(suggested.strip("'"))
    default = get_model(model).config_type()
    assert not already(default.to_json())
    assert already({**default.to_json(), name: value})
    reference = REFERENCE[model]
    run = harness.run(get_model(model), harness.Target("python", "deployspec.contract.examples:"
                                                        + reference.replace("-", "_")),
                      reference=reference, properties=[f"conforms_to_{reference}"], max_examples=100, seed=0,
                      bounds={name: value}, known=False)
    assert run.exit_status == 0
    assert all(run.took_effect[kind] > 0 for kind in kinds), run.took_effect


def test_kinds_the_configuration_already_offers_are_the_implementations_refusals(capsys):
    """Canaries offered (any non-empty plan): a controller refusing every continue_ is not
    told to add the canary bound it already runs with (the review's finding)."""
    status, out = contract(capsys, "--python", "tests.test_machine_wait:NeverContinues", "--model", "capi",
                           "--bound", "canary_plans=[[50],[100]]", "--property", "single_active_deployment",
                           "--examples", "30")
    assert status == 0, out
    (note,) = [line for line in out.splitlines() if line.startswith("never took effect")]
    assert note == ("never took effect: continue_ (refused, or changing nothing, at every step of the run: no check "
                    "judged what they do); this configuration gives continue_ something to do on the reference "
                    "designs, so the implementation refused or ignored them: --reference VARIANT asks what they "
                    "must do")
