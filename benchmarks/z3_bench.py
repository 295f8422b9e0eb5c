"""Speed of the Z3 engine: bounded proofs of the selection rules and the time to a
confirmed counterexample.

    python benchmarks/z3_bench.py [--bounds 8x6 8x7 12x11 16x15] [--runs 3]

(1) For each variant and bound N x M (processes x deployments): the time to build
the encoding and to prove or refute each selection property (median of --runs,
each in a fresh problem). PR #3084's survivor_runs is also proved with instance
reports available, which is where it holds.
(2) The wall time of ``deployspec check --model capi --variant capi-2022 --engine z3
--json`` as a subprocess (imports included), median of --runs.
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import time

import z3
from deployspec.spec import selection as sel

from deployspec.argtypes import quoted_arg
from deployspec.engines.z3_engine import Problem
from deployspec.models import get_model

#: the largest N or M taken (the explorer's max_deployments is held to the same)
MOST = 64


def bound(text: str) -> tuple[int, int]:
    """``NxM``: N processes, M deployments, each from 1 to :data:`MOST`."""
    try:
        n, m = (int(x) for x in text.lower().split("x"))
    except ValueError:
        raise argparse.ArgumentTypeError(f"{quoted_arg(text)} is not NxM (processes x deployments, e.g. 8x7)") from None
    if not (1 <= n <= MOST and 1 <= m <= MOST):
        raise argparse.ArgumentTypeError(f"{quoted_arg(text)}: processes and deployments must be from 1 to {MOST}")
    return n, m


def main() -> None:
    import _args

    ap = _args.Parser()
    ap.add_argument("--bounds", nargs="+", type=bound, default=[(8, 6), (8, 7), (12, 11), (16, 15)])
    ap.add_argument("--runs", type=_args.runs, default=3)
    args = ap.parse_args()

    capi = get_model("capi")
    encodings = {name: enc for name, enc in sel.VARIANTS.items() if name in capi.variants}
    traits = {name: sel.traits(capi.variant(name), enc) for name, enc in encodings.items()}
    print(f"{'variant':14} {'N x M':7} {'build':>7} " + " ".join(f"{p.name:>22}" for p in sel.PROPERTIES)
          + f" {'total':>7}")
    for N, M in args.bounds:
        for name, enc in encodings.items():
            builds, cells, totals = [], {p.name: [] for p in sel.PROPERTIES}, []
            verdicts = {}
            for _ in range(args.runs):
                t = time.perf_counter()
                problem = Problem(enc, N, M, traits[name])
                builds.append(problem.build_seconds)
                for p in sel.PROPERTIES:
                    a = problem.analysis(p)
                    cells[p.name].append(a.seconds)
                    verdicts[p.name] = "holds" if a.holds else "VIOL"
                totals.append(time.perf_counter() - t)
            row = " ".join(f"{verdicts[p.name]:>6} {statistics.median(cells[p.name]):>8.3f} s     "
                           for p in sel.PROPERTIES)
            print(f"{name:14} {N}x{M:<5} {statistics.median(builds):>6.3f}s {row}"
                  f" {statistics.median(totals):>6.3f}s")
        problem = Problem(sel.VARIANTS["capi-pr3084"], N, M, traits["capi-pr3084"])
        solver = z3.Solver()
        solver.add(*problem.base, problem.s.reports,
                   z3.Not(sel.selection_property("survivor_runs").build(problem.s, problem.survivor)))
        t = time.perf_counter()
        verdict = "holds" if solver.check() == z3.unsat else "VIOLATED"
        print(f"  capi-pr3084 survivor_runs with reports available, {N}x{M}: {verdict} "
              f"({time.perf_counter() - t:.3f} s)")

    walls = []
    for _ in range(args.runs):
        t = time.perf_counter()
        r = subprocess.run([sys.executable, "-m", "deployspec.cli", "check", "--model", "capi", "--variant",
                            "capi-2022", "--engine", "z3", "--json"], check=False, capture_output=True)
        walls.append(time.perf_counter() - t)
    print(f"deployspec check --variant capi-2022 --engine z3 --json: exit {r.returncode}, "
          f"median {statistics.median(walls):.2f} s wall over {args.runs} runs")


if __name__ == "__main__":
    main()
