"""What compiling the unchanged sources with Cython gives the exhaustive explorer.

    pip install cython && python benchmarks/compiled_bench.py [--runs N]

Issue #7 asks for 50,000 distinct states/s on one core; the pure-Python model
alone allows at most about 32,000 (``explore_bench.py``, section 1). This
measures the one remaining lever that keeps one source of truth: the same
``.py`` files compiled, nothing rewritten. It copies the package into a
temporary directory laid out as installed (``reference/`` as
``deployspec/reference``, ...), compiles the Cloud Foundry model
(``reference/capi/*.py``) and the search (``deployspec/explorer.py``) in place
with Cython, and runs section 1 of ``explore_bench.py`` (the bare BFS and the
model alone, capi-safe, default bounds) in fresh processes against that copy
and against the sources as they are, alternating. Both must visit the same
states, transitions and depth, or the figures are not reported.

attrs still generates each state class's ``__init__``, ``__hash__`` and
``__eq__`` as Python source at import, so those stay interpreted in the
compiled copy; the figures say what compiling alone buys. Nothing is written
outside the temporary directory, which is removed afterwards.
"""

from __future__ import annotations

import argparse
import glob
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
BENCH = os.path.dirname(os.path.abspath(__file__))
#: source folder -> where it lives in an installed deployspec
LAYOUT = {"deployspec": "deployspec", "reference": "deployspec/reference",
          "spec": "deployspec/spec", "stateful_tests": "deployspec/stateful_tests"}
COMPILED = ["deployspec/reference/capi/*.py", "deployspec/explorer.py"]

SETUP = """
from setuptools import setup
from Cython.Build import cythonize
setup(ext_modules=cythonize({modules!r}, language_level=3, quiet=True), script_args=["build_ext", "--inplace"])
"""

MEASURE = """
import json, sys
sys.path.insert(0, {bench!r})
import deployspec.explorer, explore_bench
where = deployspec.explorer.__file__
bfs = explore_bench.bare_bfs("capi-safe", {{}})
alone = explore_bench.model_alone("capi-safe")
print(json.dumps({{"where": where, "bfs": bfs, "alone": alone}}))
"""


def build(tmp: str) -> list[str]:
    """The package copied under ``tmp`` and its hot modules compiled in place."""
    for src, dst in LAYOUT.items():
        shutil.copytree(os.path.join(ROOT, src), os.path.join(tmp, dst),
                        ignore=shutil.ignore_patterns("__pycache__", "*.so"))
    modules = sorted(m for pattern in COMPILED for m in glob.glob(os.path.join(tmp, pattern))
                     if not m.endswith("__init__.py"))
    rel = [os.path.relpath(m, tmp) for m in modules]
    with open(os.path.join(tmp, "setup.py"), "w") as f:
        f.write(SETUP.format(modules=rel))
    done = subprocess.run([sys.executable, "setup.py"], check=False, cwd=tmp, capture_output=True, text=True)
    if done.returncode != 0:
        sys.exit("compiling failed:\n" + done.stderr[-2000:])
    return rel


def measure(path_first: str | None) -> dict:
    """Section 1 in a fresh interpreter, with ``path_first`` ahead of the installed package."""
    env = dict(os.environ)
    if path_first:
        env["PYTHONPATH"] = path_first + os.pathsep + env.get("PYTHONPATH", "")
    done = subprocess.run([sys.executable, "-c", MEASURE.format(bench=BENCH)], check=False, env=env,
                          capture_output=True, text=True, cwd=path_first or ROOT)
    if done.returncode != 0:
        sys.exit("measuring failed:\n" + done.stderr[-2000:])
    return json.loads(done.stdout.strip().splitlines()[-1])


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--runs", type=int, default=3, help="runs of each build, alternating (median reported)")
    args = ap.parse_args()
    try:
        import Cython
    except ImportError:
        sys.exit("needs Cython: pip install cython")
    with tempfile.TemporaryDirectory(prefix="deployspec-compiled-") as tmp:
        rel = build(tmp)
        print(f"compiled with Cython {Cython.__version__}: {len(rel)} modules ({', '.join(rel)})")
        runs: dict[str, list[dict]] = {"pure Python": [], "compiled": []}
        for _ in range(args.runs):
            runs["pure Python"].append(measure(None))
            runs["compiled"].append(measure(tmp))
        if not runs["compiled"][0]["where"].endswith(".so"):
            sys.exit(f"the compiled copy was not the one imported ({runs['compiled'][0]['where']})")
    shape = {name: {(r["bfs"]["states"], r["bfs"]["transitions"], r["bfs"]["depth"]) for r in rs}
             for name, rs in runs.items()}
    if len(shape["pure Python"] | shape["compiled"]) != 1:
        sys.exit(f"the two builds explored different graphs: {shape}")
    states, transitions, depth = next(iter(shape["compiled"]))
    print(f"capi-safe, default bounds: {states} states, {transitions} transitions, depth {depth} "
          f"(both builds); median of {args.runs} runs each, CPU time")
    cpu = {}
    for name, rs in runs.items():
        cpu[name] = statistics.median(r["bfs"]["cpu"] for r in rs)
        alone = statistics.median(r["alone"]["total"] for r in rs)
        step = statistics.median(r["alone"]["step"] for r in rs)
        print(f"   {name}: bare BFS {cpu[name]:.2f} s = {states / cpu[name]:,.0f} states/s; "
              f"the model alone {alone:.2f} s (steps {step:.2f} s) = at most {states / alone:,.0f} states/s")
    print(f"   compiled / pure Python: {cpu['pure Python'] / cpu['compiled']:.2f}x faster bare BFS")


if __name__ == "__main__":
    main()
