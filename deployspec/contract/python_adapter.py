"""A Python object under test, in process.

The object speaks the protocol's vocabulary in Python: plain JSON-shaped dicts
in and out, so the same implementation can later be put behind the wire with
:func:`deployspec.contract.server.serve`. ``--python MODULE:FACTORY`` names a
callable that returns such an object; it is called once per run (once per
pytest worker) and ``reset`` brings the object back to the initial state.

Whatever the object raises (SystemExit too: its exit is not ours to take) and
a call that outlives the timeout are implementation faults (:mod:`.timed_call`;
the factory is found by :mod:`.loading`), and a failed object is not called again. Only KeyboardInterrupt passes through: in process, a
Ctrl-C cannot be told from an object raising it, and Ctrl-C must stop the run.
"""

from __future__ import annotations

import inspect
import json
import random
from collections.abc import Callable, Mapping
from typing import Any, Protocol, runtime_checkable

import attrs

from deployspec.adapter import ImplementationError
from deployspec.contract import leftovers, protocol
from deployspec.contract.loading import _attribute
from deployspec.contract.timed_call import call
from deployspec.text import printable_line
from deployspec.user_code import describe, shown

INTERRUPTED = "interrupted"


@runtime_checkable
class Implementation(Protocol):
    """What ``deployspec contract --python MODULE:FACTORY`` drives.

    Example (a complete one is ``deployspec.contract.examples.ReferenceImplementation``)::

        class MyController:
            def reset(self, config: Mapping[str, Any]) -> None:
                self.app = None; self.processes = []; self.deployments = []

            def perform(self, action: Mapping[str, Any]) -> str | None:
                if action["type"] == "scale" and self.deploying():
                    return "Cannot scale this process while a deployment is in flight."
                ...                       # apply it
                return None               # accepted

            def observe(self) -> dict[str, Any]:
                return {"app": ..., "droplets": [...], "processes": [...], "deployments": [...]}

        def factory() -> MyController:     # deployspec contract --python mymodule:factory
            return MyController()
    """

    def reset(self, config: Mapping[str, Any]) -> None:
        """Go to the model's initial state; ``config`` is the model's configuration as JSON."""

    def perform(self, action: Mapping[str, Any]) -> str | None:
        """Apply one action (its JSON form, e.g. ``{"type": "cancel"}``).

        Return None when accepted, or the reason of a legitimate refusal (the
        state must then be unchanged). Raise when the implementation fails.
        """

    def observe(self) -> dict[str, Any]:
        """The current observation, as the model's observation schema describes it."""


