"""The ``replay`` command: trace files replayed on their own design, another
(``--variant``) or an implementation (``--exec``/``--python``), each verdict as it
comes; exit 1 while one still reproduces (a regression suite), 3 at a fault."""

from __future__ import annotations

import json
import re
import sys
import time
from pathlib import Path
from types import SimpleNamespace

from deployspec import declarations, interruption, junit_cases, traces
from deployspec import junit as junit_xml
from deployspec.contract import cli as contract_cli
from deployspec.contract import faults
from deployspec.models import UsageError, bounds_given, get_model
from deployspec.outputs import writable_dir
from deployspec.replay_selection import (
    is_a_trace,
    judged_by,
    of_the_variants_model,
    say_left_out,
    trace_files,
)
from deployspec.replay_verdicts import replay_document
from deployspec.replay_verdicts import report_replay as _report_replay
from deployspec.text import escaped, first_few, quoted


def cmd_replay(args) -> int:
    if args.variant == "":
        raise UsageError("--variant: empty (name a variant, or leave --variant out to replay on the recorded one)")
    loaded = [(f, _loaded(f, args.files)) for f in trace_files(args.files)]  # validate all before running any
    loaded, left_out, model = of_the_variants_model(args, loaded)
    loaded, unjudged = judged_by(args.property, loaded, args.files)
    bounds = bounds_given(args.bound)
    _check_replay_configs(args, loaded, bounds)
    junit = junit_xml.path_of(args.junit, json_on_stdout=args.json, out=args.out,
                              reads=junit_xml.read_by(args))  # (before --out's folder is made)
    if is_a_trace(junit, [path for path, _ in loaded]):
        raise UsageError(f"--junit {args.junit}: is a trace being replayed; write the report elsewhere")
    if args.declared and (args.exec_ is not None or args.python is not None):
        raise UsageError("--declared judges a replay on a design by what it declares; an implementation "
                         "declares nothing (replay it on its own, or run deployspec contract)")
    if args.out is not None:
        if args.exec_ is not None or args.python is not None:
            raise UsageError("--out saves what a design's replay did; an implementation's runs are saved by "
                             "deployspec contract --out")
        writable_dir(args.out, report=junit)
    if left_out:  # (said once nothing is left to refuse: a usage error is one line)
        say_left_out(f"--variant {args.variant} is a {model} design", left_out)
    if unjudged:
        say_left_out(f"--property {', '.join(dict.fromkeys(args.property))}: not a property of their model",
                      unjudged)
    left_out = [*left_out, *unjudged]
    started = time.time()
    # (file, status, what was said, seconds, what --json tells of it), in order
    verdicts: list[tuple[str, int, str, float, dict]] = []
    target = _replay_target(args)
    document = sys.stdout  # (a --python object's threads may print meanwhile: sys.stdout is then theirs)
    with junit_xml.saved_if_interrupted(junit, args.junit, "deployspec replay",
                                     lambda: junit_cases.replay_suites(verdicts, loaded, target, interrupted=True),
                                     started):
        status = _replay_all(args, loaded, bounds, verdicts)
    _say_other_starts(args, loaded, bounds, verdicts, status)
    lost = traces.unsaved([SimpleNamespace(unsaved=v[4].pop("unsaved", None)) for v in verdicts])
    status = traces.UNSAVED if lost else status  # (--out: a replay not saved; the verdicts stand)
    if args.json:
        print(json.dumps(replay_document(verdicts, loaded, target, status, left_out)), file=document)
    if junit is not None:  # (not after a usage error: it raises)
        junit_xml.save(junit, args.junit, "deployspec replay", junit_cases.replay_suites(verdicts, loaded, target), started)
    if lost:  # said after the verdicts, which stand
        print(f"deployspec: error: {lost}", file=sys.stderr)
    return status


