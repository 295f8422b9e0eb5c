"""``--junit FILE``: the verdicts as the JUnit XML a CI's test view reads, judged as the exit status is."""

import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from deployspec import junit, junit_cases
from deployspec.engines.result import Result

from .cli_runs import SEED, run
from .junit_reports import cases_of, outcome_of, totals_agree


def test_a_close_look_fails_the_violated_properties_with_their_traces(capsys, tmp_path):
    report, out = tmp_path / "check.xml", tmp_path / "found"
    status, _, _ = run(capsys, "check", "--model", "capi", "--variant", "capi-2022", "--engine", "explore",
                       "--property", "single_active_deployment", "--property", "capacity_within_bound",
                       "--out", str(out), "--junit", str(report))
    assert status == 1
    totals_agree(report)
    cases = cases_of(report)
    assert set(cases) == {"single_active_deployment", "capacity_within_bound"}
    for case in cases.values():
        assert case.get("classname") == "deployspec.check.capi.capi-2022"
        failure = case.find("failure")
        assert failure is not None and failure.get("message").startswith("VIOLATED: ")
        saved = next(line[len("saved: "):] for line in failure.text.splitlines() if line.startswith("saved: "))
        assert (out / saved.split("/")[-1]).is_file() and ">>" in failure.text  # the breaking step


def test_a_close_look_passes_what_holds_and_says_the_proof(capsys, tmp_path):
    report = tmp_path / "check.xml"
    status, _, _ = run(capsys, "check", "--model", "slots", "--variant", "slots-pipeline-immutable",
                       "--engine", "explore", "--property", "production_runs_only_released_images",
                       "--junit", str(report))
    assert status == 0
    root = totals_agree(report)
    (case,) = root.iter("testcase")
    assert outcome_of(case) == junit.PASSED
    assert "explore: holds for all" in case.find("system-out").text  # (the verdict said once)


def _result(variant, prop, verdict, **kw) -> Result:
    return Result("capi", variant, prop, kw.pop("engine", "hypothesis"), verdict, **kw)


def test_the_matrix_fails_a_cell_only_where_it_differs_from_the_declaration():
    """capi-2022 declares single_active_deployment violated and capi-safe that it holds:
    a violation there passes, a proof there passes, the opposite of either fails, and a
    search that ended in error is an error (as ``declarations.matches_declarations`` judges)."""
    results = [
        _result("capi-2022", "single_active_deployment", "violated", message="2 active deployments"),
        _result("capi-2022", "capacity_within_bound", "holds"),
        _result("capi-safe", "single_active_deployment", "holds"),
        _result("capi-safe", "capacity_within_bound", "violated", message="too many"),
        _result("capi-safe", "app_stays_available", "error", message="boom"),
    ]
    suites = junit_cases.check_suites(results, declared=True)
    by = {(s.name, c.name): c for s in suites for c in s.cases}
    assert by["check capi · capi-2022", "single_active_deployment"].outcome == junit.PASSED
    assert by["check capi · capi-2022", "single_active_deployment"].message == \
        "VIOLATED (hypothesis), as declared"
    assert by["check capi · capi-2022", "capacity_within_bound"].outcome == junit.FAILURE
    assert by["check capi · capi-2022", "capacity_within_bound"].message == "holds (hypothesis), declared violated"
    assert by["check capi · capi-safe", "single_active_deployment"].outcome == junit.PASSED
    assert by["check capi · capi-safe", "capacity_within_bound"].outcome == junit.FAILURE
    assert by["check capi · capi-safe", "app_stays_available"].outcome == junit.ERROR
    assert by["check capi · capi-safe", "app_stays_available"].message == "hypothesis: boom"


def test_a_cell_declared_violated_beyond_the_default_search_says_so_and_where():
    """The table's ``+``: either verdict passes, and ``holds (hypothesis), as declared`` read
    as a declared hold, with no word of the committed counterexample the table names."""
    for verdict, shown in (("holds", "holds"), ("violated", "VIOLATED")):
        [suite] = junit_cases.check_suites([_result("capi-pr3072", "deployment_converges", verdict)], declared=True)
        [case] = suite.cases
        assert case.outcome == junit.PASSED
        assert case.message.startswith(f"{shown} (hypothesis), as declared: violated beyond the default search "
                                       "(max_deployments=3 (explorer, 13 steps): ")
        assert case.message.endswith("counterexamples/capi/capi-pr3072--deployment_converges--defa35a0d4.json)")


