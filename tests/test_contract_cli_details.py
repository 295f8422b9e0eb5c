"""``deployspec contract``'s command line: details a mutation pass over
deployspec/contract/cli.py found unpinned (the options' requirements and
defaults, the order of its checks, the summary and a violation's text, the
replay command it prints, the signals it takes over while it runs)."""

from __future__ import annotations

import json
import re
import shlex
import sys
from pathlib import Path

import pytest

from deployspec import traces
from deployspec.cli import build_parser, main
from deployspec.contract import cli as contract_cli
from deployspec.contract import harness
from deployspec.contract import summary as contract_summary
from deployspec.contract.guard import ImplementationFault
from deployspec.engines.result import Result
from deployspec.models import get_model

SAFE = ("--python", "deployspec.contract.examples:capi_safe")
SEED_BUG = ("--python", "deployspec.contract.examples:capi_2022")
SEED = Path(__file__).parents[1] / "counterexamples" / "capi" / "capi-2022--app_stays_available--a940739cf1.json"


def run(capsys, *argv) -> tuple[int, str, str]:
    status = main([str(a) for a in argv])
    out, err = capsys.readouterr()
    return status, out, err


def refused(capsys, *argv) -> str:
    """The one line of a usage error (exit 2, nothing on stdout)."""
    status, out, err = run(capsys, "contract", *argv)
    assert (status, out) == (2, ""), err
    (line,) = err.strip().splitlines()
    return line


# --- the options: what is required, what each takes, their defaults -----------------


def test_an_implementation_and_a_model_are_required(capsys):
    assert "one of the arguments --exec --python is required" in refused(capsys, "--model", "capi")
    assert "the following arguments are required: --model" in refused(capsys, *SAFE)


@pytest.mark.parametrize("option, value, says", [
    ("--examples", "-1", "argument --examples: must be >= 1, got -1"),  # as 0 is told
    ("--seed", "-1", "argument --seed: must be >= 0, got -1"),
    ("--timeout", "0", "argument --timeout: must be more than 0"),
    ("--budget", "0", "argument --budget: must be more than 0 and less than 86400 seconds"),
])
def test_a_number_out_of_range_is_refused_by_the_parser(capsys, option, value, says):
    assert says in refused(capsys, *SAFE, "--model", "capi", option, value)


def test_the_defaults_are_those_the_help_gives():
    args = build_parser().parse_args(["contract", *SAFE, "--model", "capi"])
    assert (args.budget, args.examples, args.seed, args.timeout, args.name) == (2.0, None, 0, 10.0, "implementation")
    assert (args.property, args.bound, args.reference, args.out, args.junit, args.json) == (
        None, None, None, None, None, False)
    assert contract_cli.DEFAULT_TIMEOUT == 10.0


def test_examples_is_refused_past_the_most_and_taken_at_it(capsys, monkeypatch):
    assert contract_cli.MAX_EXAMPLES == 10_000_000
    monkeypatch.setattr(contract_cli, "MAX_EXAMPLES", 2)  # (a regression must not start a long run)
    line = refused(capsys, *SAFE, "--model", "capi", "--property", "capacity_within_bound", "--examples", "3")
    assert line == "deployspec: error: --examples: at most 2 (days of work); a long hunt is --budget"
    status, out, _ = run(capsys, "contract", *SAFE, "--model", "capi", "--property", "capacity_within_bound",
                         "--examples", "2", "--json")
    assert status == 0 and json.loads(out)["results"][0]["verdict"] == "holds"


# --- the order of the checks: nothing is made, nothing is run, for a refused line --------


def test_a_refused_report_leaves_no_out_folder_made(capsys, tmp_path):
    line = refused(capsys, *SAFE, "--model", "capi", "--out", tmp_path / "new", "--junit", tmp_path / "r.json")
    assert "--junit" in line and "name it .xml" in line
    assert not (tmp_path / "new").exists()


def test_an_out_that_is_a_file_is_refused_before_the_run(capsys, tmp_path):
    (tmp_path / "taken").write_text("kept\n")
    line = refused(capsys, *SAFE, "--model", "capi", "--out", tmp_path / "taken")
    assert line.endswith("taken: exists and is not a directory")
    assert (tmp_path / "taken").read_text() == "kept\n"


