"""``deployspec contract`` and ``replay --exec/--python`` end to end.

The reference server is the implementation under test: capi-safe must pass,
capi-2022 must show the seed (cloud_controller_ng #3019) as a shrunk trace, over
the wire and in process alike.
"""

from __future__ import annotations

import json
import shlex
import sys
from pathlib import Path
from xml.etree import ElementTree

import pytest

from deployspec import traces
from deployspec.cli import main

PY = shlex.quote(sys.executable)


def is_the_seed(kinds: list[str]) -> bool:
    """cloud_controller_ng #3019 in six steps: push, deploy, cancel, deploy, the
    original instance up (anywhere before the tick), and the tick that cancels."""
    return (sorted(kinds) == sorted(["push", "runtime", "deploy", "cancel", "deploy", "tick"])
            and [k for k in kinds if k != "runtime"] == ["push", "deploy", "cancel", "deploy", "tick"])


def serve(variant: str) -> str:
    return f"{PY} -m deployspec serve --model capi --variant {variant}"


def run(capsys, *argv: str) -> tuple[int, str, str]:
    status = main(list(argv))
    out, err = capsys.readouterr()
    return status, out, err


@pytest.mark.parametrize("how", [("--exec", serve("capi-safe")),
                                 ("--python", "deployspec.contract.examples:capi_safe")])
def test_a_correct_implementation_passes(capsys, how):
    status, out, _ = run(capsys, "contract", *how, "--model", "capi", "--examples", "5")
    assert status == 0, out
    assert "no check found a violation: a search of the examples above, not a proof" in out
    for prop in ("single_active_deployment", "app_stays_available", "cancel_restores_last_good",
                 "deployment_converges"):
        assert f"{prop}" in out


#: a seed that finds the bug within 10 examples (Hypothesis then shrinks it)
FINDS = ("--examples", "10", "--seed", "0")


@pytest.mark.parametrize("how", [("--exec", serve("capi-2022")),
                                 ("--python", "deployspec.contract.examples:capi_2022")])
def test_the_seed_is_found_shrunk_saved_and_replayed(capsys, tmp_path, how):
    status, out, _ = run(capsys, "contract", *how, "--model", "capi", "--property", "app_stays_available",
                         *FINDS, "--out", str(tmp_path))
    assert status == 1, out
    (path,) = tmp_path.glob("implementation--app_stays_available--*.json")
    trace = traces.load(path)
    assert is_the_seed([s["action"]["type"] for s in trace["steps"]])
    assert trace["engine"] == "contract" and trace["variant"] == "implementation"
    assert trace["extra"]["implementation"][how[0][2:]] == how[1]
    assert trace["extra"]["implementation"]["reference"] is None  # the run sent the model's default
    assert "no routable web instance left after step 5 (tick())" in out
    # the saved file replays against the implementation, not against the fix,
    # and is not mistaken for a reference variant's
    assert run(capsys, "replay", str(path), *how)[0] == 1
    other = ("--python", "deployspec.contract.examples:capi_safe") if how[0] == "--exec" else \
        ("--exec", serve("capi-safe"))
    status, out, _ = run(capsys, "replay", str(path), *other)
    assert status == 0 and "does not reproduce" in out
    status, _, err = run(capsys, "replay", str(path))
    assert status == 2 and "replay it with --exec/--python" in err


def test_conformance_reports_the_first_divergence_as_a_diff(capsys, tmp_path):
    status, out, _ = run(capsys, "contract", "--python", "deployspec.contract.examples:capi_2022",
                         "--model", "capi", "--reference", "capi-pr3072", "--property", "conforms_to_capi-pr3072",
                         *FINDS, "--out", str(tmp_path))
    assert status == 1, out
    assert "first divergence from capi-pr3072 at step 3 (deploy()):" in out
    assert 'deployments[0].state: capi-pr3072 "CANCELED", implementation "CANCELING"' in out
    (path,) = tmp_path.glob("implementation--conforms_to_capi-pr3072--*.json")
    assert traces.load(path)["extra"]["implementation"]["reference"] == "capi-pr3072"
    # an ordinary trace file: it replays on a variant too (capi-pr3084 supersedes like capi-pr3072)
    assert run(capsys, "replay", str(path), "--variant", "capi-2022")[0] == 1
    assert run(capsys, "replay", str(path), "--variant", "capi-pr3084")[0] == 0


