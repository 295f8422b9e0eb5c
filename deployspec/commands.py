"""What each command of the ``deployspec`` program does (``check``, ``show``,
``variants``; ``replay`` is in :mod:`deployspec.replay_command`, ``contract`` and
``serve`` in :mod:`deployspec.contract.cli`).
The program around them (arguments, exit statuses, streams) is :mod:`deployspec.cli`."""

from __future__ import annotations

import contextlib
import json
import shlex
import sys
import time

import attrs

from deployspec import incident_command, junit_cases, report, terminal, traces
from deployspec import junit as junit_xml
from deployspec.models import UsageError, bounds_given
from deployspec.outputs import writable_dir
from deployspec.text import escaped, first_few, printable_line


def _bounds_of_one_model(pairs: list[tuple[object, str]], bounds: dict, named: bool,
                         properties: list[str] | None) -> None:
    """Refuse, naming both models, a ``--bound`` of one model in a run that checks another
    too (``check --bound max_deployments=3`` checks slots as well as capi): each model's
    own check would only say slots knows no ``max_deployments``."""
    models = {m.name: m for m, _ in pairs}
    known = {name: set(attrs.fields_dict(m.config_type)) for name, m in models.items()}
    for name, fields in known.items():
        foreign = [b for b in bounds if b not in fields]
        owner = next((o for o, theirs in known.items() if o != name and foreign and set(bounds) <= theirs), None)
        if owner is None:
            continue  # no other model takes them all: the model's own check says which bounds it knows
        if named:
            theirs = ", ".join(v for m, v in pairs if m.name == name)
            hint = f"check {name}'s variants ({theirs}) in another run"
        elif properties:  # (--model alone would refuse the properties named of the other model)
            theirs = ", ".join(p.name for p in models[name].properties if p.name in properties)
            hint = f"check {name}'s properties ({theirs}) in another run"
        else:
            hint = f"add --model {owner} to check {owner} only"
        raise UsageError(f"--bound {', '.join(foreign)}: a bound of {owner}, not of {name}, which this run "
                         f"checks too; {hint}")


def cmd_check(args) -> int:
    from deployspec import check
    from deployspec.progress import Progress

    incident_command.check_options(args)
    # a close look (every way each property breaks), or the matrix's judgement by what each
    # design declares: every variant's, or with --declared the named ones'
    args.close_look = bool(args.variant) and not (args.declared and args.incident is None)
    args.engine = args.engine or "hypothesis"
    engines = list(check.ENGINES) if args.engine == "all" else [args.engine]
    for e in engines:
        check.engine_function(e)
    pairs = check.plan(args.model, args.variant)
    incident = incident_command.read(args.incident, pairs) if args.incident is not None else None
    if args.property:
        check.check_property_names(pairs, args.property, named=bool(args.variant))
    planned = check.searches(pairs, tuple(engines), args.close_look, args.property)
    if args.workers > 1:
        _check_workers(args, planned)
    if args.memory is not None and not _explores(args, planned):
        raise UsageError(f"--memory bounds an exhaustive search, and --engine {args.engine} runs none "
                         f"here ({EXPLORING})")
    if engines == ["z3"] and all(e == "z3" for _, _, e, _ in planned):  # n/a cells alone: refused before it runs
        from deployspec.engines import z3_engine

        if not any(z3_engine.judges(v, p) for _, v, _, p in planned):
            raise UsageError(z3_engine.none_judged(list(dict.fromkeys(v for _, v, _, _ in planned))))
    bounds = bounds_given(args.bound)
    if bounds:
        from deployspec.variant_plugins import source_of

        pairs_judged = [(m, v) for m, v in pairs if check.selected(m, args.property)]  # --property may leave some out
        _bounds_of_one_model(pairs_judged, bounds, named=bool(args.variant), properties=args.property)
        for (m, v) in pairs_judged:
            # a close look explores too, and so does the matrix a design handed in (check.searches)
            explored = args.close_look or source_of(v) is not None
            for e in dict.fromkeys([*engines, *(["explore"] if explored else [])]):  # (in order: one message)
                check.configure(m, v, e, bounds)  # bad bounds are a usage error before any search
    junit = junit_xml.path_of(args.junit, json_on_stdout=args.json, out=args.out,
                              reads=junit_xml.read_by(args))  # before --out's folder is made
    if args.out is not None:
        writable_dir(args.out, report=junit)
    started = time.time()
    from deployspec.interruption import sigterm_interrupts

    if args.jobs > 1:
        from deployspec import pool

        pool.quiet_resource_tracker()  # before the progress thread starts
    finished: dict[tuple, list] = {}  # search -> its results, as they end (for an interrupted run's report)

    def so_far() -> list:
        results = [r for found in finished.values() for r in found]
        return junit_cases.check_suites(results, declared=not args.close_look, planned=planned, finished=finished,
                                        incident=args.incident, expected=args.declared)

    # SIGTERM (a CI timeout) stops the searches' processes as Ctrl-C does
    # a design of one's own is the user's code, which may print: to stderr, as contract's
    # objects do, for stdout is the report's (--json)
    # (the report of an interrupted run covers the verdicts' printing too: a signal then
    # would otherwise leave no report)
    with junit_xml.saved_if_interrupted(junit, args.junit, "deployspec check", so_far, started), \
            _found_said_if_interrupted(finished, planned, args.out):
        with sigterm_interrupts(holdout="a search"), Progress(total=len(planned)) as progress, \
                contextlib.redirect_stdout(sys.stderr):
            last = time.perf_counter()

            def found(task, results) -> None:
                nonlocal last
                if task in finished:  # heard again after a stop (pool._judged), never more than the first time
                    return
                finished[task] = results
                # the line shows the first result (the matrix's cell) and how long the whole
                # search took (the first cause's alone said "0.0s" of a 3.5 s search): one
                # after the other, the time since the last ended; in --jobs processes, what
                # its results took (not the last search for a further cause, which found none)
                now = time.perf_counter()
                took = now - last if args.jobs <= 1 else sum(r.stats.get("seconds", 0) for r in results)
                last = now
                progress.done(results[0], seconds=took, verdict=report.cell_of(results),
                              engines=" + ".join(dict.fromkeys(r.engine for r in results)))

            # one variant at a time is a close look: every way a property breaks, each
            # shrunk on its own; the matrix over all variants only needs the verdicts
            results = check.run(pairs, engines, budget=args.budget, seed=args.seed, out_dir=args.out,
                                on_start=progress.start, bounds=bounds,
                                distinct=args.close_look, jobs=args.jobs, workers=args.workers,
                                memory_mb=args.memory,
                                properties=args.property, on_progress=progress.searching,
                                on_found=found, incident=incident)
        return _conclude_check(args, engines, results, junit, started)