def _keep_replayed(path: str, trace: dict, outcome, out_dir: str) -> dict:
    """The replay of ``trace`` that reproduced, saved under ``out_dir`` as a trace of the design
    replayed on (``engine: "replay"``, ``extra.replayed`` naming the file): what ``show``
    draws of a finding on that design, its title saying so. ``traces.keep``'s fields."""
    saved = traces.build(model=trace["model"], variant=outcome.target, config=outcome.config.to_json(),
                         property=trace["property"], engine="replay", seed=None, session=outcome.session,
                         extra={"replayed": str(path)})
    # (a replay of a replay: marked once, for the design it was last replayed on; a file
    # without a title is named: a picture of it says where it came from)
    named = Path(path).name if path != "-" else "a trace from standard input"
    title = trace.get("title") or named
    marked = re.search(r" \(replayed on [^(),]*(, [^()]*)?\)$", title)
    before = (marked.group(1) or "") if marked else ""  # (what the last replay said of the story)
    title = title[:marked.start()] if marked else title
    cause, recorded = outcome.violation.cause, (trace.get("violation") or {}).get("cause")
    if trace.get("recorded_property"):
        how = f", judged by {trace['property']}"
    elif cause != recorded:  # the title tells the recorded story; there it broke another way
        how = f", where it breaks another way: {cause}" if cause else ", where it breaks another way"
    else:
        how = before
    saved["title"] = f"{title} (replayed on {outcome.target}{how})"
    return traces.keep(saved, out_dir)


def _say_other_starts(args, loaded, bounds: dict | None, verdicts: list, status: int) -> None:
    """Once under the lines, where the traces replayed record a named start (each line says
    which start its replay began from): how to replay from another (said on each line, it
    was noise in a CI log of 17 files). Not after an implementation's fault: the run ended."""
    from deployspec.replay import recorded_start

    replayed = {path for path, *_ in verdicts}
    if args.json or status == 3 or "start" in (bounds or {}) \
            or not any(recorded_start(t) for p, t in loaded if p in replayed):
        return
    print("(--bound start=NAME replays from another start, another place Terraform leaves the app)")


def _replay_target(args) -> str:
    if args.exec_ is not None:
        return f"exec {args.exec_}"
    if args.python is not None:
        return f"python {args.python}"
    return f"variant {args.variant}" if args.variant else "each file's recorded variant"


def _replay_all(args, loaded, bounds, verdicts: list) -> int:
    """Replay each file in turn, each verdict said as it comes and kept in ``verdicts``;
    the worst status, 3 at the first implementation fault (the rest are not replayed)."""
    from deployspec import variant_plugins
    from deployspec.contract import guard, timed_call
    from deployspec.contract.guard import ImplementationFault
    from deployspec.replay import replay

    # the verdicts go to ``out``: a --python object's threads print to stderr at any time, from
    # its factory on (with --json, the lines go to stderr beside it: stdout is the document's)
    lending = timed_call.lending(args.python is not None)
    implementation = args.exec_ is not None or args.python is not None
    saved_from: dict[str, str] = {}  # (--out) each trace saved -> the file whose replay it is
    # (a design of one's own runs in this process too: its rule may swallow the interruption)
    holdout = "the implementation" if implementation else "a design's rule"
    with lending as lent, interruption.sigterm_interrupts(holdout=holdout):
        out = sys.stderr if args.json else lent
        try:
            conn = contract_cli.open_for_replay(args, loaded)  # None unless --exec/--python
        except ImplementationFault as fault:
            verdicts.append(("", 3, fault.line(), 0.0, {"outcome": "fault", "fault": fault.to_json(),
                                                         "message": fault.line()}))
            print(f"deployspec: {fault.line()}", file=sys.stderr)
            return 3
        try:
            for at, (path, trace) in enumerate(loaded):
                started = time.perf_counter()
                try:
                    with guard.during(file=str(path)):  # (the watchdog's last word names it, as a fault below)
                        outcome = _replay_one(replay, trace, args, conn, bounds)
                except ImplementationFault as fault:
                    other = faults.not_recorded(trace, fault) if trace.get("fault") else None
                    line = fault.line() + (f" ({escaped(other)})" if other else "")  # (the file's words: escaped)
                    verdicts.append((path, 3, line, time.perf_counter() - started,
                                     {"outcome": "fault", "fault": fault.to_json(), "message": f"{path}: {line}"}))
                    print(f"deployspec: {escaped(str(path))}: {line}", file=sys.stderr)
                    _say_unreplayed([p for p, _ in loaded[at + 1:]])
                    return 3
                except (Exception, SystemExit) as exc:  # a design of the user's own failed: no verdict (not 1)
                    # unless it failed of an interruption it caught (a bare except: then sys.exit):
                    # the run was stopped, as when a rule swallows it
                    interruption.raise_if_pending()
                    why = variant_plugins.fault(_raised_in(exc, trace, args, conn), exc)
                    if why is None:
                        raise
                    # the error first, then what it left (said after it, a user read the files first)
                    said = f"{path}: {why}"
                    left = _unreplayed([p for p, _ in loaded[at + 1:]], room=_ERROR_ROOM - len(escaped(said)) - 2)
                    raise UsageError(said + (f"; {left}" if left else "")) from None
                interruption.raise_if_pending()  # swallowed on the way: a stop, not a verdict
                status, said, facts = _report_replay(path, trace, outcome, bounds, _recorded_here(trace, args))
                reproduced = status == 1  # (--declared may expect it: --out still saves it)
                if args.declared and reproduced and conn is None:
                    status, said, facts = _as_declared(outcome, status, said, facts)
                print(said, file=out)
                if args.out is not None and reproduced:
                    kept = _keep_replayed(path, trace, outcome, args.out)
                    facts |= {"counterexample": kept["counterexample"], "unsaved": kept["unsaved"]}
                    first = saved_from.setdefault(kept["counterexample"], path) if kept["counterexample"] else None
                    if first is not None and first != path:  # (files of the same steps: one trace of them)
                        print(escaped(f"saved: {kept['counterexample']} (the same steps as the replay of {first} "
                                      "above: one file)"), file=out)
                    elif first is not None:
                        print(escaped(traces.saved_line(SimpleNamespace(**kept))), file=out)
                out.flush()  # each verdict as it comes (a later object may end the process)
                verdicts.append((path, status, said, time.perf_counter() - started, facts))
        finally:
            if conn is not None:
                conn.close()
    return max((v[1] for v in verdicts), default=0)


