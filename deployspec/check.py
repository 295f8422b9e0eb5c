"""``deployspec check``: run engines over variants and properties.

Which searches a check makes (per variant, engine and property; each way a property
breaks, for a close look), with what budget and configuration, in one process or
a pool. Whether their verdicts agree with what each variant declares is
:mod:`deployspec.declarations`.
"""

from __future__ import annotations

import contextlib
import signal
import sys
import time
from collections.abc import Callable, Iterable

import attrs

from deployspec import declarations, interruption
from deployspec.engines.result import Result
from deployspec.models import UsageError, find_variant, get_model, model_names
from deployspec.text import quoted

ENGINES = ("hypothesis", "z3", "explore")
#: seconds per variant and property when --budget is not given
DEFAULT_BUDGET = {"hypothesis": 2.0, "z3": 10.0, "explore": 120.0}

#: counterexamples per property at most when each cause is sought (``distinct``)
MAX_CAUSES = 6
#: seconds per search for a further cause when --budget is not given (the
#: explorer finds a cause within milliseconds if it is shallow; the last search,
#: which finds none, is the one that takes long: 13-27 s to prove on capi-current)
DEFAULT_CAUSE_BUDGET = {"hypothesis": 10.0, "explore": 5.0}


def engine_function(name: str) -> Callable[..., Result]:
    if name == "hypothesis":
        from deployspec.engines.hypothesis_engine import search

        return search
    if name == "z3":
        from deployspec.engines.z3_engine import search

        return search
    if name == "explore":
        from deployspec.engines.explore import search

        return search
    raise UsageError(f"unknown engine {quoted(name)} (known: {', '.join(ENGINES)}, all)")


def plan(model: str | None, variants: list[str] | None) -> list[tuple[object, str]]:
    """(model, variant) pairs to check, validating names."""
    models = [get_model(model)] if model is not None else [get_model(m) for m in model_names()]
    if not variants:
        return [(m, v) for m in models for v in m.variants]
    out = []
    for name in dict.fromkeys(variants):  # a variant named twice is checked once
        owner = next((m for m in models if name in m.variants), None)
        if owner is None:  # in none of these models: each call raises, naming the known variants
            if model:
                get_model(model).variant(name)
            find_variant(name)
        out.append((owner, name))
    return out


