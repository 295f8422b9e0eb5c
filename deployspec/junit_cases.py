"""Each command's verdicts as JUnit cases (:mod:`deployspec.junit` writes the report):
``check``'s a case per matrix cell (or per property of a close look), ``contract``'s a
case per check, ``replay``'s a case per trace file, each judged by the rule the
command's exit status follows, so the report and the status never disagree."""

from __future__ import annotations

import os
from pathlib import Path

import attrs

from deployspec import junit
from deployspec.junit import ERROR, FAILURE, PASSED, SKIPPED, Case, Suite


def _part(name: str) -> str:
    """A variant's or implementation's name as one part of a class name: readers
    (Jenkins) take the last dot for the class, so a dot in a name is written ``_``."""
    return name.replace(".", "_")


# ---------------------------------------------------------------------------
# check: a case per matrix cell
# ---------------------------------------------------------------------------


def check_suites(results, *, declared: bool, planned=None, finished=(), incident: str | None = None,
                 expected: bool = False) -> list[Suite]:
    """A suite per (model, variant), a case per property: with ``declared`` (the
    matrix) a case fails when its cell disagrees with what the variant declares, as
    the table marks ``!``; otherwise (a close look) when the property is violated.
    A search that ended in error is an error either way. For an interrupted run,
    ``planned``: every search (``check.searches``), ``finished``: those that ended; a
    cell with a search unfinished is skipped, with what its finished ones said. A run of
    ``--incident`` names its file in each suite and class (several incidents' reports, or
    one beside a plain check's, collided in a CI's test view); with ``expected``
    (``--incident --declared``), a violation the design declares passes, as the exit
    status has it."""
    from deployspec import declarations

    judged = declarations.cells(results)
    cells = dict.fromkeys((m, v, p) for m, v, _e, p in planned) if planned is not None else judged
    ended = set(finished)
    unfinished = {(m, v, p) for m, v, e, p in planned or () if (m, v, e, p) not in ended}
    suites: dict[tuple[str, str], list[Case]] = {}
    for model_name, variant, prop in cells:
        rs = judged.get((model_name, variant, prop), [])
        if (model_name, variant, prop) in unfinished and not any(r.verdict == "violated" for r in rs):
            # (a violation found is the cell's verdict whatever the searches not finished
            # would have said: a CI job's timeout showed the bug it had found as skipped)
            case = Case(f"deployspec.check.{model_name}.{_part(variant)}", prop, SKIPPED,
                        f"not judged: {junit.stopped}", "\n\n".join(_search_text(r, results) for r in rs))
        else:
            case = _check_case(model_name, variant, prop, rs, results, declared, expected)
        suites.setdefault((model_name, variant), []).append(case)
    if incident is not None:
        named = _incident_named(incident)
        stem = ".".join(_part("_".join(part.split())) for part in Path(named.removesuffix(".txt")).parts
                        if part != os.sep)
        return [Suite(f"check --incident {named} {m} · {v}",
                      tuple(attrs.evolve(c, classname=c.classname.replace("deployspec.check.",
                                                                         f"deployspec.incident.{stem}.", 1))
                            for c in cases)) for (m, v), cases in suites.items()]
    return [Suite(f"check {m} · {v}", tuple(cases)) for (m, v), cases in suites.items()]


def _incident_named(incident: str) -> str:
    """An incident's file as a report names it: as given, relative to the current folder where
    it is under it (two teams' ``incident.txt`` in their own folders were one suite and
    class in a CI's test view)."""
    path = os.path.normpath(incident)
    if os.path.isabs(path):
        try:
            inside = os.path.relpath(path)
        except ValueError:  # (another drive)
            return path
        return path if inside.startswith(os.pardir) else inside
    return path