class PythonAdapter:
    """The adapter seam over an :class:`Implementation`; its failures become ImplementationError.

    ``timeout``: longest call in seconds (see :func:`.timed_call.call`). Once the object has
    failed (or a call was interrupted) it is not called again: a machine's
    teardown would otherwise meet the same hang or crash a second time.
    """

    def __init__(self, impl: Any, model, checker: protocol.ObservationChecker | None = None,
                 timeout: float | None = None):
        self.impl = impl
        self.model = model
        self.checker = checker or protocol.ObservationChecker(model)
        self.timeout = timeout
        #: the cause once the object has failed, or INTERRUPTED
        self.dead: str | None = None
        #: the global ``random`` generator's state for the object's calls, as a process of its
        #: own would have it: as its import and factory left it (seeded by the OS at start, or
        #: by the object's own ``random.seed``), carried from call to call. Hypothesis seeds
        #: that generator alike before every example, so an object's ``random.random()`` gave
        #: the same draws after each reset and a flaky updater passed as deterministic. (Its
        #: own threads' draws between calls still come from the generator Hypothesis seeds.)
        self._random = random.getstate()

    def reset(self, config: Any) -> None:
        self._call("reset", config.to_json())

    def perform(self, action) -> str | None:
        outcome = self._call("perform", action.to_json())
        if outcome is None:
            return None
        # a non-empty string (_call refused anything else), as a plain copy: a subclass's
        # methods are the implementation's
        return printable_line(str.__str__(outcome))

    def observe(self) -> dict:
        # a copy in plain JSON (the object may mutate what it returned), made within the
        # call's --timeout and held to the size of a reply over --exec: an observation of
        # millions of instances took 14 s past a --timeout of 1 and was accepted
        copied = self._call("observe", then=as_json)
        if len(copied) > protocol.MAX_LINE:
            raise self._failed(f"observe() returned an observation of {len(copied)} bytes as JSON, over the "
                               f"{protocol.MAX_LINE} a reply may have (as over --exec)")
        obs = read_back(copied)
        if isinstance(obs, Wrong):
            raise self._failed(obs.why)
        problem = self.checker.check(obs)
        if problem:
            raise self._failed(f"observation violates the {self.model.name} observation schema: {problem}")
        return obs

    def close(self) -> None:
        pass

    def close_implementation(self) -> None:
        """Call the object's own ``close()``, if it has one and has not failed (best effort)."""
        if self.dead is None:
            try:
                if callable(_attribute(self.impl, "close", what="looking up close", timeout=self.timeout)):
                    self._call("close")
            except ImplementationError:
                pass  # the run's verdict stands

    def _call(self, method: str, *args: Any, then: Callable[[Any], Any] | None = None) -> Any:
        """``method(*args)`` of the object; ``then(result)``, within the same timed call,
        makes of a right answer what is returned."""
        if self.dead == INTERRUPTED:
            raise KeyboardInterrupt
        if self.dead is not None:
            raise ImplementationError(self.dead)
        leftovers.reap_object_children()

        def answer(*a: Any) -> Any:
            # judged and made plain within the call, timed and guarded: nothing the object made
            # leaves it (what prints it, or drops it, runs the object's code: a __repr__ that
            # hangs, a __del__ that calls os._exit)
            result = getattr(self.impl, method)(*a)
            if (why := wrong_answer(method, result)) is not None:
                return Wrong(why)
            if then is not None:
                return then(result)
            # perform's reason, as a plain copy; what any other method returned is dropped here
            return str.__str__(result) if method == "perform" and result is not None else None

        outer = random.getstate()
        random.setstate(self._random)
        try:
            result = call(answer, *args, what=f"{method}()", timeout=self.timeout)
        except ImplementationError as exc:
            raise self._failed(str(exc), exc.hung) from None
        except KeyboardInterrupt:
            self.dead = INTERRUPTED
            raise
        finally:
            self._random = random.getstate()
            random.setstate(outer)
        if isinstance(result, Wrong):
            raise self._failed(result.why)
        return result

    def _failed(self, cause: str, hung: bool = False) -> ImplementationError:
        self.dead = cause
        return (ImplementationError.no_answer if hung else ImplementationError)(cause)


@attrs.frozen
class Wrong:
    """Why what a method returned cannot be its answer (:func:`wrong_answer`), or, for
    ``observe()``, cannot be copied as JSON (:func:`as_json`)."""

    why: str


def as_json(obs: Any) -> str | Wrong:
    """``obs`` as JSON text, or why not (said as the object's fault, not a crash of its call)."""
    try:
        return json.dumps(obs, allow_nan=False)
    except (TypeError, ValueError, RecursionError) as exc:
        why = str(exc) if isinstance(exc, TypeError) else protocol.unreadable(exc)
        return Wrong(f"observe() returned something that is not JSON: {why}")
    except Exception as exc:  # noqa: BLE001 - its own mapping's methods raised
        return Wrong(f"observe() returned an object ({type(obs).__name__}) that raised "
                      f"{describe(exc)} when read")


def read_back(text: str) -> Any:
    """The copy as a harness reads it over ``--exec`` (``protocol.loads``), or why not: keys
    that became one name once written as strings (``{1: …, "1": …}``) are refused there,
    not collapsed into one."""
    try:
        return protocol.loads(text)
    except (ValueError, RecursionError) as exc:
        return Wrong(f"observe() returned something that is not JSON: {protocol.unreadable(exc)}")


def wrong_answer(method: str, result: Any) -> str | None:
    """Why ``result`` of ``method()`` cannot be an implementation's answer, in process
    or served (``serve --python``); None: it can. An awaitable (an async method) is
    one deployspec, calling synchronously, would never run: a coroutine is closed, so
    Python does not warn that it never ran."""
    if inspect.isawaitable(result):
        if inspect.iscoroutine(result):
            result.close()
        return (f"{method}() returned an awaitable ({type(result).__name__}): an async method? "
                "deployspec calls reset, perform and observe synchronously")
    if method == "reset" and result is not None:
        return f"reset() returned {shown(result)}; expected None"
    # (str's own length: a subclass's methods are the implementation's and may raise)
    # (by its type, which a __class__ of the object's own cannot fake)
    if method == "perform" and result is not None and not (issubclass(type(result), str) and str.__len__(result)):
        return f"perform() returned {shown(result)}; expected None (accepted) or a reason string (rejected)"
    return None