def test_a_check_named_twice_runs_once(capsys):
    """As ``check --property X --property X`` does: one search, one row, one verdict."""
    status, out, _ = run(capsys, "contract", "--python", "deployspec.contract.examples:capi_2022", "--model",
                         "capi", "--property", "capacity_within_bound", "--property", "capacity_within_bound",
                         "--examples", "5", "--json")
    assert status == 1
    assert [r["property"] for r in json.loads(out)["results"]] == ["capacity_within_bound"]


def test_conformance_holds_for_the_same_variant(capsys):
    status, out, _ = run(capsys, "contract", "--exec", serve("capi-pr3084"), "--model", "capi",
                         "--reference", "capi-pr3084", "--property", "conforms_to_capi-pr3084",
                         "--examples", "8", "--json")
    assert status == 0
    (result,) = json.loads(out)["results"]
    assert result["verdict"] == "holds" and result["stats"]["steps"] > 50


@pytest.mark.parametrize("argv, message", [
    (["--python", "nosuchmodule:f"], "no module named 'nosuchmodule'"),
    (["--python", "deployspec.contract.examples"], "expected MODULE:FACTORY"),
    (["--python", "deployspec.contract.examples:nope"], ("has no 'nope' (no variant of that name here: a design "
                                                          "of your own is handed in with DEPLOYSPEC_VARIANTS=MODULE")),
    (["--python", "deployspec.contract.examples:capi_saf"], "has no 'capi_saf': did you mean 'capi_safe'? (no "),
    (["--python", "x:y", "--exec", "z"], "not allowed with argument"),
    (["--exec", "true", "--property", "nope"], "unknown check 'nope'"),
    (["--exec", "true", "--property", "conforms_to_capi-safe"],
     "for model capi: a conformance check needs --reference capi-safe (known: "),
    (["--exec", "true", "--reference", "capi-safe", "--property", "conforms_to_capi-2022"],
     ": this run's conformance check is conforms_to_capi-safe, after its --reference (known: conforms_to_capi-safe, "),
    (["--exec", "true", "--property", "conforms_to_slots-pipeline-immutable"],
     ": slots-pipeline-immutable is a variant of model slots, not capi (known: "),
    (["--exec", "true", "--property", "conforms_to_capi-saf"],
     ": did you mean 'conforms_to_capi-safe', with --reference capi-safe? (known: "),
    (["--exec", "true", "--property", "slot_runs_one_version"],
     "unknown check 'slot_runs_one_version' for model capi: a property of model slots, not capi (known: "),
    (["--exec", "true", "--reference", "capi-9999"], "unknown variant 'capi-9999'"),
    (["--exec", "true", "--name", "a/b"], "--name 'a/b'"),
    # the trace file would be a--b--PROPERTY--HASH.json: which part is the name?
    (["--exec", "true", "--name", "a--b"], ("--name 'a--b': must be 1-64 letters, digits, '.', '_' or '-', "
                                            "starting with a letter or digit, with no '--' and no '-' at the end")),
    (["--exec", "true", "--name", "impl-"], "--name 'impl-': must be 1-64 letters"),
    (["--exec", "true", "--name", "capi-safe"], "--name capi-safe: the name of a reference variant"),
    (["--exec", "true", "--examples", "0"], "argument --examples: must be >= 1, got 0"),
    (["--exec", ""], "--exec: empty"),
    (["--python", ""], "--python: empty"),
])
def test_usage_errors_are_one_line_and_exit_2(capsys, argv, message):
    status, _, err = run(capsys, "contract", "--model", "capi", *argv)
    assert status == 2
    assert message in err and len(err.strip().splitlines()) == 1


@pytest.mark.parametrize("how", ["--exec", "--python"])
def test_replay_against_an_empty_target_is_a_usage_error_not_the_reference(capsys, how):
    (path,) = sorted((Path(__file__).parents[1] / "counterexamples" / "capi").glob("*.json"))[:1]
    status, out, err = run(capsys, "replay", str(path), how, "")
    assert (status, out) == (2, "")
    assert f"{how}: empty" in err and len(err.strip().splitlines()) == 1


def test_the_harness_is_model_generic_slots_over_the_wire(capsys):
    def serve_slots(variant):
        return f"{PY} -m deployspec serve --model slots --variant {variant}"

    status, out, _ = run(capsys, "contract", "--exec", serve_slots("slots-pipeline-immutable"), "--model", "slots",
                         "--reference", "slots-pipeline-immutable", "--examples", "5")
    assert status == 0, out
    status, out, _ = run(capsys, "contract", "--exec", serve_slots("slots-webhook-tag"), "--model", "slots",
                         "--property", "production_runs_only_released_images", "--examples", "10", "--seed", "1")
    assert status == 1, out
    assert "production_runs_only_released_images violated" in out


