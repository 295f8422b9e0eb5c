"""The ``deployspec`` command line.

Exit status: 0 everything checked holds (or a replay no longer reproduces),
1 a property is violated (found or reproduced), 2 usage or input error.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from deployspec.models import UsageError


class _Parser(argparse.ArgumentParser):
    """argparse, but a usage error is one line and exit status 2."""

    def error(self, message: str):  # type: ignore[override]
        raise UsageError(message)


def build_parser() -> argparse.ArgumentParser:
    p = _Parser(prog="deployspec", description="Model-checked specifications of deployment controllers.")
    sub = p.add_subparsers(dest="command", metavar="COMMAND", parser_class=_Parser)

    c = sub.add_parser("check", help="search variants for property violations")
    c.add_argument("--model", help="capi (default: every model)")
    c.add_argument("--variant", action="append", help="a variant (repeatable; default: all)")
    c.add_argument("--engine", default="hypothesis", help="hypothesis (default), or all")
    c.add_argument("--budget", type=_seconds, default=2.0, metavar="SECONDS",
                   help="search time per variant and property (default 2)")
    c.add_argument("--seed", type=_nonneg_int, default=0)
    c.add_argument("--out", metavar="DIR", help="save counterexamples here")
    c.add_argument("--config", type=_json_object, metavar="JSON",
                   help="override the model's bounds, e.g. '{\"max_deployments\": 1}'")
    c.add_argument("--json", action="store_true", help="print results as JSON")

    r = sub.add_parser("replay", help="replay trace files")
    r.add_argument("files", nargs="+", metavar="FILE")
    r.add_argument("--variant", help="replay on this variant instead of the recorded one")

    s = sub.add_parser("show", help="draw a trace file")
    s.add_argument("file", metavar="FILE")
    s.add_argument("--format", default="text", choices=["text"])
    s.add_argument("-o", dest="out", metavar="OUT", help="write here instead of stdout")

    sub.add_parser("variants", help="list the variants and what they declare")
    return p


def _seconds(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a number of seconds: {text!r}") from None
    if not 0 < value < 86400:
        raise argparse.ArgumentTypeError(f"budget must be between 0 and 86400 seconds, got {text}")
    return value


def _nonneg_int(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not an integer: {text!r}") from None
    if value < 0:
        raise argparse.ArgumentTypeError(f"must be >= 0, got {value}")
    return value


def _json_object(text: str) -> dict:
    try:
        value = json.loads(text)
    except json.JSONDecodeError as exc:
        raise argparse.ArgumentTypeError(f"not JSON: {exc.msg}") from None
    if not isinstance(value, dict):
        raise argparse.ArgumentTypeError("must be a JSON object")
    return value


def main(argv: list[str] | None = None) -> int:
    try:
        args = build_parser().parse_args(argv)
        if args.command is None:
            build_parser().print_help()
            return 2
        return COMMANDS[args.command](args)
    except UsageError as exc:
        print(f"deployspec: error: {exc}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("deployspec: interrupted", file=sys.stderr)
        return 130


# ---------------------------------------------------------------------------


def cmd_check(args) -> int:
    from deployspec import check
    from deployspec.progress import Progress
    from deployspec.render_text import render
    from deployspec.report import matrix

    engines = list(check.ENGINES) if args.engine == "all" else [args.engine]
    for e in engines:
        check.engine_function(e)
    pairs = check.plan(args.model, args.variant)
    configs = check.configs(pairs, args.config)
    if args.out:
        _writable_dir(args.out)
    with Progress(total=sum(len(m.properties) for m, _ in pairs) * len(engines)) as progress:
        results = check.run(pairs, engines, budget=args.budget, seed=args.seed, out_dir=args.out,
                            on_start=progress.start, on_result=progress.done, configs=configs)
    if args.json:
        print(json.dumps({"results": [r.to_json() for r in results]}, indent=1))
    elif args.variant:
        for r in results:
            if r.verdict == "violated":
                print(render(r.trace))
                print(f"saved: {r.counterexample}" if r.counterexample else
                      "(use --out DIR to save this counterexample)")
                print()
        print(matrix(results, declared=False))
    else:
        print(matrix(results, declared=True))
    if args.variant:
        return 1 if any(r.verdict == "violated" for r in results) else 0
    ok = check.matches_declarations(results)
    if not args.json:
        print("every variant shows exactly the violations it declares" if ok else
              "MISMATCH: some verdicts differ from what the variants declare (marked !)")
    return 0 if ok else 1


def cmd_replay(args) -> int:
    from deployspec import traces
    from deployspec.replay import replay

    loaded = [(f, traces.load(f)) for f in args.files]  # validate all before running any
    worst = 0
    for path, trace in loaded:
        outcome = replay(trace, variant=args.variant)
        where = f"{outcome.target}"
        if outcome.reproduced:
            v = outcome.violation
            print(f"{path}: reproduces on {where}: {v.property} at step {v.step}: {v.message}")
            worst = 1
        else:
            rejected = sum(1 for s in outcome.session.steps if s["rejected"])
            extra = f" ({rejected} action(s) rejected and skipped)" if rejected else ""
            print(f"{path}: does not reproduce on {where}: {trace['property']} holds{extra}")
    return worst


def cmd_show(args) -> int:
    from deployspec import traces
    from deployspec.render_text import render

    trace = traces.load(args.file)
    text = render(trace) + "\n"
    if args.out:
        _atomic_write(Path(args.out), text)
    else:
        sys.stdout.write(text)
    return 0


def cmd_variants(args) -> int:
    from deployspec.report import variants_table

    print(variants_table())
    return 0


COMMANDS = {"check": cmd_check, "replay": cmd_replay, "show": cmd_show, "variants": cmd_variants}


def _writable_dir(path: str) -> None:
    p = Path(path)
    if p.exists() and not p.is_dir():
        raise UsageError(f"--out {path}: exists and is not a directory")
    try:
        p.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise UsageError(f"--out {path}: cannot create: {exc.strerror}") from None


def _atomic_write(path: Path, text: str) -> None:
    import os
    import tempfile

    if path.is_dir():
        raise UsageError(f"-o {path}: is a directory")
    try:
        fd, tmp = tempfile.mkstemp(prefix=".tmp-", dir=path.parent or ".")
    except OSError as exc:
        raise UsageError(f"-o {path}: cannot write: {exc.strerror}") from None
    with os.fdopen(fd, "w") as f:
        f.write(text)
    os.replace(tmp, path)


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
