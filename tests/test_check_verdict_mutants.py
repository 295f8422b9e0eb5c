"""Behaviours of how ``check`` reaches and reports its verdicts that a mutation pass over
``check``, ``declarations``, ``traces``, ``minimize``, ``report``, ``outputs``, ``junit``,
``files`` and ``batches`` found unpinned: what an interrupted close look still reports,
how often a property without causes is searched, which markers a close look's table
carries, a vacuous proof's JUnit case where it contradicts a declaration, and the bounds
of the close look a mismatch suggests (a bug the pass found). Each test was written
against a hand-made mutant the rest of the suite let through; its docstring names it."""

from __future__ import annotations

import json
import shlex
import xml.etree.ElementTree as ET

import pytest

from deployspec import junit
from deployspec.engines.result import Result
from deployspec.models import get_model

from .cli_runs import run
from .junit_reports import cases_of, outcome_of, totals_agree

# --- check.py ----------------------------------------------------------------------


def test_a_close_look_interrupted_in_its_explorer_still_reports_the_random_search_s_violation(
        capsys, tmp_path, monkeypatch):
    """A close look's random search found (and saved) a violation; the explorer that follows
    is interrupted before it finds any: the saved violation is the cell's verdict (failed,
    named in the report), not a skipped cell beside a file nobody mentions. (Mutant C12:
    ``_judge`` passing on only what the explorer had found.)"""
    from deployspec.engines import explore

    def interrupted(*a, **k):
        raise KeyboardInterrupt

    monkeypatch.setattr(explore, "search", interrupted)
    report, out = tmp_path / "check.xml", tmp_path / "found"
    with pytest.raises(KeyboardInterrupt):
        run(capsys, "check", "--model", "capi", "--variant", "capi-2022", "--engine", "hypothesis",
            "--property", "app_stays_available", "--seed", "0", "--out", str(out), "--junit", str(report))
    (saved,) = out.glob("capi-2022--app_stays_available--*.json")
    totals_agree(report)
    case = cases_of(report)["app_stays_available"]
    assert outcome_of(case) == junit.FAILURE and saved.name in case.find("failure").text
    assert "violated: capi-2022 · app_stays_available; 1 counterexample saved" in capsys.readouterr().err


def test_a_violation_without_a_cause_is_searched_for_once():
    """A property that names no cause is one story: after its violation no further search
    runs (one that skips "no cause" would skip every violation and report a proof that
    nothing else breaks it). (Mutant C13: the ``r.cause is None`` stop dropped.)"""
    from deployspec import check

    calls = []

    def search(model, variant, prop, *, budget, skip_causes=frozenset(), **kwargs):
        calls.append(set(skip_causes))
        verdict = "holds" if skip_causes else "violated"
        return Result(model.name, variant, prop.name, "explore", verdict, message=verdict)

    capi = get_model("capi")
    found = check.causes(search, capi, "capi-2022", capi.property("single_active_deployment"), limit=6,
                         budget=1, cause_budget=1)
    assert calls == [set()]
    assert [r.verdict for r in found] == ["violated"] and "other_causes" not in found[0].stats


# --- report.py ---------------------------------------------------------------------


def test_a_close_look_marks_no_violation_beyond_the_default_search():
    """``+`` is a declaration's mark, as ``!`` is: a close look's table shows what its
    searches found, and what the variant declares beyond is said once, under it
    (``declared_by``). (Mutant R2: ``_beyond`` without ``declared``.)"""
    from deployspec.report import matrix

    rs = [Result("capi", "capi-current", "single_active_deployment", "explore", "violated")]
    close = matrix(rs, declared=False)
    assert "+" not in close and "beyond the default search" not in close
    assert "VIOLATED +" in matrix(rs, declared=True)


# --- junit_cases.py ----------------------------------------------------------------


def test_a_vacuous_proof_that_contradicts_a_declaration_fails_its_case_as_the_status_does(capsys, tmp_path):
    """capi-2022's API refuses a deploy with max_in_flight, so with ``--bound max_in_flight=[2]``
    its declared violation holds, vacuously: a mismatch (``holds ? !``, exit 1), whose case
    fails; only a vacuous proof that agrees is skipped (the table's ``?``). (Mutant J5: every
    vacuous case skipped, so the report passed a run that exited 1.)"""
    report = tmp_path / "check.xml"
    status, out, _ = run(capsys, "check", "--model", "capi", "--engine", "explore", "--bound",
                         "max_in_flight=[2]", "--property", "single_active_deployment", "--junit", str(report))
    assert status == 1 and "capi-2022     holds ? !" in out
    totals_agree(report)
    outcomes = {(c.get("classname"), c.get("name")): outcome_of(c)
                for c in ET.parse(report).getroot().iter("testcase")}
    assert outcomes[("deployspec.check.capi.capi-2022", "single_active_deployment")] == junit.FAILURE
    assert outcomes[("deployspec.check.capi.capi-pr3072", "single_active_deployment")] == junit.SKIPPED


@pytest.mark.parametrize("engine", ["explore", "hypothesis"])
def test_the_close_look_a_mismatch_suggests_keeps_the_run_s_bounds(capsys, engine):
    """The close look under a ``!`` looks at what the cell looked at: without the run's
    ``--bound`` it looked at the variant's own configuration and showed the opposite verdict
    (capi-2022 refuses a deploy with max_in_flight, so with ``max_in_flight=[2]`` its declared
    violation holds; by default it is violated). Found as mutant R5 of ``_mismatch``, which
    kept an explorer proof's bounds where the code kept them only for a violation declared
    beyond the default search, and none for the random search."""
    status, out, _ = run(capsys, "check", "--model", "capi", "--engine", engine, "--bound", "max_in_flight=[2]",
                         "--property", "single_active_deployment", "--budget", "1")
    assert status == 1
    note = next(line for line in out.splitlines() if line.startswith("! capi-2022 · single_active_deployment"))
    command = shlex.split(note.split("a close look: ", 1)[1])
    assert command[0] == "deployspec" and command[-2:] == ["--bound", "max_in_flight=[2]"]
    _, out, _ = run(capsys, *command[1:], "--budget", "1", "--json")
    assert {r["verdict"] for r in json.loads(out)["results"]} == {"holds"}
