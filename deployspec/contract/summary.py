"""What a contract run says when it ends: the table of its checks (with the example in
which the search first saw each violation) and the notes under it (vacuous holds, what
never took effect or was never asked, where its steps went), and its configuration as
``--bound`` takes it. Apart from :mod:`deployspec.contract.cli`, which parses and runs; the JUnit report
and the pytest plugin say the same things through these functions."""

from __future__ import annotations

import json

from deployspec.coverage import coverage_lines
from deployspec.models import get_model, nothing_to_do
from deployspec.text import quoted


def config_text(config) -> str:
    """Every bound of a configuration, each value as ``--bound`` takes it (JSON):
    what the search offered, so also what it never tried (``canary_plans=[]``)."""
    return ", ".join(f"{k}={json.dumps(v, separators=(',', ':'))}" for k, v in config.to_json().items())


#: the first-seen column of a violation the search did not find, by what found it
FOUND_BY = {"sweep": "first step", "known": "known trace"}


def first_seen(r) -> str:
    """A line "(first seen in example N of the search, with seed S)" to add under a
    violation's report, or "" where the search did not find it (the sweep, a known
    trace): what ``--examples`` must reach for that seed."""
    n = r.stats.get("found_in_example")
    return "" if n is None else f"\n(first seen in example {n} of the search, with seed {r.stats.get('seed')})"


def _row(r) -> tuple[str, ...]:
    """A check's row: name, verdict, first seen (the example in which the search first saw
    the violation, or what found it instead: ``FOUND_BY``), then the search's examples,
    steps and steps/s, left empty where the sweep found it before any search ran."""
    found_by = r.stats.get("found_by")
    seen = "" if r.verdict != "violated" else FOUND_BY.get(found_by, str(r.stats.get("found_in_example", "")))
    searched = ("", "", "") if found_by == "sweep" else (
        str(r.stats.get("examples", "")), str(r.stats.get("steps", "")), str(r.stats.get("steps_per_second", "")))
    return (r.property, verdict_cell(r), seen, *searched)


def verdict_cell(r) -> str:
    """A check's verdict as the table and the progress line say it: ``VIOLATED``, ``holds``,
    ``holds ?`` where none of the actions it is about took effect."""
    from deployspec.declarations import verdict_word

    return verdict_word(r.verdict) + (" ?" if r.verdict == "holds" and r.stats.get("vacuous") else "")


def found_in_note(results) -> list[str]:
    """What the first-seen column's numbers are, under a table that has one: the examples
    column also counts the examples that shrank a violation, which is no guide to the
    ``--examples`` a gate needs."""
    if not any(r.verdict == "violated" and "found_in_example" in r.stats for r in results):
        return []
    return [("first seen: the example in which the search first saw the violation (the examples column counts "
            "every example run, shrinking too)")]


def summary(run) -> str:
    rows = [_row(r) for r in run.results]
    if run.fault is not None:
        rows.append((run.fault.checking or "start", "FAULT", "", "", "", ""))  # as --json's where, --junit's case
        ran = {r.property for r in run.results} | {run.fault.checking}
        rows += [(name, "not run", "", "", "", "") for name in run.planned if name not in ran]
    head = ("check", "verdict", "first seen", "examples", "steps", "steps/s")
    widths = [max(len(x) for x in col) for col in zip(head, *rows)]
    fmt = "  ".join(f"{{:{w}}}" for w in widths)
    said = f" · says it is {quoted(run.implementation)}" if run.implementation else ""
    against = f" · against --reference {run.reference}" if run.reference else ""
    whose = [f"{run.reference}'s"] if run.reference else []
    whose += [f"with --bound {', '.join(run.bounds)}"] if run.bounds else []
    lines = [f"contract {run.model} · {run.target.describe()}{said}{against}",
             f"config{' (' + ', '.join(whose) + ')' if whose else ''}: {config_text(run.config)}",
             fmt.format(*head),
             "-" * (sum(widths) + 2 * (len(widths) - 1))]
    lines += [fmt.format(*row).rstrip() for row in rows]
    lines += found_in_note(run.results)
    lines += known_note(run)
    lines += reference_note(run)
    lines += vacuity_notes(run.results, run.reference, reasons=unoffered(run))
    lines += idle_note(run)
    # a check the sweep found took no search step; one a known trace found searched in full
    searched = [r for r in run.results if r.stats.get("found_by") != "sweep"]
    stopped = any(r.verdict == "violated" and "found_by" not in r.stats for r in searched)
    lines += coverage_lines(run.situations, run.reference, checks=len(searched),
                            stopped=stopped) if run.fault is None else []
    verdict = {0: "no check found a violation: a search of the examples above, not a proof (a longer hunt: "
                  "--examples N or --budget SECONDS; docs/contract.md)", 1: "VIOLATED: see the counterexample(s) above",
               2: "VIOLATED: see the counterexample(s) above (not all could be saved)",
               # deployspec's own status, not the program's (which the fault line may quote)
               3: "FAULT: the implementation failed; the run stopped there (deployspec exits 3)"}
    failed_vacuous = run.exit_status == 1 and not any(r.verdict == "violated" for r in run.results)
    held = "every check" if len(run.vacuous) == len(run.results) > 1 else ", ".join(run.vacuous)
    lines.append(f"VACUOUS: {held} held with nothing judged, a failure with --fail-vacuous"
                 if failed_vacuous else verdict[run.exit_status])
    return "\n".join(lines)


