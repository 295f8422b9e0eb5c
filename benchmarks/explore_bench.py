"""Speed and memory of the exhaustive explorer, beside the Hypothesis engine.

    python benchmarks/explore_bench.py [--quick] [--runs N]

Reports, each measurement in a fresh process (so its peak memory is its own):

1. distinct states per second of the bare breadth-first search (``bfs``) on
   capi-safe at the default exploration bounds and at max_deployments=3, on
   one core: wall clock and CPU time (the machine may be shared; CPU time is
   what one core can do); and what the model's own functions cost per state
   with no explorer at all (the ceiling of any explorer over this model), and
   what the search costs when the model's steps are free (looked up);
2. each property of the fixed designs (capi-safe, slots-pipeline-immutable)
   with ``--engine explore``: states, transitions, seconds, complete or not;
3. time to each bug of the historic designs (capi-2022: the seed;
   slots-webhook-tag), per property, with each engine side by side
   (Hypothesis seed 0; explore is deterministic), and the trace lengths;
4. one search split over 2 worker processes (``--workers 2``, hash-partitioned)
   against one process, alternating, median wall clock: the bare BFS and one
   trace property on capi-safe at the default bounds (and, without --quick,
   at max_instances=3).
"""

from __future__ import annotations

import concurrent.futures as cf
import multiprocessing as mp
import resource
import statistics
import time


def _peak_mb() -> float:
    from deployspec.memory import peak_rss_mb

    return peak_rss_mb()


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


def model_alone(variant: str) -> dict:
    """What the model's own functions cost per state, with no explorer around them.

    Collects every reachable state and the (state, action) pairs the search
    tries, then times each part on its own over all of them: observing each
    state, offering its candidate actions, the steps (accepted or not), and
    hashing the successors. Their sum bounds what any explorer built on these
    functions can reach, however little its own loop costs."""
    import gc

    from deployspec.reference.core import Rejected

    from deployspec.engines.explore import explore_config
    from deployspec.explorer import bfs
    from deployspec.models import get_model

    model = get_model("capi")
    v = model.variant(variant)
    config = explore_config(model, v)
    states: list = []
    bfs(model, v, config, goal=lambda s, o: states.append(s))
    gc.disable()

    def timed(fn):
        t = time.process_time()
        out = fn()
        return out, time.process_time() - t

    obs, t_observe = timed(lambda: [model.observe(s) for s in states])
    offered, t_offer = timed(lambda: [model.candidate_actions(o, config) for o in obs])
    pairs = [(s, a) for s, acts in zip(states, offered) for a in acts]
    _, t_step = timed(lambda: [v.step(s, a) for s, a in pairs])
    fresh_children = [v.step(s, a) for s, a in pairs]  # unhashed copies: hashes are cached
    _, t_hash = timed(lambda: [hash(c) for c in fresh_children if c.__class__ is not Rejected])
    n = len(states)
    total = t_observe + t_offer + t_step + t_hash
    return {"states": n, "steps": len(pairs), "observe": t_observe, "offer": t_offer,
            "step": t_step, "hash": t_hash, "total": total, "ceiling": n / total}


def free_steps(variant: str) -> dict:
    """The bare BFS with the model's step function made free: every step's result
    is computed by a first search, then a second search looks it up in a dict.
    The children are the very objects of the first search, whose hashes are
    cached, so what is left is the explorer's own loop, observing and offering:
    the cost of everything but the model's steps and the hashing of new states."""
    from deployspec.engines.explore import explore_config
    from deployspec.explorer import bfs
    from deployspec.models import get_model

    model = get_model("capi")
    v = model.variant(variant)
    config = explore_config(model, v)
    results: dict = {}

    class Recorded:  # the variant's step, remembered; then only looked up
        def __init__(self, step):
            self.step = step
            self.refusals = v.refusals  # (the design's candidates: Model.offered)

    def record(s, a):
        r = results[(s, a)] = v.step(s, a)
        return r

    first = bfs(model, Recorded(record), config, goal=lambda s, o: False)
    lookup = results.__getitem__
    cpu = time.process_time()
    second = bfs(model, Recorded(lambda s, a: lookup((s, a))), config, goal=lambda s, o: False)
    cpu = time.process_time() - cpu
    assert (first.states, first.transitions) == (second.states, second.transitions)
    return {"states": second.states, "cpu": cpu}


