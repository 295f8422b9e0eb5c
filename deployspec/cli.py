"""The ``deployspec`` program: its arguments and exit statuses (the commands
themselves are :mod:`deployspec.commands`, :mod:`deployspec.replay_command` and
:mod:`deployspec.contract.cli`; the
signals that stop a run :mod:`deployspec.interruption`; the standard streams
:mod:`deployspec.streams`).

Exit status: 0 everything checked holds (or a replay no longer reproduces),
1 a property is violated (found or reproduced) or a search ended in error,
2 usage or input error, 3 the implementation under test failed (``contract``,
``replay --exec/--python``), 130 interrupted, 141 a verdict's output cut short
by a closed pipe.
"""

from __future__ import annotations

import argparse
import atexit
import contextlib
import errno
import functools
import os
import shlex
import signal
import sys
import time
from typing import NoReturn

from deployspec import (
    commands,
    interruption,
    replay_command,
    replay_selection,
    show_command,
    streams,
)
from deployspec import junit as junit_xml
from deployspec.argtypes import bound, int_between, nonneg_int, positive_int, seconds
from deployspec.contract import cli as contract_cli
from deployspec.contract import serve_command
from deployspec.files import OUT_OF_FILES
from deployspec.models import UsageError
from deployspec.outputs import writable_dir
from deployspec.text import ESCAPE


class _Once(argparse._StoreAction):
    """An option that takes one value, given twice with two: which was meant is a guess.
    argparse keeps the last (``--model capi --model slots --property X`` then said slots
    has no X), a CI line composed of defaults and overrides would search what nobody
    read; refused as ``--bound`` given twice is. The same value twice is no conflict.
    The message quotes both as typed (``--budget 2 --budget 3``: 2 and 3, not the floats
    read), so the conversion notes the text it was given."""

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.typed = None
        if callable(self.type) and self.nargs is None:  # one text, one value
            convert = self.type

            @functools.wraps(convert)  # argparse names the type in its error by __name__
            def noting_text(text):
                self.typed = text
                return convert(text)

            self.type = noting_text

    def __call__(self, parser, namespace, values, option_string=None):
        given = namespace.__dict__.setdefault("_given_once", {})
        typed = values if self.typed is None else self.typed
        if self.dest in given and given[self.dest][0] != values:
            parser.error(f"argument {'/'.join(self.option_strings)}: given twice "  # (quoted: "" or "a b" read as given)
                         f"({shlex.quote(str(given[self.dest][1]))} and {shlex.quote(str(typed))})")
        given[self.dest] = (values, typed)
        setattr(namespace, self.dest, values)


class _Parser(argparse.ArgumentParser):
    """argparse, but a usage error is one line and exit status 2, and an option of one
    value is given once (:class:`_Once`)."""

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        for name in (None, "store"):  # (groups share the registry: options in them too)
            self.register("action", name, _Once)

    def parse_args(self, args=None, namespace=None):  # type: ignore[override]
        """As argparse's, but ``show a.json -o x.svg b.json`` (FILE ends at the option, so
        b.json was "unrecognized") hands b.json to show, which says it draws one trace."""
        ns, extra = self.parse_known_args(args, namespace)
        if extra and getattr(ns, "command", None) == "show" and not any(
                a.startswith("-") and a != "-" for a in extra):
            ns.file = [*ns.file, *extra]
        elif extra:
            self.error(f"unrecognized arguments: {' '.join(extra)}")
        return ns

    def error(self, message: str):  # type: ignore[override]
        raise UsageError(message)

    def _print_message(self, message: str, file=None) -> None:
        """The help, written or failing as any output does (argparse drops a failed write:
        ``--help > /dev/full`` said nothing and exited 0)."""
        if message:
            (file or sys.stderr).write(message)


