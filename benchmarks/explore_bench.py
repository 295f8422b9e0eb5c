"""Speed and memory of the exhaustive explorer, beside the Hypothesis engine.

    python benchmarks/explore_bench.py [--quick] [--runs N]

Reports, each measurement in a fresh process (so its peak memory is its own):

1. distinct states per second of the bare breadth-first search (``bfs``) on
   capi-safe at the default exploration bounds and at max_deployments=3, on
   one core: wall clock and CPU time (the machine may be shared; CPU time is
   what one core can do);
2. each property of the fixed designs (capi-safe, slots-pipeline-immutable)
   with ``--engine explore``: states, transitions, seconds, complete or not;
3. time to each bug of the historic designs (capi-2022: the seed;
   slots-webhook-tag), per property, with each engine side by side
   (Hypothesis seed 0; explore is deterministic), and the trace lengths;
4. the frontier-parallel experiment (2 worker processes) against one process.
"""

from __future__ import annotations

import argparse
import concurrent.futures as cf
import multiprocessing as mp
import resource
import statistics
import time


def _peak_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def bare_bfs(variant: str, overrides: dict) -> dict:
    import attrs

    from deployspec.engines.explore import explore_config
    from deployspec.explorer import bfs
    from deployspec.models import get_model

    model = get_model("capi")
    v = model.variant(variant)
    config = attrs.evolve(explore_config(model, v), **overrides)
    cpu = time.process_time()
    r = bfs(model, v, config, goal=lambda s, o: False)
    cpu = time.process_time() - cpu
    return {"states": r.states, "transitions": r.transitions, "depth": r.depth, "wall": r.seconds,
            "cpu": cpu, "complete": r.complete, "peak_mb": _peak_mb()}


def engine(name: str, variant: str, prop: str, overrides: dict | None = None, model: str = "capi") -> dict:
    import attrs

    from deployspec.check import engine_function
    from deployspec.engines.explore import explore_config
    from deployspec.models import get_model

    model = get_model(model)
    kwargs = {}
    if overrides:
        kwargs["config"] = attrs.evolve(explore_config(model, model.variant(variant)), **overrides)
    cpu, wall = time.process_time(), time.perf_counter()
    r = engine_function(name)(model, variant, model.property(prop), budget=60, seed=0, out_dir=None, **kwargs)
    return {"verdict": r.verdict, "length": r.trace_length, "wall": time.perf_counter() - wall,
            "cpu": time.process_time() - cpu, "stats": r.stats, "message": r.message, "peak_mb": _peak_mb()}


def parallel(workers: int, overrides: dict) -> dict:
    """Frontier-parallel BFS (states only, no paths): the main process keeps the
    visited set; a pool of forked workers expands chunks of each layer."""
    import attrs

    from deployspec.engines.explore import explore_config
    from deployspec.models import get_model

    global _M, _V, _C
    _M = get_model("capi")
    _V = _M.variant("capi-safe")
    _C = attrs.evolve(explore_config(_M, _V), **overrides)
    wall, cpu = time.perf_counter(), time.process_time()
    root = _M.initial_state(_C)
    visited, frontier = {hash(root)}, [root]
    pool = mp.get_context("fork").Pool(workers) if workers > 1 else None
    while frontier:
        if pool:
            k = max(1, len(frontier) // (workers * 4))
            results = pool.map(_expand_chunk, [frontier[i:i + k] for i in range(0, len(frontier), k)])
        else:
            results = [_expand_chunk(frontier)]
        nxt = []
        for children in results:
            for t in children:
                h = hash(t)
                if h not in visited:
                    visited.add(h)
                    nxt.append(t)
        frontier = nxt
    if pool:
        pool.close()
    return {"states": len(visited), "wall": time.perf_counter() - wall, "main_cpu": time.process_time() - cpu}


def _expand_chunk(states):
    from deployspec.reference.core import Rejected

    out, seen = [], set()
    for s in states:
        for a in _M.candidate_actions(_M.observe(s), _C):
            t = _V.step(s, a)
            if t.__class__ is Rejected or t == s:
                continue
            h = hash(t)
            if h not in seen:
                seen.add(h)
                out.append(t)
    return out


def fresh(fn, *args):
    """Run ``fn(*args)`` in a new process (spawned: nothing inherited)."""
    ctx = mp.get_context("spawn")
    with cf.ProcessPoolExecutor(max_workers=1, mp_context=ctx, max_tasks_per_child=1) as ex:
        return ex.submit(fn, *args).result()


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--quick", action="store_true", help="one run each, skip max_deployments=3")
    ap.add_argument("--runs", type=int, default=None,
                    help="runs of the bare BFS, median reported (default 1 with --quick, else 3)")
    args = ap.parse_args()
    runs = args.runs or (1 if args.quick else 3)

    print("1. bare BFS on capi-safe (one core)")
    for label, over in (("default bounds", {}), ("max_deployments=3", {"max_deployments": 3})):
        if args.quick and over:
            continue
        rs = [fresh(bare_bfs, "capi-safe", over) for _ in range(runs)]
        cpu = statistics.median(r["cpu"] for r in rs)
        wall = statistics.median(r["wall"] for r in rs)
        r = rs[0]
        print(f"   {label}: {r['states']} states, {r['transitions']} transitions, depth {r['depth']}, "
              f"complete={r['complete']}; median {wall:.2f} s wall = {r['states'] / wall:,.0f} states/s, "
              f"{cpu:.2f} s CPU = {r['states'] / cpu:,.0f} states/s ({runs} runs, CPU "
              f"{min(x['cpu'] for x in rs):.2f}-{max(x['cpu'] for x in rs):.2f} s); peak {r['peak_mb']:.0f} MiB")

    from deployspec.models import get_model

    for model, fixed, historic in (("capi", "capi-safe", "capi-2022"),
                                   ("slots", "slots-pipeline-immutable", "slots-webhook-tag")):
        props = [p.name for p in get_model(model).properties]
        print(f"2. --engine explore on {fixed}, default bounds (each property in a fresh process)")
        total = 0.0
        for p in props:
            r = fresh(engine, "explore", fixed, p, None, model)
            s = r["stats"]
            total += r["wall"]
            print(f"   {p}: {r['verdict']}, {s['states']} states, {s['transitions']} transitions, depth "
                  f"{s['depth']}, complete={s['complete']}, {r['wall']:.2f} s wall ({r['cpu']:.2f} s CPU, "
                  f"{s['states'] / r['cpu']:,.0f} states/s CPU), peak {r['peak_mb']:.0f} MiB")
        print(f"   all: {total:.1f} s wall")

        print(f"3. time to each bug of {historic}: hypothesis (seed 0) vs explore")
        for p in props:
            h = fresh(engine, "hypothesis", historic, p, None, model)
            e = fresh(engine, "explore", historic, p, None, model)
            if h["verdict"] != "violated" and e["verdict"] != "violated":
                continue
            print(f"   {p}: hypothesis {h['wall']:.2f} s, {h['length']} steps | explore {e['wall']:.2f} s, "
                  f"{e['length']} steps, {e['stats']['states']} states, peak {e['peak_mb']:.0f} MiB")

    print("4. frontier-parallel BFS (capi-safe, max_deployments=3; states only)")
    if not args.quick:
        for workers in (1, 2):
            r = fresh(parallel, workers, {"max_deployments": 3})
            print(f"   {workers} process(es): {r['states']} states in {r['wall']:.2f} s wall "
                  f"({r['states'] / r['wall']:,.0f} states/s), main process CPU {r['main_cpu']:.2f} s")


if __name__ == "__main__":
    main()
