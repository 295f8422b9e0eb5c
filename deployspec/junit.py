"""Verdicts as a JUnit XML report: the test report CI systems show.

GitLab (``artifacts:reports:junit``), Azure Pipelines (``PublishTestResults``),
Jenkins and GitHub's test-report actions all read the Ant/Jenkins dialect of JUnit
XML: suites of test cases, each passed, failed (``<failure>``), broken
(``<error>``) or skipped. ``check``, ``contract`` and ``replay`` write one with
``--junit FILE``: a case per matrix cell (variant, property), contract check or
trace file (:mod:`deployspec.junit_cases`), judged by the rule the command's exit
status follows, so the report and the status never disagree. This module writes the
report: its format, where it is saved, and the report of a run that was stopped.
(The pytest plugin's ``--junitxml`` names cases by pytest node ids, which are empty
for tests run with ``--pyargs``: pytest's way.)

Text from elsewhere (a trace's names, an implementation's error) may hold
characters XML 1.0 cannot carry at all, even as references; they are written as
Python escapes, as on a terminal.
"""

from __future__ import annotations

import contextlib
import signal
import socket
import sys
import time
import xml.etree.ElementTree as ET
from pathlib import Path

import attrs

from deployspec import __version__
from deployspec.models import UsageError
from deployspec.text import escaped, printable_line

PASSED, FAILURE, ERROR, SKIPPED = "passed", "failure", "error", "skipped"


@attrs.frozen
class Case:
    """One test case: ``message`` is its one-line verdict, ``details`` what a
    reader needs to act on it (a trace, the search's statistics)."""

    classname: str
    name: str
    outcome: str = PASSED
    message: str = ""
    details: str = ""
    seconds: float = 0.0


@attrs.frozen
class Suite:
    name: str
    cases: tuple[Case, ...]
    #: (name, value): what the run was given (contract: the implementation and the
    #: configuration; replay: what the files were replayed on); the version comes first
    properties: tuple[tuple[str, str], ...] = ()


def report(title: str, suites: list[Suite], started: float | None = None, seconds: float | None = None) -> str:
    """The XML document of ``suites``, with the totals each level carries;
    ``started``: when the run began (``time.time()``), its suites' timestamp;
    ``seconds``: how long the run took, the top level's time (a suite's is its cases'
    added up, which with ``--jobs`` is more than the run's wall clock); without it,
    the suites' added up."""
    stamp = time.strftime("%Y-%m-%dT%H:%M:%S", time.localtime(started))
    host = _name(socket.gethostname())  # (Linux allows any byte but NUL in a host name)
    root = ET.Element("testsuites", name=_name(title))
    # (no "skipped" on the root: Jenkins xUnit's junit-10.xsd allows it on testsuite only,
    # and that plugin skips a report its schema refuses)
    totals = {"tests": 0, "failures": 0, "errors": 0}
    added = 0.0
    for suite in suites:
        counts = _counts(suite.cases)
        took = sum(c.seconds for c in suite.cases)
        el = ET.SubElement(root, "testsuite", name=_name(suite.name), timestamp=stamp, hostname=host,
                           time=f"{took:.3f}", **{k: str(v) for k, v in counts.items()})
        props = ET.SubElement(el, "properties")  # the version first: what a verdict was reached with
        for name, value in (("deployspec", __version__), *suite.properties):
            ET.SubElement(props, "property", name=_name(name), value=_name(value))
        for case in suite.cases:
            _case(el, case)
        for k in totals:
            totals[k] += counts[k]
        added += took
    root.attrib.update({k: str(v) for k, v in totals.items()}, time=f"{added if seconds is None else seconds:.3f}")
    ET.indent(root)
    return '<?xml version="1.0" encoding="UTF-8"?>\n' + ET.tostring(root, encoding="unicode") + "\n"


def path_of(named: str | None, *, json_on_stdout: bool = False, out: str | None = None,
            reads: list[str] = ()) -> Path | None:
    """Where ``--junit`` writes its report (:func:`deployspec.outputs.output_path`; in ``out``, the ``--out``
    folder, also before that is made), None without it.
    Not a ``.json`` name: a folder's ``*.json`` files are replayed as traces, and
    a trace saved under ``--out`` would be overwritten by the report. Not standard
    output when ``--json`` prints there: a JSON document followed by XML is neither.
    Not one of the files the run ``reads`` (:func:`read_by`)."""
    if named is None:
        return None
    from deployspec.outputs import json_named, output_path
    from deployspec.streams import is_stdout

    path = output_path(named, "--junit", made=out)
    if json_on_stdout and is_stdout(str(path)):
        raise UsageError(f"--junit {named}: standard output carries --json; write the report to a file")
    why = json_named(path, named)
    if why is not None:
        raise UsageError(f"--junit {named}: {why}, for an XML report (a folder's *.json files are read as "
                         "traces); name it .xml")
    for read in reads:
        if _same_file(path, read):
            raise UsageError(f"--junit {named}: is {read}, which this run reads; name the report another file")
    return path


def read_by(args) -> list[str]:
    """The files a run reads that its report must not be written over (a user's ``--junit``
    named each in turn, and lost it): its ``--incident`` file, its ``--exec`` program (and
    the script an interpreter runs), its ``--python`` object's module and the design
    modules ``DEPLOYSPEC_VARIANTS`` hands in."""
    import os
    import shlex

    from deployspec.variant_plugins import ENV

    found = [args.incident] if getattr(args, "incident", None) else []
    try:
        words = shlex.split(getattr(args, "exec_", None) or "")
    except ValueError:  # (said as the command's own error)
        words = []
    found += [w for w in words[:2] if not w.startswith("-") and os.path.isfile(w)]
    spec = getattr(args, "python", None)
    modules = [spec.split(":", 1)[0]] if spec else []
    modules += [m.strip() for m in os.environ.get(ENV, "").split(",") if m.strip()]
    return found + [f for f in map(_module_file, modules) if f]


