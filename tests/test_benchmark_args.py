"""The benchmark scripts refuse bad arguments as deployspec does: one line on stderr,
exit status 2, before anything is measured (a negative --runs was a StatisticsError
traceback, --seconds nan a run without end, --max-deployments 100000 a search without end)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

BENCHMARKS = Path(__file__).parent.parent / "benchmarks"


@pytest.mark.parametrize("argv, said", [
    (["explore_bench.py", "--quick", "--runs", "-1", "--section", "1"], "argument --runs: must be >= 1, got -1"),
    (["explore_bench.py", "--runs", "0", "--section", "4"], "argument --runs: must be >= 1, got 0"),
    (["explore_bench.py", "--section", "5"], "argument --section: invalid choice: 5"),
    (["hypothesis_bench.py", "--seeds", "0"], "argument --seeds: must be >= 1, got 0"),
    (["bare_bfs.py", "--runs", "1001"], "argument --runs: at most 1000, got 1001"),
    (["bare_bfs.py", "--max-deployments", "100000"], "--max-deployments: max_deployments must be at most 64"),
    (["capi_variant_steps.py", "nosuch", "1"], "argument variant: unknown variant 'nosuch' for model capi"),
    (["capi_variant_steps.py", "capi-safe", "0"], "argument seconds: must be more than 0"),
    (["contract_throughput.py", "--seconds", "nan"], "argument --seconds: must be more than 0"),
    (["contract_throughput.py", "--seed", "-1"], "argument --seed: must be >= 0, got -1"),
    (["instructions.py", "--max-deployments", "-1"], "argument --max-deployments: must be >= 0, got -1"),
    (["compiled_bench.py", "--runs", "0"], "argument --runs: must be >= 1, got 0"),
    (["z3_bench.py", "--bounds", "999999x99999"], "processes and deployments must be from 1 to 64"),
])
def test_a_bad_argument_is_one_line_and_exit_2(argv, said):
    r = subprocess.run([sys.executable, str(BENCHMARKS / argv[0]), *argv[1:]], capture_output=True, text=True,
                       timeout=120, check=False)
    assert (r.returncode, r.stdout) == (2, ""), r.stderr
    assert r.stderr.startswith(f"{argv[0]}: error: ") and said in r.stderr, r.stderr
    assert r.stderr.count("\n") == 1, r.stderr


@pytest.mark.parametrize("name", sorted(p.stem for p in BENCHMARKS.glob("*.py") if not p.stem.startswith("_")))
def test_each_benchmark_also_runs_as_a_module_from_the_root(name):
    """``python -m benchmarks.NAME`` from the repository's root finds the scripts' shared
    ``_args`` as ``python benchmarks/NAME.py`` does (it was a ModuleNotFoundError): shown
    by the same one-line refusal of an argument none of them takes."""
    r = subprocess.run([sys.executable, "-m", f"benchmarks.{name}", "--no-such-option"], capture_output=True,
                       text=True, timeout=120, check=False, cwd=BENCHMARKS.parent)
    assert (r.returncode, r.stdout) == (2, ""), r.stderr
    assert r.stderr == f"{name}.py: error: unrecognized arguments: --no-such-option\n", r.stderr
