"""The ``deployspec`` command line.

Exit status: 0 everything checked holds (or a replay no longer reproduces),
1 a property is violated (found or reproduced), 2 usage or input error,
3 the implementation under test failed (``contract``, ``replay --exec/--python``).
"""

from __future__ import annotations

import argparse
import atexit
import json
import os
import sys
from pathlib import Path
from typing import NoReturn

from deployspec.contract import cli as contract_cli
from deployspec.models import UsageError


class _Parser(argparse.ArgumentParser):
    """argparse, but a usage error is one line and exit status 2."""

    def error(self, message: str):  # type: ignore[override]
        raise UsageError(message)


def build_parser() -> argparse.ArgumentParser:
    p = _Parser(prog="deployspec", description="Model-checked specifications of deployment controllers.")
    sub = p.add_subparsers(dest="command", metavar="COMMAND", parser_class=_Parser)

    c = sub.add_parser("check", help="search variants for property violations")
    c.add_argument("--model", help="capi or slots (default: every model)")
    c.add_argument("--variant", action="append", help="a variant (repeatable; default: all)")
    c.add_argument("--property", action="append", metavar="NAME",
                   help="only this property (repeatable; default: every property)")
    c.add_argument("--engine", default="hypothesis",
                   help="hypothesis (default), z3 (the selection rule, symbolically), "
                        "explore (exhaustive, bounded), or all")
    c.add_argument("--budget", type=_seconds, default=None, metavar="SECONDS",
                   help="search time per variant and property (default: hypothesis 2, z3 10, "
                        "explore 120)")
    c.add_argument("--seed", type=_nonneg_int, default=0)
    c.add_argument("--bound", action="append", type=_bound, metavar="NAME=VALUE",
                   help="change one bound of the model configuration (repeatable), e.g. max_deployments=3")
    c.add_argument("--jobs", type=_int_between(1, MAX_JOBS), default=1, metavar="N",
                   help=f"run the searches in N processes (default 1, at most {MAX_JOBS})")
    c.add_argument("--workers", type=_positive_int, default=1, metavar="N",
                   help="split each exhaustive (explore) search over N processes "
                        "(default 1; Linux; not with --jobs)")
    c.add_argument("--out", metavar="DIR", help="save counterexamples here")
    c.add_argument("--json", action="store_true", help="print results as JSON")

    r = sub.add_parser("replay", help="replay trace files")
    r.add_argument("files", nargs="+", metavar="FILE")
    r.add_argument("--variant", help="replay on this variant instead of the recorded one")
    contract_cli.add_replay_options(r, _seconds)

    s = sub.add_parser("show", help="draw a trace file")
    s.add_argument("file", metavar="FILE")
    s.add_argument("--format", default="text", choices=["text", "svg", "html", "itf"],
                   help="text (default), svg (timeline), html (timeline and table), itf (Apalache/Quint JSON)")
    s.add_argument("-o", dest="out", metavar="OUT", help="write here instead of stdout")

    sub.add_parser("variants", help="list the variants and what they declare")
    contract_cli.add_parsers(sub, _seconds, _nonneg_int)
    return p