def known_note(run) -> list[str]:
    """That the committed counterexamples were replayed, and what they found: a run they
    caught a bug in showed it only as a row, and one they did not said nothing of them,
    though they are half of what a gate checks (a user's report)."""
    if not any(r.stats.get("known") for r in run.results):  # (--no-known, or a fault before them)
        return []
    from deployspec.contract import known

    # (a check's stats.known counts those it judged: up to the first that broke it)
    every = len(known.runs(get_model(run.model)))
    broke = [r.property for r in run.results if r.stats.get("found_by") == "known"]
    found = f"they broke {', '.join(broke)}" if broke else "none broke a check whose search held"
    return [(f"known traces: the {every} committed counterexample{'s' if every != 1 else ''} of "
             f"counterexamples/{run.model}/ judged after the searches; {found} (--no-known leaves them out)")]


def reference_note(run) -> list[str]:
    """The violated checks that the ``--reference`` design breaks too, as it declares: an
    implementation that conforms to it breaks them as well, so its rows are no news of the
    implementation's own (a user's gate with a historic reference could never pass)."""
    if not run.reference:
        return []
    from deployspec.declarations import beyond

    model = get_model(run.model)
    declared = model.variant(run.reference).declares
    theirs = [r.property for r in run.results if r.verdict == "violated"
              and (r.property in declared or beyond(model, run.reference, r.property) is not None)]
    if not theirs:
        return []
    return [(f"the reference breaks these too: {run.reference} declares it violates {', '.join(theirs)}, so an "
            "implementation that conforms to it does as well (--property leaves them out; a --reference that "
            "holds them asks more)")]


def who_says(results, reference: str | None) -> str | None:
    """Where a run tells what the reference does with actions the implementation left
    without effect, or None where its conformance check held (then the reference did the
    same at every step asked; each note says so in its own words)."""
    from deployspec.contract.conformance import PREFIX

    # the verdict of the conformance check with the reference; None: no reference, or left out by --property
    conformance = next((r.verdict for r in results if reference and r.property == PREFIX + reference), None)
    if conformance == "holds":
        return None
    if conformance is not None:
        return f"{PREFIX}{reference}'s counterexample above shows what {reference} does"
    if reference is not None:  # (left out by --property)
        return f"--property {PREFIX}{reference} asks what {reference} does"
    return "--reference VARIANT asks what they must do"


def standing(run):
    """Each ``Model.widening`` of the run's model, with where the run stands with it:
    ``absent`` (its ``--reference`` has the kinds act under no bounds), ``given`` (its
    configuration gives them something to do), ``chosen`` (the user gave that bound
    another value) or ``open`` (the bound would give them something to do)."""
    model = get_model(run.model)
    sent = run.config.to_json()
    reference = model.variant(run.reference) if run.reference else None
    for w in model.widening:
        if reference is not None and not w.offered_by(reference):
            yield w, "absent"
        elif w.given_in(sent):
            yield w, "given"
        else:
            yield w, "chosen" if w.name in run.bounds else "open"


def unoffered(run) -> dict[str, str]:
    """Action kind -> why this run's configuration gave it nothing to do, for the kinds
    it did not (:func:`standing`)."""
    why: dict[str, str] = {}
    for w, where in standing(run):
        text = {"absent": nothing_to_do(run.reference, "them", w),
                "chosen": f"the --bound {w.name} given leaves them nothing to do",
                "open": f"this configuration gives them nothing to do: --bound {w.bound} does"}.get(where)
        if text is not None:
            why.update((kind, text) for kind in w.kinds if kind not in why)
    return why