def test_the_matrix_cell_follows_the_shown_verdict_as_the_exit_status_does():
    """A random search that missed a declared violation the explorer shows is no failure."""
    from deployspec import declarations

    results = [_result("capi-2022", "single_active_deployment", "holds"),
               _result("capi-2022", "single_active_deployment", "violated", engine="explore")]
    (suite,) = junit_cases.check_suites(results, declared=True)
    assert declarations.matches_declarations(results) and suite.cases[0].outcome == junit.PASSED
    alone = results[:1]
    (suite,) = junit_cases.check_suites(alone, declared=True)
    assert not declarations.matches_declarations(alone) and suite.cases[0].outcome == junit.FAILURE


def test_a_trace_that_could_not_be_saved_is_an_error_as_the_exit_status_says():
    """check exits 2 when --out could not take a trace; in the matrix the cell's
    verdict is as declared, so the case would pass: it is an error instead."""
    results = [_result("capi-2022", "single_active_deployment", "violated", unsaved="found/x.json: a directory")]
    (suite,) = junit_cases.check_suites(results, declared=True)
    assert suite.cases[0].outcome == junit.ERROR
    assert suite.cases[0].message == "VIOLATED, but not saved: found/x.json: a directory"
    # a close look: the violation is the news (a failure), and its message says what was not done
    (suite,) = junit_cases.check_suites(results, declared=False)
    assert suite.cases[0].outcome == junit.FAILURE
    assert suite.cases[0].message.endswith("; not saved: found/x.json: a directory")


def test_a_cell_no_engine_judged_is_skipped_in_the_matrix_too():
    results = [_result("capi-safe", "app_stays_available", "n/a", engine="z3", message="not a selection"),
               _result("capi-safe", "single_active_deployment", "unconfirmed", engine="z3", message="bounded")]
    for declared in (True, False):
        (suite,) = junit_cases.check_suites(results, declared=declared)
        assert [c.outcome for c in suite.cases] == [junit.SKIPPED, junit.SKIPPED]


def test_a_dot_in_a_variant_name_does_not_split_its_class_name():
    """Readers (Jenkins) take what follows the last dot of a class name for the class."""
    results = [Result("slots", "slots-claims.fixed", "slot_runs_one_version", "explore", "holds")]
    (suite,) = junit_cases.check_suites(results, declared=False)
    assert suite.cases[0].classname == "deployspec.check.slots.slots-claims_fixed"


def test_suites_are_stamped_with_the_start_of_the_run():
    import time

    text = junit.report("t", [junit.Suite("s", (junit.Case("c", "n"),))], started=86400.0)
    assert ET.fromstring(text).find("testsuite").get("timestamp") == \
        time.strftime("%Y-%m-%dT%H:%M:%S", time.localtime(86400.0))


def test_a_close_look_fails_a_violation_whatever_it_declares_and_skips_what_was_not_judged():
    results = [_result("capi-2022", "single_active_deployment", "violated", message="2 active"),
               _result("capi-2022", "app_stays_available", "n/a", engine="z3", message="not a selection")]
    cases = {c.name: c for s in junit_cases.check_suites(results, declared=False) for c in s.cases}
    assert cases["single_active_deployment"].outcome == junit.FAILURE
    assert cases["app_stays_available"].outcome == junit.SKIPPED


def test_a_contract_run_fails_each_violated_check(capsys, tmp_path):
    report = tmp_path / "contract.xml"
    status, _, _ = run(capsys, "contract", "--python", "deployspec.contract.examples:capi_2022", "--model", "capi",
                       "--property", "single_active_deployment", "--property", "capacity_within_bound",
                       "--examples", "20", "--seed", "0", "--out", str(tmp_path / "found"),
                       "--junit", str(report))
    assert status == 1
    root = totals_agree(report)
    cases = cases_of(report)
    assert outcome_of(cases["single_active_deployment"]) == junit.FAILURE
    text = cases["single_active_deployment"].find("failure").text
    assert "replay: deployspec replay" in text and "--python deployspec.contract.examples:capi_2022" in text
    assert "\n(first seen in example 1 of the search, with seed 0)" in text  # what --examples must reach
    assert cases["single_active_deployment"].get("classname") == "deployspec.contract.capi.implementation"
    props = {p.get("name"): p.get("value") for p in root.iter("property")}
    assert props["deployspec"][0].isdigit()  # the version the verdicts were reached with
    assert props["implementation"] == "python deployspec.contract.examples:capi_2022"
    assert props["config"].startswith("max_instances=")


