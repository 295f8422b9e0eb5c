"""The command line's value types: each reads one option's text or refuses it in words
an ``argparse`` usage error prints on one line. Shared by ``deployspec``'s commands, the
pytest plugin's options and the benchmark scripts, so each is held to the same rules."""

from __future__ import annotations

import argparse
import json
import re

from deployspec.text import quoted


def seconds(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a number of seconds: {quoted_arg(text)}") from None
    if not 0 < value < 86400:
        raise argparse.ArgumentTypeError(f"must be more than 0 and less than 86400 seconds, got {quoted_arg(text)}")
    return value


def bound(text: str) -> tuple[str, object]:
    name, sep, value = text.partition("=")
    if not sep or not name:
        raise argparse.ArgumentTypeError(f"expected NAME=VALUE, got {quoted_arg(text)}")
    from deployspec.contract.protocol import unique_names, unreadable

    try:  # (a name twice is refused, as in a trace file: JSON says not which one counts)
        return name, json.loads(value, object_pairs_hook=unique_names)
    except json.JSONDecodeError:
        if re.fullmatch(r"[A-Za-z_][A-Za-z0-9_-]*", value):  # a bare word is a string: start=release
            return name, value
        raise argparse.ArgumentTypeError(f"{name}: not a JSON value: {quoted_arg(value)}") from None
    except (ValueError, RecursionError) as exc:  # valid JSON Python cannot hold
        raise argparse.ArgumentTypeError(f"{name}: {unreadable(exc)}") from None


def quoted_arg(text: str, limit: int = 60) -> str:
    """``text`` quoted for an error message, cut short: a pasted megabyte stays off the screen."""
    return quoted(text) if len(text) <= limit else quoted(text[:limit]) + f"... ({len(text)} characters)"


def int_at_least(least: int):
    def parse(text: str) -> int:
        try:
            value = int(text)
        except ValueError:
            too_long = re.fullmatch(r"\s*[+-]?\d+\s*", text) is not None  # beyond Python's 4,300 digits
            raise argparse.ArgumentTypeError(
                f"too large: {quoted_arg(text)}" if too_long else f"not an integer: {quoted_arg(text)}") from None
        if value < least:
            raise argparse.ArgumentTypeError(f"must be >= {least}, got {value}")
        return value

    return parse


def int_between(least: int, most: int):
    at_least = int_at_least(least)

    def parse(text: str) -> int:
        value = at_least(text)
        if value > most:
            raise argparse.ArgumentTypeError(f"at most {most}, got {value}")
        return value

    return parse


nonneg_int = int_at_least(0)
positive_int = int_at_least(1)
