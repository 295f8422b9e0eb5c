"""A contract run names the action kinds that took effect nowhere in it: whatever the
implementation does with them, no check judged it (a slots run from empty slots with
pinned digests: no restart, recycle or crash retry changes anything)."""

from __future__ import annotations

import json

import pytest

from deployspec.cli import main
from deployspec.contract import harness
from deployspec.models import get_model


def idle_block(out: str) -> list[str]:
    """The summary's lines on what never took effect: its first line, the indented advice
    under it, and a "never asked" line after them, if any."""
    lines = out.splitlines()
    (at,) = [i for i, line in enumerate(lines) if line.startswith("never took effect")]
    end = at + 1
    while end < len(lines) and lines[end].startswith("  "):
        end += 1
    return lines[at:end + (end < len(lines) and lines[end].startswith("never asked"))]


def contract(capsys, *argv: str) -> tuple[int, str]:
    status = main(["contract", *argv])
    return status, capsys.readouterr().out


def test_a_slots_run_from_empty_slots_names_what_it_never_exercised(capsys):
    status, out = contract(capsys, "--python", "deployspec.contract.examples:slots_pipeline_immutable",
                           "--model", "slots", "--examples", "20", "--property", "no_latent_drift")
    assert status == 0, out
    assert idle_block(out) == [
        ("never took effect: deliver_webhook, restart, recycle, crash_retry (refused, or changing nothing, at every "
         "step of the run: no check judged what they do)"),
        ("  on the reference designs, --bound start=release gives restart, recycle, crash_retry and --bound "
         "start=webhook gives deliver_webhook something to do")]


def test_a_bound_the_run_already_sent_is_not_suggested(capsys):
    status, out = contract(capsys, "--python", "deployspec.contract.examples:slots_pipeline_immutable",
                           "--model", "slots", "--examples", "20", "--property", "push_does_not_touch_production",
                           "--bound", "start=release")
    assert status == 0, out
    first, advice = idle_block(out)
    assert first.startswith("never took effect: deliver_webhook (")
    assert advice == ("  the --bound start given leaves deliver_webhook nothing to do (--bound start=webhook would "
                      "give deliver_webhook something)")


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
    refused, advice, never = idle_block(out)  # the advice under the kinds it is about, not under "never asked"
    assert "scale_out" not in refused and "restart" in refused
    assert advice.startswith("  on the reference designs, --bound start=release gives restart")
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


def _widenings():
    return [(m, w, v) for m in ("capi", "slots") for w in get_model(m).widening for v in get_model(m).variants]


@pytest.mark.parametrize("model, widening, variant", _widenings(),
                         ids=lambda x: getattr(x, "bound", x))
def test_each_suggested_bound_gives_its_kinds_something_to_do_exactly_on_the_designs_said(model, widening, variant):
    """What the note suggests holds: under the bound, each shipped design's own object has
    each kind take effect in a short run, exactly where ``offered_by`` says (capi designs
    before canaries refuse every ``continue_``, whatever the bounds); and the
    configuration it makes is one the note counts as offering them (the default is not)."""
    from deployspec.argtypes import bound

    name, value = bound(widening.bound.strip("'"))
    default = get_model(model).config_type()
    assert not widening.given_in(default.to_json())
    assert widening.given_in({**default.to_json(), name: value})
    run = harness.run(get_model(model), harness.Target("python", "deployspec.contract.examples:"
                                                        + variant.replace("-", "_")),
                      reference=variant, properties=[f"conforms_to_{variant}"], max_examples=30, seed=0,
                      bounds={name: value}, known=False)
    assert run.exit_status == 0
    took = {kind: run.took_effect[kind] for kind in widening.kinds}
    assert all(took.values()) if widening.offered_by(get_model(model).variants[variant]) else not any(
        took.values()), took


def test_a_reference_that_never_has_them_act_is_said_so_and_no_bound_is_suggested(capsys):
    """With --reference capi-2022 the note suggested canary plans, which capi-2022 refuses
    whatever the bounds (a user's report); then, with them given, it blamed the
    implementation for refusing what the reference refuses too."""
    for extra in ([], ["--bound", "canary_plans=[[],[50]]"]):
        status, out = contract(capsys, "--python", "deployspec.contract.examples:capi_2022", "--model", "capi",
                               "--reference", "capi-2022", "--property", "conforms_to_capi-2022",
                               "--examples", "20", *extra)
        assert status == 0, out
        assert idle_block(out) == [
            ("never took effect: continue_ (refused, or changing nothing, at every step of the run: no check judged "
             "what they do)"),
            ("  capi-2022 gives continue_ nothing to do under any bounds (it has no canary deployments), so neither "
             "does an implementation that conforms to it")]