def _check_case(model_name: str, variant: str, prop: str, rs, results, declared: bool, expected: bool = False) -> Case:
    from deployspec import declarations
    from deployspec.models import get_model

    verdict = declarations.shown_verdict({r.verdict for r in rs})
    shown = declarations.verdict_word(verdict)
    details = "\n\n".join(_search_text(r, results) for r in rs)
    case = Case(f"deployspec.check.{model_name}.{_part(variant)}", prop, details=details,
                seconds=sum(r.stats.get("seconds") or 0.0 for r in rs))
    violated = [r for r in rs if r.verdict == "violated"]
    unsaved = [r.unsaved for r in rs if r.unsaved]
    failed = _not_done(case, rs, shown, unsaved if not (violated and not declared) else [])
    if failed is not None:
        return failed
    if verdict in declarations.INCONCLUSIVE:  # judged by no engine: the cell agrees with anything
        return attrs.evolve(case, outcome=SKIPPED, message=f"{shown}: {rs[0].message or 'not judged'}")
    if declared:
        case = _against_declaration(case, model_name, variant, rs, verdict)
    elif violated and expected and declarations.declares_violation(get_model(model_name), variant, prop):
        return attrs.evolve(case, message=f"{shown}, as {variant} declares (expected)")
    elif violated:
        return _violation(case, prop, violated, unsaved)
    else:
        case = attrs.evolve(case, message=shown)
    from deployspec.report import vacuous_kinds, vacuous_said

    if case.outcome == PASSED and (vacuous := vacuous_kinds(rs, verdict)):
        # the table's "?": a proof that judged nothing is no green case (as contract's)
        return attrs.evolve(case, outcome=SKIPPED,
                            message=f"{shown} ?: {vacuous_said(vacuous, get_model(model_name), variant)}")
    if case.outcome == PASSED and (cut := _cut_proof(rs)):
        # the table's "*": a proof a budget stopped is no green case either (a CI's test view
        # showed a 1-second proof of a third of the states as passed, and a vacuous one skipped)
        return attrs.evolve(case, outcome=SKIPPED, message=f"{shown}*: incomplete: {cut}")
    return case


def _cut_proof(rs) -> str | None:
    """What stopped a cell's exhaustive search that held, where a budget (time, memory) did: a
    bound the design or ``--bound`` sets (a depth) is part of what is proven."""
    from deployspec.declarations import BUDGETS

    for r in rs:
        if r.verdict == "holds" and r.stats.get("complete") is False and r.stats.get("stopped") in BUDGETS:
            what = {"time": "the time budget", "memory": "the memory budget",
                    "address_space": "the address-space limit (ulimit -v)"}[r.stats["stopped"]]
            return f"{what} stopped the exhaustive search after {r.stats.get('states', 0):,} states"
    return None


def _not_done(case: Case, rs, shown: str, unsaved: list[str]) -> Case | None:
    """An error case when a search ended in error, or (exit 2) what ``--out`` asked for
    was not saved (``unsaved``: not when the violation itself is the news)."""
    errors = [r for r in rs if r.verdict == "error"]
    if errors:
        return attrs.evolve(case, outcome=ERROR, message=f"{errors[0].engine}: {errors[0].message or 'error'}")
    if unsaved:
        return attrs.evolve(case, outcome=ERROR, message=f"{shown}, but not saved: {unsaved[0]}")
    return None


def _violation(case: Case, prop: str, violated, unsaved: list[str]) -> Case:
    """A violation no declaration expects: a failure, with its causes (and, if so, that
    it was not saved: the violation is the news)."""
    causes = sorted({r.cause for r in violated if r.cause})
    also = f" ({len(causes)} causes: {', '.join(causes)})" if len(causes) > 1 else ""
    lost = f"; not saved: {unsaved[0]}" if unsaved else ""
    return attrs.evolve(case, outcome=FAILURE, message=f"VIOLATED: {violated[0].message or prop}{also}{lost}")


def _against_declaration(case: Case, model_name: str, variant: str, rs, verdict: str) -> Case:
    """A matrix cell's case: passed when its verdict is what the variant declares, failed
    (with how it differs) when not, as the table marks ``!``."""
    from deployspec import declarations
    from deployspec.models import get_model

    shown = declarations.verdict_word(verdict)
    engines = ", ".join(sorted({r.engine for r in rs if r.verdict == verdict}))
    if declarations.cell_agrees(model_name, variant, case.name, rs):
        # the table's "+": either verdict agrees, and "holds …, as declared" read as a declared hold
        where = declarations.beyond(get_model(model_name), variant, case.name)
        said = "as declared" if where is None else f"as declared: violated beyond the default search ({where})"
        return attrs.evolve(case, message=f"{shown} ({engines}), {said}")
    said = declarations.disagreement(get_model(model_name), variant, case.name,
                                     [r.stats for r in rs if r.verdict == verdict])
    return attrs.evolve(case, outcome=FAILURE, message=f"{shown} ({engines}), {said}")