def run(
    pairs: list[tuple[object, str]],
    engines: Iterable[str],
    *,
    budget: float | None,
    seed: int,
    out_dir: str | None,
    on_result: Callable[[Result], None] = lambda r: None,
    on_start: Callable[[str], None] = lambda label: None,
    bounds: dict | None = None,
    distinct: bool = False,
    jobs: int = 1,
    workers: int = 1,
    properties: Iterable[str] | None = None,
    on_progress: Callable[[str], None] | None = None,
    on_found: Callable[[tuple, list[Result]], None] = lambda task, found: None,
) -> list[Result]:
    """Every (variant, engine, property) of ``pairs``, in that order.

    With ``distinct`` (a close look at some variants), a property that breaks
    in a way its spec names (a cause, ``spec.core.Breach``) is then explored for
    each cause, shortest trace first (:func:`causes`), so one result per cause:
    the random search tells that a property breaks, also beyond the bounds; the
    explorer lists every way it breaks within them. A property the random search
    found holding is explored too (a bounded proof, or what it missed). The first result of each
    (engine, property) is what the matrix and the progress line show.

    ``jobs`` > 1 runs the searches in that many worker processes (each search
    is independent and seeded, so the verdicts are those of a serial run, save
    for budget-bound searches on a loaded machine). ``workers`` > 1 splits each
    exhaustive search over that many processes instead (``engines.explore.search``).
    ``on_progress`` hears how far each running exhaustive search got (serial runs only);
    ``on_found`` hears each finished search (a task of :func:`searches`) with all its results
    (``on_result`` only the first), so what an interrupted run found can still be reported."""
    engines = tuple(engines)
    tasks = searches(pairs, engines, distinct, properties)
    options = {"budget": budget, "seed": seed, "out_dir": out_dir, "bounds": bounds,
               "distinct": distinct, "engines": engines, "workers": workers}
    if jobs <= 1 or len(tasks) <= 1:
        results = []
        for task in tasks:
            _model, variant, engine, prop = task
            on_start(f"{variant} · {prop} · {engine}")
            try:
                found = judge(*task, **options, on_start=on_start, on_progress=on_progress)
            except KeyboardInterrupt as stop:  # the violations found before it are verdicts all the same
                if getattr(stop, "found", None):
                    on_found(task, stop.found)
                raise
            try:
                interruption.raise_if_pending()  # swallowed on the way (a __del__): a stop, not a verdict
            except KeyboardInterrupt:  # but what it found before is one, as when judge is interrupted
                violations = [r for r in found if r.verdict == "violated"]
                if violations:
                    on_found(task, violations)
                raise
            on_found(task, found)  # kept before it is said: what the progress line said is in the report
            on_result(found[0])
            results += found
        return results
    import concurrent.futures as cf
    import multiprocessing as mp

    # spawn, not fork: the parent may run a progress thread. Workers ignore Ctrl-C;
    # the parent stops them (and drops what is queued) when it is interrupted.
    pool = cf.ProcessPoolExecutor(jobs, mp_context=mp.get_context("spawn"), initializer=_pool_worker)
    futures: dict = {}
    done: list[list[Result]] = [[] for _ in tasks]
    try:
        on_start(f"{len(tasks)} searches in {jobs} processes")
        with _stop_held():  # a process spawned holds SIGUSR1 until it can take it (_pool_worker)
            futures = {pool.submit(_judge_in_pool, *task, **options): i for i, task in enumerate(tasks)}
        for future in cf.as_completed(futures):
            try:
                found = future.result()
            except cf.process.BrokenProcessPool:  # a process killed (out of memory?): the rest is lost
                for i, task in enumerate(tasks):
                    if not done[i]:
                        done[i] = [_lost(*task)]
                        on_found(task, done[i])
                        on_result(done[i][0])
                break
            done[futures[future]] = found
            on_found(tasks[futures[future]], found)
            on_result(found[0])
    except BaseException as stop:
        workers = list((pool._processes or {}).values())  # no public way to stop a busy worker
        pool.shutdown(wait=False, cancel_futures=True)
        try:
            if isinstance(stop, KeyboardInterrupt):
                _collect_stopped(workers, futures, tasks, done, on_found)
        finally:
            for w in workers:
                w.terminate()
            for w in workers:
                w.join(5)
        raise
    pool.shutdown()
    return [r for found in done for r in found]


#: whether an interrupted ``--jobs`` run can stop its searches and hear what they found
#: (POSIX: SIGUSR1); elsewhere they are ended and what they found is lost
STOPS_A_SEARCH = hasattr(signal, "SIGUSR1") and hasattr(signal, "pthread_sigmask")
#: seconds an interrupted ``--jobs`` run waits for its running searches to stop and
#: hand back what they found (a search stops at its next step; a solver call may not)
STOP_GRACE = 3.0


@attrs.frozen
class _Stopped:
    """What a search of the pool found before the parent stopped it."""

    found: list[Result]


#: (a ``--jobs`` process) the parent asked it to stop: the searches queued for it are not begun
_stopping = False


def _stop_in_pool(*args) -> None:
    global _stopping
    _stopping = True


def _judge_in_pool(*task, **options) -> list[Result] | _Stopped:
    """:func:`judge` in a ``--jobs`` process: SIGUSR1 from the interrupted parent stops it
    as Ctrl-C stops a serial run, and the violations found by then come back (saved
    under --out, they are verdicts all the same). A search that ended is complete,
    whenever the stop came."""
    found = None
    try:
        with interruption.kept([signal.SIGUSR1] if STOPS_A_SEARCH else [], on_signal=_stop_in_pool):
            if _stopping:  # (asked before the handler above was in place)
                return _Stopped([])
            found = judge(*task, **options)
    except KeyboardInterrupt as stop:
        return found if found is not None else _Stopped(getattr(stop, "found", None) or [])
    return found


