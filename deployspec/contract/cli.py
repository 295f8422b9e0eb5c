"""The ``contract`` subcommand (and ``serve``'s options; serving itself is
:mod:`deployspec.contract.serve_command`), and ``replay --exec/--python``.

Kept beside the harness so ``deployspec/cli.py`` only wires them in.
"""

from __future__ import annotations

import json
import os
import shlex
import sys
import time

from deployspec import traces
from deployspec.argtypes import (  # check's: the same syntax and messages
    bound,
    nonneg_int,
    positive_int,
    seconds,
)
from deployspec.contract import faults, last_resort
from deployspec.contract.summary import summary, verdict_cell
from deployspec.interruption import sigterm_interrupts
from deployspec.models import UsageError, bound_words, bounds_given, get_model
from deployspec.text import quoted

#: seconds ``--timeout`` gives one reply (or one call of a --python object) unless told
DEFAULT_TIMEOUT = 10.0


def add_parsers(sub) -> None:

    c = sub.add_parser(
        "contract", help="check another implementation against the spec (and a reference)",
        description="Run the model's machines against an implementation. Exit status: 0 no "
                    "check found a violation, 1 a property is violated or the implementation diverges from "
                    "--reference (or, with --fail-vacuous, a check held vacuously), 2 usage error or a counterexample --out could not save, 3 implementation "
                    "fault (crash, hang, garbage, "
                    "wrong reply id, schema violation, error reply, a refusal that changed the "
                    "state, a reset that does not reset, non-determinism).")
    how = c.add_mutually_exclusive_group(required=True)
    how.add_argument("--exec", dest="exec_", metavar="COMMAND",
                     help="a program speaking the JSON-lines protocol (docs/protocol.md), run by /bin/sh")
    how.add_argument("--python", metavar="MODULE:FACTORY", help="a Python object (docs/contract.md)")
    c.add_argument("--model", required=True, help="the model it implements (capi, slots)")
    c.add_argument("--reference", metavar="VARIANT",
                   help="also check conformance: observations equal this variant's after each step")
    c.add_argument("--property", action="append", metavar="NAME",
                   help="only these checks, in this order (repeatable; a name given twice runs once; "
                        "conforms_to_VARIANT names the conformance check)")
    # one or the other: with --examples the search ignores the clock
    amount = c.add_mutually_exclusive_group()
    amount.add_argument("--budget", type=seconds, default=2.0, metavar="SECONDS",
                        help="search time per check (default 2; the first 100 examples always run), "
                             "after the sweep of every first step (once per run)")
    amount.add_argument("--examples", type=positive_int, metavar="N",
                        help="instead of --budget: at most N valid examples per check (Hypothesis's "
                             "max_examples), the same on any machine for a --seed (for CI). The examples "
                             "column counts every example run, so it can show more: the shrinking of a "
                             "violation, and the few examples Hypothesis discards as invalid (their draws "
                             "overran its data limit; they do not count toward N); the column 'first "
                             "seen' says in which example the search found each violation. The sweep of every "
                             "first step comes before, once per run")
    c.add_argument("--bound", action="append", type=bound, metavar="NAME=VALUE",
                   help="change one bound of the configuration sent in every reset (repeatable), e.g. "
                        "'canary_plans=[]'; it starts from --reference's own configuration, else the "
                        "model's default (shown in the summary)")
    c.add_argument("--seed", type=nonneg_int, default=0,
                   help="seed of the random search (default 0); with --examples N, the same verdicts on any machine")
    c.add_argument("--timeout", type=seconds, default=DEFAULT_TIMEOUT, metavar="SECONDS",
                   help="longest wait for one reply, or one call of a --python object (default 10); "
                        "the first reply after start, or the import and factory, get 30 or this if longer")
    c.add_argument("--out", metavar="DIR", help="save counterexamples here")
    c.add_argument("--name", default="implementation",
                   help="the implementation's name in trace files (default: implementation)")
    c.add_argument("--fail-vacuous", action="store_true",
                   help="a check that holds vacuously (holds ?: none of the actions it is about took "
                        "effect, as with a stub that refuses every deploy) fails the run, exit 1, as a "
                        "violation does; the JUnit case fails instead of being skipped")
    c.add_argument("--no-known", action="store_true",
                   help="do not replay the committed counterexamples (how the shipped designs broke, "
                        "counterexamples/MODEL/) where a check's search found nothing; they run under this "
                        "run's configuration, once per run")
    c.add_argument("--json", action="store_true", help="print results as JSON")
    c.add_argument("--junit", metavar="FILE",
                   help="also write a JUnit XML report (for a CI's test view): a case per check, "
                        "failed if violated (or vacuous, with --fail-vacuous), an error where the "
                        "implementation failed")

    s = sub.add_parser("serve", help="a reference variant or a Python object behind the JSON-lines protocol "
                                     "(stdin/stdout)")
    s.add_argument("--model", help="the model it implements (capi, slots); with --variant, the variant's own "
                                    "by default")
    what = s.add_mutually_exclusive_group(required=True)
    what.add_argument("--variant", help="a reference variant")
    what.add_argument("--python", metavar="MODULE:FACTORY",
                      help="a Python object (docs/contract.md), in a process of its own: "
                           "contract --exec \"deployspec serve --model M --python MODULE:FACTORY\"")