def build_parser() -> argparse.ArgumentParser:
    p = _Parser(prog="deployspec", description="Model-checked specifications of deployment controllers.")
    p.add_argument("--version", action="version", version=f"deployspec {_version()}",
                   help="print the version (what a CI log should record beside a verdict) and exit")
    sub = p.add_subparsers(dest="command", metavar="COMMAND", parser_class=_Parser)

    c = sub.add_parser(
        "check", help="search variants for property violations",
        description="Search variants for property violations. Exit status: 0 every variant shows exactly the "
                    "violations it declares (with --variant: nothing is violated), 1 a verdict differs from "
                    "what its variant declares (with --variant: a property is violated) or a search ended in "
                    "error, 2 usage error, nothing judged, or a counterexample --out could not save, 130 "
                    "interrupted (docs/ci.md).")
    c.add_argument("--model", help="capi or slots (default: every model)")
    c.add_argument("--variant", action="append",
                   help="a variant (repeatable): a close look, every way each property breaks, exit 1 "
                        "if any does; default: every variant, exit 1 only where a verdict differs "
                        "from what the variant declares (deployspec variants)")
    c.add_argument("--property", action="append", metavar="NAME",
                   help="only this property (repeatable; a name given twice is checked once; default: every property)")
    c.add_argument("--engine", default=None,
                   help="hypothesis (default), z3 (the selection rule, symbolically), "
                        "explore (exhaustive, bounded), or all")
    c.add_argument("--budget", type=seconds, default=None, metavar="SECONDS",
                   help="time of each search (default: hypothesis 2, z3 10, explore 120; with "
                        "--variant, each search for a further cause: hypothesis 10, explore 5; "
                        "shrinking a violation found comes on top). With --variant a property gets "
                        "the random search, then the explorer, each with this budget, and a search "
                        "per further cause found")
    c.add_argument("--seed", type=nonneg_int, default=0,
                   help="seed of the random (Hypothesis) search (default 0)")
    c.add_argument("--bound", action="append", type=bound, metavar="NAME=VALUE",
                   help="change one bound of the model configuration (repeatable; VALUE is JSON), "
                        "e.g. max_deployments=3 or 'max_in_flight=[1,2]'; a wrong NAME lists the names")
    c.add_argument("--jobs", type=int_between(1, MAX_JOBS), default=1, metavar="N",
                   help=f"run the searches in N processes (default 1, at most {MAX_JOBS})")
    c.add_argument("--workers", type=positive_int, default=1, metavar="N",
                   help="split each exhaustive (explore) search over N processes "
                        "(default 1; Linux; not with --jobs)")
    c.add_argument("--memory", type=int_between(64, MAX_MEMORY_MIB), default=None, metavar="MIB",
                   help="the process's resident memory (MiB) at which each exhaustive search stops, "
                        "incomplete, and says what it explored; what earlier searches of the run left "
                        "counts (default 3072; with --workers, shared among them; with --jobs, each "
                        "process's own)")
    c.add_argument("--incident", metavar="FILE",
                   help="only the runs that take this file's actions in order (one per line, as show "
                        "prints them: push(instances=2), deploy(), cancel(); 'settle' where the platform "
                        "came to rest), with every interleaving of the platform's actions between them: "
                        "an exhaustive search of each --variant (docs/incidents.md)")
    c.add_argument("--declared", action="store_true",
                   help="judge the --variant designs as the matrix does, against what each declares (exit 1 "
                        "only where a verdict differs): a CI gate of one's own design without the shipped "
                        "ones; with --incident, a violation the design declares is expected (exit 0 for it)")
    c.add_argument("--out", metavar="DIR", help="save counterexamples here")
    c.add_argument("--json", action="store_true", help="print results as JSON")
    c.add_argument("--junit", metavar="FILE",
                   help="also write a JUnit XML report (for a CI's test view): a case per variant "
                        "and property, failed where the exit status counts it")

    r = sub.add_parser(
        "replay", help="replay trace files",
        description="Replay trace files on their recorded variant, another variant, or an implementation. Exit "
                    "status: 0 no file reproduces (with --declared: none but as the design declares), 1 some "
                    "file reproduces (an implementation's fault trace: the check breaks), 2 usage error, a trace that cannot be read, or a replay --out could not "
                    "save, 3 the implementation failed (its fault came back), 130 interrupted (docs/ci.md).")
    r.add_argument("files", nargs="+", metavar="FILE",
                   help="trace files, or folders whose *.json files (in subfolders too) are replayed; - reads one "
                        "trace from standard input")
    r.add_argument("--variant", help="replay on this variant instead of the recorded one; a folder then "
                                     "stands for its traces of the variant's model (the others are left "
                                     "out, said on stderr)")
    r.add_argument("--bound", action="append", type=bound, metavar="NAME=VALUE",
                   help="change one bound of the configuration replayed with (repeatable; VALUE is JSON), "
                        "e.g. start=empty: a trace found from one start, replayed from another")
    r.add_argument("--property", action="append", metavar="NAME",
                   help="judge each file's steps by this property instead of the one it records (repeatable; "
                        "all: every property of its model): do these steps break anything on the design? "
                        "Exit 1 if any is violated")
    r.add_argument("--declared", action="store_true",
                   help="a violation of a property the design replayed on declares it violates is expected: "
                        "said so, and exit 0 for it (a CI gate of a design that inherits known violations)")
    r.add_argument("--out", metavar="DIR",
                   help="save the replay of each file that reproduces as a trace of the design replayed on "
                        "(to draw a finding on your design: deployspec show FILE)")
    contract_cli.add_replay_options(r)
    r.add_argument("--json", action="store_true",
                   help="print the verdicts as one JSON document (each file's line goes to stderr)")
    r.add_argument("--junit", metavar="FILE",
                   help="also write a JUnit XML report (for a CI's test view): a case per file, "
                        "failed if it reproduces")

    s = sub.add_parser("show", help="draw a trace file")
    s.add_argument("file", metavar="FILE", nargs="+", help="the trace file (- reads it from standard input)")
    # (one: more are refused by name, not as "unrecognized arguments")
    s.add_argument("--format", choices=["text", "svg", "html", "itf"],
                   help="text, svg (timeline), html (timeline and table), itf (Apalache/Quint JSON); "
                        "default: as -o's name ends (.svg, .html, .itf.json or .itf), else text")
    s.add_argument("-o", dest="out", metavar="OUT", help="write here instead of stdout")
    # FILE takes more only to refuse them by name; the usage says one
    s.usage = " ".join(s.format_usage().removeprefix("usage: ").replace(" [FILE ...]", "").split())

    v = sub.add_parser("variants", help="list the variants and what they declare")
    v.add_argument("--json", action="store_true", help="the same as JSON, for scripts")
    contract_cli.add_parsers(sub)
    return p


