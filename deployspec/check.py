"""``deployspec check``: run engines over variants and properties.

Which searches a check makes (per variant, engine and property; each way a property
breaks, for a close look), with what budget and configuration, in one process or
a pool. Whether their verdicts agree with what each variant declares is
:mod:`deployspec.declarations`.
"""

from __future__ import annotations

import contextlib
import gc
import time
from collections.abc import Callable, Iterable

from deployspec import declarations, interruption, save_log
from deployspec.engines.result import Result
from deployspec.models import (
    UsageError,
    did_you_mean,
    find_variant,
    get_model,
    model_names,
    unknown_property,
)
from deployspec.reference.core import MAX_STEPS
from deployspec.text import quoted

ENGINES = ("hypothesis", "z3", "explore")
#: seconds per search when --budget is not given (a close look runs several per property:
#: one per cause, then the explorer's; shrinking a violation found comes on top)
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
    raise UsageError(f"unknown engine {quoted(name)}{did_you_mean(name, [*ENGINES, 'all'])} "
                     f"(known: {', '.join(ENGINES)}, all)")


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
    memory_mb: float | None = None,
    properties: Iterable[str] | None = None,
    on_progress: Callable[[str], None] | None = None,
    on_found: Callable[[tuple, list[Result]], None] = lambda task, found: None,
    incident=None,
) -> list[Result]:
    """Every (variant, engine, property) of ``pairs``, in that order; then the exhaustive
    searches the matrix adds for designs handed in (their claims proven).

    With ``distinct`` (a close look at some variants), a property that breaks
    in a way its spec names (a cause, ``spec.core.Breach``) is then explored for
    each cause, shortest trace first (:func:`causes`), so one result per cause:
    the random search tells that a property breaks, also beyond the bounds; the
    explorer lists every way it breaks within them. A property the random search
    found holding is explored too (a bounded proof, or what it missed). The first result of each
    (engine, property) is what the matrix and the progress line show.

    ``jobs`` > 1 runs the searches in that many worker processes (:mod:`deployspec.pool`; each search
    is independent and seeded, so the verdicts are those of a serial run, save
    for budget-bound searches on a loaded machine). ``workers`` > 1 splits each
    exhaustive search over that many processes instead (``engines.explore.search``);
    ``memory_mb`` is each exhaustive search's memory budget (None: the engine's).
    ``on_progress`` hears how far each running exhaustive search got (serial runs only);
    ``on_found`` hears each finished search (a task of :func:`searches`) with all its results
    (``on_result`` only the first), so what an interrupted run found can still be reported.
    ``incident`` (:class:`deployspec.incident.Incident`): the exhaustive searches take only
    the runs that follow it (``check --incident``)."""
    engines = tuple(engines)
    tasks = searches(pairs, engines, distinct, properties)
    options = {"budget": budget, "seed": seed, "out_dir": out_dir, "bounds": bounds,
               "distinct": distinct, "engines": engines, "workers": workers, "memory_mb": memory_mb}
    if incident is not None:
        options["incident"] = incident
    if jobs <= 1 or len(tasks) <= 1:
        with _collector_paused_between_explores() as before:
            return _run_serially(tasks, options, before, on_start, on_progress, on_found, on_result)
    from deployspec import pool

    return pool.run(tasks, options, jobs, on_start=on_start, on_result=on_result, on_found=on_found)


def _run_serially(tasks, options, before, on_start, on_progress, on_found, on_result) -> list[Result]:
    results = []
    for task in tasks:
        _model, variant, engine, prop = task
        before(engine)
        on_start(f"{variant} · {prop} · {engine}")
        found = None
        with save_log.noting():
            try:
                found = judge(*task, **options, on_start=on_start, on_progress=on_progress)
                interruption.raise_if_pending()  # swallowed on the way (a __del__): a stop, not a verdict
                on_found(task, found)  # kept before it is said: what the progress line said is in the report
            except KeyboardInterrupt as stop:  # the violations found before it are verdicts all the same
                violations = save_log.at_stop(stop, found)
                if violations:
                    on_found(task, violations)
                raise
        on_result(found[0])
        results += found
    return results