@contextlib.contextmanager
def _found_said_if_interrupted(finished: dict, planned: list, out: str | None):
    """An interrupted check says on stderr, before "interrupted", what it had judged: the
    searches that ended, the properties found violated, what it saved (it said nothing,
    though five counterexamples were saved and verdicts in)."""
    try:
        yield
    except KeyboardInterrupt:
        results = [r for found in finished.values() for r in found]
        violated = list(dict.fromkeys(f"{r.variant} · {r.property}" for r in results if r.verdict == "violated"))
        saved = {r.counterexample for r in results if r.counterexample}
        line = f"judged before the interruption: {len(finished)} of {len(planned)} searches"
        if violated:
            line += f"; violated: {first_few(violated, 4)}"
        if saved:
            line += f"; {len(saved)} counterexample{'s' if len(saved) > 1 else ''} saved under {out}"
        sys.stdout.flush()
        print(f"deployspec: {printable_line(line, 400, both_ends=True)}", file=sys.stderr)
        raise


def _conclude_check(args, engines, results, junit, started: float) -> int:
    """The verdicts of a finished check said (stdout, stderr, --junit) and its exit status."""
    from deployspec import declarations
    from deployspec.models import get_model

    if args.close_look and args.declared:  # (an incident: what the design declares it may break)
        ok = not any(r.verdict == "error" or (r.verdict == "violated" and not declarations.declares_violation(
            get_model(r.model), r.variant, r.property)) for r in results)
    elif args.close_look:  # a search that ended in error decided nothing: not a success
        ok = not any(r.verdict in ("violated", "error") for r in results)
    else:
        ok = declarations.matches_declarations(results)
    lost = traces.unsaved(results)
    unjudged = all(r.verdict in declarations.INCONCLUSIVE for r in results)
    status = traces.UNSAVED if lost else NOTHING_JUDGED if unjudged else 0 if ok else 1
    # a run that judged nothing (every cell n/a) agrees with nothing, though no cell contradicts
    _print_check(args, results, status, ok and not unjudged)
    if lost:  # said after the verdicts it leaves standing
        sys.stdout.flush()
        print(f"deployspec: error: {lost}", file=sys.stderr)
    # n/a, or unconfirmed (Z3's views not confirmed)
    said = ", ".join(sorted({r.verdict for r in results})) or "no results"
    unjudged_line = (f"nothing was judged ({', '.join(engines)}: {said}); --engine hypothesis or explore judges "
                     "every property")
    if unjudged and not lost:
        sys.stdout.flush()
        print(f"deployspec: error: {unjudged_line}", file=sys.stderr)
    if junit is not None:
        suites = junit_cases.check_suites(results, declared=not args.close_look, incident=getattr(args, "incident", None),
                                          expected=args.declared)
        if unjudged:  # every case skipped: the report fails as the status does
            suites.append(junit_xml.run_error("deployspec check", "nothing judged", unjudged_line))
        junit_xml.save(junit, args.junit, "deployspec check", suites, started)
    return status


