"""Counterexample files: small, version-stable JSON traces.

Written atomically (``deployspec.files``: a temporary file, then a hard link
that fails if the name is taken), never overwriting a different finding, and named by a hash of what
makes a finding the same (model, variant, property, actions), so finding the
same trace twice writes one file.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import stat
import sys
from functools import lru_cache
from importlib import resources
from pathlib import Path
from typing import Any, BinaryIO

from deployspec import __version__, save_log, trace_checks, validation
from deployspec.files import write_atomically
from deployspec.models import UsageError, get_model
from deployspec.text import printable_line, quoted

#: the trace format's version (trace.schema.json's ``version``): what this deployspec writes and reads
VERSION = 1

#: a name a trace file is named by (``NAME--PROPERTY--HASH.json``): a variant's, or an
#: implementation's (``contract --name``). It starts with a letter or digit (on a command
#: line, ``--variant -x`` reads as an option) and has no ``--`` and no ``-`` at its end:
#: those would run into the separator, so ``a--b--p--h.json`` and ``a---p--h.json`` could
#: not be told apart from another name's (``capi-current--*.json`` would match ``capi-current-``'s)
NAME = re.compile(r"(?=.{1,64}\Z)[A-Za-z0-9](?:[A-Za-z0-9._]|-(?=[A-Za-z0-9._]))*")
#: that rule, said in a refusal
NAME_RULE = ("1-64 letters, digits, '.', '_' or '-', starting with a letter or digit, with no '--' and no '-' "
             "at the end (trace files are named NAME--PROPERTY--HASH.json)")


@lru_cache(maxsize=1)
def _validator() -> Any:
    schema = json.loads(resources.files("deployspec").joinpath("trace.schema.json").read_text())
    return validation.validator(schema)


def build(
    *,
    model: str,
    variant: str,
    config: dict,
    property: str,
    engine: str,
    seed: int | None,
    session,
    extra: dict | None = None,
) -> dict[str, Any]:
    v = session.violation
    return _trace(model, variant, config, property, engine, seed, extra,
                  violation={"step": v.step, "message": v.message} | ({"cause": v.cause} if v.cause else {}),
                  settle_from=session.settle_from, initial=session.initial, steps=session.steps)


def of_fault(*, model: str, variant: str, config: dict, property: str, seed: int | None, led_to: dict,
             where: str, cause: str, message: str, extra: dict | None = None) -> dict[str, Any]:
    """An implementation's fault as a trace: the steps that led to it (``led_to``, as
    ``ImplementationFault.led_to`` keeps them), then ``fault.action``, which it failed at.
    ``violation`` says the fault after the last step (-1: at the first)."""
    steps = led_to["steps"]
    return _trace(model, variant, config, property, "contract", seed, extra,
                  violation={"step": len(steps) - 1, "message": message}, settle_from=None,
                  initial=led_to["initial"], steps=steps,
                  fault={"action": led_to["action"], "where": where, "cause": cause})


def _trace(model, variant, config, property, engine, seed, extra, *, violation: dict, settle_from, initial,
           steps, fault: dict | None = None) -> dict[str, Any]:
    trace = {
        "format": "deployspec-trace",
        "version": VERSION,
        "deployspec_version": __version__,
        "model": model,
        "variant": variant,
        "config": config,
        "property": property,
        "engine": engine,
        "seed": seed,
    }
    trace["violation"] = violation
    if fault:
        trace["fault"] = fault
    trace |= {"settle_from": settle_from, "initial": initial, "steps": steps}
    if extra:
        trace["extra"] = extra
    return trace


def fingerprint(trace: dict) -> str:
    """The finding's hash: model, variant, property and actions (a fault's action and cause too:
    another fault at the same step is another finding, not the file already there)."""
    actions = [s["action"] for s in trace["steps"]]
    if trace.get("fault"):
        actions = {"steps": actions, "fault": trace["fault"]["action"], "cause": trace["fault"]["cause"]}
    key = json.dumps([trace["model"], trace["variant"], trace["property"], actions], sort_keys=True)
    return hashlib.sha256(key.encode()).hexdigest()[:10]


def name_of(trace: dict) -> str:
    """The file name a trace is saved under: the same finding, the same name
    (``VARIANT--PROPERTY--HASH.json``; an implementation's fault, ``VARIANT--fault--HASH.json``)."""
    what = "fault" if trace.get("fault") else trace["property"]
    return f"{trace['variant']}--{what}--{fingerprint(trace)}.json"


def save(trace: dict, directory: str | os.PathLike) -> Path:
    """Write ``trace`` into ``directory``; return the path (an existing one if the same finding).

    A file of the same name that is not a readable trace (truncated, a dangling
    link) is replaced, atomically; a readable one is never touched. Any failure
    to write is a one-line UsageError (the search's result stays on screen)."""
    directory = Path(directory)
    final = directory / name_of(trace)
    text = json.dumps(trace, indent=1, sort_keys=False) + "\n"
    try:
        try:
            directory.mkdir(parents=True, exist_ok=True)
        except FileExistsError:  # a file took the folder's name meanwhile
            raise UsageError(f"cannot save {final}: {directory} is not a folder") from None
        _regular_or_absent(final)
        there = _finding_at(final)
        if there == fingerprint(trace):
            return final  # the same finding: keep the file that is there
        if there is not None:
            raise UsageError(f"cannot save {final}: the name is taken by another trace")
        written = write_atomically(final, text, replace=os.path.lexists(final))
        if not written and not holds(final, trace):  # taken meanwhile, by another
            raise UsageError(f"cannot save {final}: the name was taken meanwhile")
    except OSError as exc:
        raise UsageError(f"cannot save {final}: {exc.strerror or exc}") from None
    return final


#: the engines whose seed draws the steps (the explorer's and Z3's do not)
DRAWN = ("hypothesis", "contract")


def found_by(trace: dict[str, Any]) -> str:
    """"engine E, seed S", the seed left out where none drew the steps: the explorer's and
    Z3's traces (older explorer traces record the seed they were given, 0, never used)."""
    seed = trace.get("seed")
    drawn = seed is not None and trace.get("engine") in DRAWN
    return f"engine {trace.get('engine')}" + (f", seed {seed}" if drawn else "")


def _provenance(trace: dict) -> tuple:
    """What found a trace: its engine, the seed that drew it (if one did), its configuration."""
    engine = trace.get("engine")
    return engine, trace.get("seed") if engine in DRAWN else None, trace.get("config")


def _earlier(there: Any, trace: dict) -> str | None:
    """How the file already under ``trace``'s name was found, when it (``there``, what
    :func:`_stored` read of it) holds ``trace``'s steps from another engine, seed or
    configuration (``save`` keeps it); None otherwise."""
    if not isinstance(there, dict) or _finding_in(there) != fingerprint(trace):
        return None
    if _provenance(there) == _provenance(trace):
        # the same run's finding, unless the file tells its story otherwise than this run's
        # (a message edited by hand was kept under "saved:", as if it were this run's)
        differs = _told_otherwise(there, trace)
        return None if differs is None else f"{found_by(there)}, {differs}"
    return found_by(there) + (", other bounds" if there.get("config") != trace.get("config") else "")


def _told_otherwise(there: dict, trace: dict) -> str | None:
    """How the file of a finding tells its steps otherwise than this run's trace of them
    (their start, observations, refusals, the violation or the fault), or None. Not its
    title (an incident's names the incident's file, which another file of the same calls
    may be) nor the search's notes (``extra``)."""
    told = ("initial", "steps", "violation", "fault")
    if {k: there.get(k) for k in told} == json.loads(json.dumps({k: trace.get(k) for k in told})):
        return None
    if trace.get("engine") == "contract":
        return "but the implementation's answers in it differ from this run's"
    if there.get("deployspec_version") != trace.get("deployspec_version"):
        by = printable_line(str(there.get("deployspec_version")), 20)
        return f"but written by deployspec {by}, it differs from this run's trace"
    return "but the file differs from this run's trace: edited since it was saved?"


def saved_line(r) -> str:
    """``saved: PATH``, or ``kept: PATH (…)`` where ``--out`` already held the same finding
    from another engine, seed or configuration (``Result.kept``): the line does not pass
    that file off as this run's; ``saved: PATH (replacing …)`` where what had the name was
    no trace ``replay`` reads (``Result.replaced``), so the user knows it is gone."""
    if r.kept:
        return (f"kept: {r.counterexample} (the same steps were there already, found by {r.kept}; "
                "left as it was)")
    if r.replaced:
        return f"saved: {r.counterexample} (replacing {r.replaced})"
    return f"saved: {r.counterexample}"


def keep(trace: dict, directory: str | os.PathLike | None) -> dict[str, str | None]:
    """:func:`save` for a search that has its verdict, as the fields of its ``Result``:
    ``counterexample`` (the path), or ``unsaved`` (why it cannot be saved, so the verdict
    is still reported and the command then ends with status 2); ``kept``: how a file kept
    from before was found (:func:`_earlier`); ``replaced``: what a file it replaced was
    (:func:`_replacing`). Nothing to do without a directory."""
    out: dict[str, str | None] = {"counterexample": None, "unsaved": None, "kept": None, "replaced": None}
    final = Path(directory) / name_of(trace) if directory else None
    noted = save_log.note(trace, final)  # (before it is written: an interruption then still reports it)
    if final is not None:
        there = _stored(final)  # (read once, before saving: a trace of tens of MB takes seconds)
        earlier, replacing = _earlier(there, trace), _replacing(final, there)
        try:
            out["counterexample"] = str(save(trace, directory))
        except UsageError as exc:
            out["unsaved"] = str(exc)
        else:
            out["kept"], out["replaced"] = earlier, replacing
    if noted is not None:
        noted.fields = out
    return out


def _replacing(final: Path, there: Any) -> str | None:
    """What ``save`` replaces at ``final``, where ``there`` is what :func:`_stored` read of it:
    a dangling link, or a file (or a link to one) that ``load`` refuses (truncated, edited,
    too large); None for nothing there, or a trace it reads."""
    if there is not None:
        return None
    try:
        link = os.path.islink(final)
        mode = os.stat(final).st_mode
    except FileNotFoundError:
        return "a dangling link of that name" if link else None
    except OSError:  # (a link loop: save refuses it)
        return None
    if not stat.S_ISREG(mode):
        return None
    return "a link of that name to a file replay refused" if link else "a file of that name that replay refused"


def unsaved(results) -> str | None:
    """One line for the counterexamples of ``results`` that could not be saved, or None."""
    why = list(dict.fromkeys(r.unsaved for r in results if r.unsaved))
    if not why:
        return None
    more = f" (and {len(why) - 1} more not saved)" if len(why) > 1 else ""
    return f"{why[0]}{more}; the verdicts above stand"


def as_given(text: str | None, real: str, given: str) -> str | None:
    """``text`` (a path in the folder ``real``, or a message naming one) with that folder
    named as the user gave it (``given``: maybe relative, ``.``), as ``save`` names it."""
    if text is None:
        return None
    return text.replace(str(Path(real) / "x")[:-1], str(Path(given) / "x")[:-1])


#: the exit status of a run whose verdicts are reported but some counterexample was not saved
UNSAVED = 2


def _regular_or_absent(path: Path) -> None:
    """Refuse a name held by something other than a file (through links): a
    directory, a FIFO (reading it to compare would wait for ever), a device."""
    try:
        mode = os.stat(path).st_mode
    except FileNotFoundError:  # nothing there, or a dangling link (replaced)
        return
    if not stat.S_ISREG(mode):
        what = "a directory" if stat.S_ISDIR(mode) else "a FIFO" if stat.S_ISFIFO(mode) else "no regular file"
        raise UsageError(f"cannot save {path}: {what} has that name")


def holds(path: Path, trace: dict) -> bool:
    """Whether the file at ``path`` holds ``trace``'s finding."""
    return _finding_at(path) == fingerprint(trace)


def _finding_at(path: Path) -> str | None:
    """The fingerprint of the trace stored at ``path``, or None if there is none readable."""
    return _finding_in(_stored(path))


def _finding_in(there: Any) -> str | None:
    """The fingerprint of what a file held, or None if it is no trace."""
    try:
        return fingerprint(there)
    except (ValueError, KeyError, TypeError, AttributeError):
        return None


def _stored(path: Path) -> Any:
    """What the file at ``path`` holds as JSON, if it is a trace ``load`` reads; None for no
    regular file (a FIFO would wait for a writer), one over ``MAX_TRACE_BYTES`` (no trace:
    reading an 8 GB file whole took a minute and a half and 17 GB before saving a trace over
    it), one unreadable, or one that is no valid trace (an edited one: replay refuses it)."""
    try:
        if not stat.S_ISREG(os.stat(path).st_mode):
            return None
        return _validated(path, _parsed(path, _read_text(path)))
    except (OSError, UsageError, ValueError, RecursionError):
        return None


class NotATrace(UsageError):
    """A file that is no trace at all: not JSON, or JSON that does not call itself a trace
    (a ``check --json`` document beside the traces), as against a trace whose checks fail
    (an edited one: to mend, not to move out)."""


#: the largest trace file read (saved traces are a few KiB; /dev/zero is endless)
MAX_TRACE_BYTES = 64 << 20


def load(path: str | os.PathLike, stream: BinaryIO | None = None, drawing: bool = False) -> dict:
    """Read and validate a trace file; any problem is a one-line UsageError. From
    ``stream`` instead when given (``show -``: standard input, read as it is, a pipe or a
    socket), ``path`` then naming it in messages; ``drawing``: for ``show``, a conformance
    trace whose design is not handed in is read (``trace_checks._property_kind``)."""
    if not str(path):  # Path("") is ".", the current folder
        raise UsageError("an empty file name: name a trace file")
    path = Path(path)
    return _validated(path, _parsed(path, _read_text(path, stream)), drawing)


def load_named(name: str, command: str, drawing: bool = False) -> dict:
    """``load(name)``, or the trace on standard input for ``-`` (``show -``, ``replay -``)."""
    if name != "-":
        return load(name, drawing=drawing)
    if sys.stdin is None or sys.stdin.closed:
        raise UsageError(f"{command} -: standard input is closed; name a trace file")
    return load("standard input", stream=sys.stdin.buffer, drawing=drawing)


def _validated(path: Path, data: Any, drawing: bool = False) -> dict:
    """``data``, read from ``path``, if it is a trace; else a one-line UsageError."""
    if isinstance(data, dict) and data.get("format") == "deployspec-trace" and "version" in data \
            and data["version"] != VERSION:
        # said first: another version's fields would be reported one by one as unknown
        by = data.get("deployspec_version")
        by = by if isinstance(by, str) else json.dumps(by)
        by = f", written by deployspec {printable_line(by, 40)}" if by != "null" else ""
        raise UsageError(f"{path}: trace format version {printable_line(json.dumps(data.get('version')), 40)}{by}; "
                         f"this deployspec reads version {VERSION}")
    if isinstance(data, dict) and "format" not in data and isinstance(data.get("#meta"), dict) \
            and isinstance(data.get("states"), list):
        raise UsageError(f"{path}: an ITF export (show --format itf), not a deployspec trace; a folder's "
                         "replay leaves out files named *.itf.json, as show names them")
    errors = sorted(_validator().iter_errors(data), key=lambda e: list(e.absolute_path))
    if errors:
        e = validation.inner(errors[0])
        where = "/".join(str(p) for p in e.absolute_path) or "top level"
        claims = isinstance(data, dict) and data.get("format") == "deployspec-trace"
        raise (UsageError if claims else NotATrace)(f"{path}: not a deployspec trace ({where}: "
                                                    f"{validation.explained(e)})")
    model = get_model(data["model"]) if data["model"] in _known_models() else None
    if model is None:
        raise UsageError(f"{path}: unknown model {quoted(data['model'])} (known: {', '.join(_known_models())})")
    trace_checks.observations(path, model, data)
    trace_checks.by_model(path, model, data, drawing)
    return data


def _read_text(path: Path, stream: BinaryIO | None = None) -> str:
    """The file's text (or ``stream``'s), at most ``MAX_TRACE_BYTES`` of UTF-8 (a
    byte-order mark, as Windows editors write one, is not the trace)."""
    try:
        if stream is not None:
            raw = stream.read(MAX_TRACE_BYTES + 1)
        else:
            with open(path, "rb") as f:
                raw = f.read(MAX_TRACE_BYTES + 1)
        if len(raw) > MAX_TRACE_BYTES:
            raise UsageError(f"{path}: over {MAX_TRACE_BYTES >> 20} MiB: not a trace file")
        return raw.decode("utf-8-sig")
    except FileNotFoundError:
        raise UsageError(f"{path}: no such file") from None
    except IsADirectoryError:
        raise UsageError(f"{path}: is a directory, not a trace file") from None
    except (OSError, UnicodeDecodeError) as exc:
        raise UsageError(f"{path}: cannot read: {exc}") from None


def _looks_like_calls(text: str) -> bool:
    """Whether ``text`` starts as an incident does (``push(instances=2)``): a user handed
    ``replay`` the calls they give ``check --incident``."""
    first = next((line.split("#", 1)[0].strip() for line in text[:8192].lstrip("\ufeff").splitlines()[:20]
                  if line.split("#", 1)[0].strip()), "")
    return re.fullmatch(r"[A-Za-z_]\w*\s*(\(.*\))?", first) is not None


def _parsed(path: Path, text: str) -> Any:
    from deployspec.contract.protocol import unique_names

    try:
        return json.loads(text, object_pairs_hook=unique_names)
    except json.JSONDecodeError as exc:
        # (some of json's messages end in " at", the position following)
        calls = " (a list of calls, one per line? check --incident FILE --variant V searches it)" \
            if _looks_like_calls(text) else ""
        raise NotATrace(f"{path}: not JSON ({exc.msg.removesuffix(' at')} at line {exc.lineno}){calls}") from None
    except (ValueError, RecursionError) as exc:  # valid JSON Python cannot hold
        from deployspec.contract.protocol import unreadable

        raise UsageError(f"{path}: cannot be read: {unreadable(exc)}") from None


def _known_models() -> list[str]:
    from deployspec.models import model_names

    return model_names()