def _version() -> str:
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("deployspec")
    except PackageNotFoundError:  # run from a source tree that was never installed
        return "unknown (not installed)"


#: the most search processes (a typo should not start a thousand)
MAX_JOBS = 64
#: the largest --memory (MiB): 16 TiB, beyond any machine's memory (a typo of units should say so)
MAX_MEMORY_MIB = 16 * 2**20
#: pytest's --deployspec-examples (contract's --examples is held to its most after parsing)
examples_count = int_between(1, contract_cli.MAX_EXAMPLES)


def main(argv: list[str] | None = None) -> int:
    interruption.by = None
    interruption.ENDING, interruption.ENDING_AT = False, None
    if not _streams_ready(argv):
        return 2
    args = None
    started = interruption.HELD[2] if interruption.HELD is not None else time.time()
    junit_xml.tried = junit_xml.began = False
    junit_xml.stopped = junit_xml.INTERRUPTED
    try:
        args = build_parser().parse_args(argv)
        held = interruption.take_over_signals()
        if held == signal.SIGTERM and args.command == "serve":
            return 0  # a server's normal stop (``serve``'s own), before it served
        if held is not None:
            interruption.interrupt(held)
        if args.command is None:  # one line, as for any other usage error (--help shows them all)
            raise UsageError(f"name a command: {', '.join(COMMANDS)} (deployspec --help says what each does)")
        with streams.document_only() if getattr(args, "json", False) else contextlib.nullcontext(), \
                streams.outlasting() if getattr(args, "junit", None) else contextlib.nullcontext() as out:
            status = COMMANDS[args.command](args)
            sys.stdout.flush()  # a failure to write the output is this command's failure
        if out is not None and out.cut:  # the report was written; the display was cut short (the
            return CUT_SHORT  # stream already writes to /dev/null: sys.stdout may be a lender on fd 2 now)
        return status
    except UsageError as exc:
        _say(f"error: {exc}")
        return 2
    except KeyboardInterrupt:
        interruption.ENDING = True  # (before any call: a signal from here on waits, for a while)
        interruption.ending()
        _say("interrupted")
        try:
            _report_interrupted_start(args, started)
        except KeyboardInterrupt:  # a signal after the grace: stopped, already said
            pass
        if not interruption.OWN_PROCESS and not interruption.handed_back():
            raise
        return 130
    except BrokenPipeError:  # e.g. piped into `head`: stop quietly
        streams.drop_stdout()
        # a verdict cut short is not a success: the status of a process killed by SIGPIPE
        return CUT_SHORT if getattr(args, "command", None) in VERDICTS else 0
    except OSError as exc:
        return _os_error(exc, args)
    except (MemoryError, SystemError) as exc:  # a search that ended in error: its verdict is unknown
        return _out_of_memory(args, exc)


