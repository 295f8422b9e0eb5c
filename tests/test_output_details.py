"""Trace outputs in detail: the text table (what `show` and `check` print), the HTML
page and the ITF export (what Apalache/Quint tooling loads). Each pins a detail a
reader acts on: which step broke, what was refused, how a number is encoded."""

from __future__ import annotations

import json

from deployspec.reference.capi.actions import Tick

from deployspec import render_itf
from deployspec.models import get_model
from deployspec.render_text import action_label, capi_state, render, render_steps


def proc(pid, instances, droplet=0):
    return {"id": pid, "droplet": droplet, "instances": list(instances)}


def dep(did, state, reason=None):
    return {"id": did, "state": state, "status_reason": reason or state}


def obs(processes=(), deployments=()):
    return {"app": None, "droplets": [], "processes": list(processes), "deployments": list(deployments)}


def trace(n=3, *, bad=1, settle_from=None, rejected=(), **fields):
    """A capi trace of ``n`` ticks, breaking at step ``bad``."""
    steps = [{"action": {"type": "tick"}, "rejected": "refused here" if i in rejected else None,
              "observation": obs([proc(0, ["RUNNING"])])} for i in range(n)]
    return {"model": "capi", "variant": "v", "property": "p", "engine": "explore", "seed": 7,
            "violation": {"step": bad, "message": "it broke"}, "initial": obs(), "steps": steps,
            "settle_from": settle_from, **fields}


# -- the text table ----------------------------------------------------------


def test_action_labels_leave_out_defaults_and_name_things_as_the_table_does():
    """`deploy()` is the rolling, one-at-a-time deploy; anything else is spelled out,
    processes and droplets by the names the lanes use (P3, d1)."""
    assert action_label({"type": "deploy", "strategy": "rolling", "max_in_flight": 1, "canary_steps": [],
                         "web_instances": 0}) == "deploy()"
    assert action_label({"type": "deploy", "strategy": "canary", "max_in_flight": 2, "web_instances": 3}) == \
        "deploy(strategy=canary, max_in_flight=2, web_instances=3)"
    assert action_label({"type": "tick", "failed": [1, 2], "reports_unavailable": [0]}) == \
        "tick(failed=d1,d2, reports_unavailable=d0)"
    assert action_label({"type": "runtime", "process": 3}) == "runtime(process=P3)"
    # every deployment list of a tick, as the tick says itself (finish_later and late were
    # shown as JSON lists, ``tick(finish_later=[0])``, where the search's messages say d0)
    tick = Tick(failed=(1,), reports_unavailable=(0,), finish_later=(2, 3), late=(4,))
    assert action_label(tick.to_json()) == str(tick) == \
        "tick(failed=d1, reports_unavailable=d0, finish_later=d2,d3, late=d4)"


def test_the_state_line_abbreviates_instances_and_shows_a_reason_that_differs():
    """R/s/x as the heading explains, 0 for none; a reason only when it adds something."""
    lanes, deps = capi_state(obs([proc(0, ["RUNNING", "STARTING", "CRASHED"], droplet=1), proc(2, [])],
                                 [dep(0, "CANCELED", "SUPERSEDED"), dep(1, "DEPLOYED")]))
    assert lanes == "P0[dr1]:Rsx P2[dr0]:0"
    assert deps == "d0:CANCELED/SUPERSEDED d1:DEPLOYED"


def test_the_table_marks_the_break_the_settle_phase_and_a_refusal():
    """The settle line comes right before the first settle step; a refused step says
    REJECTED and, on the next line, why."""
    lines = render_steps(get_model("capi"), trace(4, rejected=(1,))["steps"], 2, 3)[2:]
    assert [ln[:5] for ln in lines] == ["    0", "    1", "     ", ">>  2", "     ", "    3"]
    assert "REJECTED" in lines[1] and lines[2].strip() == "rejected: refused here"
    assert lines[4].strip() == "-- users stop; the platform settles --"


def test_the_head_says_title_seed_and_cause_and_a_settled_violation_comes_last():
    """The seed reproduces the run, the cause names the mechanism; a violation seen
    only after settling is marked after the last step, not at one."""
    found = trace(2, bad=-1, title="the seed bug", violation={"step": -1, "message": "never settled",
                                                               "cause": "a lost tick"})
    text = render(found | {"engine": "hypothesis"}).splitlines()
    assert text[0] == "capi / v: p violated (engine hypothesis, seed 7)"
    # the explorer draws nothing: no seed named, even where an older file recorded one
    assert render(found).splitlines()[0] == "capi / v: p violated (engine explore)"
    assert text[1:4] == ["  the seed bug", "  never settled", "  cause: a lost tick"]
    assert text[-1] == ">> after settling: never settled"
    assert not any(ln.startswith(">>") for ln in text[:-1])


# -- ITF ---------------------------------------------------------------------