def collector_for(engine: str, collecting: bool) -> None:
    """Before a search in a process whose cyclic garbage collector was ``collecting``:
    paused for an exhaustive search and left paused until another engine's (each
    exhaustive search pauses it while it runs, ``explorer.Layered.run``). The exhaustive
    searches of a process share the step results of the states they meet
    (``engines.product``), hundreds of thousands of objects, and a collector let run
    between two of them walks all of them again: a tenth of ``check --variant capi-safe
    --engine explore``. Other engines run with the collector as it was."""
    if collecting:
        (gc.disable if engine == "explore" else gc.enable)()


@contextlib.contextmanager
def _collector_paused_between_explores():
    """``before(engine)`` for each search of a serial run (:func:`collector_for`); the
    collector is restored however the run ends."""
    enabled = gc.isenabled()
    try:
        yield lambda engine: collector_for(engine, enabled)
    finally:
        if enabled:
            gc.enable()


def searches(pairs: list[tuple[object, str]], engines: tuple[str, ...], distinct: bool,
             properties: Iterable[str] | None) -> list[tuple[str, str, str, str]]:
    """(model, variant, engine, property) of every search :func:`run` makes.

    In the matrix (not ``distinct``), a design handed in from outside is new: every
    property is also searched exhaustively within its bounds (unless the explorer runs
    anyway), so neither a fix it claims nor a violation it declares rests on a
    time-bound random search's word, whose rounds after the first depend on the
    machine's load (for a declared violation the explorer stops at its first, shortest
    trace: 0.0-0.1 s for each of the worked example's three, docs/variants.md). A
    violation it declares beyond the default search is explored within the bounds its
    ``Beyond`` names, unless ``--bound`` gives others (:func:`_judge`), where it must
    show: one a design inherits with ``attrs.evolve`` is its base's, which the design
    may have fixed. The shipped designs' verdicts are the test suite's to prove."""
    from deployspec.variant_plugins import source_of

    tasks = [(m.name, v, e, p.name) for m, v in pairs for e in engines for p in selected(m, properties)]
    if not distinct and "explore" not in engines:
        tasks += [(m.name, v, "explore", p.name) for m, v in pairs if source_of(v) is not None
                  for p in selected(m, properties)]
    return tasks


def selected(model, properties: Iterable[str] | None) -> list:
    """The model's properties named in ``properties`` (all of them for None), in the model's order."""
    if properties is None:
        return list(model.properties)
    wanted = set(properties)
    return [p for p in model.properties if p.name in wanted]


def check_property_names(pairs: list[tuple[object, str]], properties: list[str], named: bool = False) -> None:
    """Refuse a property name that no model of ``pairs`` has (a usage error); with the
    variants ``named`` (``--variant``), also a variant none of whose model's properties
    is named: it would be left out unsaid (``--variant capi-safe --variant
    slots-pipeline-immutable --property no_latent_drift`` judged the slots design only
    and exited 0, as if capi-safe held)."""
    models = {m.name: m for m, _ in pairs}.values()
    known = [p.name for m in models for p in m.properties]
    for name in properties:
        if name not in known:
            raise unknown_property(name, known, [m.name for m in models])
    for m, v in pairs if named else []:
        if not selected(m, properties):
            raise UsageError(f"{v} is a {m.name} variant, and no property named is one of {m.name}'s "
                             f"({', '.join(p.name for p in m.properties)}): name one, or leave {v} out")


def judge(model_name: str, variant: str, engine: str, prop_name: str, *, budget: float | None,
          seed: int, out_dir: str | None, bounds: dict | None, distinct: bool,
          engines: tuple[str, ...], on_start: Callable[[str], None] | None = None,
          workers: int = 1, memory_mb: float | None = None,
          on_progress: Callable[[str], None] | None = None, incident=None) -> list[Result]:
    """The results of one engine on one property of one variant (see :func:`run`);
    ``on_start`` hears of the follow-up searches (a serial run's progress). What the
    rules of a variant handed in from outside raise (``sys.exit`` too: its exit is not
    deployspec's to take) is that search's error result, with the seconds it ran; so is a
    MemoryError."""
    started = time.perf_counter()
    try:
        return _judge(model_name, variant, engine, prop_name, budget=budget, seed=seed, out_dir=out_dir,
                      bounds=bounds, distinct=distinct, engines=engines, on_start=on_start,
                      workers=workers, memory_mb=memory_mb, on_progress=on_progress, incident=incident)
    except MemoryError:
        pass  # (the search's states go with the exception, here: then there is room to say it)
    except (Exception, SystemExit) as exc:
        error = error_result(model_name, variant, prop_name, engine, exc, started)
        if error is None:
            raise
        return [error]
    return [error_result(model_name, variant, prop_name, engine, MemoryError(), started)]