def test_kinds_the_configuration_already_offers_are_the_implementations_refusals(capsys):
    """Canaries offered (any non-empty plan): a controller refusing every continue_ is not
    told to add the canary bound it already runs with (the review's finding)."""
    status, out = contract(capsys, "--python", "tests.test_machine_wait:NeverContinues", "--model", "capi",
                           "--bound", "canary_plans=[[50],[100]]", "--property", "single_active_deployment",
                           "--examples", "30")
    assert status == 0, out
    assert idle_block(out) == [
        ("never took effect: continue_ (refused, or changing nothing, at every step of the run: no check judged what "
        "they do)"),
        ("  this configuration gives continue_ something to do on the reference designs, so the implementation "
        "refused or ignored them, or the searches never reached where they act: --reference VARIANT asks what they "
        "must do")]


def test_a_bound_the_user_narrowed_is_not_suggested_back(capsys):
    """``--reference capi-safe --bound 'canary_plans=[]'`` (what docs/contract.md advises for
    an implementation without canaries) was told to give canary plans, as if it had missed
    them (a user's report): the note now says the bound given is what leaves them idle."""
    status, out = contract(capsys, "--python", "deployspec.contract.examples:capi_safe", "--model", "capi",
                           "--reference", "capi-safe", "--bound", "canary_plans=[]", "--examples", "20",
                           "--property", "conforms_to_capi-safe")
    assert status == 0, out
    assert idle_block(out)[1:] == [("  the --bound canary_plans given leaves continue_ nothing to do (--bound "
                                    "'canary_plans=[[],[50],[100],[50,100]]' would give continue_ something)")]


def test_a_canary_plan_without_steps_is_a_canary_offered():
    """``canary_plans=[[]]`` offers a canary of one step, whose pause a continue_ ends: the
    note called it the bound's choice to leave continue_ nothing to do (the review's finding)."""
    (widening,) = get_model("capi").widening
    assert widening.given_in({"canary_plans": [[]]}) and not widening.given_in({"canary_plans": []})


def test_two_values_of_a_bound_the_run_was_given_make_one_note(capsys):
    """From empty slots, start=release and start=webhook each give some kinds something to
    do: two near-identical lines said so (the review's finding); one names both."""
    status, out = contract(capsys, "--python", "deployspec.contract.examples:slots_pipeline_immutable",
                           "--model", "slots", "--bound", "start=empty", "--examples", "10",
                           "--property", "no_latent_drift")
    assert status == 0, out
    assert idle_block(out)[1:] == [
        ("  the --bound start given leaves restart, recycle, crash_retry, deliver_webhook nothing to do (--bound "
         "start=release would give restart, recycle, crash_retry and --bound start=webhook would give "
         "deliver_webhook something)")]


def test_kinds_idle_before_a_violation_stopped_the_search_are_not_called_refused(capsys):
    """A run that stopped at its violation in its first example said stage and scale never
    took effect "at every step of the run", and a user read it as their controller refusing them."""
    status, out = contract(capsys, "--python", "deployspec.contract.examples:capi_2022", "--model", "capi",
                           "--property", "app_stays_available", "--no-known", "--bound", "canary_plans=[]",
                           "--examples", "30")
    assert status == 1, out
    assert idle_block(out)[0].endswith("(refused, or changing nothing, at every step the run took before violations "
                                       "stopped its searches, so not a sign the implementation refuses them: no "
                                       "check judged what they do)")
    # one check that held ran its whole search: what stayed idle there is the implementation's
    status, out = contract(capsys, "--python", "deployspec.contract.examples:capi_2022", "--model", "capi",
                           "--property", "app_stays_available", "--property", "deployment_ships_its_droplet",
                           "--no-known", "--bound", "canary_plans=[]", "--examples", "30")
    assert status == 1 and "at every step of the run: no check judged" in idle_block(out)[0]