def _seconds(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a number of seconds: {_quoted(text)}") from None
    if not 0 < value < 86400:
        raise argparse.ArgumentTypeError(f"must be between 0 and 86400 seconds, got {_quoted(text)}")
    return value


def _bound(text: str) -> tuple[str, object]:
    name, sep, value = text.partition("=")
    if not sep or not name:
        raise argparse.ArgumentTypeError(f"expected NAME=VALUE, got {_quoted(text)}")
    try:
        return name, json.loads(value)
    except json.JSONDecodeError:
        raise argparse.ArgumentTypeError(f"{name}: not a JSON value: {_quoted(value)}") from None
    except (ValueError, RecursionError) as exc:  # valid JSON Python cannot hold
        from deployspec.contract.protocol import unreadable

        raise argparse.ArgumentTypeError(f"{name}: {unreadable(exc)}") from None


def _quoted(text: str, limit: int = 60) -> str:
    """``text`` quoted for an error message, cut short: a pasted megabyte stays off the screen."""
    return repr(text) if len(text) <= limit else repr(text[:limit]) + f"... ({len(text)} characters)"


def _int_at_least(least: int):
    def parse(text: str) -> int:
        try:
            value = int(text)
        except ValueError:
            too_long = text.strip().lstrip("+-").isdigit()  # beyond Python's 4,300 digits
            raise argparse.ArgumentTypeError(
                f"too large: {_quoted(text)}" if too_long else f"not an integer: {_quoted(text)}") from None
        if value < least:
            raise argparse.ArgumentTypeError(f"must be >= {least}, got {value}")
        return value

    return parse


def _int_between(least: int, most: int):
    at_least = _int_at_least(least)

    def parse(text: str) -> int:
        value = at_least(text)
        if value > most:
            raise argparse.ArgumentTypeError(f"at most {most}, got {value}")
        return value

    return parse


#: the most search processes (a typo should not start a thousand)
MAX_JOBS = 64
_nonneg_int = _int_at_least(0)
_positive_int = _int_at_least(1)


def main(argv: list[str] | None = None) -> int:
    if sys.stdout is None:  # started with stdout closed: nowhere to write the result
        if sys.stderr is not None:
            print("deployspec: error: standard output is closed", file=sys.stderr)
        return 2
    if sys.stderr is None:
        sys.stderr = open(os.devnull, "w")  # noqa: SIM115 (for the life of the process)
    if hasattr(sys.stdout, "reconfigure"):  # a lone surrogate in a trace's text is escaped, not fatal
        sys.stdout.reconfigure(errors="backslashreplace")
    args = None
    try:
        args = build_parser().parse_args(argv)
        if args.command is None:
            build_parser().print_help()
            return 2
        status = COMMANDS[args.command](args)
        sys.stdout.flush()  # a failure to write the output is this command's failure
        return status
    except UsageError as exc:
        _say(f"error: {exc}")
        return 2
    except KeyboardInterrupt:
        _say("interrupted")
        return 130
    except BrokenPipeError:  # e.g. piped into `head`: stop quietly
        _drop_stdout()
        # a verdict cut short is not a success: the status of a process killed by SIGPIPE
        return CUT_SHORT if getattr(args, "command", None) in VERDICTS else 0
    except MemoryError:  # a search that ended in error: its verdict is unknown
        _say("error: out of memory (tighter bounds, --bound, or a --budget?)")
        return 1
    except OSError as exc:
        if exc.filename is not None:  # a file the command reads or writes
            _say(f"error: {exc.filename}: {exc.strerror or exc}")
            return 2
        _drop_stdout()  # e.g. stdout on a full disk (/dev/full)
        _say(f"error: cannot write the output: {exc.strerror or exc}")
        return 2


#: True in the ``deployspec`` program (``run``), whose process is deployspec's own
#: (not pytest's, nor a user's program calling ``main``)
OWN_PROCESS = False
#: commands whose exit status is a verdict (not only "it worked")
VERDICTS = ("check", "replay", "contract")
#: the exit status of a verdict whose output was cut short (a closed pipe), as SIGPIPE's
CUT_SHORT = 141


def _say(line: str) -> None:
    """``deployspec: LINE`` on stderr: one line, printable, at most 500 characters
    (a message may quote a trace's megabyte-long name); never fails."""
    from deployspec.contract.protocol import printable_line

    try:
        print(f"deployspec: {printable_line(line, 500)}", file=sys.stderr, flush=True)
    except (OSError, ValueError):  # stderr closed or full: the status says it
        pass


def run() -> NoReturn:
    """The ``deployspec`` program: :func:`main`, then leave without freeing each object.

    A large exploration leaves hundreds of MiB of states in its caches; the
    interpreter freed them one by one at exit, 3-4 s after a 12 s search
    (capi-safe at ``max_instances=3``). The exit handlers still run (``atexit``:
    contract implementations are stopped, Hypothesis and logging finish) and the
    streams are flushed; only the freeing is skipped."""
    import deployspec.cli  # noqa: PLW0406 - this module also when it runs as __main__ (-m deployspec.cli)

    deployspec.cli.OWN_PROCESS = True
    status = main()
    _flush()
    atexit._run_exitfuncs()
    _flush()  # what the exit handlers wrote
    os._exit(status)


def _flush() -> None:
    for stream in (sys.stdout, sys.stderr):
        try:
            if stream is not None:
                stream.flush()
        except (OSError, ValueError):  # a closed or broken stream: nothing more to say
            pass


def _drop_stdout() -> None:
    """Point stdout at /dev/null so the interpreter's final flush cannot fail again."""
    try:
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
    except (OSError, ValueError):
        pass


# ---------------------------------------------------------------------------


def cmd_check(args) -> int:
    from deployspec import check
    from deployspec.progress import Progress
    from deployspec.render_text import render
    from deployspec.report import matrix

    engines = list(check.ENGINES) if args.engine == "all" else [args.engine]
    for e in engines:
        check.engine_function(e)
    if args.workers > 1:
        _check_workers(args)
    pairs = check.plan(args.model, args.variant)
    if args.property:
        check.check_property_names(pairs, args.property)
    bounds = dict(args.bound) if args.bound else None
    if bounds:
        for (m, v) in pairs:
            for e in set(engines) | ({"explore"} if args.variant else set()):
                check.configure(m, v, e, bounds)  # bad bounds are a usage error before any search
    if args.out is not None:
        _writable_dir(args.out)
    searches = sum(len(check.selected(m, args.property)) for m, _ in pairs) * len(engines)
    from deployspec.contract.cli import sigterm_interrupts

    # SIGTERM (a CI timeout) stops the searches' processes as Ctrl-C does
    with sigterm_interrupts(holdout="a search"), Progress(total=searches) as progress:
        # one variant at a time is a close look: every way a property breaks, each
        # shrunk on its own; the matrix over all variants only needs the verdicts
        results = check.run(pairs, engines, budget=args.budget, seed=args.seed, out_dir=args.out,
                            on_start=progress.start, on_result=progress.done, bounds=bounds,
                            distinct=bool(args.variant), jobs=args.jobs, workers=args.workers,
                            properties=args.property, on_progress=progress.searching)
    if args.json:
        print(json.dumps({"results": [r.to_json() for r in results]}, indent=1))
    elif args.variant:
        _print_statistics(results)
        violated = [r for r in results if r.verdict == "violated"]
        shown = [r for r in violated if _shortest_of_its_cause(r, results)]
        shown_ids = {id(r) for r in shown}
        for r in results:
            if id(r) in shown_ids:
                print(render(r.trace))
                print(f"saved: {r.counterexample}" if r.counterexample else
                      "(use --out DIR to save this counterexample)")
                print()
            elif r.engine == "z3" and r.message and r.verdict not in ("n/a", "violated"):
                print(f"{r.variant} / {r.property} (z3): {r.verdict}: {r.message}")  # bounded proofs, unconfirmed
        on_screen = {r.counterexample for r in shown}
        hidden = list(dict.fromkeys(r.counterexample for r in violated
                                    if r.counterexample and r.counterexample not in on_screen))
        if hidden:
            print(f"also saved (a longer trace of a cause shown above): {', '.join(hidden)}")
        for r in results:
            if "other_causes" in r.stats:
                causes = sorted({o.cause for o in results if (o.variant, o.property) == (r.variant, r.property)
                                 and o.cause})
                print(f"{r.variant} / {r.property}: causes found {', '.join(causes)}; any other "
                      f"({r.engine}): {r.stats['other_causes']}")
        print(matrix(results, declared=False))
    else:
        _print_statistics(results)
        print(matrix(results, declared=True))
    if args.variant:  # a search that ended in error decided nothing: not a success
        return 1 if any(r.verdict in ("violated", "error") for r in results) else 0
    ok = check.matches_declarations(results)
    if not args.json:
        print("every variant shows exactly the violations it declares" if ok else
              "MISMATCH: some verdicts differ from what the variants declare (marked !)")
    return 0 if ok else 1


def _check_workers(args) -> None:
    from deployspec import partitioned

    if args.jobs > 1:
        raise UsageError("--workers and --jobs both start processes: use one of them "
                         "(--jobs for many searches, --workers for one large search)")
    if args.workers > partitioned.MAX_WORKERS:
        raise UsageError(f"--workers: at most {partitioned.MAX_WORKERS}, got {args.workers}")
    if not partitioned.available():
        raise UsageError("--workers needs Linux (the search forks its workers)")


def _shortest_of_its_cause(r, results) -> bool:
    """Whether ``r`` is the trace to show for its (variant, property, cause): the
    shortest one any engine found (the first of equals); without a cause, each."""
    if r.cause is None:
        return True
    same = [o for o in results if o.verdict == "violated" and (o.variant, o.property, o.cause)
            == (r.variant, r.property, r.cause)]
    return min(same, key=lambda o: o.trace_length) is r


def _print_statistics(results) -> None:
    """What an exhaustive search saw (states, coverage), for engines that report it."""
    from deployspec.engines.explore import summary

    for r in results:
        if r.engine == "explore":
            print(summary(r))
    if any(r.engine == "explore" for r in results):
        print()


def cmd_replay(args) -> int:
    from deployspec import traces
    from deployspec.contract.guard import ImplementationFault
    from deployspec.replay import replay

    loaded = [(f, traces.load(f)) for f in args.files]  # validate all before running any
    worst = 0
    try:
        conn = contract_cli.open_for_replay(args, loaded)  # None unless --exec/--python
    except ImplementationFault as fault:
        print(f"deployspec: {fault.line()}", file=sys.stderr)
        return 3
    with contract_cli.sigterm_interrupts(conn is not None):
        try:
            for path, trace in loaded:
                try:
                    outcome = _replay_one(replay, trace, args, conn)
                except ImplementationFault as fault:
                    print(f"deployspec: {path}: {fault.line()}", file=sys.stderr)
                    return 3
                worst = max(worst, _report_replay(path, trace, outcome))
        finally:
            if conn is not None:
                conn.close()
    return worst


def _replay_one(replay, trace, args, conn):
    if conn is None:
        return replay(trace, variant=args.variant)
    return replay(trace, adapter=conn.adapter(trace["property"]), target=conn.target.describe())


def _report_replay(path, trace, outcome) -> int:
    if outcome.reproduced:
        v = outcome.violation
        how = f" (cause {v.cause})" if v.cause else ""
        recorded = trace["violation"].get("cause")
        if recorded and v.cause != recorded:
            how += f", not the recorded cause {recorded}"
        print(f"{path}: reproduces on {outcome.target}: {v.property} at step {v.step}{how}: {v.message}")
        return 1
    rejected = sum(1 for s in outcome.session.steps if s["rejected"])
    extra = f" ({rejected} action(s) rejected and skipped)" if rejected else ""
    print(f"{path}: does not reproduce on {outcome.target}: {trace['property']} holds{extra}")
    return 0


def cmd_show(args) -> int:
    from deployspec import traces
    from deployspec.render_text import render

    trace = traces.load(args.file)
    if args.format == "svg":
        from deployspec.render_svg import render as render_svg

        text = render_svg(trace)
    elif args.format == "html":
        from deployspec.render_html import render as render_html

        text = render_html(trace)
    elif args.format == "itf":
        from deployspec.render_itf import render as render_itf

        text = json.dumps(render_itf(trace, source=str(args.file)), indent=1) + "\n"
    else:
        text = render(trace) + "\n"
    if args.format == "text":  # a trace's texts are anyone's: no terminal escapes reach the screen
        text = "".join(c if c.isprintable() or c == "\n" else repr(c)[1:-1] for c in text)
    if args.out is not None:
        _atomic_write(Path(args.out), text, args.file)
    else:
        sys.stdout.write(text)
    return 0


def cmd_variants(args) -> int:
    from deployspec.report import variants_table

    print(variants_table())
    return 0


COMMANDS = {"check": cmd_check, "replay": cmd_replay, "show": cmd_show, "variants": cmd_variants,
            "contract": contract_cli.cmd_contract, "serve": contract_cli.cmd_serve}


def _writable_dir(path: str) -> None:
    if not path:
        raise UsageError("--out: empty (give a directory, or leave --out out to save nothing)")
    p = Path(path)
    if p.exists() and not p.is_dir():
        raise UsageError(f"--out {path}: exists and is not a directory")
    try:
        p.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise UsageError(f"--out {path}: cannot create: {exc.strerror}") from None
    from deployspec.files import check_writable_dir

    try:  # now, not after a search that found something to save
        check_writable_dir(p)
    except OSError as exc:
        raise UsageError(f"--out {path}: cannot write there: {exc.strerror or exc}") from None


def _atomic_write(path: Path, text: str, source: str) -> None:
    from deployspec.files import write_atomically

    if not str(path) or str(path) == ".":
        raise UsageError("-o: empty (give a file name, or leave -o out to write to stdout)")
    if path.is_dir():
        raise UsageError(f"-o {path}: is a directory")
    if path.exists() and path.samefile(source):
        raise UsageError(f"-o {path}: is the trace being shown; write the picture elsewhere")
    try:
        if path.exists() and not path.resolve().is_file():
            # a device, a FIFO (/dev/stdout, a named pipe): written to, never replaced by a file
            with open(path, "w", encoding="utf-8", errors="backslashreplace") as f:
                f.write(text)
        else:  # through a symlink to the file it names: the link stays a link
            write_atomically(path.resolve() if path.is_symlink() else path, text)
    except OSError as exc:
        raise UsageError(f"-o {path}: cannot write: {exc.strerror or exc}") from None
    except RuntimeError as exc:  # pathlib's "Symlink loop" (Python 3.11)
        raise UsageError(f"-o {path}: cannot write: {exc}") from None


if __name__ == "__main__":  # pragma: no cover
    run()