def _print_check(args, results, status: int, ok: bool) -> None:
    """``check``'s report on stdout: JSON, a close look at some variants, or the matrix;
    ``ok``: every verdict as declared (matrix) or nothing violated (a close look)."""
    from deployspec.declarations import INCONCLUSIVE
    from deployspec.report import matrix

    if args.json:
        print(json.dumps(_check_json(results, status, ok, judged=not args.close_look,
                                     expected=args.close_look and args.declared), indent=1))
        return
    _print_statistics(results)
    if args.close_look:
        _print_close_look(results, saving=bool(args.out), incident=getattr(args, "incident", None),
                          declared=args.declared, bounds=bounds_given(args.bound))
        return
    print(matrix(results, declared=True, bounds=bounds_given(args.bound), width=terminal.columns()))
    if not all(r.verdict in INCONCLUSIVE for r in results):  # (else nothing agreed or not: said on stderr)
        changed = ("; each variant declares its verdicts within its own configuration, which --bound "
                   "changed here" if args.bound else "")  # (a fix from another start: a user read it as broken)
        print("every variant shows exactly the violations it declares" if ok else
              f"MISMATCH: some verdicts differ from what the variants declare (marked !){changed}")


def _print_close_look(results, *, saving: bool, incident: str | None = None, declared: bool = False,
                      bounds: dict | None = None) -> None:
    """A close look (``--variant``): the shortest trace of each cause of a violation,
    what else was saved, the Z3 engine's proofs, every cause found, why cells were not
    judged, then the matrix of what was looked at and what the variants declare."""
    from deployspec.report import declared_by, matrix

    violated = [r for r in results if r.verdict == "violated"]
    shown = [r for r in violated if shortest_of_its_cause(r, results)]
    shown_ids = {id(r) for r in shown}
    for r in results:
        if id(r) in shown_ids:
            print(trace_text(r))
            print()
        elif r.engine == "z3" and r.message and r.verdict not in ("n/a", "violated"):
            print(f"{r.variant} / {r.property} (z3): {r.verdict}: {r.message}")  # bounded proofs, unconfirmed
    on_screen = {r.counterexample for r in shown}
    hidden = list(dict.fromkeys(r.counterexample for r in violated
                                if r.counterexample and r.counterexample not in on_screen))
    if hidden:
        print(f"also saved (another trace, no shorter, of a violation shown above): {', '.join(hidden)}")
    if shown and not saving:
        print("(use --out DIR to save the counterexamples)")
    _print_causes(results)
    _print_unjudged(results)
    print(matrix(results, declared=False, bounds=bounds, width=terminal.columns(),
                 options=("--declared",) if declared else ()))
    if incident is None:  # (what a design declares is of its whole search, not of one incident)
        print(declared_by(results))
    else:
        print(incident_command.verdicts(incident, results, declared))


def _print_causes(results) -> None:
    """For each search that looked for more causes of a violation: those found (by any
    engine) and what it says of any other."""
    from deployspec.models import get_model

    for r in results:
        if "other_causes" in r.stats:
            causes = sorted({o.cause for o in results if (o.variant, o.property) == (r.variant, r.property)
                             and o.cause})
            print(f"{r.variant} / {r.property}: causes found {', '.join(causes)}; any other "
                  f"({r.engine}): {r.stats['other_causes']}")
            prop = get_model(r.model).property(r.property)
            for cause in causes:  # what each means, where the property says (the report it comes from)
                if prop.meaning(cause):
                    print(f"  {cause}: {prop.meaning(cause)}")


def _print_unjudged(results) -> None:
    """Why the cells no engine judged (every search n/a or unconfirmed) are so: a cell
    alone says n/a, and an engine that cannot judge a design says why once."""
    from deployspec import declarations

    why: dict[tuple[str, str, str], list[str]] = {}  # (variant, engine, message) -> properties
    for (_m, variant, prop), rs in declarations.cells(results).items():
        if all(r.verdict in declarations.INCONCLUSIVE for r in rs):
            for r in rs:
                why.setdefault((variant, f"{r.verdict} ({r.engine})", r.message or "not judged"), []).append(prop)
    for (variant, verdict, message), props in why.items():
        print(f"{variant}: {verdict} for {', '.join(dict.fromkeys(props))}: {message}")