def _streams_ready(argv: list[str] | None) -> bool:
    """Standard output and error made usable: a closed one replaced by the null device
    (stdout only where the command writes its result elsewhere: False, said, if not),
    and a lone surrogate in any text (a trace's, a file name) escaped rather than fatal."""
    streams.CLOSED_AT_START = {name for name, stream in (("stdout", sys.stdout), ("stderr", sys.stderr)) if stream is None}
    if sys.stderr is None:
        sys.stderr = open(os.devnull, "w")  # noqa: SIM115 (for the life of the process)
    if sys.stdout is None:  # started with stdout closed
        if not _writes_elsewhere(argv):  # nowhere to write the result
            _say("error: standard output is closed")
            return False
        sys.stdout = open(os.devnull, "w")  # noqa: SIM115 (for the life of the process)
    for stream in (sys.stdout, sys.stderr):
        if hasattr(stream, "reconfigure"):
            stream.reconfigure(errors=ESCAPE)
    return True


def _os_error(exc: OSError, args) -> int:
    """The status (and one line) of a command the system refused something: memory, files
    open, a file it reads or writes, the current folder, or the output itself."""
    if exc.errno == errno.ENOMEM:  # a fork or a mapping refused: as MemoryError
        return _out_of_memory(args, MemoryError())
    if exc.errno in OUT_OF_FILES:  # this machine's limits, not the output nor a file
        fewer = [f"fewer {o}" for o in ("--jobs", "--workers") if (getattr(args, o[2:], 1) or 1) > 1]
        _say(f"error: out of system resources: {exc.strerror or exc} ({', or '.join(['ulimit -n', *fewer])}?)")
        return 2
    if exc.filename is not None:  # a file the command reads or writes
        _say(f"error: {exc.filename}: {exc.strerror or exc}")
        return 2
    if isinstance(exc, FileNotFoundError) and not _cwd_exists():  # (Hypothesis asks at import)
        _say("error: the current folder no longer exists (deleted?): cd to one that does")
        return 2
    streams.drop_stdout()  # e.g. stdout on a full disk (/dev/full)
    _say(f"error: cannot write the output: {exc.strerror or exc}")
    return 2


def _report_interrupted_start(args, started: float) -> None:
    """``--junit``'s report of a command interrupted before it got as far as writing its
    own (while it loaded its engines, planned, or read its traces): one error case saying
    so, as the run's status does. Never written over a trace the command was to replay."""
    named = getattr(args, "junit", None)
    if named is None or junit_xml.tried:
        return
    title = f"deployspec {args.command}"
    when = "before its report was written" if junit_xml.began else "before it judged anything"
    try:
        path = junit_xml.path_of(named, json_on_stdout=bool(getattr(args, "json", False)),
                                 out=getattr(args, "out", None), reads=junit_xml.read_by(args))
        if getattr(args, "files", None) and replay_selection.is_a_trace(path, replay_selection.trace_files(args.files)):
            raise UsageError(f"--junit {named}: is a trace being replayed; no report written")
        out = getattr(args, "out", None)
        if out and not path.parent.is_dir():  # in the --out folder, which the command had yet to make
            writable_dir(out, path)
        junit_xml.save(path, named, title, [junit_xml.interrupted(title, started, when)], started)
    except UsageError as exc:  # the interruption stays the news
        _say(f"error: {exc}")
    except OSError as exc:
        _say(f"error: {getattr(exc, 'filename', None) or named}: {exc.strerror or exc}")


def _cwd_exists() -> bool:
    try:
        os.getcwd()
    except FileNotFoundError:
        return False
    return True


def _out_of_memory(args, exc: BaseException) -> int:
    """Status 1: a search that ended in error decided nothing. SystemError: CPython's own
    calls failing without an exception, seen when a memory limit (ulimit -v) is reached
    outside an allocation that raises MemoryError."""
    searched = getattr(args, "command", None) in ("check", "contract")
    what = "out of memory" if isinstance(exc, MemoryError) else f"the interpreter failed ({exc}; out of memory?)"
    _say(f"error: {what}" + (" (tighter bounds, --bound, or a --budget?)" if searched else ""))
    return 1