def test_itf_integers_beyond_2_to_the_53_are_bigints_both_ways():
    """JSON readers (JavaScript, Quint) lose digits past 2**53: ITF says those as strings."""
    edge = 2**53 - 1
    assert render_itf.value(edge) == edge and render_itf.value(-edge) == -edge
    assert render_itf.value(edge + 1) == {"#bigint": str(edge + 1)}
    assert render_itf.value(-edge - 1) == {"#bigint": str(-edge - 1)}
    assert render_itf.value([None, {"k": 2**64}]) == [render_itf.NONE, {"k": {"#bigint": str(2**64)}}]


def test_itf_says_what_the_schema_says_a_value_is():
    """Null was ``#unserializable`` (refused by Quint's ofItfNormalized and itf-rs), a
    nullable value changed type between states, the registry's tags were a record
    (keyed by data: a tag ``rel-1`` is no field name) and a slot's image was a record
    of one shape or another."""
    root = get_model("slots").schema()
    props = root["properties"]
    webhook = props["registry"]["properties"]["webhook"]
    assert render_itf.value(None, webhook, root) == {"tag": "None", "value": {"#tup": []}}
    assert render_itf.value({"target": "staging", "scope": "app:*"}, webhook, root) == {
        "tag": "Some", "value": {"target": "staging", "scope": {"tag": "Some", "value": "app:*"}}}
    tags = props["registry"]["properties"]["tags"]
    assert render_itf.value({"rel-1": 0, "#set": 2**60}, tags, root) == {
        "#map": [["rel-1", 0], ["#set", {"#bigint": str(2**60)}]]}
    image = root["$defs"]["slot"]["properties"]["image"]
    assert render_itf.value({"digest": 3}, image, root) == {"tag": "Some", "value": {"tag": "digest", "value": 3}}
    assert render_itf.value({"tag": "latest"}, image, root) == {"tag": "Some", "value": {"tag": "tag", "value": "latest"}}
    assert render_itf.value("aborted", props["last_swap"], root) == {"tag": "Some", "value": "aborted"}
    capi = get_model("capi").schema()
    web_instances = capi["properties"]["deployments"]["items"]["properties"]["web_instances"]
    assert render_itf.value(2, web_instances, capi) == {"tag": "Some", "value": 2}
    assert render_itf.value(1, {"type": "integer"}, capi) == 1


def test_itf_states_are_indexed_and_the_violation_points_at_the_state_after_its_step():
    """State 0 is the initial one, so step k's state is k + 1; a settled violation is
    the last state. Actions are variants named by their type; ``#meta`` holds strings."""
    t = trace(3, bad=1, seed=2**63)
    t["steps"][0]["action"]["failed"] = None
    itf = render_itf.render(t, source="here.json")
    assert [s["#meta"]["index"] for s in itf["states"]] == [0, 1, 2, 3]
    assert itf["states"][0]["action"] == {"tag": "init", "value": {"#tup": []}}
    assert itf["states"][1]["action"] == {"tag": "tick", "value": {"failed": render_itf.NONE}}
    meta = itf["#meta"]
    assert meta["violation-state"] == "2" and meta["seed"] == str(2**63)
    assert meta["source"] == "here.json" and meta["description"] == "p violated: it broke"
    assert all(isinstance(v, str) for v in meta.values())
    settled = render_itf.render(trace(3, bad=-1, seed=None))
    assert settled["#meta"]["violation-state"] == "3" == str(len(settled["states"]) - 1)
    assert settled["#meta"]["source"] == "deployspec capi/v"
    assert "seed" not in settled["#meta"] and "settle-from-state" not in settled["#meta"]
    json.dumps(itf, allow_nan=False)
    named = render_itf.render(t, source="caf\udce9.json")
    assert named["#meta"]["source"] == "caf\\xe9.json"
    named["#meta"]["source"].encode("utf-8")  # strict readers refuse lone surrogates


def test_the_html_table_marks_the_break_a_refusal_and_a_settled_violation():
    """One row is marked bad (here the after-settling row); a refusal is greyed with its reason."""
    from deployspec import render_html

    page = render_html.render(trace(3, bad=-1, rejected=(1,)))
    assert '<tr class="rejected"><td>1</td><td>tick() — rejected: refused here</td>' in page
    assert page.count('class="bad"') == 1 and '<tr class="bad"><td></td><td colspan="3">after settling: it broke' in page


def test_every_text_of_a_trace_stays_text_in_the_html_page():
    """A trace file is anyone's: its names, message, refusals and states must not
    become markup (a ``<script>`` in a variant's name would run in the reader's browser)."""
    import html

    from deployspec import render_html

    bad = "<script>x&y</script>"
    t = trace(2, bad=-1, rejected=(0,), variant=bad, property=bad, engine=bad)
    t["violation"]["message"] = t["steps"][0]["rejected"] = bad
    t["steps"][1]["observation"]["deployments"] = [dep(0, bad)]
    page = render_html.render(t)
    assert "<script>" not in page
    e = html.escape(bad)
    assert f"<title>{e}: {e} violated</title>" in page and f"<h1>{e}: {e} violated</h1>" in page
    assert f"<p><strong>{e}</strong></p>" in page and f"engine {e}," in page
    assert f"<td>tick() — rejected: {e}</td>" in page and f"<code>d0:{e}</code>" in page
    assert f"after settling: {e}</td>" in page


