"""The pytest plugin: ``pytest --pyargs deployspec.stateful_tests.test_contract --deployspec-…``.

Each case runs pytest in a subprocess, in an empty directory, as a user would.
"""

from __future__ import annotations

import importlib.util
import shlex
import subprocess
import sys

import pytest

from deployspec.models import get_model

N_PROPERTIES = len(get_model("capi").properties)

PYTEST = [sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "--pyargs",
          "deployspec.stateful_tests.test_contract", "-rs"]


def pytest_run(tmp_path, *args: str) -> subprocess.CompletedProcess:
    return subprocess.run([*PYTEST, *args], cwd=tmp_path, capture_output=True, text=True, timeout=300,
                          check=False)


def test_without_an_implementation_every_check_is_skipped_with_the_reason(tmp_path):
    r = pytest_run(tmp_path)
    assert r.returncode == 0, r.stdout
    assert f"{N_PROPERTIES} skipped" in r.stdout
    assert "no implementation given: pass --deployspec-exec COMMAND" in r.stdout


def test_a_violation_fails_its_test_with_the_shrunk_trace_and_saves_it(tmp_path):
    out = tmp_path / "found"
    r = pytest_run(tmp_path, "--deployspec-python", "deployspec.contract.examples:capi_2022",
                   "--deployspec-examples", "10", "--deployspec-seed", "2", "--deployspec-out", str(out),
                   "-k", "single_active_deployment")
    assert r.returncode == 1, r.stdout
    assert "1 failed" in r.stdout and "passed" not in r.stdout
    assert "2 active deployments: d0 CANCELING, d1 DEPLOYING" in r.stdout
    assert len(list(out.glob("implementation--single_active_deployment--*.json"))) == 1


def test_a_fault_fails_the_test_with_one_line(tmp_path):
    r = pytest_run(tmp_path, "--deployspec-exec", "exit 5", "-k", "single_active_deployment")
    assert r.returncode == 1
    assert ("\nimplementation fault at reset while checking single_active_deployment: "
            "the implementation exited with status 5 before replying to reset\n") in r.stdout
    assert "During handling" not in r.stdout and "Traceback" not in r.stdout


@pytest.mark.skipif(importlib.util.find_spec("xdist") is None,
                    reason="pytest-xdist is not installed (it is in the dev extra)")
def test_with_xdist_each_worker_drives_its_own_program(tmp_path):
    server = f"{shlex.quote(sys.executable)} -m deployspec serve --model capi --variant capi-safe"
    r = pytest_run(tmp_path, "-n", "2", "--deployspec-exec", server, "--deployspec-reference", "capi-safe",
                   "--deployspec-examples", "3")
    assert r.returncode == 0, r.stdout + r.stderr
    assert f"{N_PROPERTIES + 1} passed" in r.stdout  # conforms_to_capi-safe and every property