def add_replay_options(r) -> None:
    how = r.add_mutually_exclusive_group()
    how.add_argument("--exec", dest="exec_", metavar="COMMAND", help="replay against this program")
    how.add_argument("--python", metavar="MODULE:FACTORY", help="replay against this Python object")
    r.add_argument("--timeout", type=seconds, metavar="SECONDS",
                   help="longest wait for one reply, or one call of a --python object (default 10); "
                        "the first reply after start, or the import and factory, get 30 or this if longer")


def target_of(args):
    from deployspec.contract.harness import Target

    # `is not None`: an empty --exec "" is a usage error (Target says so), not "no target"
    if getattr(args, "exec_", None) is not None:
        return Target("exec", args.exec_, getattr(args, "name", "implementation"))
    if getattr(args, "python", None) is not None:
        return Target("python", args.python, getattr(args, "name", "implementation"))
    return None


def cannot_start(command: str, option: str) -> None:
    """A usage error if the shell could not start the command's program (a mistyped path),
    not an implementation fault at the first request."""
    from deployspec.contract import launchable

    why = launchable.problem(command)
    if why is not None:
        raise UsageError(f"{option} {quoted(command)}: {why}")


def _not_a_variant(name: str, model) -> None:
    """``--name`` must not be a reference variant's: ``replay`` would run such a
    trace on the reference and call a bug of the implementation fixed."""
    if name in model.variants:
        raise UsageError(f"--name {name}: the name of a reference variant of {model.name} (replay would "
                         f"run the trace on it, not on the implementation); choose another")


#: the most examples per check (a typo should not start a run of weeks)
MAX_EXAMPLES = 10_000_000


def cmd_contract(args) -> int:
    from deployspec import junit, junit_cases, variant_plugins
    from deployspec.contract import harness, timed_call
    from deployspec.outputs import writable_dir
    from deployspec.progress import Progress

    if args.examples is not None and args.examples > MAX_EXAMPLES:
        raise UsageError(f"--examples: at most {MAX_EXAMPLES:,} (days of work); a long hunt is --budget")
    model = get_model(args.model)
    target = target_of(args)
    _not_a_variant(target.name, model)
    bounds = bounds_given(args.bound)
    config = harness.config_for(model, args.reference, bounds)
    checks = harness.plan_checks(model, args.reference, args.property, config)  # usage errors first
    if target.kind == "exec":
        cannot_start(target.spec, "--exec")
    report = junit.path_of(args.junit, json_on_stdout=args.json, out=args.out,
                           reads=junit.read_by(args))  # before --out's folder is made
    if args.out is not None:
        writable_dir(args.out, report=report)
    # saved where the user meant, even if a --python object changes this process's folder
    out_dir = os.path.abspath(args.out) if args.out else args.out
    started = time.time()
    found: list = []  # the verdicts as they come (for an interrupted run's report)
    rerun = rerun_command(args, target)

    def so_far() -> list:
        run = harness.ContractRun(model.name, target, config, list(found), fail_vacuous=args.fail_vacuous)
        _as_given(run, out_dir, args.out)
        return junit_cases.contract_suites(run, checks, timeout=args.timeout, interrupted=True, search=rerun)

    def heard(r) -> None:
        found.append(r)
        progress.done(r, verdict=verdict_cell(r))  # (as the table will say it)

    # (the watchdog's: an object's call that will not return; two steps, so the second is
    # done though the first fails, a full disk, say)
    def trace_at_last_resort(line: str) -> None:
        _fault_kept_at_last_resort(args, model, target, out_dir)

    def document_at_last_resort(line: str) -> None:
        _said_at_last_resort(args, model, target, config, out_dir, found, [c.name for c in checks], rerun, out)

    # an object's own threads may print at any time: to stderr, as within its calls
    with junit.saved_if_interrupted(report, args.junit, "deployspec contract", so_far, started), \
            timed_call.lending(target.kind == "python") as out, \
            last_resort.doing_first(document_at_last_resort), last_resort.doing_first(trace_at_last_resort):
        with sigterm_interrupts(), Progress(total=len(checks)) as progress:
            try:
                run = harness.run(model, target, reference=args.reference, properties=args.property,
                                  budget=args.budget, max_examples=args.examples, seed=args.seed,
                                  out_dir=out_dir, timeout=args.timeout, bounds=bounds,
                                  known=not args.no_known, on_start=progress.start, on_result=heard)
            except UsageError:  # (a bad --python, say: the user's argument, no fault of the design's)
                raise
            except (Exception, SystemExit) as exc:  # a --reference design of one's own failed (sys.exit too)
                why = variant_plugins.fault(args.reference, exc) if args.reference else None
                if why is None:
                    raise
                raise UsageError(f"--reference: {why}") from None
        run.fail_vacuous = args.fail_vacuous
        _as_given(run, out_dir, args.out)
        _report(run, args, model, target, out, [c.name for c in checks], rerun)
        out.flush()
    if report is not None:
        junit.save(report, args.junit, "deployspec contract",
                   junit_cases.contract_suites(run, checks, timeout=args.timeout, search=rerun), started)
    return run.exit_status