def _search_text(r, results) -> str:
    """One search's part of a case: engine, verdict, what it says, and the trace of
    a violation (the shortest of its cause, as the terminal report shows)."""
    from deployspec.commands import shortest_of_its_cause, trace_text
    from deployspec.declarations import verdict_word

    shown = verdict_word(r.verdict)
    head = f"{r.engine}: {shown}" + (f" (cause: {r.cause})" if r.cause else "")
    if r.message and not r.cause and r.message.startswith(shown):  # "holds for all …": said once
        head = f"{r.engine}: {r.message}"
    elif r.message:
        head += f": {r.message}"
    # (the explorer's message says it; a search that failed was stopped by no bound)
    if r.verdict != "error" and r.stats.get("complete") is False and "(incomplete:" not in head:
        head += f" (incomplete: stopped by {r.stats.get('stopped') or 'a bound'})"
    if r.verdict == "violated" and r.trace is not None and shortest_of_its_cause(r, results):
        return f"{head}\n{trace_text(r)}"
    return head


# ---------------------------------------------------------------------------
# contract: a case per check
# ---------------------------------------------------------------------------


def contract_suites(run, checks, *, timeout: float, interrupted: bool = False,
                    search: str | None = None) -> list[Suite]:
    """One suite, a case per planned check: failed if violated, an error where the
    implementation failed (crash, hang, garbage), skipped for the checks a fault
    (or an interruption) left unrun; as the exit status (1 violated, 3 a fault) says."""
    from deployspec.contract.summary import config_text

    target, fault = run.target, run.fault
    classname = f"deployspec.contract.{run.model}.{_part(target.name)}"
    planned = [p.name for p in checks]
    cases = []
    if fault is not None and fault.checking not in planned:  # at start, before any check
        cases.append(Case(classname, "start", ERROR, fault.line(), fault.with_history()))
    for name in planned:
        cases += _contract_cases(classname, name, [r for r in run.results if r.property == name],
                                 fault, target, timeout, interrupted, run.fail_vacuous)
    properties = (("implementation", f"{target.kind} {target.spec}"), ("config", config_text(run.config)))
    properties += (("search", search),) if search else ()  # the command that runs it again
    return [Suite(f"contract {run.model} · {target.name}", tuple(cases), properties)]


def _fault_text(fault, target, timeout: float) -> str:
    """A fault's case text: its line with the steps since reset, and where the trace of them
    was saved with the command that replays it (or how to save it)."""
    from deployspec.contract.faults import saved_text

    saved = saved_text(fault, target, timeout, "--out DIR")
    return fault.with_history() + (f"\n{saved}" if saved else "")