def _module_file(name: str) -> str | None:
    """Where module ``name`` would be imported from, or None (not found, or not a file)."""
    import importlib.util

    try:
        spec = importlib.util.find_spec(name)
    except Exception:  # noqa: BLE001 - its import errors are said where it is loaded
        return None
    return spec.origin if spec is not None and spec.has_location else None


def _same_file(path: Path, other: str) -> bool:
    import os

    try:
        return os.path.samefile(path, other)
    except OSError:  # (one of them is not there yet)
        return False


def save(path: Path, named: str, title: str, suites: list[Suite], started: float) -> None:
    """Write the report where :func:`path_of` put it, after the verdicts on stdout
    (should it fail to save: exit 2, the verdicts already said)."""
    from deployspec.outputs import write_output

    global tried
    tried = True
    sys.stdout.flush()
    write_output(path, report(title, suites, started, max(0.0, time.time() - started)), "--junit", named)


#: whether this run wrote its report, or tried to (:func:`save`), and whether it began
#: judging (:func:`saved_if_interrupted`); reset by ``cli.main``: if it did not try, an
#: interruption leaves ``cli`` to write a report saying when it came
tried = began = False


#: why a case was not run, in a run that was stopped: interrupted (Ctrl-C, SIGTERM), or
#: ended by its last resort (a rule or an object that would not let go), which sets
#: ``stopped`` before its report is written; reset by ``cli.main``
INTERRUPTED, ENDED = "the run was interrupted", "the run was ended"
stopped = INTERRUPTED


@contextlib.contextmanager
def saved_if_interrupted(path: Path | None, named: str | None, title: str, so_far, started: float):
    """An interrupted run (Ctrl-C; SIGTERM: a CI job's timeout or cancel) still
    writes its report to ``path`` before the interruption goes on: ``so_far()``,
    the suites of what was judged (the rest skipped), and a suite of one error
    case saying it was stopped, so the report fails as the run did (exit 130) and
    a report of an earlier run is not taken for this one's. A last resort that ends the
    program meanwhile (a rule or an object that will not let go) writes it too, its line
    the error."""
    global began
    from deployspec import interruption
    from deployspec.contract import last_resort

    began = True
    def hook(line: str) -> None:
        _ended(path, named, title, so_far, started, line)

    if path is not None:  # a last resort ends the program too: its line is the report's error
        last_resort.before_end.append(hook)
    try:
        yield
    except KeyboardInterrupt:
        if path is not None:
            try:
                interruption.ending()  # (written whole, whatever signals follow the first, for a while)
                save(path, named, title, [*so_far(), interrupted(title, started)], started)
            except UsageError as exc:  # the interruption stays the news: said, and it goes on
                print(f"deployspec: error: {exc}", file=sys.stderr)
        raise
    finally:
        if hook in last_resort.before_end:
            last_resort.before_end.remove(hook)


def _ended(path: Path, named: str, title: str, so_far, started: float, line: str) -> None:
    """The report of a run its last resort ends: ``line`` its error, the rest skipped as ended."""
    global stopped
    stopped = ENDED
    save(path, named, title, [*so_far(), run_error(title, "ended", f"{line}; what it had not judged is skipped")],
         started)


def interrupted(title: str, started: float, when: str = "what it had not judged is skipped") -> Suite:
    """The suite of one error case saying the run was stopped, by what, after how long."""
    from deployspec import interruption

    signum = interruption.by
    by = "Ctrl-C" if signum in (None, signal.SIGINT) else signal.Signals(signum).name
    seconds = max(0.0, time.time() - started)
    return run_error(title, "interrupted", f"interrupted ({by}) after {seconds:.1f} s; {when}")


def run_error(title: str, name: str, line: str) -> Suite:
    """A suite of one error case: what went wrong with the run as a whole (its cases alone
    would not fail the report as its exit status does)."""
    line = f"{title}: {line}"
    # no time of its own: the run's is the report's top level's
    return Suite(f"{title}: {name}", (Case(title.replace(" ", "."), name, ERROR, line, line),))


def _counts(cases) -> dict[str, int]:
    return {"tests": len(cases),
            "failures": sum(c.outcome == FAILURE for c in cases),
            "errors": sum(c.outcome == ERROR for c in cases),
            "skipped": sum(c.outcome == SKIPPED for c in cases)}


def _case(parent: ET.Element, case: Case) -> None:
    el = ET.SubElement(parent, "testcase", classname=_name(case.classname), name=_name(case.name),
                       time=f"{case.seconds:.3f}")
    if case.outcome == PASSED:  # a pass has no verdict element: its one line leads its output
        said = "\n".join(x for x in (case.message, case.details) if x)
        if said:
            ET.SubElement(el, "system-out").text = _xml(said)
        return
    # one line, as a viewer shows it in a list; the rest in the element's text
    verdict = ET.SubElement(el, case.outcome, message=printable_line(case.message))
    if case.outcome != SKIPPED:
        verdict.set("type", case.outcome)
    if case.details:
        verdict.text = _xml(case.details)


def _xml(text: str) -> str:
    """``text`` with what XML 1.0 cannot hold (control characters, lone surrogates)
    as Python escapes; line breaks and tabs stay."""
    return escaped(text, keep="\n\t")


def _name(text: str) -> str:
    """A name or attribute value: every control character escaped, line breaks too
    (an XML reader turns them into spaces in an attribute)."""
    return escaped(text)
