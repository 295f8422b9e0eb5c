"""Notes an engine keeps on an exception raised by a user's code on its way out (the
steps that reached it, the reference design that raised it), for the report to read.

Written to the exception's ``__dict__`` directly: the exception is the user's, and its
class's own ``__setattr__`` is its code. An exception class with slots keeps nothing."""

from __future__ import annotations


def keep(exc: BaseException, key: str, text: str, replace: bool = False) -> None:
    """Keep ``text`` under ``key`` on ``exc``, unless something is kept there already
    (``replace``: whatever is)."""
    try:
        kept = object.__getattribute__(exc, "__dict__")
    except (AttributeError, TypeError):
        return
    if replace:
        kept[key] = text
    else:
        kept.setdefault(key, text)


def kept(exc: BaseException, key: str) -> str | None:
    """What :func:`keep` kept under ``key`` on ``exc``, or None."""
    try:
        found = object.__getattribute__(exc, "__dict__").get(key)
    except (AttributeError, TypeError):
        return None
    return found if isinstance(found, str) else None