@contextlib.contextmanager
def _stop_held():
    """SIGUSR1 blocked in this thread while ``--jobs`` processes are spawned: they inherit
    the mask, so a stop sent before one installed its handler waits for it
    (``_pool_worker`` unblocks it) rather than killing it by the signal's default."""
    if not STOPS_A_SEARCH:
        yield
        return
    signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGUSR1})
    try:
        yield
    finally:
        signal.pthread_sigmask(signal.SIG_UNBLOCK, {signal.SIGUSR1})


def _collect_stopped(workers, futures: dict, tasks: list, done: list, on_found) -> None:
    """An interrupted ``--jobs`` run: stop each running search (SIGUSR1) and hear, for
    :data:`STOP_GRACE` seconds at most, what each had found (a second Ctrl-C ends the wait)."""
    import concurrent.futures as cf
    import os

    if not STOPS_A_SEARCH:
        return
    for f in futures:  # the queued ones now (shutdown cancels them later, unheard by as_completed)
        f.cancel()
    running = {f: i for f, i in futures.items() if not f.cancelled() and not done[i]}
    for w in workers:
        if w.is_alive():
            with contextlib.suppress(OSError):  # it ended meanwhile
                os.kill(w.pid, signal.SIGUSR1)
    try:
        for future in cf.as_completed(running, timeout=STOP_GRACE):
            if future.cancelled() or future.exception() is not None:  # a process lost: nothing to hear
                continue
            answer = future.result()
            i = running[future]
            found = answer.found if isinstance(answer, _Stopped) else answer
            if isinstance(answer, _Stopped):
                found = [r for r in found if r.verdict == "violated"]
            if found:
                done[i] = found
                on_found(tasks[i], found)
    except (cf.TimeoutError, KeyboardInterrupt):
        pass  # what did not answer in time is lost, as before


def searches(pairs: list[tuple[object, str]], engines: tuple[str, ...], distinct: bool,
             properties: Iterable[str] | None) -> list[tuple[str, str, str, str]]:
    """(model, variant, engine, property) of every search :func:`run` makes.

    In the matrix (not ``distinct``), a design handed in from outside is new: every
    property is also searched exhaustively within its bounds (unless the explorer runs
    anyway), so neither a fix it claims nor a violation it declares rests on a
    time-bound random search's word, whose rounds after the first depend on the
    machine's load (for a declared violation the explorer stops at its first, shortest
    trace: 0.0-0.1 s for each of the worked example's three, docs/variants.md); the
    shipped designs' verdicts are the test suite's to prove."""
    from deployspec.variant_plugins import source_of

    tasks = [(m.name, v, e, p.name) for m, v in pairs for e in engines for p in selected(m, properties)]
    if not distinct and "explore" not in engines:
        tasks += [(m.name, v, "explore", p.name) for m, v in pairs if source_of(v) is not None
                  for p in selected(m, properties) if declarations.beyond(m, v, p.name) is None]
    return tasks


def quiet_resource_tracker() -> None:
    """Start multiprocessing's resource tracker (the ``--jobs`` pool needs it) with
    its stderr on /dev/null. When an interrupted run ends the pool's processes, the
    tracker removes the semaphores they leave behind, which is its job, and warns
    about each one on stderr, after deployspec's last line. Call it before any other
    thread runs: for an instant, this process's own stderr is /dev/null too."""
    import os
    from multiprocessing import resource_tracker

    if os.name != "posix":  # elsewhere the tracker is not a process of its own
        return
    sys.stderr.flush()
    devnull = os.open(os.devnull, os.O_WRONLY)
    saved = os.dup(2)
    try:
        os.dup2(devnull, 2)
        resource_tracker.ensure_running()
    finally:
        os.dup2(saved, 2)
        os.close(saved)
        os.close(devnull)