def representation_cost(variant: str, overrides: dict | None = None) -> dict:
    """What the attrs representation costs against named tuples, per explored state.

    Counts the objects the search builds per state (from a profile of one bare
    BFS: calls of each class's ``__init__``, and of ``_state``, which builds the
    capi model's states on the hot path), and times building and hashing one of
    each kind as the model builds it and as a named tuple of the same fields.
    The difference, times the counts, estimates what a named-tuple state would
    save, without rewriting the model to find out."""
    import collections
    import cProfile
    import pstats
    import timeit

    import attrs
    from deployspec.reference.capi import state as capi_state
    from deployspec.reference.capi.state import App, CapiState, Deployment, Process

    from deployspec.engines.explore import explore_config
    from deployspec.explorer import bfs
    from deployspec.models import get_model

    model = get_model("capi")
    v = model.variant(variant)
    config = attrs.evolve(explore_config(model, v), **(overrides or {}))
    prof = cProfile.Profile()
    r = prof.runcall(bfs, model, v, config, goal=lambda s, o: False)
    built = collections.Counter()
    for (filename, _line, name), row in pstats.Stats(prof).stats.items():
        if name == "__init__" and "attrs generated" in filename:
            built[filename.split(".")[-1].rstrip(">")] += row[1]  # primitive calls
        elif name == "_state" and filename.endswith("state.py"):
            built["CapiState"] += row[1]
    app, d = App(0), Deployment(0, "DEPLOYING", "ACTIVE", "DEPLOYING", 1, 1, 0, 2)
    p = Process(0, 0, ("RUNNING", "STARTING"))
    tuples = {c.__name__: collections.namedtuple(c.__name__, [f.name for f in attrs.fields(c)])
              for c in (CapiState, Process, Deployment)}
    # every field given, read off an instance, so a field added to the model cannot break this
    args = {"CapiState": (app, (True,), (p,), (d,), 2, ()), "Process": (0, 0, ("RUNNING", "RUNNING")),
            "Deployment": attrs.astuple(d, recurse=False)}
    classes = {"CapiState": capi_state._state, "Process": Process, "Deployment": Deployment}

    def cost(cls, a):
        return min(timeit.repeat(lambda: hash(cls(*a)), number=20000, repeat=5)) / 20000

    out = {"states": r.states}
    saved = 0.0
    for name, a in args.items():
        per_state = built[name] / r.states
        attrs_us, tuple_us = cost(classes[name], a) * 1e6, cost(tuples[name], a) * 1e6
        out[name] = {"per_state": per_state, "attrs_us": attrs_us, "tuple_us": tuple_us}
        saved += per_state * (attrs_us - tuple_us)
    out["saved_us_per_state"] = saved
    return out


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


def partitioned(workers: int, prop: str | None, overrides: dict) -> dict:
    """One search on capi-safe with ``workers`` processes: the bare BFS when
    ``prop`` is None, else that property's. CPU is this process's plus its
    workers' (they are joined by the time the search returns)."""
    import attrs

    from deployspec.engines.explore import explore_config, search
    from deployspec.explorer import bfs
    from deployspec.models import get_model

    model = get_model("capi")
    v = model.variant("capi-safe")
    config = attrs.evolve(explore_config(model, v), **overrides)
    wall = time.perf_counter()
    if prop is None:
        r = bfs(model, v, config, goal=lambda s, o: False, workers=workers)
        states, transitions, complete = r.states, r.transitions, r.complete
    else:
        r = search(model, "capi-safe", model.property(prop), budget=None, seed=0, out_dir=None,
                   config=config, workers=workers)
        states, transitions, complete = r.stats["states"], r.stats["transitions"], r.stats["complete"]
    wall = time.perf_counter() - wall
    own = resource.getrusage(resource.RUSAGE_SELF)
    kids = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = own.ru_utime + own.ru_stime + kids.ru_utime + kids.ru_stime
    return {"states": states, "transitions": transitions, "complete": complete, "wall": wall, "cpu": cpu}


def fresh(fn, *args):
    """Run ``fn(*args)`` in a new process (spawned: nothing inherited)."""
    ctx = mp.get_context("spawn")
    with cf.ProcessPoolExecutor(max_workers=1, mp_context=ctx, max_tasks_per_child=1) as ex:
        return ex.submit(fn, *args).result()