# --- what the run is given ---------------------------------------------------------


def test_seed_and_checks_reach_the_search(capsys):
    status, out, _ = run(capsys, "contract", *SAFE, "--model", "capi", "--property", "capacity_within_bound",
                         "--examples", "2", "--seed", "7", "--json")
    assert status == 0
    (result,) = json.loads(out)["results"]
    assert result["property"] == "capacity_within_bound" and result["stats"]["seed"] == 7


def test_a_reference_s_conformance_check_runs_with_its_configuration(capsys):
    status, out, _ = run(capsys, "contract", *SEED_BUG, "--model", "capi", "--reference", "capi-2022",
                         "--property", "conforms_to_capi-2022", "--examples", "3", "--json")
    doc = json.loads(out)
    model = get_model("capi")
    assert doc["config"] == harness.config_for(model, "capi-2022").to_json() != harness.config_for(model, None).to_json()
    assert [(r["property"], r["verdict"]) for r in doc["results"]] == [("conforms_to_capi-2022", "holds")]
    assert status == 0


# --- the report ----------------------------------------------------------------------


def test_the_json_report_is_indented_and_names_the_target_by_its_kind(capsys):
    status, out, _ = run(capsys, "contract", "--exec", "true", "--model", "capi", "--name", "mine", "--json")
    assert status == 3
    assert out.startswith('{\n "model": "capi",\n "target": {\n  "exec": "true",\n  "name": "mine",\n  "implementation": null\n }')
    doc = json.loads(out)
    assert doc["fault"]["checking"] is None and doc["exit_status"] == 3  # it never answered: at start


def test_a_run_that_holds_says_nothing_of_out(capsys):
    status, out, err = run(capsys, "contract", *SAFE, "--model", "capi", "--property", "capacity_within_bound",
                           "--examples", "2")
    assert status == 0
    assert "--out" not in out and "replay" not in out
    assert err.startswith("[1/1] implementation · capacity_within_bound · contract: holds (")  # its progress


def test_a_violation_s_report_its_file_and_the_junit_report_follow_the_options(capsys, tmp_path):
    """The trace file and the report name the implementation as --name does (for a
    --python object too); the replay command, on screen and in the report, has the
    run's --timeout; a blank line parts the violation from the summary."""
    status, out, _ = run(capsys, "contract", *SEED_BUG, "--model", "capi", "--property", "capacity_within_bound",
                         "--examples", "5", "--name", "mine", "--timeout", "20", "--out", tmp_path,
                         "--junit", tmp_path / "r.xml")
    assert status == 1
    (path,) = tmp_path.glob("mine--capacity_within_bound--*.json")
    assert traces.load(path)["variant"] == "mine"
    replay = f"replay: deployspec replay {path} --python deployspec.contract.examples:capi_2022 --timeout 20"
    lines = out.splitlines()
    at = lines.index("contract capi · --python 'deployspec.contract.examples:capi_2022'")
    assert lines[at - 2:at] == [replay, ""]
    report = (tmp_path / "r.xml").read_text()
    assert replay in report and 'classname="deployspec.contract.capi.mine"' in report


def _summary_run(**kw) -> harness.ContractRun:
    model = get_model("capi")
    run = harness.ContractRun("capi", harness.Target("exec", "./impl --serve"),
                              harness.config_for(model, None, {"max_instances": 2}),
                              planned=("single_active_deployment", "app_stays_available", "deployment_converges",
                                       "capacity_within_bound"))
    run.results = [
        Result("capi", "implementation", "single_active_deployment", "contract", "holds",
               stats={"examples": 100, "steps": 1234, "steps_per_second": 567}),
        Result("capi", "implementation", "app_stays_available", "contract", "violated",
               stats={"found_by": "sweep", "examples": 0, "steps": 0}, **kw)]
    return run


HEAD = ["contract capi · --exec './impl --serve'",
        ("config: max_instances=2, max_deployments=3, max_droplets=3, max_in_flight=[1], canary_plans=[], "
         "settle_steps=80, max_depth=null")]