def _lost(model: str, variant: str, engine: str, prop: str) -> Result:
    return Result(model, variant, prop, engine, "error",
                  message="a search process stopped without answering (killed: out of memory?)")


def _pool_worker() -> None:
    """A search process of ``--jobs``: Ctrl-C is the parent's to handle, and it
    ends when the parent dies (killed: otherwise it would wait for ever on the
    task queue, whose write end it holds itself)."""
    from deployspec.partition_worker import die_with_parent

    signal.signal(signal.SIGINT, signal.SIG_IGN)
    # the parent's stop (SIGUSR1) stops the search in progress (_judge_in_pool) and those
    # queued for this process
    if STOPS_A_SEARCH:
        signal.signal(signal.SIGUSR1, _stop_in_pool)
        signal.pthread_sigmask(signal.SIG_UNBLOCK, {signal.SIGUSR1})  # held since spawned (_stop_held)
    die_with_parent()
    sys.stdout = sys.stderr  # what a design of one's own prints: stdout is the parent's report


def selected(model, properties: Iterable[str] | None) -> list:
    """The model's properties named in ``properties`` (all of them for None), in the model's order."""
    if properties is None:
        return list(model.properties)
    wanted = set(properties)
    return [p for p in model.properties if p.name in wanted]


def check_property_names(pairs: list[tuple[object, str]], properties: list[str]) -> None:
    """Refuse a property name that no model of ``pairs`` has (a usage error)."""
    models = {m.name: m for m, _ in pairs}.values()
    known = [p.name for m in models for p in m.properties]
    for name in properties:
        if name not in known:
            raise UsageError(f"unknown property {quoted(name)} (known: {', '.join(dict.fromkeys(known))})")


def judge(model_name: str, variant: str, engine: str, prop_name: str, *, budget: float | None,
          seed: int, out_dir: str | None, bounds: dict | None, distinct: bool,
          engines: tuple[str, ...], on_start: Callable[[str], None] | None = None,
          workers: int = 1, on_progress: Callable[[str], None] | None = None) -> list[Result]:
    """The results of one engine on one property of one variant (see :func:`run`);
    ``on_start`` hears of the follow-up searches (a serial run's progress). What the
    rules of a variant handed in from outside raise (``sys.exit`` too: its exit is not
    deployspec's to take) is that search's error result."""
    try:
        return _judge(model_name, variant, engine, prop_name, budget=budget, seed=seed, out_dir=out_dir,
                      bounds=bounds, distinct=distinct, engines=engines, on_start=on_start,
                      workers=workers, on_progress=on_progress)
    except (Exception, SystemExit) as exc:
        from deployspec.variant_plugins import fault

        why = fault(variant, exc)
        if why is None:
            raise
        return [Result(model_name, variant, prop_name, engine, "error", message=why)]


def _judge(model_name: str, variant: str, engine: str, prop_name: str, *, budget: float | None,
           seed: int, out_dir: str | None, bounds: dict | None, distinct: bool,
           engines: tuple[str, ...], on_start: Callable[[str], None] | None,
           workers: int, on_progress: Callable[[str], None] | None) -> list[Result]:
    model = get_model(model_name)
    prop = model.property(prop_name)
    fn = engine_function(engine)
    exhaustive = {"workers": workers} if workers > 1 else {}  # options of exhaustive searches only
    if on_progress is not None:
        exhaustive["on_progress"] = on_progress
    extra = {"config": configure(model, variant, engine, bounds)} if bounds else {}
    if engine == "explore":
        extra |= exhaustive
    first, more = budgets(engine, budget)
    if engine == "explore" and "explore" not in engines:  # the matrix's proof of a design handed in (searches)
        first = max(first, DEFAULT_BUDGET["explore"])  # a --budget for the random search does not cut it short
    follow = distinct and engine == "hypothesis" and "explore" not in engines
    found = causes(fn, model, variant, prop, limit=MAX_CAUSES if distinct and not follow else 1,
                   budget=first, cause_budget=more, seed=seed, out_dir=out_dir, **extra)
    if follow and (found[0].cause is not None or found[0].verdict == "holds"):
        if on_start is not None:
            on_start(f"{variant} · {prop_name} · explore (each cause)")
        cfg = {"config": configure(model, variant, "explore", bounds)} if bounds else {}
        # its first search is the proof where the random search found nothing: as long
        # as --engine explore gives it (a violation, if any, is found shortest and soon)
        first, more = budgets("explore", budget)
        try:
            found += causes(engine_function("explore"), model, variant, prop, limit=MAX_CAUSES,
                            budget=first, cause_budget=more, seed=seed, out_dir=out_dir, **cfg, **exhaustive)
        except KeyboardInterrupt as stop:
            _interrupted_after(stop, [r for r in found if r.verdict == "violated"] + getattr(stop, "found", []))
            raise
    return found