def test_an_implementation_fault_is_an_error_and_leaves_the_other_checks_skipped(capsys, tmp_path, monkeypatch):
    report = tmp_path / "contract.xml"
    monkeypatch.chdir(Path(__file__).parent)  # --python finds contract_fakes in the current folder
    status, _, err = run(capsys, "contract", "--python", "contract_fakes:raising", "--model", "capi",
                         "--examples", "5", "--junit", str(report))
    assert status == 3, err
    totals_agree(report)
    outcomes = {name: outcome_of(c) for name, c in cases_of(report).items()}
    (faulted,) = [name for name, o in outcomes.items() if o == junit.ERROR]
    error = cases_of(report)[faulted].find("error")
    assert "KeyError" in error.get("message") and "deploying_web_process" in error.text
    # the same words as on stderr, then what the text report says of saving the steps
    assert f"deployspec: {error.text}" == err.splitlines()[0] + \
        "\n(use --out DIR to save the steps that led to the fault, to replay them)"
    planned = list(outcomes)
    after = planned[planned.index(faulted) + 1:]
    assert after and all(outcomes[name] == junit.SKIPPED for name in after)
    assert all(outcomes[name] == junit.PASSED for name in planned[:planned.index(faulted)])


def test_text_xml_cannot_hold_is_escaped_and_the_document_parses(tmp_path):
    """Control characters and the lone surrogates of a non-UTF-8 name are not XML 1.0,
    not even as references: they are written as Python escapes."""
    case = junit.Case("deployspec.check.capi.x", "p\x07\n\t", junit.FAILURE, "bell \x07 \udcff <b>",
                      "line 1\n\x1b[2J\tline 2 \ufffe")
    text = junit.report("t\x00", [junit.Suite("s", (case,), (("k\x01", "v\udcfe"),))])
    root = ET.fromstring(text.encode("utf-8"))
    failure = root.find("testsuite/testcase/failure")
    assert failure.get("message") == "bell \\x07 \\xff <b>"
    assert failure.text == "line 1\n\\x1b[2J\tline 2 \\ufffe"
    assert root.find("testsuite/testcase").get("name") == "p\\x07\\n\\t"  # an attribute: no raw line break
    assert root.find("testsuite/properties/property[@name='k\\x01']").get("value") == "v\\xfe"


@pytest.mark.parametrize("where, says", [("", "--junit: empty (give a file name)"),
                                         ("{tmp}", "--junit {tmp}: is a directory"),
                                         ("{tmp}/no/such/r.xml", "--junit {tmp}/no/such/r.xml: no folder {tmp}/no/such"),
                                         ("{tmp}/r/", "--junit {tmp}/r/: ends with /, a folder; give a file name")])
@pytest.mark.parametrize("command", ["check", "contract", "replay"])
def test_a_report_that_cannot_be_written_is_refused_before_any_search(capsys, tmp_path, where, says, command):
    argv = {"check": ["check", "--model", "capi", "--variant", "capi-2022"],
            "contract": ["contract", "--python", "deployspec.contract.examples:capi_2022", "--model", "capi"],
            "replay": ["replay", str(SEED)]}[command]
    status, out, err = run(capsys, *argv, "--junit", where.format(tmp=tmp_path))
    assert (status, out) == (2, "")
    assert err == f"deployspec: error: {says.format(tmp=tmp_path)}\n"


def test_a_report_that_fails_to_save_keeps_the_old_one_and_the_verdicts(capsys, tmp_path, monkeypatch):
    """The search is done and its verdicts are printed; the report that could not be
    written is one line on stderr, status 2, and the report already there is intact."""
    import deployspec.files

    report = tmp_path / "check.xml"
    report.write_text("the last run's report")

    def full_disk(fd):
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(deployspec.files.os, "fsync", full_disk)
    status, out, err = run(capsys, "check", "--model", "capi", "--variant", "capi-2022", "--engine", "explore",
                           "--property", "single_active_deployment", "--junit", str(report))
    assert status == 2 and ">>" in out
    assert err.splitlines()[-1] == f"deployspec: error: --junit {report}: cannot write: No space left on device"
    assert all(line.startswith("[") for line in err.splitlines()[:-1])  # before it, only the progress
    assert report.read_text() == "the last run's report"
    assert [p.name for p in tmp_path.iterdir()] == ["check.xml"]  # no temporary file left


