"""Notes an engine keeps on an exception raised by a user's code on its way out (the
steps that reached it, the reference design that raised it), for the report to read.

Written to the exception's own instance dictionary through ``BaseException``'s slot for
it: the exception is the user's, and its class may define ``__setattr__`` or even
``__dict__`` (a property, None), which is its code, not run here. Each note replaces the
one before: a design may raise one exception object it keeps, in run after run, and the
run that saw it last is the one reported."""

from __future__ import annotations

#: every exception's own instance dictionary, whatever its class calls ``__dict__``
_OWN = BaseException.__dict__["__dict__"]


def keep(exc: BaseException, key: str, text: str) -> None:
    """Keep ``text`` under ``key`` on ``exc``, over whatever was kept there."""
    _OWN.__get__(exc)[key] = text


def kept(exc: BaseException, key: str) -> str | None:
    """What :func:`keep` kept under ``key`` on ``exc``, or None."""
    found = _OWN.__get__(exc).get(key)
    return found if isinstance(found, str) else None