def test_the_summary_table_exactly():
    """Two spaces between columns, each as wide as its widest cell, a rule as wide as
    the table, no trailing spaces; what the sweep found reads 'first step' in the first-seen
    column, its other columns empty (no search ran)."""
    assert contract_summary.summary(_summary_run()).splitlines() == [
        *HEAD,
        "check                     verdict   first seen  examples  steps  steps/s",
        "------------------------------------------------------------------------",
        "single_active_deployment  holds                 100       1234   567",
        "app_stays_available       VIOLATED  first step",
        "VIOLATED: see the counterexample(s) above"]
    assert contract_summary.summary(_summary_run(unsaved="why")).splitlines()[-1] == (
        "VIOLATED: see the counterexample(s) above (not all could be saved)")


def test_the_first_seen_column_says_where_each_violation_was_found():
    """The search's example number beside the examples that shrank it; a known trace says
    so, beside the search that ran before it; a check that held has none; the note under
    the table says what the numbers are."""
    run = _summary_run()
    run.results += [
        Result("capi", "implementation", "deployment_converges", "contract", "violated",
               stats={"examples": 412, "steps": 9000, "steps_per_second": 800, "found_in_example": 37}),
        Result("capi", "implementation", "capacity_within_bound", "contract", "violated",
               stats={"found_by": "known", "known": 3, "examples": 100, "steps": 50}),
    ]
    lines = contract_summary.summary(run).splitlines()
    assert lines[2:9] == [
        "check                     verdict   first seen   examples  steps  steps/s",
        "-------------------------------------------------------------------------",
        "single_active_deployment  holds                  100       1234   567",
        "app_stays_available       VIOLATED  first step",
        "deployment_converges      VIOLATED  37           412       9000   800",
        "capacity_within_bound     VIOLATED  known trace  100       50",  # its search ran, and held
        ("first seen: the example in which the search first saw the violation (the examples column counts every "
        "example run, shrinking too)")]
    run.results = run.results[:2] + run.results[3:]  # no number in the column: no note on the numbers
    assert not any(line.startswith("first seen:") for line in contract_summary.summary(run).splitlines())


def test_the_summary_of_a_fault_names_the_check_it_ended_and_those_not_run():
    run = _summary_run()
    run.fault = ImplementationFault("boom", where="reset", checking="deployment_converges")
    assert contract_summary.summary(run).splitlines()[2:] == [
        "check                     verdict   first seen  examples  steps  steps/s",
        "------------------------------------------------------------------------",
        "single_active_deployment  holds                 100       1234   567",
        "app_stays_available       VIOLATED  first step",
        "deployment_converges      FAULT",
        "capacity_within_bound     not run",
        "FAULT: the implementation failed; the run stopped there (deployspec exits 3)"]
    run.results, run.fault = [], ImplementationFault("boom", where="start")
    assert [line.split(None, 1) for line in contract_summary.summary(run).splitlines()[4:-1]] == [
        ["start", "FAULT"], *[[name, "not run"] for name in run.planned]]


def _violation(**kw) -> Result:
    trace = traces.load(SEED)
    return Result("capi", "implementation", trace["property"], "contract", "violated", trace=trace, **kw)


def test_a_violation_not_saved_says_why_and_one_not_shrunk_says_so():
    target = harness.Target("python", "m:f")
    text = contract_cli.violation_text(_violation(unsaved="out: full", stats={"shrunk": False}), target, 10.0)
    assert text.splitlines()[-2:] == [harness.NOT_SHRUNK, "not saved: out: full"]
    assert "saved: " not in text.replace("not saved: ", "") and "replay:" not in text
    assert "first divergence" not in text  # a property of the spec, not a conformance check
    text = contract_cli.violation_text(_violation(counterexample="out/x.json"), target, 10.0)
    assert text.splitlines()[-2:] == ["saved: out/x.json", "replay: deployspec replay out/x.json --python m:f"]
    assert harness.NOT_SHRUNK not in text