def test_a_replayed_regression_folder_fails_each_file_that_still_reproduces(capsys, tmp_path, monkeypatch):
    """The shipped capi-2022 findings: each reproduces on its own variant, none on capi-safe.
    The folder is named by its absolute path; the cases, relative to the current folder
    (a CI's history of a case must not depend on where its agent checked out)."""
    folder = SEED.parent
    monkeypatch.chdir(folder.parents[1])
    files = sorted(f"counterexamples/capi/{p.name}" for p in folder.glob("*.json"))
    fixed, broken = tmp_path / "fixed.xml", tmp_path / "broken.xml"
    assert run(capsys, "replay", str(folder), "--variant", "capi-safe", "--junit", str(fixed))[0] == 0
    assert run(capsys, "replay", str(folder), "--junit", str(broken))[0] == 1
    for report, outcome in ((fixed, junit.PASSED), (broken, junit.FAILURE)):
        root = totals_agree(report)
        cases = cases_of(report)
        assert sorted(cases) == files and {outcome_of(c) for c in cases.values()} == {outcome}
        props = {p.get("name"): p.get("value") for p in root.iter("property")}
        assert props["on"] == ("variant capi-safe" if report is fixed else "each file's recorded variant")
    seed = cases_of(broken)[f"counterexamples/capi/{SEED.name}"]
    assert seed.get("classname") == "deployspec.replay.capi.app_stays_available"
    assert "reproduces on capi-2022: app_stays_available at step 5" in seed.find("failure").get("message")


def test_a_replay_fault_is_an_error_and_the_files_after_it_are_skipped(capsys, tmp_path, monkeypatch):
    report = tmp_path / "replay.xml"
    monkeypatch.chdir(Path(__file__).parent)
    other = next(p for p in sorted(SEED.parent.glob("*.json")) if p != SEED)
    status, _, err = run(capsys, "replay", str(SEED), str(other), "--python", "contract_fakes:raising",
                         "--junit", str(report))
    assert status == 3, err
    totals_agree(report)
    cases = cases_of(report)
    assert (outcome_of(cases[str(SEED)]), outcome_of(cases[str(other)])) == (junit.ERROR, junit.SKIPPED)
    assert err == (f"deployspec: {SEED}: {cases[str(SEED)].find('error').text}\n"
                   f"deployspec: not replayed after the fault: 1 file(s): {other}\n")


def test_a_report_never_takes_the_place_of_a_trace(capsys, tmp_path):
    """Not a trace being replayed (even through a link), nor a .json name, which the
    next replay of the folder would read as a trace and which a trace saved under
    --out could have: refused before any search, the trace left as it was."""
    trace = tmp_path / "seed.json"
    trace.write_bytes(SEED.read_bytes())
    link = tmp_path / "link.xml"
    link.symlink_to(trace)
    status, out, err = run(capsys, "replay", str(tmp_path), "--junit", str(link))
    assert (status, out) == (2, "")
    assert err == (f"deployspec: error: --junit {link}: links to {trace}: a .json name, for an XML report "
                   "(a folder's *.json files are read as traces); name it .xml\n")
    named = tmp_path / "seed.trace"  # a trace of another name, given by name: refused as the one replayed
    named.write_bytes(SEED.read_bytes())
    status, out, err = run(capsys, "replay", str(named), "--junit", str(named))
    assert (status, out) == (2, "")
    assert err == f"deployspec: error: --junit {named}: is a trace being replayed; write the report elsewhere\n"
    for argv in (["replay", str(tmp_path)],
                 ["check", "--model", "capi", "--variant", "capi-2022", "--out", str(tmp_path / "found")]):
        status, out, err = run(capsys, *argv, "--junit", str(trace))
        assert (status, out) == (2, "")
        assert err == (f"deployspec: error: --junit {trace}: a .json name, for an XML report (a folder's "
                       "*.json files are read as traces); name it .xml\n")
    # nor through a link of another name to a trace not being replayed (it was written over)
    other = tmp_path / "elsewhere.xml"
    other.symlink_to(trace)
    status, out, err = run(capsys, "check", "--model", "capi", "--variant", "capi-2022", "--engine", "explore",
                           "--property", "single_active_deployment", "--junit", str(other))
    assert (status, out) == (2, "")
    assert err == (f"deployspec: error: --junit {other}: links to {trace}: a .json name, for an XML report "
                   "(a folder's *.json files are read as traces); name it .xml\n")
    assert trace.read_bytes() == SEED.read_bytes()
    assert not (tmp_path / "found").exists()  # nothing made before the refusal