def main() -> None:
    import _args  # here, not above: the fresh processes measured import this module

    ap = _args.Parser()
    ap.add_argument("--quick", action="store_true", help="one run each, skip max_deployments=3")
    ap.add_argument("--runs", type=_args.runs, default=None,
                    help="runs of the bare BFS, median reported (default 1 with --quick, else 3)")
    ap.add_argument("--section", type=int, action="append", choices=(1, 2, 3, 4),
                    help="run only this section (repeatable; default: all)")
    args = ap.parse_args()
    runs = args.runs if args.runs is not None else (1 if args.quick else 3)
    sections = set(args.section or (1, 2, 3, 4))
    if 1 in sections:
        section_1(args, runs)
    if sections & {2, 3}:
        sections_2_3(sections)
    if 4 in sections:
        section_4(args, runs)


def section_1(args, runs: int) -> None:
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

    rs = [fresh(model_alone, "capi-safe") for _ in range(runs)]
    r = min(rs, key=lambda x: x["total"])
    per = {k: r[k] / r["states"] * 1e6 for k in ("observe", "offer", "step", "hash")}
    print(f"   the model alone (best of {runs}): {r['total']:.2f} s CPU for {r['states']} states and "
          f"{r['steps']} steps tried = at most {r['ceiling']:,.0f} states/s for any explorer; per state "
          + ", ".join(f"{k} {us:.1f} us" for k, us in per.items()))

    rs = [fresh(free_steps, "capi-safe") for _ in range(runs)]
    cpu = statistics.median(x["cpu"] for x in rs)
    print(f"   the same search with free steps (results looked up; no new state hashed), median of "
          f"{runs}: {cpu:.2f} s CPU = {rs[0]['states'] / cpu:,.0f} states/s: the explorer, observing "
          f"and offering take {cpu / rs[0]['states'] * 1e6:.1f} us per state")

    c = fresh(representation_cost, "capi-safe")
    print("   named tuples instead of attrs classes (build + hash, estimated): "
          + "; ".join(f"{k} {c[k]['per_state']:.1f} per state, {c[k]['attrs_us']:.2f} vs "
                      f"{c[k]['tuple_us']:.2f} us" for k in ("CapiState", "Process", "Deployment"))
          + f": about {c['saved_us_per_state']:.1f} us less per state")


def sections_2_3(sections: set[int]) -> None:
    from deployspec.models import get_model

    for model, fixed, historic in (("capi", "capi-safe", "capi-2022"),
                                   ("slots", "slots-pipeline-immutable", "slots-webhook-tag")):
        props = [p.name for p in get_model(model).properties]
        if 2 in sections:
            section_2(model, fixed, props)
        if 3 in sections:
            section_3(model, historic, props)


def section_2(model: str, fixed: str, props: list[str]) -> None:
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


def section_3(model: str, historic: str, props: list[str]) -> None:
    print(f"3. time to each bug of {historic}: hypothesis (seed 0) vs explore")
    for p in props:
        h = fresh(engine, "hypothesis", historic, p, None, model)
        e = fresh(engine, "explore", historic, p, None, model)
        if h["verdict"] != "violated" and e["verdict"] != "violated":
            continue
        print(f"   {p}: hypothesis {h['wall']:.2f} s, {h['length']} steps | explore {e['wall']:.2f} s, "
              f"{e['length']} steps, {e['stats']['states']} states, peak {e['peak_mb']:.0f} MiB")


def section_4(args, runs: int) -> None:
    print(f"4. one search over 2 workers (--workers 2) against one process, capi-safe, "
          f"alternating, median of {runs}")
    cases = [("bare BFS", None, {}), ("cancel_restores_last_good", "cancel_restores_last_good", {})]
    if not args.quick:
        cases += [("bare BFS, max_instances=3", None, {"max_instances": 3}),
                  ("cancel_restores_last_good, max_instances=3", "cancel_restores_last_good",
                   {"max_instances": 3})]
    for label, prop, over in cases:
        by: dict[int, list[dict]] = {1: [], 2: []}
        for _ in range(runs):
            for workers in (1, 2):
                by[workers].append(fresh(partitioned, workers, prop, over))
        one, two = (statistics.median(r["wall"] for r in by[w]) for w in (1, 2))
        r1, r2 = by[1][0], by[2][0]
        assert (r1["states"], r1["transitions"]) == (r2["states"], r2["transitions"]), label
        print(f"   {label}: {r1['states']} states, complete={r2['complete']}; 1 process {one:.2f} s, "
              f"2 workers {two:.2f} s wall = {one / two:.2f}x (CPU of all processes "
              f"{statistics.median(r['cpu'] for r in by[1]):.2f} s vs "
              f"{statistics.median(r['cpu'] for r in by[2]):.2f} s)")


if __name__ == "__main__":
    main()