def vacuity_notes(results, reference: str | None = None, reasons: dict[str, str] | None = None) -> list[str]:
    """One line per set of actions that never took effect in the checks that held (``?``):
    a controller that refuses every push and swap breaks no property of the spec. Where
    the conformance check with the reference held, the reference refused them as well (it
    would have parted from the implementation otherwise): the configuration left them
    nothing to do, and the bounds are what to look at."""
    checks: dict[tuple[str, ...], list[str]] = {}
    for r in results:
        if r.stats.get("vacuous"):
            checks.setdefault(tuple(r.stats["vacuous"]), []).append(r.property)
    every = len(checks) == 1 and len(next(iter(checks.values()))) == len(results) > 1
    from deployspec.contract.harness import not_taking_effect

    hint = who_says(results, reference) or (
        f"{reference} refused them too, under this configuration (the bounds; --bound changes them)")
    reasons = reasons or {}

    def why(kinds) -> str:  # the configuration gave them nothing to do: that, not the reference, is the news
        said = {reasons.get(k) for k in kinds}
        return hint if len(said) != 1 or None in said else said.pop()

    return [f"? {'every check' if every else ', '.join(names)}: vacuous, {not_taking_effect(kinds)} (each was "
            f"refused or changed nothing), so nothing they do was judged; {why(kinds)}"
            for kinds, names in checks.items()]


def idle_note(run) -> list[str]:
    """Lines naming the action kinds that took effect nowhere in the run (a contract run's
    coverage: a slots run from empty slots pins digests, so no restart, recycle or crash
    retry changes anything, and a bug in them passes), each followed, indented, by what to
    do about it: the bounds under which the reference designs give them something to do;
    where the run's configuration already did, who refused them (the implementation, or
    its reference too, as the conformance check tells); where the ``--reference`` has them
    act under no bounds, that this is as it should be. A kind the run never asked for is
    said apart: nothing refused it."""
    if not run.idle:
        return []
    from deployspec.contract.conformance import PREFIX

    never = run.never_asked
    left, reach, offered, notes = list(run.idle), [], [], []
    chosen: dict[str, list[str]] = {}  # a bound the run was given -> what its other values would do
    for widening, where in standing(run):
        here = [k for k in left if k in widening.kinds]
        if not here:
            continue
        left = [k for k in left if k not in here]
        if where == "absent":
            notes.append(f"{nothing_to_do(run.reference, ', '.join(here), widening)}, so neither does an implementation "
                         "that conforms to it")
        elif where == "given":
            offered += [k for k in here if k not in never]
        elif where == "chosen":  # (no canaries here): said as a choice, not as a gap
            kinds = ", ".join(here)
            chosen.setdefault(widening.name, []).append((kinds, f"--bound {widening.bound} would give {kinds}"))
        else:
            reach.append(f"--bound {widening.bound} gives {', '.join(here)}")
    if reach:
        notes.insert(0, f"on the reference designs, {' and '.join(reach)} something to do")
    notes += [f"the --bound {name} given leaves {', '.join(k for k, _ in given)} nothing to do "
              f"({' and '.join(w for _, w in given)} something)" for name, given in chosen.items()]
    if offered:
        said = who_says(run.results, run.reference)
        whose = (f"so the implementation refused or ignored them, or the searches never reached where they act: "
                 f"{said}" if said is not None else
                 # held: it would have parted from the implementation otherwise
                 f"yet {run.reference} did as the implementation at every step this run asked ({PREFIX}"
                 f"{run.reference} held): a longer search may reach where they act")
        notes.append(f"this configuration gives {', '.join(offered)} something to do on the reference designs, "
                     f"{whose}")
    refused = [k for k in run.idle if k not in never]
    # (every check's search ended at its violation: few steps tried; one that held ran its whole search)
    stopped = bool(run.results) and all(r.verdict == "violated" for r in run.results)
    where = ("at every step the run took before violations stopped its searches, so not a sign the implementation "
             "refuses them" if stopped else "at every step of the run")
    said = [(f"never took effect: {', '.join(refused)} (refused, or changing nothing, {where}: "
            "no check judged what they do)")] if refused else []
    said += [f"  {note}" for note in notes]
    said += [(f"never asked: {', '.join(never)} (this configuration gave the searches no such action to offer, "
             "so nothing of what the implementation does with it was judged)")] if never else []
    return said