def test_the_report_goes_where_the_user_named_it_even_if_the_object_wanders(capsys, tmp_path, monkeypatch):
    """A --python object shares deployspec's process, and its current folder: ``wanders``
    moves into ``away/`` at each reset. The report is written where --junit named it
    when the command started (contract and replay)."""
    import os
    import sys

    monkeypatch.setattr(sys, "path", [str(Path(__file__).parent), *sys.path])
    monkeypatch.chdir(tmp_path)
    status, _, _ = run(capsys, "contract", "--python", "contract_fakes:wanders", "--model", "capi",
                       "--examples", "30", "--seed", "0", "--property", "single_active_deployment",
                       "--junit", "report.xml")
    assert status == 1 and os.getcwd() == str(tmp_path / "away")  # it did wander
    assert outcome_of(cases_of(tmp_path / "report.xml")["single_active_deployment"]) == junit.FAILURE
    monkeypatch.chdir(tmp_path)
    status, _, _ = run(capsys, "replay", str(SEED), "--python", "contract_fakes:wanders", "--junit", "replay.xml")
    assert status == 1 and os.getcwd() == str(tmp_path / "away")
    assert outcome_of(cases_of(tmp_path / "replay.xml")[str(SEED)]) == junit.FAILURE
    assert sorted(p.name for p in (tmp_path / "away").iterdir()) == []


@pytest.mark.parametrize("argv", [["replay", str(SEED), "--junit", "/dev/stdout"],
                                  ["show", str(SEED), "-o", "/dev/stdout"]])
def test_standard_output_named_as_the_file_is_written_into_not_replaced(tmp_path, argv):
    """``--junit /dev/stdout >> log``: /dev/stdout resolves to the log file, which
    must keep what it held and what the command printed before the report."""
    import subprocess
    import sys

    log = tmp_path / "log.txt"
    log.write_text("EARLIER\n")
    with open(log, "a") as out:
        status = subprocess.run([sys.executable, "-m", "deployspec", *argv], stdout=out, check=False).returncode
    text = log.read_text()
    assert status == (1 if argv[0] == "replay" else 0) and text.startswith("EARLIER\n")
    if argv[0] == "replay":
        assert f"{SEED}: reproduces on capi-2022" in text and text.rstrip().endswith("</testsuites>")
    else:
        assert "tick()" in text


def test_a_hang_is_an_error_as_long_as_the_wait_it_cost(capsys, tmp_path, monkeypatch):
    """``contract_fakes:hangs`` hangs at its first deploy; the case's time counts the wait."""
    import sys

    report = tmp_path / "contract.xml"
    monkeypatch.setattr(sys, "path", list(sys.path))
    monkeypatch.chdir(Path(__file__).parent)
    try:
        status, _, _ = run(capsys, "contract", "--python", "contract_fakes:hangs", "--model", "capi",
                           "--examples", "5", "--timeout", "0.5", "--property", "app_stays_available",
                           "--junit", str(report))
    finally:
        fakes = sys.modules.get("contract_fakes")
        if fakes is not None:
            fakes.Hangs.hung, fakes.Hangs.calls_after_hang = False, 0
    assert status == 3
    error = cases_of(report)["app_stays_available"]
    assert "did not return within 0.5 s" in error.find("error").get("message")
    assert float(error.get("time")) >= 0.5