def _interrupted_after(stop: KeyboardInterrupt, violations: list[Result]) -> None:
    """Carry the violations a search found before it was interrupted on ``stop``:
    ``run`` reports them (a counterexample saved under --out is a verdict)."""
    stop.found = violations


def budgets(engine: str, budget: float | None) -> tuple[float, float]:
    """Seconds for an engine's first search of a property and for each search for a
    further cause: ``--budget`` for both, else the engine's defaults."""
    if budget is not None:
        return budget, budget
    first = DEFAULT_BUDGET.get(engine, 2.0)
    return first, DEFAULT_CAUSE_BUDGET.get(engine, first)


def causes(fn, model, variant: str, prop, *, limit: int, budget: float, cause_budget: float,
           **kwargs) -> list[Result]:
    """Up to ``limit`` counterexamples of ``prop``, one per cause the property
    names: after each, the engine searches again with the causes found so far
    skipped, until it finds nothing new or a violation without a cause. The
    first search has ``budget``, each further one ``cause_budget``; what the
    last search said (a bounded proof that no other cause exists, or how far it
    got) is kept as ``stats["other_causes"]`` of the last counterexample.
    Engines that cannot skip causes (z3) search once."""
    import inspect

    can_skip = "skip_causes" in inspect.signature(fn).parameters
    found: list[Result] = []
    skip: frozenset[str] = frozenset()
    while True:
        t = time.perf_counter()
        try:
            if skip:
                r = fn(model, variant, prop, budget=cause_budget, skip_causes=skip, **kwargs)
            else:
                r = fn(model, variant, prop, budget=budget, **kwargs)
        except KeyboardInterrupt as stop:
            _interrupted_after(stop, [f for f in found if f.verdict == "violated"])
            raise
        r.stats.setdefault("seconds", round(time.perf_counter() - t, 3))
        if found and r.verdict == "holds":
            found[-1].stats["other_causes"] = r.message or f"none found in {r.stats['seconds']} s"
            if r.stats.get("stopped") == "time":  # the proof that no other cause exists is unfinished
                found[-1].stats["other_causes"] += (f"; to finish it, --budget longer than {cause_budget:g} s "
                                                    "(it sets every search's time)")
            return found
        found.append(r)  # a violation, or an error: a result of its own either way
        if r.verdict != "violated" or r.cause is None or not can_skip:
            return found
        if len(found) >= limit:
            if limit > 1:
                found[-1].stats["other_causes"] = f"not searched: the first {limit} causes are shown"
            return found
        skip |= {r.cause}


def configure(model, variant: str, engine: str, bounds: dict):
    """The configuration an engine runs ``variant`` with, some bounds changed
    (``--bound NAME=VALUE``); each engine starts from its own defaults."""
    import inspect

    params = inspect.signature(engine_function(engine)).parameters
    if "config" not in params and not any(p.kind is p.VAR_KEYWORD for p in params.values()):
        raise UsageError(f"engine {engine} does not take --bound")
    v = model.variant(variant)
    if engine == "explore":
        from deployspec.engines.explore import explore_config

        base = explore_config(model, v)
    else:
        base = model.default_config(v)
    return model.with_bounds(base, bounds)
