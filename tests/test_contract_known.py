"""contract replays the committed counterexamples where a check's search found nothing
(``deployspec/contract/known.py``): a new user's Rust controller with a five-step cancel
bug held at the default budget and at ``--examples 300``; the committed traces break it
in half a second. What is pinned: they catch what a short search misses, and only then
(``--no-known`` leaves them out), under the run's own configuration, recorded once per
run; a violation says which trace showed it and is saved and replayed like any other; an
implementation failing during them is a fault like any other; they are installed with the
package."""

from __future__ import annotations

import json
from importlib import resources
from pathlib import Path

from deployspec.contract import harness, known, sweep
from deployspec.contract.examples import ReferenceImplementation
from deployspec.contract.python_adapter import PythonAdapter
from deployspec.models import get_model

from .cli_runs import run, valid_json_output

PR3084 = ("--python", "deployspec.contract.examples:capi_pr3084", "--model", "capi")


def test_the_committed_traces_are_installed_with_the_package_every_one_of_them():
    """The package data is the repository's folder, every file (a new finding is replayed at once)."""
    repo = Path(__file__).parent.parent / "counterexamples"
    for model in ("capi", "slots"):
        names = {name for name, _ in known.runs(get_model(model))}
        assert names == {f"counterexamples/{model}/{p.name}" for p in (repo / model).glob("*.json")}
        assert len(names) >= 10
    assert resources.files(known.CORPUS).joinpath("capi").is_dir()
    assert known.design_of("counterexamples/capi/capi-2022--app_stays_available--a940739cf1.json") == "capi-2022"


def test_what_one_example_misses_a_committed_trace_shows_and_without_them_it_holds(capsys, tmp_path):
    """capi-pr3084 with one example per check: its cancel bugs hold in the search, a committed
    trace breaks them; the file saved replays on the implementation (exit 1)."""
    argv = [*PR3084, "--examples", "1", "--seed", "0", "--property", "cancel_restores_last_good", "--json"]
    status, out, _ = run(capsys, "contract", *argv, "--no-known")
    (alone,) = valid_json_output(json.loads(out))["results"]
    assert (status, alone["verdict"], json.loads(out)["search"]["known"]) == (0, "holds", False)
    assert "known" not in alone["stats"]

    status, out, _ = run(capsys, "contract", *argv, "--out", str(tmp_path))
    doc = valid_json_output(json.loads(out))
    (r,) = doc["results"]
    assert (status, r["verdict"], r["stats"]["found_by"]) == (1, "violated", "known")
    assert r["stats"]["replayed"].startswith("counterexamples/capi/") and r["stats"]["examples"] >= 1
    assert 1 <= r["stats"]["known"] <= len(known.runs(get_model("capi")))
    saved = json.loads(Path(r["counterexample"]).read_text())
    assert saved["extra"]["replayed"] == r["stats"]["replayed"] and saved["engine"] == "contract"
    status, out, _ = run(capsys, "replay", r["counterexample"], "--python", "deployspec.contract.examples:capi_pr3084")
    assert status == 1, out
    status, out, _ = run(capsys, "replay", r["counterexample"], "--python", "deployspec.contract.examples:capi_safe")
    assert status == 0, out


def test_the_text_says_which_trace_showed_it_and_the_table_that_no_example_did(capsys):
    status, out, _ = run(capsys, "contract", *PR3084, "--examples", "1", "--seed", "0",
                         "--property", "user_scale_not_lost")
    assert status == 1
    assert "found by replaying counterexamples/capi/" in out and "after the search's examples held" in out
    row = next(line for line in out.splitlines() if line.startswith("user_scale_not_lost"))
    # first seen by a known trace; the search's own example ran before it, and held
    assert row.split()[:5] == ["user_scale_not_lost", "VIOLATED", "known", "trace", "1"]
    every = len(known.runs(get_model("capi")))  # not the count judged before one broke it
    assert (f"known traces: the {every} committed counterexamples of counterexamples/capi/ judged after the searches; "
            "they broke user_scale_not_lost (--no-known leaves them out)") in out.splitlines()


def test_a_run_they_found_nothing_in_still_says_they_ran(capsys):
    """A passing run said nothing of the committed traces, which caught a user's bug the
    search had missed: the summary says how many were judged (a user's report)."""
    every = len(known.runs(get_model("capi")))
    status, out, _ = run(capsys, "contract", "--python", "deployspec.contract.examples:capi_safe", "--model", "capi",
                         "--examples", "3", "--property", "single_active_deployment")
    assert status == 0
    assert (f"known traces: the {every} committed counterexamples of counterexamples/capi/ judged after the "
            "searches; none broke a check whose search held (--no-known leaves them out)") in out.splitlines()
    status, out, _ = run(capsys, "contract", "--python", "deployspec.contract.examples:capi_safe", "--model", "capi",
                         "--examples", "3", "--property", "single_active_deployment", "--no-known")
    assert status == 0 and "known traces" not in out