def _loaded(path: str, named: list[str]) -> dict:
    """The trace at ``path``; a file a folder named brought that is no trace says so (a
    ``check --json > found/results.json`` beside the traces refused the whole folder, and
    its user did not know every ``*.json`` under it is read as one)."""
    try:
        return traces.load_named(path, "replay")
    except traces.NotATrace as exc:  # (a trace edited wrong is a plain UsageError: to mend, not to move out)
        if path in named:
            raise
        raise UsageError(f"{exc}; every *.json file under a folder named is read as a trace (but *.itf.json): "
                         "move it out, or name the trace files") from None


def _recorded_here(trace: dict, args) -> bool | None:
    """Whether the implementation replayed on is the one a contract run recorded the file
    on (the same ``--exec`` command or ``--python`` factory, ``extra.implementation``): its
    replay parting from the recorded answers is news, as on a design; None: a design is
    replayed on."""
    if args.exec_ is None and args.python is None:
        return None
    found_on = (trace.get("extra") or {}).get("implementation")
    if not isinstance(found_on, dict):
        return False
    return found_on.get("exec") == args.exec_ if args.exec_ is not None else found_on.get("python") == args.python


def _as_declared(outcome, status: int, said: str, facts: dict) -> tuple[int, str, dict]:
    """``--declared``: a violation of a property the design replayed on declares it
    violates (``declares``, or beyond the default search) is expected: exit 0 for it, the
    line and ``--json``'s ``declared`` say so. A CI user's design inherited capi-current's
    known violations, and every run of their gate failed on them."""
    if not declarations.declares_violation(get_model(outcome.session.model.name), outcome.target, outcome.property):
        return status, said, facts | {"declared": False}
    note = f" (declared by {outcome.target}: expected)"
    return 0, said + escaped(note), facts | {"declared": True, "message": facts["message"] + note}


def _raised_in(exc: BaseException, trace: dict, args, conn) -> str:
    """The design whose rule raised ``exc``: a conformance trace's reference
    (``reference_raised``), else the variant replayed on ("" with an implementation: its
    failures come as faults)."""
    from deployspec.contract.conformance import reference_raised

    return reference_raised(exc) or ("" if conn is not None else args.variant or trace["variant"])


def _say_unreplayed(paths: list[str]) -> None:
    """The files an implementation's fault left unreplayed, named on stderr (as the JUnit
    report skips them)."""
    if paths:
        print(f"deployspec: {_unreplayed(paths)}", file=sys.stderr)


#: an error line's characters after ``deployspec: error: ``, before it is cut in its
#: middle (``cli._say``): the files a fault left are named in what is left of them
_ERROR_ROOM = 480


