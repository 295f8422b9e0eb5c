"""Counterexample files: small, version-stable JSON traces.

Written atomically (a temporary file, then a hard link that fails if the name
is taken), never overwriting a different finding, and named by a hash of what
makes a finding the same (model, variant, property, actions), so finding the
same trace twice writes one file.
"""

from __future__ import annotations

import hashlib
import json
import os
import tempfile
from functools import lru_cache
from importlib import resources
from pathlib import Path
from typing import Any

import jsonschema

from deployspec import __version__
from deployspec.models import UsageError, get_model


@lru_cache(maxsize=1)
def _validator() -> jsonschema.Draft202012Validator:
    schema = json.loads(resources.files("deployspec").joinpath("trace.schema.json").read_text())
    return jsonschema.Draft202012Validator(schema)


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
    trace = {
        "format": "deployspec-trace",
        "version": 1,
        "deployspec_version": __version__,
        "model": model,
        "variant": variant,
        "config": config,
        "property": property,
        "engine": engine,
        "seed": seed,
        "violation": {"step": v.step, "message": v.message}
        | ({"cause": v.cause} if v.cause else {}),
        "settle_from": session.settle_from,
        "initial": session.initial,
        "steps": session.steps,
    }
    if extra:
        trace["extra"] = extra
    return trace


def fingerprint(trace: dict) -> str:
    key = json.dumps(
        [trace["model"], trace["variant"], trace["property"], [s["action"] for s in trace["steps"]]],
        sort_keys=True,
    )
    return hashlib.sha256(key.encode()).hexdigest()[:10]


def save(trace: dict, directory: str | os.PathLike) -> Path:
    """Write ``trace`` into ``directory``; return the path (an existing one if the same finding)."""
    directory = Path(directory)
    directory.mkdir(parents=True, exist_ok=True)
    name = f"{trace['variant']}--{trace['property']}--{fingerprint(trace)}.json"
    final = directory / name
    if final.exists():
        return final  # the same finding (same hash): keep the file that is there
    text = json.dumps(trace, indent=1, sort_keys=False) + "\n"
    fd, tmp = tempfile.mkstemp(prefix=".tmp-", suffix=".json", dir=directory)
    try:
        with os.fdopen(fd, "w") as f:
            f.write(text)
            f.flush()
            os.fsync(f.fileno())
        try:
            os.link(tmp, final)  # atomic, and never replaces an existing file
        except FileExistsError:
            pass
    finally:
        os.unlink(tmp)
    return final


def load(path: str | os.PathLike) -> dict:
    """Read and validate a trace file; any problem is a one-line UsageError."""
    path = Path(path)
    try:
        text = path.read_text()
    except FileNotFoundError:
        raise UsageError(f"{path}: no such file") from None
    except IsADirectoryError:
        raise UsageError(f"{path}: is a directory, not a trace file") from None
    except (OSError, UnicodeDecodeError) as exc:
        raise UsageError(f"{path}: cannot read: {exc}") from None
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        raise UsageError(f"{path}: not JSON ({exc.msg} at line {exc.lineno})") from None
    errors = sorted(_validator().iter_errors(data), key=lambda e: list(e.absolute_path))
    if errors:
        e = errors[0]
        where = "/".join(str(p) for p in e.absolute_path) or "top level"
        raise UsageError(f"{path}: not a deployspec trace ({where}: {e.message})")
    model = get_model(data["model"]) if data["model"] in _known_models() else None
    if model is None:
        raise UsageError(f"{path}: unknown model {data['model']!r}")
    for i, step in enumerate(data["steps"]):
        try:
            model.action(step["action"])
        except ValueError as exc:
            raise UsageError(f"{path}: step {i}: {exc}") from None
    try:
        model.config_from_json(data["config"])
    except (ValueError, TypeError) as exc:
        raise UsageError(f"{path}: bad config: {exc}") from None
    model.property(data["property"])
    return data


def _known_models() -> list[str]:
    from deployspec.models import model_names

    return model_names()