def test_a_violation_the_search_finds_is_its_own_and_a_correct_implementation_holds_through_them(capsys):
    """The committed traces come after the search: what it finds keeps its shrunk trace. capi-safe
    holds every one; each check judged all, the implementation driven through them once."""
    status, out, _ = run(capsys, "contract", *PR3084, "--examples", "100", "--seed", "0",
                         "--property", "capacity_within_bound", "--json")
    (r,) = json.loads(out)["results"]
    assert (status, r["verdict"]) == (1, "violated") and "found_by" not in r["stats"] and "known" not in r["stats"]

    status, out, _ = run(capsys, "contract", "--python", "deployspec.contract.examples:capi_safe", "--model", "capi",
                         "--examples", "3", "--property", "single_active_deployment", "--property",
                         "app_stays_available", "--json")
    first, second = valid_json_output(json.loads(out))["results"]
    every = len(known.runs(get_model("capi")))
    assert status == 0 and (first["stats"]["known"], second["stats"]["known"]) == (every, every)
    assert first["stats"]["known_seconds"] > 0 and second["stats"]["known_seconds"] == 0


def test_they_run_under_the_run_s_configuration_as_far_as_its_search_could_send_them():
    """A step the configuration does not offer (capi-2022's dispatcher snapshot, a tick with
    ``late``, where ``snapshot_window`` is off) ends a trace there; the platform then
    settles, and what ran is judged."""
    model = get_model("capi")
    narrow = harness.config_for(model, None, {"snapshot_window": False})
    wide = harness.config_for(model, None, {"snapshot_window": True})
    name = "counterexamples/capi/capi-2022--capacity_within_bound--8786225bef.json"
    runs = [r for r in known.runs(model) if r[0] == name]
    assert any(a.to_json().get("late") for a in runs[0][1])

    def recorded(config):
        factory = lambda: PythonAdapter(ReferenceImplementation("capi", "capi-safe"), model)
        (rec,) = sweep.record_runs(model, factory, config, runs).recordings
        return rec

    cut, whole = recorded(narrow), recorded(wide)
    assert len(whole.actions) == len(runs[0][1]) and len(cut.actions) < len(whole.actions)
    assert not any(a.to_json().get("late") for a in cut.actions)
    assert cut.source == name and len(cut.steps) > len(cut.actions)  # settled after what ran


def test_an_implementation_failing_during_them_is_a_fault_of_that_check(capsys, monkeypatch):
    """Counted: the resets the sweep and the search take; one more, and the committed traces
    meet the failure: exit 3, the check named, as a fault in the search would be."""
    monkeypatch.syspath_prepend(str(Path(__file__).parent))
    import fakes_known

    argv = ["contract", "--python", "fakes_known:fails_after", "--model", "capi",
            "--examples", "2", "--seed", "0", "--property", "app_stays_available", "--json"]
    monkeypatch.setattr(fakes_known.FailsAfter, "resets", 0)
    status, out, _ = run(capsys, *argv, "--no-known")
    assert status == 0
    monkeypatch.setattr(fakes_known.FailsAfter, "LIMIT", fakes_known.FailsAfter.resets)
    monkeypatch.setattr(fakes_known.FailsAfter, "resets", 0)
    status, out, err = run(capsys, *argv)
    doc = valid_json_output(json.loads(out))
    assert status == 3 and doc["fault"]["checking"] == "app_stays_available", err
    assert "out of order" in doc["fault"]["cause"]
    # which trace it was replaying, to replay it by hand (the steps are that trace's)
    first = known.runs(get_model("capi"))[0][0]
    assert doc["fault"]["replaying"] == first
    assert f"while checking app_stays_available, replaying {first}: " in err


def test_what_took_effect_in_the_replays_a_check_judged_is_no_vacuous_hold(capsys, monkeypatch):
    """A deploy refused while an instance starts: the search's one example has none taking
    effect (``holds ?``, and --fail-vacuous fails it), though committed traces had deploys
    accepted and judged; every check counts them, not only the first, which recorded them."""
    monkeypatch.syspath_prepend(str(Path(__file__).parent))
    argv = ["contract", "--python", "fakes_known:picky_deploy", "--model", "capi", "--examples", "1", "--seed", "0",
            "--property", "single_active_deployment", "--property", "app_stays_available", "--json"]
    status, out, _ = run(capsys, *argv, "--no-known")
    assert status == 0 and all(r["stats"]["vacuous"] == ["deploy"] for r in json.loads(out)["results"])
    status, out, _ = run(capsys, *argv, "--fail-vacuous")
    results = valid_json_output(json.loads(out))["results"]
    assert status == 0 and [r["stats"]["vacuous"] for r in results] == [[], []]
