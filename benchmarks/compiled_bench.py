"""What compiling the unchanged sources gives the exhaustive explorer: Cython, or mypyc.

    pip install cython && python benchmarks/compiled_bench.py [--runs N]
    pip install mypy && python benchmarks/compiled_bench.py --compiler mypyc [--runs N]

Issue #7 asks for 50,000 distinct states/s on one core; the pure-Python model
alone allows at most about 32,000 (``explore_bench.py``, section 1). This
measures the one remaining lever that keeps one source of truth: the same
``.py`` files compiled, nothing rewritten. It copies the package into a
temporary directory laid out as installed (``reference/`` as
``deployspec/reference``, ...), compiles the Cloud Foundry model
(``reference/capi/*.py``) and the search (``deployspec/explorer.py``) in place,
and runs section 1 of ``explore_bench.py`` (the bare BFS and the model alone,
capi-safe, default bounds) in fresh processes against that copy and against
the sources as they are, alternating. Both must visit the same states,
transitions and depth, or the figures are not reported.

attrs still generates each state class's ``__init__``, ``__hash__`` and
``__eq__`` as Python source at import, so those stay interpreted in the
compiled copy under either compiler; the figures say what compiling alone buys.

mypyc needs more than Cython, all of it in the copy only: it refuses code with
type errors (each line it names gets a ``# type: ignore[code]``, 15 of them);
it checks ``x: T = attrs.field(...)`` in a class body against ``T`` at import
(written ``x: Any = cast(Any, attrs.field)(...)``); and it makes every
class-level name of an attrs class an annotated one, which attrs then takes for
a field, so ``actions.py``, ``model.py`` and ``variants.py`` (class constants
such as ``CapiConfig.EXPLORE``, ``kind = "scale"``) stay interpreted. The
copy is enough for the bare BFS, not for the whole program: a plain class it
compiles cannot be subclassed by interpreted code (``ProductGraph``). Nothing is
written outside the temporary directory, which is removed afterwards.
"""

from __future__ import annotations

import glob
import json
import os
import re
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
#: what mypyc's copy cannot take (class-level names of attrs classes become fields)
NOT_UNDER_MYPYC = {"deployspec/reference/capi/actions.py", "deployspec/reference/capi/model.py",
                   "deployspec/reference/capi/variants.py"}
#: a mypyc error line: where, and the error code to silence
MYPY_ERROR = re.compile(r"^(?P<path>[^:\s]+\.py):(?P<line>\d+): error: .*\[(?P<code>[a-z-]+)\]$")
ATTRS_FIELD = re.compile(r"^(?P<lead>    \w+): [^=]+? = attrs\.field\((?P<rest>.*)$")

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
load = open("/proc/loadavg").read().split()[0]
print(json.dumps({{"where": where, "bfs": bfs, "alone": alone, "load": load}}))
"""


def copy_tree(tmp: str) -> list[str]:
    """The package copied under ``tmp``; the modules to compile there (relative)."""
    for src, dst in LAYOUT.items():
        shutil.copytree(os.path.join(ROOT, src), os.path.join(tmp, dst),
                        ignore=shutil.ignore_patterns("__pycache__", "*.so"))
    modules = sorted(m for pattern in COMPILED for m in glob.glob(os.path.join(tmp, pattern))
                     if not m.endswith("__init__.py"))
    return [os.path.relpath(m, tmp) for m in modules]


def build(tmp: str) -> list[str]:
    """The package copied under ``tmp`` and its hot modules compiled in place with Cython."""
    rel = copy_tree(tmp)
    with open(os.path.join(tmp, "setup.py"), "w") as f:
        f.write(SETUP.format(modules=rel))
    done = subprocess.run([sys.executable, "setup.py"], check=False, cwd=tmp, capture_output=True, text=True)
    if done.returncode != 0:
        sys.exit("compiling failed:\n" + done.stderr[-2000:])
    return rel


def build_mypyc(tmp: str) -> list[str]:
    """The package copied under ``tmp`` and the modules mypyc can take compiled in place."""
    rel = [m for m in copy_tree(tmp) if m not in NOT_UNDER_MYPYC]
    for m in rel:
        _edit(tmp, m, lambda lines: [_untyped_field(text) for text in lines], imports=True)
    for _ in range(4):  # each round silences the errors reported; a second finds none
        done = subprocess.run([sys.executable, "-m", "mypyc", "--disable-error-code", "annotation-unchecked",
                               *rel], check=False, cwd=tmp, capture_output=True, text=True)
        if done.returncode == 0:
            return rel
        errors: dict[tuple[str, int], set[str]] = {}
        for line in (done.stdout + done.stderr).splitlines():
            m = MYPY_ERROR.match(line.strip())
            if m and m["path"] in rel:
                errors.setdefault((m["path"], int(m["line"])), set()).add(m["code"])
        if not errors:
            sys.exit("mypyc failed (not a type error):\n" + (done.stdout + done.stderr)[-3000:])
        for (path, n), codes in errors.items():
            _edit(tmp, path, lambda lines, n=n, codes=codes: _ignored(lines, n, codes))
    sys.exit("mypyc still fails after silencing its type errors")


def _untyped_field(text: str) -> str:
    m = ATTRS_FIELD.match(text)
    return f"{m['lead']}: Any = cast(Any, attrs.field)({m['rest']}" if m else text


def _ignored(lines: list[str], n: int, codes: set[str]) -> list[str]:
    text = lines[n - 1]
    at = text.find("  #")  # before a trailing comment
    tag = f"  # type: ignore[{', '.join(sorted(codes))}]"
    lines[n - 1] = text + tag if at < 0 else text[:at] + tag + text[at:]
    return lines


def _edit(tmp: str, path: str, change, imports: bool = False) -> None:
    full = os.path.join(tmp, path)
    with open(full) as f:
        lines = f.read().split("\n")
    new = change(list(lines))
    if imports and new != lines:  # on the line after the future import, so no line number moves
        at = next(i for i, t in enumerate(new) if t.startswith("from __future__"))
        new[at] += "; from typing import Any, cast"
    with open(full, "w") as f:
        f.write("\n".join(new))


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
    import _args

    ap = _args.Parser()
    ap.add_argument("--runs", type=_args.runs, default=3, help="runs of each build, alternating (median reported)")
    ap.add_argument("--compiler", choices=["cython", "mypyc"], default="cython")
    args = ap.parse_args()
    try:
        if args.compiler == "cython":
            from Cython import __version__ as version
        else:
            from mypy.version import __version__ as version
    except ImportError:
        sys.exit(f"needs {args.compiler}: pip install {'cython' if args.compiler == 'cython' else 'mypy'}")
    with tempfile.TemporaryDirectory(prefix="deployspec-compiled-") as tmp:
        rel = build(tmp) if args.compiler == "cython" else build_mypyc(tmp)
        print(f"compiled with {args.compiler} {version}: {len(rel)} modules ({', '.join(rel)})")
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
        each = ", ".join(format(r["bfs"]["cpu"], ".2f") for r in rs)
        print(f"   {name}: bare BFS {cpu[name]:.2f} s = {states / cpu[name]:,.0f} states/s; "
              f"the model alone {alone:.2f} s (steps {step:.2f} s) = at most {states / alone:,.0f} states/s "
              f"(runs {each} s; "
              f"load average {', '.join(r['load'] for r in rs)})")
    print(f"   compiled / pure Python: {cpu['pure Python'] / cpu['compiled']:.2f}x faster bare BFS")


if __name__ == "__main__":
    main()
