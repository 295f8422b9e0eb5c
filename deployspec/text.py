"""Text that others wrote (trace files, implementations under test), made safe to print.

A trace's message or an implementation's error may hold terminal escapes that
would clear or recolour the screen, newlines that would break a one-line
report, or megabytes. :func:`escaped` shows control characters as Python
escapes (``\\x1b``); :func:`printable_line` also clips to one short line.

A file name that is not UTF-8 reaches Python with each bad byte as a lone
surrogate (U+DC80-U+DCFF, PEP 383); it is shown as the byte it stands for
(``\\xff``), as Python shows bytes, not as ``\\udcff``. The output streams and
the files written use the same rule (the ``deployspec-escape`` error handler), so
a name reads the same on stdout, on stderr and in a file; so does a name in a
message's quotes (:func:`quoted`, not ``repr``) and a byte an implementation wrote
(:func:`decoded`, not U+FFFD). ``--json`` keeps JSON's own escape (``"\\udcff"``),
which ``json.loads`` and ``os.fsencode`` turn back into the very bytes.
"""

from __future__ import annotations

import codecs
import html
import re
from collections.abc import Iterable

#: the error handler for text streams: undecodable bytes as ``\\xNN``, what else a stream cannot take as ``\\uNNNN``
ESCAPE = "deployspec-escape"


def _escape(c: str) -> str:
    """One character's escape: a byte of a name that was not UTF-8 (PEP 383) as
    ``\\xNN``; other characters past ASCII as ``\\uNNNN`` (never ``\\xNN``, so the
    character U+00E9 and the byte 0xE9 read differently); ASCII as Python writes it."""
    o = ord(c)
    if 0xDC80 <= o <= 0xDCFF:
        return f"\\x{o - 0xDC00:02x}"
    if o < 0x80:
        return repr(c)[1:-1]
    return f"\\u{o:04x}" if o <= 0xFFFF else f"\\U{o:08x}"


def _escape_error(exc: UnicodeError) -> tuple[str, int]:
    if not isinstance(exc, UnicodeEncodeError):
        raise exc
    # a stream's encoding may be ASCII: what it cannot take is escaped in ASCII
    return "".join(map(_escape, exc.object[exc.start:exc.end])), exc.end


codecs.register_error(ESCAPE, _escape_error)


def escaped(text: str, keep: str = "") -> str:
    """``text`` with every non-printable character but those in ``keep`` written as
    its Python escape (``\\n``, ``\\x1b``)."""
    if text.isprintable():
        return text
    return "".join(c if c.isprintable() or c in keep else _escape(c) for c in text)


#: in ``repr``'s text: an escaped backslash (kept), the escape of a byte of a name that was
#: not UTF-8 (``\\udcff``), or of a character U+0080-U+00FF (``\\xa0``; ASCII's ``\\x1b`` is
#: no byte's spelling past ASCII, so it stays)
_REPR_ESCAPE = re.compile(r"\\(\\|udc[89a-f][0-9a-f]|x[89a-f][0-9a-f])")


def _as_escaped(match: re.Match) -> str:
    escape = match.group(1)
    if escape == "\\":
        return "\\\\"
    if escape[0] == "u":  # a byte: \xff, as the streams show it
        return "\\x" + escape[3:]
    return "\\u00" + escape[1:]  # a character: \u00a0, as escaped() shows it, never \xa0


def quoted(value: object) -> str:
    """``repr(value)``, as a message quotes a name it was given (``unknown model 'x'``),
    but spelled as :func:`escaped` and the streams spell it: a byte of a name that was not
    UTF-8 as ``\\xff`` (``repr``: ``\\udcff``), a character as ``\\u00a0`` (``repr``:
    ``\\xa0``, which would read as the byte): one name, one spelling, quoted or not.
    Bytes keep ``repr``'s own ``\\xff``, which there is a byte."""
    if isinstance(value, (bytes, bytearray)):
        return repr(value)
    return _REPR_ESCAPE.sub(_as_escaped, repr(value))


def first_few(names: list[str], most: int) -> str:
    """``a, b, c and 4 more``: the first ``most`` of ``names``, and how many are left."""
    rest = len(names) - most
    return ", ".join(names[:most]) + (f" and {rest} more" if rest > 0 else "")


def decoded(raw: bytes) -> str:
    """Bytes another program wrote (a reply, its stderr) as text: a byte that is not UTF-8
    kept as the lone surrogate that stands for it (PEP 383), so it is shown as the byte
    (``\\xff``), like a file name's, not as U+FFFD, which says only that one was there."""
    return raw.decode("utf-8", "surrogateescape")


def printable_line(text: str, n: int = 300, *, both_ends: bool = False) -> str:
    """``text`` as one printable line of at most ``n`` characters (and an ellipsis).
    ``both_ends``: cut in the middle, not at the end: an error line keeps its reason,
    which follows the name it is about (a path of thousands of characters)."""
    head = escaped(text[:n])
    if len(head) <= n and len(text) <= n:
        return head
    if not both_ends:  # an escape whole or not at all, as in the middle
        return "".join(_shown_within(text[:n], n)) + "…"
    half = n // 2
    head = _shown_within(text[:n], half)
    tail = _shown_within(reversed(text[max(len(text) - n, 0):]), n - half)
    # a cut inside a word drops its piece when a space is near (within an eighth of the
    # part kept): a list of names cut in its middle shows no half name
    # (``previous_deployment,…_states``); a short line keeps what it can
    if text[len(head)] != " ":
        head = _to_space(head, min(24, half // 8))
    if text[len(text) - len(tail) - 1] != " ":
        tail = _to_space(tail, min(24, (n - half) // 8))
    return "".join(head) + "…" + "".join(reversed(tail))


def _to_space(shown: list[str], near: int) -> list[str]:
    """``shown`` up to and with its last space, if one is among its last ``near`` items."""
    for i in range(len(shown) - 1, max(len(shown) - near, 0) - 1, -1):
        if shown[i] == " ":
            return shown[:i + 1]
    return shown


def _shown_within(chars: Iterable[str], budget: int) -> list[str]:
    """Each character as :func:`escaped` shows it, in order, while they fit in ``budget``
    characters: an escape is kept whole or left out (half of ``\\xff`` would read as ``ff``)."""
    out, used = [], 0
    for c in chars:
        shown = escaped(c)
        used += len(shown)
        if used > budget:
            break
        out.append(shown)
    return out


def markup(text: str) -> str:
    """``text`` for SVG or HTML: markup characters as entities, and control
    characters (which XML forbids, even as references) as Python escapes."""
    return html.escape(escaped(text))