def _fault_kept_at_last_resort(args, model, target, out_dir: str | None) -> None:
    """A run its last resort ends (a ``--python`` object whose call swallowed its timeout's
    interruption) keeps the steps that led to the fault under ``--out``, as found (a hung
    call in this process is not asked again): a user's CI found the folder empty."""
    from deployspec.contract import guard, harness

    fault = guard.last_located
    if fault is not None and out_dir and faults.savable(fault):
        trace = faults.trace_of(fault, model=model.name, variant=target.name, seed=args.seed,
                                implementation=harness.identity_of(target, None, args.reference, args.timeout))
        trace["extra"]["minimized_by_replay"] = "not tried: the implementation's call would not let go"
        faults.keep(fault, trace, out_dir)


def _said_at_last_resort(args, model, target, config, out_dir: str | None, found: list, planned: list[str],
                         rerun: str, out) -> None:
    """And says what it kept on stderr, and prints the ``--json`` document of what was
    judged and the fault (the user's CI found it empty)."""
    from deployspec.contract import guard, harness

    fault = guard.last_located
    if fault is None:  # (not a call of the implementation's)
        return
    run = harness.ContractRun(model.name, target, config, list(found), fault=fault, planned=tuple(planned),
                              reference=args.reference, fail_vacuous=args.fail_vacuous)
    _as_given(run, out_dir, args.out)
    said = faults.saved_text(fault, target, args.timeout, "--out DIR")
    if said:  # (where it was saved, or why not; without --out, how to save it)
        print(f"deployspec: {said}", file=sys.stderr)
    if args.json:
        print(json.dumps(_document(run, args, model, target, planned, rerun), indent=1), file=out)
        out.flush()


def _as_given(run, out_dir: str | None, named: str | None) -> None:
    """The run's saved files named as the user named ``--out``'s folder."""
    if named:
        for r in run.results + ([run.fault] if run.fault is not None else []):
            r.counterexample = traces.as_given(r.counterexample, out_dir, named)
            r.unsaved = traces.as_given(r.unsaved, out_dir, named)


def _report(run, args, model, target, out, planned: list[str], rerun: str) -> None:
    """The run's verdicts on ``out``, its fault on stderr."""
    def say(text: str = "") -> None:
        print(text, file=out)

    if args.json:
        say(json.dumps(_document(run, args, model, target, planned, rerun), indent=1))
    else:
        for r in run.results:
            if r.verdict == "violated":
                say(violation_text(r, target, args.timeout))
                say()
        say(summary(run))
        if not args.out and any(r.verdict == "violated" for r in run.results):
            say("(use --out DIR to save the counterexamples)")
        saved = None if run.fault is None or run.fault.unsaved else \
            faults.saved_text(run.fault, target, args.timeout, "--out DIR")
        if saved:  # (here, not beside the fault's line on stderr: that stays one line)
            say(saved)
    lost = traces.unsaved(run.results)
    if lost:
        print(f"deployspec: error: {lost}", file=sys.stderr)
    if run.fault is not None:
        print(f"deployspec: {run.fault.with_history()}", file=sys.stderr)
        if run.fault.unsaved:  # (as a violation's: its trace is not lost unsaid; the status stays 3)
            print(f"deployspec: error: {run.fault.unsaved}", file=sys.stderr)


def _document(run, args, model, target, planned: list[str], rerun: str) -> dict:
    """The run as ``--json`` gives it."""
    return {
        "model": model.name,
        "target": {target.kind: target.spec, "name": target.name, "implementation": run.implementation},
        "config": run.config.to_json(),
        "search": {"reference": args.reference, "checks": planned, "examples": args.examples,
                   "budget": None if args.examples is not None else args.budget, "seed": args.seed,
                   "timeout": args.timeout, "fail_vacuous": args.fail_vacuous, "known": not args.no_known,
                   "rerun": rerun},
        "results": [r.to_json() for r in run.results],
        "took_effect": run.took_effect,
        "asked": run.asked,
        "situations": run.situations,
        "fault": None if run.fault is None else run.fault.to_json(),
        "exit_status": run.exit_status,
    }