def _contract_cases(classname: str, name: str, rs, fault, target, timeout: float,
                    interrupted: bool, fail_vacuous: bool = False) -> list[Case]:
    """The case of one planned check (two when a fault followed its violation); a vacuous
    hold is skipped, or failed with ``--fail-vacuous``."""
    from deployspec.contract import harness
    from deployspec.contract.cli import violation_text
    from deployspec.contract.summary import first_seen

    faulted = fault is not None and fault.checking == name
    seconds = sum(r.stats.get("seconds") or 0.0 for r in rs)
    r = next((r for r in rs if r.verdict == "violated"), None)
    if r is not None:
        text = violation_text(r, target, timeout) + first_seen(r)
        if not faulted:
            return [Case(classname, name, FAILURE, f"VIOLATED: {r.message or name}", text, seconds)]
        # the violation stands, the fault that followed is said too, and is an error of its
        # own, as the text summary's FAULT row (exit 3)
        text += f"\nthen: {fault.with_history()}"
        return [Case(classname, name, FAILURE, f"VIOLATED: {r.message or name}", text, seconds),
                Case(classname, f"{name}: implementation fault", ERROR, fault.line(),
                     _fault_text(fault, target, timeout))]
    if faulted:
        return [Case(classname, name, ERROR, fault.line(), _fault_text(fault, target, timeout), fault.seconds)]
    if rs:
        vacuous = rs[0].stats.get("vacuous")  # it holds, having judged none of what these do:
        # skipped, so a test view counts it apart (a stub refusing everything read all green)
        said = f"holds ?: vacuous, {harness.not_taking_effect(vacuous)}" if vacuous else ""
        said += " (a failure with --fail-vacuous)" if vacuous and fail_vacuous else ""
        outcome = (FAILURE if fail_vacuous else SKIPPED) if vacuous else PASSED
        return [Case(classname, name, outcome, said, _contract_stats(rs[0]), seconds)]
    if interrupted and fault is None:
        return [Case(classname, name, SKIPPED, f"not run: {junit.stopped}")]
    where = f" ({fault.checking or 'at start'})" if fault is not None else ""
    return [Case(classname, name, SKIPPED, f"not run: the implementation failed first{where}")]


def _contract_stats(r) -> str:
    st = r.stats
    parts = [f"{st[k]} {k}" for k in ("examples", "steps") if k in st]
    return "holds" + (f": {', '.join(parts)}" if parts else "")


# ---------------------------------------------------------------------------
# replay: a case per trace file
# ---------------------------------------------------------------------------


def _file_case(path: str) -> str:
    """A trace file's case name: ``path`` without what only its typing changed (``./``,
    ``//``, a trailing ``/``), and relative to the current folder when it lies in it, so
    a CI tracks the same case whether its job typed ``counterexamples/`` or the
    checkout's absolute path (``/var/jenkins/workspace/job@2/…`` changes between agents)."""
    p = os.path.normpath(path)
    if os.path.isabs(p):
        for here in _current_folder():
            rel = os.path.relpath(p, here)
            if rel != os.pardir and not rel.startswith(os.pardir + os.sep):
                return rel
    return p


def _current_folder() -> list[str]:
    """The current folder as the shell names it (``$PWD``, through a link such as macOS's
    /tmp or a CI's workspace link: the names typed use it) and as the system does."""
    try:
        real = os.getcwd()
    except OSError:  # no current folder (deleted)
        return []
    logical = os.environ.get("PWD", "")
    if logical and logical != real and os.path.isabs(logical):
        try:
            if os.path.samefile(logical, real):
                return [logical, real]
        except OSError:
            pass
    return [real]


def replay_suites(verdicts, loaded, target: str, *, interrupted: bool = False) -> list[Suite]:
    """One suite, a case per trace file: passed when it no longer reproduces (the
    bug stays fixed), failed when it does, an error where the implementation failed
    (the files after it, or after an interruption, are skipped). ``verdicts``: (file,
    status, line, seconds, …) in order, a file of "" for a fault before the first;
    ``loaded``: (file, trace) planned."""
    from deployspec.replay_verdicts import by_file

    cases = []
    for path, status, line, *_ in verdicts:
        if path == "":
            cases.append(Case("deployspec.replay", "start", ERROR, line, line))
    times: dict[tuple[str, str], int] = {}
    for path, trace, verdict in by_file(verdicts, loaded):
        classname = f"deployspec.replay.{trace['model']}.{trace['property']}"
        name = _file_case(path)
        # named again: a case of its own (one file judged by several properties, replay
        # --property, is told apart by the class: its cases keep their names run after run)
        times[classname, name] = times.get((classname, name), 0) + 1
        name += f" #{times[classname, name]}" if times[classname, name] > 1 else ""
        if verdict is None:
            why = junit.stopped if interrupted else "the implementation failed first"
            cases.append(Case(classname, name, SKIPPED, f"not replayed: {why}"))
            continue
        _, status, line, seconds, *_ = verdict
        outcome = {0: PASSED, 1: FAILURE}.get(status, ERROR)
        cases.append(Case(classname, name, outcome, line, "" if outcome == PASSED else line, seconds))
    return [Suite("replay", tuple(cases), (("on", target),))]
