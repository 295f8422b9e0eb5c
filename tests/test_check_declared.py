"""``check --variant V --declared``: the named designs judged as the matrix judges them, by
what each declares (a CI gate of one's own design without every shipped one: a user had to
run the whole matrix, 73 s, to gate one design); with ``--incident``, a violation the
design declares is expected."""

import json

import attrs
import pytest

from deployspec.models import get_model

from .cli_runs import run, valid_json_output
from .test_incident import SEED_INCIDENT

PROP = ("--property", "app_stays_available")


@pytest.fixture
def undeclaring(monkeypatch):
    """capi-2022 as a design that does not declare the seed's violation."""
    capi = get_model("capi")
    monkeypatch.setitem(capi.variants, "capi-2022",
                        attrs.evolve(capi.variants["capi-2022"], declares=frozenset()))


def test_a_named_design_is_judged_by_what_it_declares(capsys):
    status, out, _err = run(capsys, "check", "--variant", "capi-2022", "--variant", "capi-safe", *PROP, "--declared")
    assert status == 0 and out.rstrip().endswith("every variant shows exactly the violations it declares")
    assert "shortest" not in out  # (the matrix's verdicts: no close look's traces)
    status, out, _err = run(capsys, "check", "--variant", "capi-2022", *PROP, "--declared", "--json")
    doc = valid_json_output(json.loads(out))
    assert status == 0 and doc["matches_declarations"] is True
    assert run(capsys, "check", "--variant", "capi-2022", *PROP)[0] == 1  # (a close look: any violation fails)


def test_a_violation_the_design_does_not_declare_fails_the_gate(capsys, undeclaring):
    status, out, _err = run(capsys, "check", "--variant", "capi-2022", *PROP, "--declared")
    assert status == 1 and "MISMATCH: some verdicts differ from what the variants declare" in out


def test_an_incident_s_declared_violations_are_expected(capsys, tmp_path):
    (tmp_path / "i.txt").write_text(SEED_INCIDENT)
    argv = ["check", "--incident", str(tmp_path / "i.txt"), "--variant", "capi-2022", "--variant", "capi-safe", *PROP]
    assert run(capsys, *argv)[0] == 1
    status, out, _err = run(capsys, *argv, "--declared")
    assert status == 0 and out.splitlines()[-2].endswith(
        "violated in some interleaving: app_stays_available (each declared by it: expected)")


def test_an_incident_s_undeclared_violation_fails_and_is_named(capsys, tmp_path, undeclaring):
    (tmp_path / "i.txt").write_text(SEED_INCIDENT)
    status, out, _err = run(capsys, "check", "--incident", str(tmp_path / "i.txt"), "--variant", "capi-2022", *PROP,
                            "--declared")
    assert status == 1 and out.splitlines()[-1].endswith(
        "violated in some interleaving: app_stays_available; not declared by it: app_stays_available")


def test_the_junit_report_of_an_incident_s_declared_violation_passes_as_the_status_does(capsys, tmp_path):
    """It failed the case while the run exited 0 (a review's finding): a CI reading the report failed."""
    import xml.etree.ElementTree as ET

    (tmp_path / "i.txt").write_text(SEED_INCIDENT)
    report = tmp_path / "r.xml"
    status, _out, _err = run(capsys, "check", "--incident", str(tmp_path / "i.txt"), "--variant", "capi-2022", *PROP,
                             "--declared", "--junit", str(report))
    (case,) = ET.parse(report).getroot().iter("testcase")
    assert status == 0 and case.find("failure") is None
    assert case.find("system-out").text.startswith("VIOLATED, as capi-2022 declares (expected)\n")


def test_a_matrix_of_named_designs_refuses_workers_as_the_matrix_does(capsys):
    status, out, err = run(capsys, "check", "--variant", "capi-safe", *PROP, "--declared", "--workers", "2")
    assert (status, out) == (2, "") and "--workers splits an exhaustive search" in err


def test_an_incident_s_json_says_of_each_violation_whether_it_is_expected(capsys, tmp_path, undeclaring):
    """A CI script filtered on declared_violated alone and flagged capi-current's
    deployment_never_resumes, which it declares beyond the default search, while the run
    exited 0: ``expected`` says it as the exit status judges it."""
    (tmp_path / "i.txt").write_text(SEED_INCIDENT)
    argv = ("check", "--incident", str(tmp_path / "i.txt"), "--variant", "capi-current", "--variant", "capi-2022",
            "--declared", "--json", "--property", "app_stays_available", "--property", "deployment_never_resumes")
    status, out, _err = run(capsys, *argv)
    doc = valid_json_output(json.loads(out))
    said = {(r["variant"], r["property"]): r.get("expected") for r in doc["results"] if r["verdict"] == "violated"}
    # capi-2022 here declares nothing (the fixture): its violations make the run fail
    assert said[("capi-current", "deployment_never_resumes")] is True
    assert said[("capi-current", "app_stays_available")] is True
    assert said[("capi-2022", "app_stays_available")] is False and status == 1
    assert all("expected" not in r for r in doc["results"] if r["verdict"] != "violated")
    plain = [a for a in argv if a != "--declared"]
    assert not any("expected" in r for r in json.loads(run(capsys, *plain)[1])["results"])  # (not --declared)
