"""The fewest steps, found by replay, that make a design's rule raise as it did.

Hypothesis shrinks an example that breaks a property, but one whose rule raised while
the platform settled after the last step kept all its steps ("after 33 steps, …"): the
shrinker keeps a failure only where it fails alike, and the shorter examples it tried
broke the property first, or did not reach the rule. As :mod:`deployspec.minimize`
does for a violation, this takes steps away (halves, then smaller runs, then single
steps) as long as replaying the rest on the reference raises the same exception from
the same line at the same kind of place (a step, or settling); nothing shorter is
claimed where no replay raises so (a rule that raises by chance). A candidate that
raises at a step keeps no step after it. The time it may take (``SECONDS``) is looked
at between replays: a replay whose rule hangs waits out the rule's own limit first.
"""

from __future__ import annotations

import time
import traceback
from collections.abc import Callable, Sequence
from typing import Any

from deployspec import interruption
from deployspec.adapter import ReferenceAdapter
from deployspec.rule_results import RuleHungError
from deployspec.session import Session

#: how long the shortening may take at most (each replay is a few milliseconds)
SECONDS = 5.0


def signature(exc: BaseException, settling: bool) -> tuple:
    """What a replay must raise again: the exception's class, the innermost line it was
    raised from, and whether while settling."""
    frames = traceback.extract_tb(exc.__traceback__)
    last = (frames[-1].filename, frames[-1].lineno) if frames else None
    return type(exc), last, settling


def raised_by(model, variant, config, properties, actions: Sequence[Any]) -> tuple[tuple, int] | None:
    """Replay ``actions`` on the reference, then settle; the signature of what a rule
    raised and how many of the actions it took (the one that raised included), or None
    (no raise, or a property broke first: the search would stop there)."""
    session = Session(model, ReferenceAdapter(model, variant), tuple(properties), config)
    settling, done = False, 0
    try:
        for action in actions:
            done += 1
            if session.perform(action) is not None:
                return None
        settling = True
        session.settle()
    except RuleHungError:
        raise  # (each replay would wait as long: the caller keeps what it has)
    except (Exception, SystemExit) as exc:  # noqa: BLE001 - what the design's rule raised, compared
        return signature(exc, settling), done
    finally:
        session.adapter.close()
    return None


def shortest(actions: Sequence[Any], kept: Callable[[list[Any]], list[Any] | None],
             seconds: float = SECONDS) -> list[Any]:
    """``actions`` with runs of steps taken away while ``kept`` of the rest says what of
    it still raises (None: nothing does), the longest runs first; ``actions`` itself
    when none can go or time is up."""
    deadline = time.monotonic() + seconds
    best = list(actions)
    size = max(1, len(best) // 2)
    while size >= 1:
        start = len(best) - size
        while start >= 0:
            interruption.raise_if_pending()
            if time.monotonic() > deadline:
                return best
            candidate = kept(best[:start] + best[start + size:])
            if candidate is not None:
                best = candidate
            start -= size
            start = min(start, len(best) - size)
        size //= 2
    return best
