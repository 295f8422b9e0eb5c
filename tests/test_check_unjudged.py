"""A check no engine can judge: refused before it searches where none of its cells can be
judged (``--engine z3`` on App Service), and no success where every cell was left unjudged
(n/a, unconfirmed), which exit 0 would have called a pass."""

import json

from .cli_runs import run


def test_a_run_no_engine_can_judge_is_refused_before_it_searches(capsys, tmp_path):
    """`--engine z3` on App Service, or on a property the selection rule does not bear on:
    a first-day user saw 28 "searches" end n/a and a table of them before the error."""
    from deployspec.engines import z3_engine

    report = tmp_path / "r.xml"
    for argv in (["--model", "slots"], ["--model", "slots", "--variant", "slots-pipeline-tag"],
                 ["--model", "capi", "--property", "single_active_deployment"]):
        status, out, err = run(capsys, "check", *argv, "--engine", "z3", "--junit", str(report))
        assert (status, out, err) == (2, "", f"deployspec: error: {z3_engine.none_judged(['capi-safe'])}\n")
        assert not report.exists()
    assert "judges capi's app_stays_available, cancel_restores_last_good, deployment_converges on capi-2022" in err


def test_a_close_look_no_engine_could_judge_says_why_and_is_no_success(capsys, tmp_path, monkeypatch):
    """Where the engine was expected to judge a cell and answered n/a all the same (here:
    slots, let through), every cell n/a, which exit 0 ("every property holds") would have
    called a pass; so would a report of skipped cases alone."""
    import xml.etree.ElementTree as ET

    from deployspec.engines import z3_engine

    monkeypatch.setattr(z3_engine, "judges", lambda variant, prop: True)
    report = tmp_path / "r.xml"
    status, out, err = run(capsys, "check", "--model", "slots", "--variant", "slots-pipeline-tag", "--engine", "z3",
                           "--junit", str(report))
    assert status == 2
    root = ET.parse(report).getroot()
    from deployspec.models import get_model

    every = str(len(get_model("slots").properties))  # each property n/a: a skipped case
    assert (root.get("errors"), str(sum(int(s.get("skipped")) for s in root.iter("testsuite")))) == ("1", every)
    assert "slots-pipeline-tag: n/a (z3) for production_runs_only_released_images, " in out
    assert err.endswith("deployspec: error: nothing was judged (z3: n/a); --engine hypothesis or explore judges "
                        "every property\n")
    status, out, _ = run(capsys, "check", "--model", "capi", "--variant", "capi-2022", "--engine", "z3",
                         "--property", "cancel_restores_last_good", "--property", "capacity_within_bound")
    assert status == 1  # one judged (violated), one not: the verdict stands
    assert "capi-2022: n/a (z3) for capacity_within_bound: the selection rule does not bear on" in out
    # a close look whose one cell is unconfirmed judged nothing either, and says so in its own word
    # (capi-pr3084's: the original comes back, so no state showing its views breaks it)
    status, _, err = run(capsys, "check", "--model", "capi", "--variant", "capi-pr3084", "--engine", "z3",
                         "--property", "cancel_restores_last_good", "--budget", "3")
    assert status == 2 and "nothing was judged (z3: unconfirmed);" in err, err
    status, out, err = run(capsys, "check", "--model", "slots", "--engine", "z3")  # the matrix too
    assert status == 2 and "every variant shows exactly" not in out and "nothing was judged" in err
    # nor does --json say the declarations were met: no cell contradicts them, none was judged
    status, out, _ = run(capsys, "check", "--model", "slots", "--engine", "z3", "--json")
    doc = json.loads(out)
    assert (status, doc["exit_status"], doc["matches_declarations"]) == (2, 2, False)
    assert all(r["matches_declaration"] for r in doc["results"])


def test_a_hold_by_the_z3_engine_alone_is_marked_as_the_selection_rule_s_not_the_property_s(capsys):
    """A soundness review gave capi-safe capi-current's cancel step: --engine z3 said holds
    (the web process kept is right) while the explorer took the app down in 4 steps. A cell
    the Z3 engine alone holds says it proves the rule; with the explorer's proof too, it is
    the property's."""
    status, out, _ = run(capsys, "check", "--model", "capi", "--variant", "capi-safe", "--engine", "z3",
                         "--property", "app_stays_available")
    assert status == 0 and "holds ~" in out
    assert ("~ capi-safe · app_stays_available: the Z3 engine proves the web process a cancel keeps; the cancel "
            "step and the rest of the design are not encoded, so the property itself is not proven there "
            "(--engine explore judges it)") in out
    from deployspec.engines.result import Result
    from deployspec.report import cell_of

    rule = Result("capi", "capi-safe", "app_stays_available", "z3", "holds", stats={"of": "selection rule"})
    proof = Result("capi", "capi-safe", "app_stays_available", "explore", "holds", stats={"complete": True})
    assert cell_of([rule]) == "holds ~" and cell_of([rule, proof]) == "holds"