def _unreplayed(paths: list[str], room: int | None = None) -> str:
    """``not replayed after the fault: N file(s): …``, or "" for none; the first three
    named, fewer where they would take more than ``room`` characters (the error before
    them is the news: a long folder's names would have cut it in its middle)."""
    if not paths:
        return ""
    files = list(dict.fromkeys(paths))  # (a file judged by several properties, --property: named once)
    count = f"not replayed after the fault: {len(paths)} file(s)" if len(files) == len(paths) else \
        f"not replayed after the fault: {len(paths)} replay(s) of {len(files)} file(s)"
    names = [escaped(str(p)) for p in files]
    for most in range(min(3, len(names)), 0, -1):
        said = f"{count}: {first_few(names, most)}"
        if room is None or len(said) <= room:
            return said
    return count


def _check_replay_configs(args, loaded, bounds) -> None:
    """Each trace's target and its configuration there, with ``--bound``, before any
    verdict is printed or any program started: a UsageError naming the file."""
    from deployspec.models import find_variant
    from deployspec.replay import config_on

    implementation = args.exec_ is not None or args.python is not None
    for path, trace in loaded:
        on = None if implementation else args.variant or trace["variant"]
        if on is not None:
            model = get_model(trace["model"])
            if on not in model.variants and not args.variant:
                raise UsageError(_no_target(path, trace))
            if args.variant and on not in model.variants:
                find_variant(on)  # an unknown --variant is said as such, not of a file
                raise UsageError(f"{path}: a {model.name} trace; --variant {on} is a design of another model "
                                 "(replay each model's traces on one of its own)")
            if args.variant and not _from_known_start(trace, model):
                # the design's own configuration tells which of the trace's values were
                # bounds chosen on purpose (kept) and which its own (the target's instead)
                from deployspec.replay import recorded_on

                started = recorded_on(trace, model) or trace["variant"]
                found = (f"found on implementation {quoted(trace['variant'])} run with --reference {quoted(started)}"
                         if started != trace["variant"] else f"found on variant {quoted(started)}")
                elsewhere = _of_another_model(started, model)
                raise UsageError(f"{path}: {found}, " + (elsewhere or (
                    f"which is not known here: its own configuration decides what the trace replays with on "
                    f"{on} {HAND_IN_AGAIN}")))
        try:
            config_on(trace, on, bounds)
        except UsageError as exc:
            raise UsageError(f"{path}: {exc}") from None


#: what a trace of a design not known here asks of the user
HAND_IN_AGAIN = "(a design of your own? hand it in again: DEPLOYSPEC_VARIANTS or its entry point, docs/variants.md)"


def _from_known_start(trace, model) -> bool:
    """Whether the configuration a trace's search started from is known here: found on a
    variant handed in or shipped, or on an implementation (whose runs start from the model's
    default, or their --reference's)."""
    from deployspec.replay import recorded_on

    if trace["variant"] in model.variants:
        return True
    implementation = (trace.get("extra") or {}).get("implementation")
    if not isinstance(implementation, dict):
        return False
    reference = recorded_on(trace, model)
    return reference is None or reference in model.variants


def _no_target(path, trace) -> str:
    """Why a trace recorded on a variant not known here cannot replay by itself."""
    if isinstance((trace.get("extra") or {}).get("implementation"), dict):
        return (f"{path}: found on implementation {quoted(trace['variant'])}; replay it with --exec/--python, "
                "or on a reference with --variant")
    elsewhere = _of_another_model(trace["variant"], get_model(trace["model"]))
    return f"{path}: found on variant {quoted(trace['variant'])}, " + (
        elsewhere or f"which is not known here {HAND_IN_AGAIN}")


def _of_another_model(variant: str, model) -> str | None:
    """What to say of ``variant`` when it is another model's (the file names one model, its
    variant belongs to another: an edited file), else None (a design not handed in)."""
    from deployspec.models import find_variant

    try:
        other = find_variant(variant)[0]
    except UsageError:
        return None
    return f"a variant of model {other.name}, not of the file's model {model.name}" if other.name != model.name else None


def _replay_one(replay, trace, args, conn, bounds):
    if conn is None:
        return replay(trace, variant=args.variant, bounds=bounds)
    for _ in range(faults.repeats(trace)):  # an answer that differed from the first time: asked twice
        outcome = replay(trace, adapter=conn.adapter(trace["property"]), target=conn.target.describe(),
                         bounds=bounds)
    return outcome
