"""Text that others wrote (trace files, implementations under test), made safe to print.

A trace's message or an implementation's error may hold terminal escapes that
would clear or recolour the screen, newlines that would break a one-line
report, or megabytes. :func:`escaped` shows control characters as Python
escapes (``\\x1b``); :func:`printable_line` also clips to one short line.
"""

from __future__ import annotations

import html


def escaped(text: str, keep: str = "") -> str:
    """``text`` with every non-printable character but those in ``keep`` written as
    its Python escape (``\\n``, ``\\x1b``)."""
    if text.isprintable():
        return text
    return "".join(c if c.isprintable() or c in keep else repr(c)[1:-1] for c in text)


def printable_line(text: str, n: int = 300) -> str:
    """``text`` as one printable line of at most ``n`` characters (and an ellipsis)."""
    head = escaped(text[:n])
    return head if len(head) <= n and len(text) <= n else head[:n] + "…"


def markup(text: str) -> str:
    """``text`` for SVG or HTML: markup characters as entities, and control
    characters (which XML forbids, even as references) as Python escapes."""
    return html.escape(escaped(text))
