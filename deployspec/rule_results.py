"""The rules of a design handed in from outside, held to what the rules they replace return.

A rule that returns another kind of thing (None from one that forgot its ``return``, a
process's id where the process is meant) would fail later, wherever deployspec first
used the result, in a file of deployspec's that names no rule. So when a design is
loaded, each of its own rules is wrapped once to check its result at every call against
its field's ``RETURNS`` (``reference.core.rule_field``). The shipped rules are not
wrapped: they are deployspec's own, and the explorer's hot path.
"""

from __future__ import annotations

import functools
import os
import sys
import threading
from collections.abc import Callable
from types import CodeType
from typing import Any

import attrs

import deployspec
import deployspec.reference
from deployspec import rule_watch
from deployspec.reference.core import RETURNS
from deployspec.text import printable_line, quoted
from deployspec.user_code import ExitCalled, describe, exit_refused, shown

#: set on a wrapped rule, so that loading a design twice does not wrap it twice
_CHECKED = "__deployspec_checked__"


class RuleResultError(TypeError):
    """A rule handed in returned what the rule it replaces never does, or cannot be called
    as that one is."""


class RuleHungError(RuleResultError):
    """A rule handed in did not return within ``rule_watch.LIMIT`` seconds (a search does
    not try that step again: each try would take as long)."""


def checked(variant: Any, design: str = "") -> Any:
    """``variant`` with each rule of its own (not deployspec's) checking its results;
    ``design`` names it where nothing else will (``variant x (from where): ``: the last
    resort's line, for a rule that will not let go)."""
    changes = {}
    for field in attrs.fields(type(variant)):
        kinds = field.metadata.get(RETURNS)
        fn = getattr(variant, field.name)
        if kinds is None or _shipped(fn) or getattr(fn, _CHECKED, False):
            continue
        changes[field.name] = _wrapped(f"{type(variant).__name__}.{field.name}", fn, kinds, design)
    return attrs.evolve(variant, **changes) if changes else variant


#: where deployspec's own code lives (the package and the folders installed into it)
_OWN = tuple(os.path.dirname(m.__file__) + os.sep for m in (deployspec, deployspec.reference))


def _shipped(fn: Callable) -> bool:
    """Whether ``fn`` is one of deployspec's own functions: by where its code was written,
    not by its ``__module__``, which ``functools.wraps`` copies onto a rule of one's own
    that wraps a shipped one (which then ran with no check at all: its ``os._exit`` ended
    deployspec with status 0, its hang had no end)."""
    code = getattr(fn, "__code__", None)
    return isinstance(code, CodeType) and code.co_filename.startswith(_OWN)


def _wrapped(field: str, fn: Callable, kinds: tuple[type, ...], design: str = "") -> Callable:
    """``fn`` checking its results; ``field`` is ``Class.field``, whose comment (in the
    variant class's module) gives the arguments and the result."""
    name = field.split(".")[-1]
    at = _defined_at(fn)
    wanted = " or ".join("None" if k is type(None) else k.__name__ for k in kinds)

    @functools.wraps(fn)
    def rule(*args: Any, **kwargs: Any) -> Any:
        me, this = threading.get_ident(), rule_watch.Call(sys._getframe(), f"{name}{at}", design)
        exited = wrong = None
        try:
            try:
                rule_watch.enter(me, this)
                with exit_refused():  # as while its module loaded: a silent exit 0 reads as a pass
                    try:
                        out = fn(*args, **kwargs)
                    except ExitCalled as exc:  # let go here, with its frames and status (their __del__)
                        exited = exc.said
                    else:
                        # a result of the wrong kind is said, and let go, here: still timed and with
                        # os._exit refused (printing it, or dropping it, runs its own code)
                        wrong = None if isinstance(out, kinds) else \
                            "None" if out is None else f"{type(out).__name__} {printable_line(shown(out, quoted), 60)}"
                        if wrong is not None:
                            out = None
            finally:  # left: no RuleHung raised after this, none pending (rule_watch)
                with rule_watch.lock:
                    this.left = True
                    rule_watch.forget(me, this)
        except rule_watch.RuleHung as exc:
            raise RuleHungError(f"its rule {name}{at} did not return within {rule_watch.LIMIT:g} s "
                                  f"(stopped{_where_stopped(exc)})") from None
        except TypeError as exc:
            # not into fn: the call itself failed, and deployspec made it (a call from the design's
            # own code, one rule of it calling another, is that code's fault, said at its line)
            if exc.__traceback__ is not None and exc.__traceback__.tb_next is None and \
                    sys._getframe(1).f_globals.get("__name__", "").startswith("deployspec."):
                raise RuleResultError(f"its rule {name}{at} does not take the arguments the rule it replaces "
                                      f"does ({exc}; the comment on {field} gives them)") from None
            raise
        except BaseException as exc:  # (sorted out below)
            if isinstance(exc, (Exception, KeyboardInterrupt, SystemExit)) or _ours(exc):
                raise  # (an Exception is said where it was raised; an exit by ``judge``)
            stop = _stop_in(exc)
            if stop is not None:  # (with the group's traceback: the line of the rule that raised it)
                raise stop.with_traceback(exc.__traceback__) from None
            # its own BaseException, or GeneratorExit: no search could go on through it
            raise RuleResultError(f"its rule {name}{at} raised {describe(exc)}{_where_stopped(exc)}") from None
        if exited is not None:
            raise RuleResultError(f"its rule {name}{at} called os._exit({exited})")
        if wrong is None:
            return out
        raise RuleResultError(f"its rule {name}{at} returned {wrong}, where the rule it replaces "
                              f"returns {wanted}")

    setattr(rule, _CHECKED, True)
    return rule


def _ours(exc: BaseException) -> bool:
    """Whether deployspec raised it (a stop of its own, a signal's, passing through the rule)."""
    return type(exc).__module__.startswith("deployspec.")


def _stop_in(exc: BaseException) -> BaseException | None:
    """The interruption or exit a group holds (a Ctrl-C gathered by the rule's ``TaskGroup``
    is still the user's Ctrl-C, an exit still the rule's exit), or None."""
    if not isinstance(exc, BaseExceptionGroup):
        return None
    for kind in (KeyboardInterrupt, SystemExit):
        group = exc.subgroup(kind)
        while isinstance(group, BaseExceptionGroup):
            group = group.exceptions[0]
        if group is not None:
            return group
    return None


def _where_stopped(exc: BaseException) -> str:
    """`` at FILE:LINE`` of the innermost frame of the user's code it was stopped in."""
    from deployspec.user_code import at_user_line

    return at_user_line(exc)


def _defined_at(fn: Callable) -> str:
    """`` (at FILE:LINE)`` where the function was written, if it says."""
    code = getattr(fn, "__code__", None)
    return f" (at {os.path.basename(code.co_filename)}:{code.co_firstlineno})" if code else ""