def violation_text(r, target, timeout: float) -> str:
    """A violated check as the report shows it: the trace, where the implementation
    parted from the reference (a conformance check), where it was saved and how to
    replay it."""
    from deployspec.contract import known
    from deployspec.contract.conformance import PREFIX, divergence_report
    from deployspec.contract.harness import NOT_SHRUNK, not_shrunk
    from deployspec.render_text import render

    lines = [render(r.trace)]
    if not_shrunk(r):
        lines.append(NOT_SHRUNK)
    if r.property.startswith(PREFIX):
        lines.append(divergence_report(r.trace))
    if r.stats.get("replayed"):
        lines.append(f"found by replaying {r.stats['replayed']} (how {known.design_of(r.stats['replayed'])} broke; "
                     "docs/findings.md) after the search's examples held")
    if r.counterexample:
        lines.append(traces.saved_line(r))
        lines.append(f"replay: {replay_command(r.counterexample, target, timeout)}")
    elif r.unsaved:
        lines.append(f"not saved: {r.unsaved}")
    return "\n".join(lines)


def rerun_command(args, target) -> str:
    """The command that runs this search again as it ran (the implementation, its checks,
    the amount, seed, bounds, timeout and name; not where it writes): what a CI's
    ``--json`` and JUnit report keep, so a failure is searched again from them alone: the
    exact words (the JSON and the XML escape what they must), every number as given."""
    argv = ["deployspec", "contract", f"--{target.kind}", target.spec, "--model", args.model]
    argv += ["--reference", args.reference] if args.reference else []
    argv += [w for name in args.property or () for w in ("--property", name)]
    argv += ["--examples", str(args.examples)] if args.examples is not None else ["--budget", _exact(args.budget)]
    argv += ["--seed", str(args.seed)]
    argv += bound_words(args.bound or ())
    argv += ["--timeout", _exact(args.timeout)] if args.timeout != DEFAULT_TIMEOUT else []
    argv += ["--name", target.name] if target.name != "implementation" else []
    argv += ["--fail-vacuous"] if getattr(args, "fail_vacuous", False) else []  # (its exit status too)
    argv += ["--no-known"] if getattr(args, "no_known", False) else []
    return shlex.join(argv)


def _exact(seconds: float) -> str:
    """``seconds`` as short as it reads back the same (2, not 2.0; 0.1234567 whole)."""
    short = f"{seconds:g}"
    return short if float(short) == seconds else repr(seconds)


def replay_command(path: str, target, timeout: float) -> str:
    """The command that replays a saved counterexample on the same implementation
    (to paste once it is fixed: exit status 0 when the trace no longer reproduces),
    with the designs this run had handed in (``DEPLOYSPEC_VARIANTS``): its
    ``--reference``, its factory or its program may name one."""
    from deployspec.handing_in import handing_in
    from deployspec.text import escaped

    return escaped(handing_in() + replay_words(path, target.kind, target.spec, timeout))


def replay_words(path: str, kind: str, spec: str, timeout: float) -> str:
    """``deployspec replay PATH --KIND SPEC [--timeout T]``, quoted for a shell."""
    argv = ["deployspec", "replay", path, f"--{kind}", spec]
    if timeout != DEFAULT_TIMEOUT:  # a slow implementation needs it on replay too
        argv += ["--timeout", _exact(timeout)]
    return shlex.join(argv)


def open_for_replay(args, traces_loaded):
    """A connection for ``replay --exec/--python`` (None without them)."""
    from deployspec.contract.harness import Connection

    target = target_of(args)
    if target is None:
        if args.timeout is not None:  # (a replay on a design has no replies to wait for)
            raise UsageError("replay: --timeout bounds an implementation's replies; give --exec or --python, "
                             "or leave it out")
        return None
    if args.variant:
        raise UsageError("replay: --variant and --exec/--python exclude each other")
    models = {trace["model"] for _, trace in traces_loaded}
    if len(models) > 1:
        from deployspec.replay_selection import traces_per_model

        raise UsageError(f"replay --exec/--python: the files are of different models ({traces_per_model(traces_loaded)}); "
                         "an implementation speaks one: replay one model's traces at a time")
    if target.kind == "exec":
        cannot_start(target.spec, "--exec")
    return Connection(target, get_model(models.pop()),
                      timeout=DEFAULT_TIMEOUT if args.timeout is None else args.timeout)