def test_a_slot_s_tag_stays_text_in_the_html_table():
    """A tag name is any string a registry holds; the state column shows it."""
    import html
    from pathlib import Path

    from deployspec import render_html, traces

    t = traces.load(Path(__file__).parent.parent / "counterexamples" / "slots" / "scenario-1-rollback-by-swap.json")
    t["steps"][-1]["observation"]["slots"]["production"]["image"] = {"tag": "<img src=x>"}
    page = render_html.render(t)
    assert "<img" not in page and html.escape("<img src=x>") in page


def test_the_text_and_html_tables_show_the_platform_before_the_first_step():
    """A property may compare with what was there before the first step ("not the d0 it
    ran before the previous swap"): the SVG drew it, the text and HTML tables started after
    step 0."""
    from deployspec import render_html

    t = trace(2, initial=obs([proc(5, ["CRASHED"], droplet=4)], [dep(3, "DEPLOYING")]))
    lines = render(t).splitlines()
    at = next(i for i, line in enumerate(lines) if "(initial)" in line)
    assert lines[at].split() == ["(initial)", "P5[dr4]:x", "d3:DEPLOYING"]
    assert lines[at + 1].split()[:2] == ["0", "tick()"]  # before step 0, under the table's key
    assert lines[at - 1].split()[0] == "P<process>[dr<droplet>]:<instances>"
    page = render_html.render(t)
    assert ('<tr class="initial"><td></td><td>(initial)</td><td><code>P5[dr4]:x</code></td>'
            '<td><code>d3:DEPLOYING</code></td></tr>') in page
    assert page.index("(initial)") < page.index("<td>0</td><td>tick()")
    # an initial state wider than every step's sets the column's width, as a step's would
    wide = trace(2, initial=obs([proc(i, ["RUNNING"] * 3, droplet=i) for i in range(6)], [dep(3, "DEPLOYING")]))
    lines = render(wide).splitlines()
    initial = next(line for line in lines if "(initial)" in line)
    step = next(line for line in lines if line.strip().startswith("0  tick()"))
    assert len(initial.split("d3:DEPLOYING")[0]) > 60 and initial.index("d3:") == len(step.rstrip()) - 1  # under the step's "-"


def test_a_cause_is_said_with_what_its_property_says_it_means():
    """``crash_retry`` alone did not say "cobalt #316 scenario 2"; a cause the property does
    not explain, or a conformance check's, is said as it is."""
    import contextlib
    import io

    from deployspec.commands import _print_causes
    from deployspec.engines.result import Result
    from deployspec.render_text import cause_said

    def slots(cause, prop="production_runs_only_released_images"):
        return {"model": "slots", "property": prop, "violation": {"cause": cause}}

    assert cause_said(slots("crash_retry")) == ("crash_retry: a retried start changed what production runs (cobalt "
                                                "#316 scenarios 2 and 4: App Service retries a failing start and "
                                                "pulls the moved tag)")
    assert cause_said(slots("validate")) == "validate"
    assert cause_said(slots("swap", "conforms_to_slots-webhook-tag")) == "swap"
    results = [Result("slots", "v", "production_runs_only_released_images", "explore", "violated", cause=c,
                      stats={"other_causes": "holds for all 3 states"} if c == "swap" else {})
               for c in ("scale_out", "swap")]
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        _print_causes(results)
    lines = out.getvalue().splitlines()
    assert lines[0] == ("v / production_runs_only_released_images: causes found scale_out, swap; any other "
                        "(explore): holds for all 3 states")
    assert lines[1:] == [("  scale_out: a new instance runs what production was not given (cobalt #316 scenario 3: "
                         "it pulls the moved tag)"),
                         ("  swap: the swap changed what the site it promotes runs (cobalt #316 scenario 1: the swap "
                          "restarts that site, which pulls the moved tag)")]


def test_every_meaning_is_of_a_cause_its_property_can_give():
    """A key misspelt in ``meanings`` would never be said, silently."""
    import re

    from deployspec.spec import capi as capi_spec

    slots, capi = get_model("slots"), get_model("capi")
    explained = {p.name: dict(p.meanings) for m in (slots, capi) for p in m.properties if p.meanings}
    assert set(explained) == {"production_runs_only_released_images", "rollback_restores_previous",
                              "app_stays_available", "user_scale_not_lost", "capacity_within_bound",
                              "deployment_never_resumes"}
    assert set(explained["capacity_within_bound"]) <= set(capi.vocabulary)  # the verb that added them
    assert all(f"``{cause}``" in capi_spec.deployment_never_resumes.doc for cause in explained["deployment_never_resumes"])
    assert set(explained["production_runs_only_released_images"]) <= set(slots.vocabulary)  # the step's kind
    assert set(explained["rollback_restores_previous"]) <= set(slots.vocabulary)
    for cause in explained["user_scale_not_lost"]:
        assert re.fullmatch(r"(push|scale|deploy)-while-(idle|deploying|prepaused|paused|canceling)", cause), cause
    documented = capi_spec._loss_cause.__doc__  # the causes _loss_cause names
    assert all(f"``{cause}``" in documented for cause in explained["app_stays_available"])
