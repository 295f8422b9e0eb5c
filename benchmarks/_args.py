"""The command line the benchmarks share, held to deployspec's rules for bad input: one
line on stderr, exit status 2, never a traceback. The value types are deployspec's own
(``deployspec.argtypes``, which the scripts use directly; bounds through
``Model.with_bounds``), not copies of them."""

from __future__ import annotations

import argparse
import os
import sys
from typing import NoReturn

from deployspec.argtypes import int_between
from deployspec.models import UsageError, get_model

#: the most runs or seeds a benchmark takes: a typo should not start a week of measuring
MOST_RUNS = 1000
runs = int_between(1, MOST_RUNS)


def fail(message: str) -> NoReturn:
    print(f"{os.path.basename(sys.argv[0])}: error: {message}", file=sys.stderr)
    raise SystemExit(2)


class Parser(argparse.ArgumentParser):
    """argparse, but a usage error is one line (no usage block) and exit status 2."""

    def error(self, message: str):  # type: ignore[override]
        fail(message)


def capi_variant(name: str) -> str:
    """A variant of the capi model, refused before anything is measured."""
    try:
        get_model("capi").variant(name)
    except UsageError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None
    return name


def with_max_deployments(model, config, value: int | None):
    """``config`` with ``max_deployments`` changed as ``--bound`` would change it."""
    if value is None:
        return config
    try:
        return model.with_bounds(config, {"max_deployments": value}, "--max-deployments")
    except UsageError as exc:
        fail(str(exc))