#: what a search that ran out of memory says: this search's error, as a --workers search's
#: is, and the verdicts of the others stand (the run ended with none of them, no --json
#: document and no report)
OUT_OF_MEMORY = "out of memory (tighter bounds, --bound, or a --budget?)"


def error_result(model_name: str, variant: str, prop_name: str, engine: str, exc: BaseException,
                 started: float) -> Result | None:
    """The error result of a search that ``exc`` ended: out of memory, or a rule of a design
    handed in that raised (``sys.exit`` too: its exit is not deployspec's to take); None for
    anything else (deployspec's own bug, raised)."""
    if isinstance(exc, MemoryError):
        why = OUT_OF_MEMORY
    else:
        from deployspec.variant_plugins import fault

        why = fault(variant, exc)
        if why is None:
            return None
    return Result(model_name, variant, prop_name, engine, "error", message=why,
                  stats={"seconds": round(time.perf_counter() - started, 3)})


def _judge(model_name: str, variant: str, engine: str, prop_name: str, *, budget: float | None,
           seed: int, out_dir: str | None, bounds: dict | None, distinct: bool,
           engines: tuple[str, ...], on_start: Callable[[str], None] | None,
           workers: int, on_progress: Callable[[str], None] | None,
           memory_mb: float | None = None, incident=None) -> list[Result]:
    model = get_model(model_name)
    prop = model.property(prop_name)
    fn = engine_function(engine)
    where = declarations.beyond(model, variant, prop_name)
    if engine == "explore" and "explore" not in engines and where is not None and not bounds:
        # the matrix's proof of a design handed in, for a violation it declares beyond the
        # default search: within the bounds the declaration names (with --bound, within
        # those, as every other search: the two need not make a configuration together)
        bounds = where.config
    exhaustive = {"workers": workers} if workers > 1 else {}  # options of exhaustive searches only
    if memory_mb is not None:
        exhaustive["memory_budget_mb"] = memory_mb
    if on_progress is not None:
        exhaustive["on_progress"] = on_progress
    sized: list[str] = []  # the bounds the incident's calls set, not the user (settle_steps: grown too)
    if incident is not None:
        exhaustive["incident"] = incident
        given = bounds or {}
        exhaustive["settle_grows"] = "settle_steps" not in given  # (deployspec's guess: a given bound stands)
        bounds = incident.sized(configure(model, variant, engine, given), given)
        sized = sorted((set(bounds) | {"settle_steps"}) - set(given))
    extra = {"config": configure(model, variant, engine, bounds)} if bounds else {}
    if engine == "explore":
        extra |= exhaustive
    first, more = budgets(engine, budget)
    if engine == "explore" and "explore" not in engines:  # the matrix's proof of a design handed in (searches)
        first = max(first, DEFAULT_BUDGET["explore"])  # a --budget for the random search does not cut it short
    follow = distinct and engine == "hypothesis" and "explore" not in engines
    limit = MAX_CAUSES if distinct and not follow else 1
    found = causes(fn, model, variant, prop, limit=limit,
                   budget=first, cause_budget=more, seed=seed, out_dir=out_dir, engine=engine, **extra)
    if extra.get("settle_grows"):
        def again(longer: dict, grows: bool, seconds: float) -> list[Result]:
            return causes(fn, model, variant, prop, limit=limit, budget=seconds,
                          cause_budget=min(more, seconds), seed=seed, out_dir=out_dir, engine=engine,
                          **(extra | {"config": configure(model, variant, engine, longer), "settle_grows": grows}))

        found = settle_grown(again, found, bounds, first)
    for r in found:  # (what the incident's calls sized: a command printed to finish its search leaves them out)
        if "incident" in r.stats:
            r.stats["incident"]["sized"] = sized
    if follow and found[0].verdict in ("violated", "holds"):  # each cause, or the one story, shortest
        if on_start is not None:
            on_start(f"{variant} · {prop_name} · explore" + (" (each cause)" if found[0].cause else ""))
        cfg = {"config": configure(model, variant, "explore", bounds)} if bounds else {}
        # its first search is the proof where the random search found nothing: as long
        # as --engine explore gives it (a violation, if any, is found shortest and soon)
        first, more = budgets("explore", budget)
        try:
            # (a design's rule that raises in the explorer's moves: its error, beside what the
            # random search found; said as the random search's, it lost the violation)
            found += causes(engine_function("explore"), model, variant, prop, limit=MAX_CAUSES,
                            budget=first, cause_budget=more, seed=seed, out_dir=out_dir, engine="explore",
                            **cfg, **exhaustive)
        except KeyboardInterrupt as stop:
            _interrupted_after(stop, [r for r in found if r.verdict == "violated"] + getattr(stop, "found", []))
            raise
    return found