def test_a_file_named_twice_is_two_cases_each_with_its_own_verdict(capsys, tmp_path, monkeypatch):
    """An implementation's second replay of a file may differ from its first: each run
    is a case of its own (they shared one name, and the report gave both the last
    verdict); ``./`` and a doubled ``/`` name the same case as the plain path."""
    from deployspec import replay_command

    monkeypatch.chdir(tmp_path)
    (tmp_path / "t").mkdir()
    (tmp_path / "t" / "seed.json").write_bytes(SEED.read_bytes())
    verdicts = iter([(0, "first: does not reproduce", {}), (1, "second: reproduces", {})])
    monkeypatch.setattr(replay_command, "_replay_one", lambda *a: None)
    monkeypatch.setattr(replay_command, "_report_replay", lambda path, *a: next(verdicts))
    report = tmp_path / "r.xml"
    assert run(capsys, "replay", "./t/seed.json", "t//seed.json", "--junit", str(report))[0] == 1
    cases = cases_of(report)
    assert sorted(cases) == ["t/seed.json", "t/seed.json #2"]
    assert outcome_of(cases["t/seed.json"]) == junit.PASSED
    assert outcome_of(cases["t/seed.json #2"]) == junit.FAILURE
    assert "second: reproduces" in cases["t/seed.json #2"].find("failure").get("message")


def test_a_file_outside_the_current_folder_keeps_its_absolute_name(capsys, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    report = tmp_path / "r.xml"
    assert run(capsys, "replay", str(SEED), "--junit", str(report))[0] == 1
    assert list(cases_of(report)) == [str(SEED)]


def test_the_same_name_twice_is_two_cases_and_a_linked_folder_names_them_as_typed(capsys, tmp_path, monkeypatch):
    """The identical path twice: the report kept the last verdict for both. And a path
    typed through a link to the current folder ($PWD, as a shell or a CI workspace gives
    it) is still named relative to it."""
    from deployspec import replay_command

    real = tmp_path / "real"
    (real / "t").mkdir(parents=True)
    (real / "t" / "seed.json").write_bytes(SEED.read_bytes())
    link = tmp_path / "link"
    link.symlink_to(real)
    monkeypatch.chdir(link)
    monkeypatch.setenv("PWD", str(link))
    verdicts = iter([(1, "first: reproduces", {}), (0, "second: does not reproduce", {})])
    monkeypatch.setattr(replay_command, "_replay_one", lambda *a: None)
    monkeypatch.setattr(replay_command, "_report_replay", lambda path, *a: next(verdicts))
    report = tmp_path / "r.xml"
    typed = str(link / "t" / "seed.json")
    assert run(capsys, "replay", typed, typed, "--junit", str(report))[0] == 1
    cases = cases_of(report)
    assert {name: outcome_of(c) for name, c in cases.items()} == \
        {"t/seed.json": junit.FAILURE, "t/seed.json #2": junit.PASSED}


def test_a_report_is_never_written_over_a_file_the_run_reads(capsys, tmp_path, monkeypatch):
    """A user's --junit named the --incident file, the --exec program and the design module in
    turn, and each became XML: a usage error now, and the file stays as it was."""
    import shlex
    import sys

    from .test_incident import SEED_INCIDENT

    monkeypatch.chdir(tmp_path)
    (tmp_path / "i.txt").write_text(SEED_INCIDENT)
    status, out, err = run(capsys, "check", "--incident", "i.txt", "--variant", "capi-safe", "--property",
                           "app_stays_available", "--junit", "./i.txt")
    assert (status, out) == (2, "") and "--junit ./i.txt: is i.txt, which this run reads" in err
    assert (tmp_path / "i.txt").read_text() == SEED_INCIDENT
    program = tmp_path / "ctl.py"
    program.write_text("print('a controller')\n")
    program.chmod(0o755)
    for command in (str(program), f"{shlex.quote(sys.executable)} {program}"):
        status, out, err = run(capsys, "contract", "--exec", command, "--model", "capi", "--examples", "3",
                               "--junit", "ctl.py")
        assert (status, out) == (2, "") and "which this run reads" in err, command
    assert program.read_text() == "print('a controller')\n"
    (tmp_path / "mine_designs.py").write_text("VARIANTS = []\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.setenv("DEPLOYSPEC_VARIANTS", "mine_designs")
    status, out, err = run(capsys, "replay", str(SEED), "--junit", "mine_designs.py")
    assert (status, out) == (2, "") and "which this run reads" in err
    assert (tmp_path / "mine_designs.py").read_text() == "VARIANTS = []\n"
