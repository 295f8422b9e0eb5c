"""The bare breadth-first search on capi-safe, repeated in one process.

    python benchmarks/bare_bfs.py [--runs N] [--max-deployments N]

Section 1 of ``explore_bench.py`` runs each search in a fresh process; this
one runs them one after another in the same process, so an interpreter with a
JIT shows its cold first run and its warm later ones. It imports only the
explorer and the capi model, which also load under PyPy 3.9 once the
package's dependencies are installed (docs/performance.md gives the commands
and figures).
"""

from __future__ import annotations

import platform
import time


def main() -> None:
    import _args  # bad arguments: one line, exit status 2

    from deployspec import argtypes

    parser = _args.Parser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=_args.runs, default=5)
    parser.add_argument("--max-deployments", type=argtypes.nonneg_int, default=None,
                        help="instead of the default exploration bound (2)")
    args = parser.parse_args()

    from deployspec.engines.explore import explore_config
    from deployspec.explorer import bfs
    from deployspec.models import get_model

    model = get_model("capi")
    variant = model.variant("capi-safe")
    config = explore_config(model, variant)
    config = _args.with_max_deployments(model, config, args.max_deployments)
    print(f"{platform.python_implementation()} {platform.python_version()}: bare BFS on capi-safe")
    print("run  states  transitions  depth  CPU s  states/s (CPU)")
    for run in range(1, args.runs + 1):
        cpu = time.process_time()
        r = bfs(model, variant, config, goal=lambda state, obs: False)
        cpu = time.process_time() - cpu
        print(f"{run:>3}  {r.states:,}  {r.transitions:,}  {r.depth}  {cpu:.2f}  {r.states / cpu:,.0f}", flush=True)


if __name__ == "__main__":
    main()