def _interrupted_after(stop: KeyboardInterrupt, violations: list[Result]) -> None:
    """Carry the violations a search found before it was interrupted on ``stop``:
    ``run`` reports them (a counterexample saved under --out is a verdict)."""
    stop.found = violations


def settle_grown(search: Callable[[dict, bool, float], list[Result]], found: list[Result], bounds: dict,
                 budget: float) -> list[Result]:
    """An incident's results, searched again (``search(bounds, grows, seconds)``) with twice the
    settle phase's steps, as far as ``MAX_STEPS``, while a search stopped at a settle phase its
    own bound cut with the platform still busy (``stats["settle_cut"]``: the bound; an
    incident's calls size the bound, and a guess too short for them was called a violation
    of the design). The searches share ``budget``; where a longer one cannot finish in what is
    left, the violation at the bound that cut it is what is reported, said as cut (unknown is
    no pass). ``stats["settle_searches"]`` counts the searches and their seconds."""
    started, searches = time.perf_counter(), 1
    while (cut := next((r.stats["settle_cut"] for r in found if r.stats.get("settle_cut") is not None), None)) \
            is not None:
        longer = min(MAX_STEPS, max(1, 2 * cut))
        left = budget - (time.perf_counter() - started)
        retried = search(bounds | {"settle_steps": longer}, longer < MAX_STEPS, left) if left > 0 else None
        searches += 1
        if retried is None or any(r.verdict == "holds" and not r.stats.get("complete", True) for r in retried):
            # the one cut, judged as ever: with the whole budget, in which the first search
            # reached it (what is left may not: an incomplete "holds" would pass)
            found = search(bounds | {"settle_steps": cut}, False, budget)
            searches += 1
            break
        found, bounds = retried, bounds | {"settle_steps": longer}
    for r in found:
        if searches > 1:
            r.stats["settle_searches"] = {"searches": searches, "seconds": round(time.perf_counter() - started, 3)}
    return found


def budgets(engine: str, budget: float | None) -> tuple[float, float]:
    """Seconds for an engine's first search of a property and for each search for a
    further cause: ``--budget`` for both, else the engine's defaults."""
    if budget is not None:
        return budget, budget
    first = DEFAULT_BUDGET.get(engine, 2.0)
    return first, DEFAULT_CAUSE_BUDGET.get(engine, first)


def causes(fn, model, variant: str, prop, *, limit: int, budget: float, cause_budget: float,
           engine: str | None = None, **kwargs) -> list[Result]:
    """Up to ``limit`` counterexamples of ``prop``, one per cause the property
    names: after each, the engine searches again with the causes found so far
    skipped, until it finds nothing new or a violation without a cause. The
    first search has ``budget``, each further one ``cause_budget``; what the
    last search said (a bounded proof that no other cause exists, or how far it
    got) is kept as ``stats["other_causes"]`` of the last counterexample.
    Engines that cannot skip causes (z3) search once. With ``engine`` named, a
    search that runs out of memory or meets a design's raising rule ends in that
    engine's error result after the causes found before it (which it lost)."""
    import inspect

    can_skip = "skip_causes" in inspect.signature(fn).parameters
    found: list[Result] = []
    skip: frozenset[str] = frozenset()
    while True:
        t = time.perf_counter()
        ended: BaseException | None = None
        try:
            if skip:
                r = fn(model, variant, prop, budget=cause_budget, skip_causes=skip, **kwargs)
            else:
                r = fn(model, variant, prop, budget=budget, **kwargs)
        except KeyboardInterrupt as stop:
            _interrupted_after(stop, [f for f in found if f.verdict == "violated"])
            raise
        except MemoryError:
            if engine is None:
                raise
            ended = MemoryError()  # (said once out of the handler: the search's states go with it)
        except (Exception, SystemExit) as exc:
            error = None if engine is None else error_result(model.name, variant, prop.name, engine, exc, t)
            if error is None:
                raise
            return found + [error]
        if ended is not None:
            return found + [error_result(model.name, variant, prop.name, engine, ended, t)]
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