def _writes_elsewhere(argv: list[str] | None) -> bool:
    """Whether the command line needs no stdout: ``show … -o FILE`` writes its
    drawing there (and a usage error is said on stderr)."""
    import contextlib
    import io

    try:
        with contextlib.redirect_stderr(io.StringIO()):  # said once, below
            args = build_parser().parse_args(argv)
    except UsageError:  # said on stderr when the line is parsed again
        return True
    except SystemExit:  # --help: its text is for stdout
        return False
    return args.command == "show" and bool(args.out)  # (-o /dev/stdout: closed_stream_named)


#: commands whose exit status is a verdict (not only "it worked")
VERDICTS = ("check", "replay", "contract")
#: the exit status of a verdict whose output was cut short (a closed pipe), as SIGPIPE's
CUT_SHORT = 141


def _say(line: str) -> None:
    """``deployspec: LINE`` on stderr: one line, printable, at most 500 characters
    (a message may quote a trace's megabyte-long name), cut in the middle so that the
    reason after the name stays; never fails."""
    from deployspec.text import printable_line

    try:
        print(f"deployspec: {printable_line(line, 500, both_ends=True)}", file=sys.stderr, flush=True)
    except (OSError, ValueError):  # stderr closed or full: the status says it
        pass


def run(held: list[int] | None = None, entry: dict | None = None, started: float | None = None) -> NoReturn:
    """The ``deployspec`` program: :func:`main`, then leave without freeing each object.

    ``held``: the signals :mod:`deployspec.program` held while this module loaded,
    ``entry`` the handlers it found (SIGTERM, SIGINT; one ignored on entry is not
    there); :func:`main` takes them over once the arguments are read. ``started``:
    when the program started (the time an interrupted run's report counts from).

    A large exploration leaves hundreds of MiB of states in its caches; the
    interpreter freed them one by one at exit, 3-4 s after a 12 s search
    (capi-safe at ``max_instances=3``). The exit handlers still run (``atexit``:
    contract implementations are stopped, Hypothesis and logging finish) and the
    streams are flushed; only the freeing is skipped."""
    interruption.OWN_PROCESS = True
    if entry is None:  # started otherwise (-m deployspec.cli): nothing was held
        entry = {sig: signal.getsignal(sig) for sig in (signal.SIGTERM, signal.SIGINT)
                 if signal.getsignal(sig) is not signal.SIG_IGN}
    interruption.HELD = (held if held is not None else [], entry, started or time.time())
    made_blocking = streams.blocking_streams()
    try:
        status = main()
    except SystemExit as exc:  # argparse's --help: its text may not have reached stdout yet
        status = exc.code if isinstance(exc.code, int) else 2
        status = _help_written(status)
    except KeyboardInterrupt:  # a signal as main returned, or after the grace (its own was said)
        interruption.ENDING = True  # (before any call: the handlers in force are patient from here on)
        interruption.ending()
        status = 130
    try:
        interruption.exit_handlers_taken(entry)
    except KeyboardInterrupt:  # a signal as the handlers were replaced: the run ends on it
        interruption.ENDING = True
        interruption.ending()
        status = 130
        interruption.exit_handlers_taken(entry)
    if interruption.HELD is not None and interruption.HELD[0]:  # held while a command line was refused, or --help
        _say("interrupted")
        status = 130
    streams.flush()
    atexit._run_exitfuncs()
    streams.flush()  # what the exit handlers wrote
    for fd in made_blocking:  # the parent's, as it left them
        streams.set_blocking(fd, False)
    os._exit(status)


def _help_written(status: int) -> int:
    """``status``, or 2 when the help text could not be written (stdout on a full disk),
    as for any other output; a closed pipe (``--help | head -1``) is no error."""
    try:
        sys.stdout.flush()
    except BrokenPipeError:
        streams.drop_stdout()
    except (OSError, ValueError) as exc:
        streams.drop_stdout()
        _say(f"error: cannot write the output: {getattr(exc, 'strerror', None) or exc}")
        return 2
    return status


# ---------------------------------------------------------------------------


COMMANDS = {"check": commands.cmd_check, "replay": replay_command.cmd_replay, "show": show_command.cmd_show,
            "variants": commands.cmd_variants, "contract": contract_cli.cmd_contract,
            "serve": serve_command.cmd_serve}


if __name__ == "__main__":  # pragma: no cover
    run()
