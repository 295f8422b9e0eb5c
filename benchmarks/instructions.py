"""Instructions the bare breadth-first search executes per state, under Valgrind.

    python benchmarks/instructions.py [--variant capi-safe] [--max-deployments N]

The timings of ``explore_bench.py`` and ``bare_bfs.py`` move by a factor of
three between machines of the same kind and by a fifth between runs on a
shared one (docs/performance.md), which hides a change of a few per cent in
the code. The number of instructions hardly moves: the child's string hashes
are fixed (``PYTHONHASHSEED=0``), so two runs agree to within about 0.6 per cent
(one part in ten thousand on some days). So a change to the explorer or a model
is judged here, and the timings say what a machine makes of it.

Each search runs in a fresh interpreter under ``valgrind --tool=callgrind``
(about 70 times slower: a minute for capi-safe's default bounds); the same
interpreter with the same imports and no search is counted too and
subtracted, so the figure is the search's alone. Needs ``valgrind`` on PATH.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys

# run in the child: imports always, the search only with "search" given
CHILD = """
import sys, attrs
from deployspec.engines.explore import explore_config
from deployspec.explorer import bfs
from deployspec.models import get_model
model = get_model("capi")
variant = model.variant(sys.argv[1])
config = explore_config(model, variant)
if sys.argv[2] != "-":
    config = attrs.evolve(config, max_deployments=int(sys.argv[2]))
if sys.argv[3] == "search":
    r = bfs(model, variant, config, goal=lambda state, obs: False)
    print(r.states, r.transitions)
"""


def counted(args: list[str]) -> tuple[int, str]:
    """Instructions callgrind counted for the child, and what it printed."""
    run = subprocess.run(
        ["valgrind", "--tool=callgrind", "--callgrind-out-file=/dev/null", sys.executable, "-c", CHILD, *args],
        capture_output=True, text=True, check=False, env={**os.environ, "PYTHONHASHSEED": "0"},
    )
    found = re.search(r"Collected : (\d+)", run.stderr)
    if run.returncode != 0 or found is None:
        own = [line for line in run.stderr.splitlines() if line.strip() and not line.startswith("==")]
        tail = (own or [f"exit status {run.returncode}"])[-1]
        raise SystemExit(f"instructions.py: the run under valgrind failed: {tail}")
    return int(found.group(1)), run.stdout.strip()


def main() -> None:
    import _args

    from deployspec import argtypes

    parser = _args.Parser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--variant", type=_args.capi_variant, default="capi-safe")
    parser.add_argument("--max-deployments", type=argtypes.nonneg_int, default=None,
                        help="instead of the default exploration bound (2)")
    args = parser.parse_args()
    from deployspec.engines.explore import explore_config
    from deployspec.models import get_model

    model = get_model("capi")  # the bound as --bound takes it, before valgrind starts
    _args.with_max_deployments(model, explore_config(model, model.variant(args.variant)), args.max_deployments)
    if shutil.which("valgrind") is None:
        raise SystemExit("instructions.py: needs valgrind on PATH (e.g. apt-get install valgrind)")
    bound = "-" if args.max_deployments is None else str(args.max_deployments)
    with_search, printed = counted([args.variant, bound, "search"])
    imports_only, _ = counted([args.variant, bound, "imports"])
    states, transitions = map(int, printed.split())
    search = with_search - imports_only
    print(f"bare BFS on {args.variant}: {states:,} states, {transitions:,} transitions; "
          f"{search / 1e9:.3f} G instructions = {search / states:,.0f} per state "
          f"({sys.implementation.name} {sys.version.split()[0]})")


if __name__ == "__main__":
    main()