#: a run whose searches all judged nothing: not a success (exit 2, as a usage error)
NOTHING_JUDGED = 2


def _check_json(results, status: int, ok: bool, judged: bool, expected: bool = False) -> dict:
    """``check --json``: each result with what its variant declares about the
    property (``declared_violated``, ``declared_beyond``) and, for the matrix (no ``--variant``),
    whether the verdict agrees with that; with ``expected`` (``--incident --declared``), of
    each violation whether the design declares it, as the exit status judges it; the exit
    status and, for the matrix, the overall agreement, so a script needs no second source."""
    from deployspec import declarations
    from deployspec.models import get_model

    out = []
    for r in results:
        model = get_model(r.model)
        entry = r.to_json()
        entry["declared_violated"] = r.property in model.variant(r.variant).declares
        entry["declared_beyond"] = declarations.beyond(model, r.variant, r.property) is not None
        if judged:
            entry["matches_declaration"] = declarations.matches(model, r.variant, r.property, r.verdict, r.stats)
        if expected and r.verdict == "violated":  # (a jq filter of declared_violated alone missed
            # a violation declared beyond the default search, which the run took as expected)
            entry["expected"] = declarations.declares_violation(model, r.variant, r.property)
        out.append(entry)
    doc: dict = {"results": out, "exit_status": status}
    if judged:
        doc["matches_declarations"] = ok
    return doc


#: where check runs an exhaustive search (what --workers and --memory are about)
EXPLORING = "--engine explore or all, hypothesis on one --variant, or a matrix with a design handed in"


def _explores(args, planned: list) -> bool:
    """Whether the run has an exhaustive search: with --engine explore, after hypothesis
    on a --variant, or in the matrix for a design handed in (``check.searches``)."""
    from deployspec import check

    engines = check.ENGINES if args.engine == "all" else (args.engine,)
    return any(engine == "explore" for _, _, engine, _ in planned) or bool(args.close_look and "hypothesis" in engines)


def _check_workers(args, planned: list) -> None:
    from deployspec import partitioned

    if args.jobs > 1:
        raise UsageError("--workers and --jobs both start processes: use one of them "
                         "(--jobs for many searches, --workers for one large search)")
    if args.workers > partitioned.MAX_WORKERS:
        raise UsageError(f"--workers: at most {partitioned.MAX_WORKERS}, got {args.workers}")
    if not _explores(args, planned):
        raise UsageError(f"--workers splits an exhaustive search, and --engine {args.engine} runs none "
                         f"here ({EXPLORING})")
    if not partitioned.available():
        raise UsageError("--workers needs Linux (the search forks its workers)")


def trace_text(r) -> str:
    """A violation found by ``check`` as shown: its trace, and where it was saved."""
    from deployspec.handing_in import handing_in
    from deployspec.render_text import render

    if r.counterexample:  # and how to replay it, as contract says
        saved = (f"{traces.saved_line(r)}\nreplay: {handing_in(r.variant)}"
                 f"deployspec replay {escaped(shlex.quote(r.counterexample))}")
    else:
        saved = f"not saved: {r.unsaved}" if r.unsaved else ""
    return render(r.trace) + (f"\n{saved}" if saved else "")


def shortest_of_its_cause(r, results) -> bool:
    """Whether ``r`` is the trace to show for its (variant, property, cause): the
    shortest one any engine found (the first of equals), a property without causes
    being one story."""
    same = [o for o in results if o.verdict == "violated" and (o.variant, o.property, o.cause)
            == (r.variant, r.property, r.cause)]
    return min(same, key=lambda o: o.trace_length) is r


def _print_statistics(results) -> None:
    """What an exhaustive search saw (states, coverage), for engines that report it; of an
    incident's, the verdict lines alone (four designs printed 250 lines, the line per
    design buried under memory and transition counts; --json keeps them)."""
    from deployspec.engines.explore_text import summary

    for r in results:
        if r.engine == "explore":
            print(summary(r).split("\n", 1)[0] if "incident" in r.stats else summary(r))
    if any(r.engine == "explore" for r in results):
        print()


def cmd_variants(args) -> int:
    from deployspec.report import variants_json, variants_table

    print(json.dumps(variants_json(), indent=1) if args.json else variants_table(terminal.columns()))
    return 0