@pytest.mark.parametrize("kind, timeout, tail", [
    ("exec", 10.0, ["--exec", "./impl --serve"]),
    ("python", 10.0, ["--python", "impl:serve"]),
    ("exec", 0.5, ["--exec", "./impl --serve", "--timeout", "0.5"]),
    ("exec", 20.0, ["--exec", "./impl --serve", "--timeout", "20"]),
    # as given, not rounded to six digits (the rerun line's own form; found by a probe)
    ("exec", 12.3456789, ["--exec", "./impl --serve", "--timeout", "12.3456789"]),
])
def test_the_replay_command_names_the_target_and_a_timeout_other_than_the_default(kind, timeout, tail):
    spec = "./impl --serve" if kind == "exec" else "impl:serve"
    line = contract_cli.replay_command("out dir/x.json", harness.Target(kind, spec), timeout)
    assert shlex.split(line) == ["deployspec", "replay", "out dir/x.json", *tail]


def test_the_replay_command_escapes_what_a_terminal_would_act_on():
    line = contract_cli.replay_command("out/\x1b[2Jx.json", harness.Target("exec", "impl"), 10.0)
    assert line == "deployspec replay 'out/\\x1b[2Jx.json' --exec impl"


def test_the_configuration_is_shown_compact_as_bound_takes_it():
    config = harness.config_for(get_model("capi"), "capi-safe")
    assert contract_summary.config_text(config).startswith("max_instances=3, max_deployments=3, ")
    assert "max_in_flight=[1,2], web_instances=[1,3], canary_plans=[[],[50],[100],[50,100]]" in contract_summary.config_text(config)


def test_a_reference_of_another_model_is_named_as_such(capsys):
    """It said "unknown variant 'slots-webhook-tag'", a variant that exists, of model slots."""
    from .cli_runs import run

    status, _, err = run(capsys, "contract", "--exec", "true", "--model", "capi", "--reference", "slots-webhook-tag")
    assert (status, err) == (2, ("deployspec: error: 'slots-webhook-tag' is a variant of model slots, not capi "
                                "(known for capi: capi-2022, capi-pr3072, capi-pr3084, capi-current, capi-safe)\n"))


def test_the_summary_names_what_the_implementation_says_it_is_and_the_reference(capsys):
    """A new user's review: the reset reply's name appeared in no report, and a run against
    --reference said so nowhere above the table, while its configuration became the reference's."""
    served = f"{shlex.quote(sys.executable)} -m deployspec serve --model capi --variant capi-safe"
    status, out, _ = run(capsys, "contract", "--exec", served, "--model", "capi", "--reference", "capi-safe",
                         "--examples", "5", "--property", "app_stays_available")
    assert status == 0
    head, config = out.splitlines()[:2]
    assert head.endswith(" · says it is 'deployspec capi-safe' · against --reference capi-safe")
    assert config.startswith("config (capi-safe's): ")
    status, out, _ = run(capsys, "contract", "--exec", served, "--model", "capi", "--examples", "5",
                         "--property", "app_stays_available", "--json")
    assert status == 0 and json.loads(out)["target"]["implementation"] == "deployspec capi-safe"
    status, out, _ = run(capsys, "contract", "--exec", served, "--model", "capi", "--examples", "5",
                         "--property", "app_stays_available")
    head, config = out.splitlines()[:2]
    assert "against" not in head and config.startswith("config: ")


def test_one_entry_is_an_entry():
    from deployspec.contract.conformance import differences

    one, two = [{"name": "a"}], [{"name": "a"}, {"name": "b"}]
    assert differences(two, one, "capi-safe", "settings") == ["settings: capi-safe has 2 entries, implementation 1"]
    assert differences(one, two, "capi-safe", "settings") == ["settings: capi-safe has 1 entry, implementation 2"]


