"""``check --memory MIB``: the memory budget of each exhaustive search, which no option
changed (a proof of capi-safe at max_deployments=3 with three canary plans stopped at
3,072 MiB on a machine of 24 GiB: 1,445,903 states, incomplete). Pinned: it reaches every
exhaustive search (in this process and in --jobs processes), the result says the budget and
how to give more, and it is refused where no exhaustive search runs."""

import json

import pytest

from .cli_runs import run, valid_json_output

ONE = ["check", "--model", "capi", "--variant", "capi-safe", "--engine", "explore", "--json"]


def test_a_search_stops_at_the_memory_given_and_says_so(capsys):
    status, out, _ = run(capsys, *ONE, "--property", "single_active_deployment", "--memory", "64")
    (r,) = valid_json_output(json.loads(out))["results"]
    assert status == 0 and (r["verdict"], r["stats"]["complete"], r["stats"]["stopped"]) == ("holds", False, "memory")
    assert r["stats"]["memory_budget_mb"] == 64
    assert "memory budget of 64 MiB spent (--memory MIB gives more)" in r["message"]


def test_without_it_the_engine_s_budget_and_a_complete_proof(capsys):
    status, out, _ = run(capsys, *ONE, "--property", "single_active_deployment")
    (r,) = json.loads(out)["results"]
    assert status == 0 and r["stats"]["complete"] and r["stats"]["memory_budget_mb"] == 3072


def test_it_reaches_the_searches_of_jobs_processes(capsys):
    status, out, _ = run(capsys, *ONE, "--property", "single_active_deployment", "--property", "app_stays_available",
                         "--jobs", "2", "--memory", "64")
    results = json.loads(out)["results"]
    assert status == 0 and len(results) == 2
    assert all((r["stats"]["stopped"], r["stats"]["memory_budget_mb"]) == ("memory", 64) for r in results)


@pytest.mark.parametrize("argv, message", [
    (["check", "--model", "capi", "--engine", "hypothesis", "--memory", "4096"],
     "--memory bounds an exhaustive search, and --engine hypothesis runs none here"),
    (["check", "--model", "capi", "--engine", "z3", "--memory", "4096"],
     "--memory bounds an exhaustive search, and --engine z3 runs none here"),
    (["check", "--memory", "63"], "argument --memory: must be >= 64, got 63"),
    (["check", "--memory", "8G"], "argument --memory: not an integer: '8G'"),
])
def test_where_it_bounds_nothing_or_is_no_size_it_is_a_usage_error(capsys, argv, message):
    status, out, err = run(capsys, *argv)
    assert (status, out) == (2, "") and err.startswith(f"deployspec: error: {message}"), err
