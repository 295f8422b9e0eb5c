"""Which traces a ``replay`` takes: the files named (a folder for its ``*.json``), then
with ``--variant`` those of that design's model, with ``--property`` each file once per
property its model has. A file named on its own is replayed or refused, never left out;
a folder with nothing taken is refused; a folder's files of another model are left out,
and said so."""

from __future__ import annotations

import os
import sys
from pathlib import Path

from deployspec.files import TEMPORARY
from deployspec.models import UsageError, did_you_mean, get_model
from deployspec.text import escaped, first_few, quoted


def judged_by(names: list[str] | None, loaded: list, given: list[str] = ()) -> tuple[list, list]:
    """With ``--property``: each file once per property named (``all``: every property of
    its model), in that order; a file judged by another property than it records keeps
    that one as ``recorded_property`` (its recorded step and cause are not compared). An
    operator's replay of an incident's steps said "does not reproduce" of the recorded
    property while the same steps took the app down: only the recorded one was judged.
    Also the files left out: those of a folder (of ``given``) whose model has none of the
    properties named (a folder of both models, judged by one's property, was refused). A
    file named on its own is judged or refused, never left out, and a folder with nothing
    judged is refused, as with ``--variant``; so is a name no model of the files has."""
    if not names:
        return loaded, []
    models = {trace["model"]: [p.name for p in get_model(trace["model"]).properties] for _, trace in loaded}
    for name in names:  # (each checked, also beside all: a misspelt one is no property)
        if name != "all" and not any(name in known for known in models.values()):
            known = [p for ps in models.values() for p in ps]
            which = f"model {next(iter(models))}" if len(models) == 1 else f"models {', '.join(models)}"
            raise UsageError(f"--property {quoted(name)}: not a property of {which}"
                             f"{did_you_mean(name, [*known, 'all'])} (known: {', '.join(known)}; or all)")
    named = {f for f in given if not Path(f).is_dir()}
    out, left = [], []
    for path, trace in loaded:
        known = models[trace["model"]]
        mine = known if "all" in names else [n for n in dict.fromkeys(names) if n in known]
        if not mine:
            if path in named:
                raise UsageError(f"{escaped(path)}: a {trace['model']} trace, and --property "
                                 f"{', '.join(dict.fromkeys(names))} is not a property of {trace['model']}")
            left.append((path, trace))
        for name in mine:
            out.append((path, trace if name == trace["property"] else
                        {**trace, "property": name, "recorded_property": trace["property"]}))
    _each_folder_keeps_one(given, {path for path, _ in out}, left,
                           f"no trace of a model with --property {', '.join(dict.fromkeys(names))}")
    return out, left


def of_the_variants_model(args, loaded) -> tuple[list, list, str | None]:
    """With ``--variant``, a folder stands for its traces of that design's model (a suite
    such as ``counterexamples/`` holds every model's): (the traces kept, those left out,
    the model). A file named on its own is replayed or refused, never left out; a folder
    with no trace of the model is a usage error, as such a file is."""
    if not args.variant or args.exec_ is not None or args.python is not None:
        return loaded, [], None
    model = _model_of(args.variant, loaded)
    named = {f for f in args.files if not Path(f).is_dir()}
    kept = [(path, trace) for path, trace in loaded if trace["model"] == model or path in named]
    left = [(path, trace) for path, trace in loaded if trace["model"] != model and path not in named]
    if not left:
        return loaded, [], model
    _each_folder_keeps_one(args.files, {path for path, trace in kept if trace["model"] == model}, left,
                           f"no {model} trace to replay on --variant {args.variant}",
                           "; replay each model's traces on one of its own")
    return kept, left, model


def _each_folder_keeps_one(given: list[str], kept: set, left: list, what: str, advice: str = "") -> None:
    """Refuse a folder of ``given`` none of whose files is ``kept`` (``what`` says what it
    lacks, with the traces it holds, of ``left``): a folder left out whole is a mistake."""
    for folder in dict.fromkeys(f for f in given if f and Path(f).is_dir()):
        inside = set(json_files_in(folder))
        if inside and not kept & inside:
            theirs = [(p, t) for p, t in left if p in inside]
            raise UsageError(f"{escaped(folder)}: {what} ({traces_per_model(theirs)}{advice})")


def _model_of(variant: str, loaded) -> str:
    """The model ``variant`` is a design of: looked for first among the traces' models, so
    a replay loads no other model's designs (a broken one of those must not stop it)."""
    from deployspec.models import find_variant

    for name in dict.fromkeys(trace["model"] for _, trace in loaded):
        if variant in get_model(name).variants:
            return name
    return find_variant(variant)[0].name  # (an unknown name: said as such)


def say_left_out(why: str, left: list) -> None:
    """The note on stderr naming the traces left out (each once), and ``why``."""
    files = list(dict.fromkeys(str(p) for p, _ in left))
    print(f"deployspec: left out {traces_per_model({p: t for p, t in left}.items())} "
          f"({why}): {first_few([escaped(p) for p in files], 3)}", file=sys.stderr)


def traces_per_model(loaded) -> str:
    """``2 slots traces`` or ``12 capi traces, 2 slots traces``: how many files of each model."""
    counts: dict[str, int] = {}
    for _, trace in loaded:
        counts[trace["model"]] = counts.get(trace["model"], 0) + 1
    return ", ".join(f"{n} {m} trace{'s' if n > 1 else ''}" for m, n in sorted(counts.items()))


def is_a_trace(report: Path | None, files: list[str]) -> bool:
    """Whether ``--junit``'s path is one of the trace ``files`` to replay (by any name)."""
    return report is not None and report.exists() and any(
        os.path.isfile(f) and report.samefile(f) for f in files)


def trace_files(paths: list[str]) -> list[str]:
    """The files named, a folder standing for its ``*.json`` files (a regression
    suite such as ``counterexamples/``), in name order. A file named twice is replayed
    twice (an implementation's second run may differ)."""
    if paths.count("-") > 1:
        raise UsageError("replay: - (standard input) named twice; it holds one trace")
    files = []
    for name in paths:
        if name and name != "-" and Path(name).is_dir():
            found = sorted(json_files_in(name))
            if not found:
                raise UsageError(f"{name}: a folder with no trace files (*.json)")
            files += found
        else:
            files.append(name)
    return files


def json_files_in(folder: str) -> list[str]:
    """The ``*.json`` files in ``folder`` and its subfolders (not through links to
    folders), but ITF exports (``*.itf.json`` in any case, as ``show`` names them) and the
    temporary files of a save a crash left (``.tmp-*``). A folder that cannot be read, or
    a ``*.json`` that is no file (a link to nothing, a FIFO), is a UsageError, not a
    trace less replayed (pathlib's ``rglob`` skipped them without a word: a suite passed
    with part of it unread)."""
    def refuse(exc: OSError):
        raise UsageError(f"{folder}: cannot read {exc.filename or folder}: {exc.strerror or exc}")

    found = []
    for top, _dirs, names in os.walk(folder, onerror=refuse):
        for n in names:
            if not n.endswith(".json") or n.lower().endswith(".itf.json") or n.startswith(TEMPORARY):
                continue
            path = os.path.join(top, n)
            if not os.path.isfile(path):
                what = "a link to nothing" if os.path.islink(path) and not os.path.exists(path) else \
                    "not a regular file"
                raise UsageError(f"{folder}: {path}: {what}, where a trace file was expected")
            found.append(path)
    return found