def test_numbered_entries_are_paired_by_id_not_by_place():
    """An implementation still listing a process the reference removed showed every later
    entry as changed (``processes[0].id: capi-safe 1, implementation 0``): the entry one
    side lacks is named, and the entries both have are compared with each other."""
    from deployspec.contract.conformance import differences

    p0, p1 = {"id": 0, "instances": []}, {"id": 1, "instances": ["RUNNING"]}
    assert differences([p1], [p0, p1], "capi-safe", "processes") == [
        "processes: implementation has an entry with id 0, which capi-safe lacks"]
    assert differences([p0, p1], [dict(p1, instances=[])], "capi-safe", "processes") == [
        "processes: implementation lacks the entry with id 0, which capi-safe has",
        'processes[id=1].instances: capi-safe ["RUNNING"], implementation []']
    assert differences([], [p0], "capi-safe", "processes") == [
        "processes: implementation has an entry with id 0, which capi-safe lacks"]
    assert differences([p0, p1], [p1, p0], "capi-safe", "processes") == [
        "processes: the same entries in another order (capi-safe ids [0, 1], implementation [1, 0])"]


def test_the_replay_command_hands_in_the_designs_the_run_had(monkeypatch):
    """Pasted in a fresh shell it failed ('module deployspec.contract.examples has no
    'mine'') with nothing saying the design was not loaded (found by a new user's review)."""
    monkeypatch.setenv("DEPLOYSPEC_VARIANTS", "my designs")
    line = contract_cli.replay_command("x.json", harness.Target("python", "deployspec.contract.examples:mine"), 10.0)
    assert line == "DEPLOYSPEC_VARIANTS='my designs' deployspec replay x.json --python deployspec.contract.examples:mine"
    monkeypatch.setenv("DEPLOYSPEC_VARIANTS", "")
    assert contract_cli.replay_command("x.json", harness.Target("exec", "impl"), 10.0) == "deployspec replay x.json --exec impl"


def test_the_steps_an_example_may_take_are_the_ones_the_docs_give():
    """A divergence needing a longer run of actions is never found by the random search,
    whatever its budget: the docs say how long a run of actions may be."""
    from pathlib import Path

    from deployspec.engines.hypothesis_engine import STEPS

    text = " ".join((Path(__file__).parents[1] / "docs" / "contract.md").read_text().split())
    assert f"Each example is at most {STEPS} actions from a reset" in text


def test_the_config_line_says_which_bounds_the_run_changed(capsys):
    """With --reference, the line called the configuration the reference's though --bound had
    changed it; without, it looked like the model's default."""
    status, out, _ = run(capsys, "contract", *SAFE, "--model", "capi", "--reference", "capi-safe", "--bound",
                         "canary_plans=[]", "--examples", "2", "--property", "single_active_deployment")
    assert status == 0
    assert out.splitlines()[1].startswith("config (capi-safe's, with --bound canary_plans): ")
    status, out, _ = run(capsys, "contract", *SAFE, "--model", "capi", "--bound", "max_instances=2", "--bound",
                         "max_droplets=2", "--examples", "2", "--property", "single_active_deployment")
    assert status == 0
    assert out.splitlines()[1].startswith("config (with --bound max_instances, max_droplets): max_instances=2,")


def test_violations_the_reference_declares_are_said_to_be_its_own_too(capsys):
    """capi-2022 run against itself: its declared violations show as rows, and a line says
    the reference breaks them too (a user's gate with a historic reference never passed and
    did not say why); against capi-safe, the same rows are the implementation's alone."""
    from deployspec.models import get_model

    argv = ["contract", "--python", "deployspec.contract.examples:capi_2022", "--model", "capi", "--examples", "30",
            "--property", "single_active_deployment", "--property", "user_scale_not_lost"]
    status = main([*argv, "--reference", "capi-2022"])
    out = capsys.readouterr().out
    violated = [p for p in ("single_active_deployment", "user_scale_not_lost")
                if re.search(rf"^{p} +VIOLATED", out, re.MULTILINE)]
    declared = get_model("capi").variant("capi-2022").declares
    assert status == 1 and "single_active_deployment" in violated
    assert f"\nthe reference breaks these too: capi-2022 declares it violates " \
           f"{', '.join(p for p in violated if p in declared)}, so an implementation that conforms to it " \
           "does as well" in out
    status = main([*argv, "--reference", "capi-safe"])
    assert status == 1 and "the reference breaks these too" not in capsys.readouterr().out