REFUSES_EVERYTHING = """
import json, sys
empty = {"app": None, "droplets": [], "processes": [], "deployments": []}
for line in sys.stdin:
    request = json.loads(line)
    reply = {"reset": {"type": "reset_ok", "protocol": 1},
             "observe": {"type": "observation", "observation": empty},
             "action": {"type": "rejected", "reason": "frozen", "observation": empty}}[request["type"]]
    print(json.dumps({"id": request["id"], **reply}), flush=True)
"""


def test_a_controller_that_refuses_everything_holds_vacuously_and_is_told_so(capsys, tmp_path):
    """It breaks no spec property (a refusal breaks none), so the checks hold, marked ``?``
    as check's matrix marks a vacuous proof, with a note, ``stats.vacuous`` in --json and
    the JUnit case's message; one that deploys has no such mark."""
    program = tmp_path / "frozen.py"
    program.write_text(REFUSES_EVERYTHING)
    argv = ("contract", "--exec", f"{PY} {program}", "--model", "capi", "--examples", "5",
            "--property", "single_active_deployment", "--property", "capacity_within_bound")
    status, out, _ = run(capsys, *argv)
    assert status == 0
    rows = {line.split()[0]: line.split()[1:3] for line in out.splitlines()
            if line.startswith(("single_active_deployment ", "capacity_within_bound "))}
    assert rows == {"single_active_deployment": ["holds", "?"], "capacity_within_bound": ["holds", "?"]}
    assert ("? every check: vacuous, no deploy took effect in any example (each was refused or changed "
            "nothing), so nothing they do was judged; --reference VARIANT asks what they must do") in out
    status, out, _ = run(capsys, *argv, "--json", "--junit", str(tmp_path / "r.xml"))
    assert status == 0 and [r["stats"]["vacuous"] for r in json.loads(out)["results"]] == [["deploy"]] * 2
    assert (tmp_path / "r.xml").read_text().count("holds ?: vacuous, no deploy took effect in any example") == 2
    cases = list(ElementTree.parse(tmp_path / "r.xml").getroot().iter("testcase"))
    assert [[child.tag for child in case] for case in cases] == [["skipped"]] * 2  # counted apart, not passed
    assert cases[0][0].get("message").startswith("holds ?: vacuous") and "examples" in cases[0][0].text
    status, out, _ = run(capsys, "contract", "--python", "deployspec.contract.examples:capi_safe", "--model",
                         "capi", "--examples", "5", "--property", "single_active_deployment", "--json")
    assert status == 0 and json.loads(out)["results"][0]["stats"]["vacuous"] == []


def test_a_vacuous_hold_against_a_reference_points_at_the_bounds(capsys):
    """The note said "--reference VARIANT asks what they must do" to a run that gave one:
    the reference refused the deploys as well (capi-2022 knows no max_in_flight), so the
    configuration is what left them nothing to do."""
    status, out, _ = run(capsys, "contract", "--python", "deployspec.contract.examples:capi_2022", "--model",
                         "capi", "--reference", "capi-2022", "--bound", "max_in_flight=[2]", "--examples", "5",
                         "--property", "single_active_deployment", "--property", "conforms_to_capi-2022")
    assert status == 0
    assert ("so nothing they do was judged; capi-2022 refused them too, under this configuration (the bounds; "
            "--bound changes them)") in out and "--reference VARIANT" not in out


def test_a_vacuous_hold_says_nothing_of_a_reference_whose_conformance_did_not_hold(capsys, tmp_path):
    """Only the conformance check compares with the reference: where it broke (capi-safe
    accepts the push a frozen controller refuses), or was left out, the note may not say
    the reference refused the actions too."""
    program = tmp_path / "frozen.py"
    program.write_text(REFUSES_EVERYTHING)
    for checks, expected, said in (
            (["conforms_to_capi-safe", "single_active_deployment"], 1,
             "conforms_to_capi-safe's counterexample above shows what capi-safe does"),
            (["single_active_deployment"], 0, "--property conforms_to_capi-safe asks what capi-safe does")):
        status, out, _ = run(capsys, "contract", "--exec", f"{PY} {program}", "--model", "capi", "--reference",
                             "capi-safe", "--examples", "5", *(a for c in checks for a in ("--property", c)))
        assert status == expected and "refused them too" not in out, out
        assert f"so nothing they do was judged; {said}" in out, out


def test_fail_vacuous_makes_a_vacuous_hold_a_failure(capsys, tmp_path):
    """A CI gate that wants every check exercised (a session's review: a stub refusing
    everything passed with exit 0): exit 1, the closing line says why, the JUnit cases fail
    rather than skip, --json says so and its rerun keeps the flag; an implementation that
    deploys still passes with it."""
    from .cli_runs import valid_json_output

    program = tmp_path / "frozen.py"
    program.write_text(REFUSES_EVERYTHING)
    argv = ("contract", "--exec", f"{PY} {program}", "--model", "capi", "--examples", "5",
            "--property", "single_active_deployment", "--property", "capacity_within_bound", "--fail-vacuous")
    status, out, _ = run(capsys, *argv)
    assert status == 1
    assert out.rstrip().splitlines()[-1] == "VACUOUS: every check held with nothing judged, a failure with --fail-vacuous"
    status, out, _ = run(capsys, *argv, "--json", "--junit", str(tmp_path / "r.xml"))
    doc = valid_json_output(json.loads(out))
    assert (status, doc["exit_status"], doc["search"]["fail_vacuous"]) == (1, 1, True)
    assert shlex.split(doc["search"]["rerun"])[-1] == "--fail-vacuous"
    cases = list(ElementTree.parse(tmp_path / "r.xml").getroot().iter("testcase"))
    assert [[child.tag for child in case] for case in cases] == [["failure"]] * 2
    assert cases[0][0].get("message").startswith("holds ?: vacuous")
    assert cases[0][0].get("message").endswith("(a failure with --fail-vacuous)")
    status, out, _ = run(capsys, "contract", "--python", "deployspec.contract.examples:capi_safe", "--model",
                         "capi", "--examples", "5", "--property", "single_active_deployment", "--fail-vacuous")
    assert status == 0 and "VACUOUS" not in out


def test_fail_vacuous_gives_way_to_a_fault_and_an_unsaved_trace():
    """Exit 3 (the implementation failed) and 2 (a trace not saved) say more than a vacuous
    hold; a violation beside one is the violation's 1."""
    from types import SimpleNamespace

    from deployspec.contract.harness import ContractRun

    vacuous = SimpleNamespace(property="p", verdict="holds", stats={"vacuous": ["deploy"]}, unsaved=None)
    run_ = ContractRun("capi", None, results=[vacuous], fail_vacuous=True)
    assert (run_.exit_status, run_.vacuous) == (1, ["p"])
    assert ContractRun("capi", None, results=[vacuous]).exit_status == 0
    run_.fault = object()
    assert run_.exit_status == 3
    unsaved = SimpleNamespace(property="q", verdict="violated", stats={}, unsaved="q.json")
    assert ContractRun("capi", None, results=[vacuous, unsaved], fail_vacuous=True).exit_status == 2


def test_the_json_document_reruns_its_own_search(capsys):
    """A CI artifact alone rebuilds the search: ``search.rerun`` is the command, and run
    again it gives the same verdicts (the amount, seed, bounds and checks as they were)."""
    from .cli_runs import valid_json_output

    argv = ("contract", "--python", "deployspec.contract.examples:capi_2022", "--model", "capi", "--examples", "20",
            "--seed", "3", "--property", "capacity_within_bound", "--property", "single_active_deployment",
            "--bound", "max_in_flight=[1,2]", "--timeout", "20", "--json")
    status, out, _ = run(capsys, *argv)
    doc = valid_json_output(json.loads(out))
    search = doc["search"]
    assert search | {"rerun": None} == {"reference": None, "checks": ["capacity_within_bound", "single_active_deployment"],
                                        "examples": 20, "budget": None, "seed": 3, "timeout": 20.0,
                                        "fail_vacuous": False, "known": True, "rerun": None}
    words = shlex.split(search["rerun"])
    assert words[:2] == ["deployspec", "contract"] and "--json" not in words
    again_status, again, _ = run(capsys, *words[1:], "--json")
    seen = [(r["property"], r["verdict"], r["trace_length"], r["message"]) for r in doc["results"]]
    assert (again_status, [(r["property"], r["verdict"], r["trace_length"], r["message"])
                           for r in json.loads(again)["results"]]) == (status, seen)
    assert status == 1 and any(v == "violated" for _, v, _, _ in seen)


def test_the_rerun_command_gives_every_number_as_it_was_given(capsys):
    status, out, _ = run(capsys, "contract", "--python", "deployspec.contract.examples:capi_safe", "--model", "capi",
                         "--property", "single_active_deployment", "--budget", "0.1234567", "--timeout", "12.3456789",
                         "--json")
    words = shlex.split(json.loads(out)["search"]["rerun"])
    assert status == 0 and words[words.index("--budget") + 1] == "0.1234567"
    assert words[words.index("--timeout") + 1] == "12.3456789"
