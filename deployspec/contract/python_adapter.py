"""A Python object under test, in process.

The object speaks the protocol's vocabulary in Python: plain JSON-shaped dicts
in and out, so the same implementation can later be put behind the wire with
:func:`deployspec.contract.server.serve`. ``--python MODULE:FACTORY`` names a
callable that returns such an object; it is called once per run (once per
pytest worker) and ``reset`` brings the object back to the initial state.

Whatever the object raises (SystemExit too: its exit is not ours to take) and
a call that outlives the timeout are implementation faults, and a failed object
is not called again. Only KeyboardInterrupt passes through: in process, a
Ctrl-C cannot be told from an object raising it, and Ctrl-C must stop the run.
"""

from __future__ import annotations

import contextlib
import importlib
import inspect
import json
import os
import shlex
import signal
import sys
import threading
from collections.abc import Callable, Mapping
from typing import Any, Protocol, runtime_checkable

import attrs

from deployspec.adapter import ImplementationError
from deployspec.contract import last_resort, protocol
from deployspec.models import UsageError
from deployspec.text import printable_line, quoted
from deployspec.user_code import (
    ExitCalled,
    at_user_line,
    borrowed,
    cwd_first_on_path,
    exit_refused,
    is_module_name,
    lent_streams,
)

#: the import and the factory may be slow, as a program's first reply may be
STARTUP_TIMEOUT = 30.0
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


def split_spec(spec: str) -> tuple[str, str]:
    """``MODULE:FACTORY`` → (module, factory); a malformed one is a usage error."""
    module_name, sep, attr = spec.partition(":")
    if not sep or not module_name or not attr:
        raise UsageError(f"--python {quoted(spec)}: expected MODULE:FACTORY, e.g. mypkg.impl:make_controller")
    return module_name, attr


def load_factory(spec: str, timeout: float | None = None, passing: tuple = ()) -> Callable[[], Any]:
    """``MODULE:FACTORY`` → the callable; a bad name is a usage error, a failing import a fault
    (but ``passing``, raised through as ``call`` does)."""
    module_name, attr = split_spec(spec)
    if not is_module_name(module_name):  # a file name or a path: no import can work
        raise not_found(spec, module_name)
    cwd_first_on_path()
    try:
        module = call(importlib.import_module, module_name, what=f"importing {module_name}",
                      timeout=timeout, passing=(ModuleNotFoundError, *passing))
    except ModuleNotFoundError as exc:
        if exc.name and f"{module_name}.".startswith(f"{exc.name}."):  # the module itself, not a dependency
            raise not_found(spec, exc.name) from None
        raise ImplementationError(f"importing {module_name} raised {describe(exc)}{at_user_line(exc)}") from None
    try:
        factory = getattr(module, attr)
    except AttributeError:
        raise UsageError(f"--python {spec}: module {module_name} has no {quoted(attr)}") from None
    if not callable(factory):
        raise UsageError(f"--python {spec}: {attr} is not callable")
    return factory


def not_found(spec: str, missing: str) -> UsageError:
    """The usage error for a module not found, saying what MODULE must be, and for a
    file name or a path the module name meant: ``--python`` imports a module (so its
    own imports work as in the user's code); it does not run a file."""
    module_name, attr = split_spec(spec)
    hint = "MODULE is a module name importable from the current directory or PYTHONPATH, without .py or a path"
    stem = module_name.removesuffix(".py")
    folder, _, name = stem.replace(os.sep, "/").rpartition("/")
    parts = [p for p in folder.split("/") if p not in ("", ".")]
    if os.path.isabs(stem) or ".." in parts:  # elsewhere: that folder on the path
        meant = name
        where = f" with PYTHONPATH={shlex.quote(folder or '/')}"
    else:  # beside the user: a package path
        meant, where = ".".join([*parts, name]), ""
    if meant != module_name and all(p.isidentifier() for p in meant.split(".")):
        hint += f": did you mean --python {meant}:{attr}{where}?"
    return UsageError(f"--python {spec}: no module named {quoted(missing)} ({hint})")


def instantiate(factory: Callable[[], Any], spec: str, timeout: float | None = None, passing: tuple = ()) -> Any:
    impl = call(factory, what=f"{spec}()", timeout=timeout, passing=passing)
    missing = [m for m in ("reset", "perform", "observe") if not callable(_attribute(impl, m))]
    if missing:
        raise ImplementationError(
            f"{spec}() returned {'None' if impl is None else _a(type(impl).__name__)}, which lacks {', '.join(missing)}() "
            f"(see deployspec.contract.python_adapter.Implementation)"
        )
    return impl


def _a(noun: str) -> str:
    """``noun`` with its indefinite article: "an object", "a list", "a UUID" (a type's name in
    a message; one starting with u is read "you": UUID, UserDict)."""
    return f"{'an' if noun[:1].lower() in 'aeio' else 'a'} {noun}"


def call(fn: Callable, *args: Any, what: str, timeout: float | None = None,
         passing: type[BaseException] | tuple = ()) -> Any:
    """``fn(*args)`` on the implementation's behalf: anything it raises but
    KeyboardInterrupt (and ``passing``), or outliving ``timeout`` seconds, is an
    :class:`ImplementationError` saying so.

    A hung call can only be interrupted in process, by SIGALRM: so the timeout
    holds on POSIX, in the main thread, when nothing else has claimed SIGALRM
    (pytest-timeout does), and not while the call is stuck in C code that never
    returns to the interpreter. A call that swallows the interruption (a bare
    ``except:``) and still has not returned ``GRACE`` seconds later ends the
    process: one line on stderr, exit status 3 (:mod:`deployspec.contract.last_resort`).

    What the call prints goes to stderr: stdout is deployspec's (``--json``).
    """
    global _armed, _calling
    timed = timeout is not None and _take_alarm()
    try:
        # lent for the call (lending(): stdout for a run); os._exit refused, as a crash reads 0
        with lent_streams(stdout=sys.stderr), exit_refused():
            try:
                if timed:
                    _calling = f"{what} did not return within {timeout:g} s"
                    _armed = True
                    signal.setitimer(signal.ITIMER_REAL, timeout)
                return fn(*args)
            finally:  # disarmed before stdout is given back: no alarm can land in between
                if timed:
                    _armed = False  # an alarm handled until here is still caught below, a later one ignored
                    signal.setitimer(signal.ITIMER_REAL, 0)
                    _stand_down()
    except _Overdue:
        raise ImplementationError(f"{what} did not return within {timeout:g} s (hung? see --timeout)") from None
    except KeyboardInterrupt:
        raise
    except passing:
        raise
    except ExitCalled as exc:
        raise ImplementationError(f"{what} called os._exit({shown(exc.status)})") from None
    except BaseException as exc:  # noqa: BLE001 - SystemExit, GeneratorExit...: the implementation failed
        raise ImplementationError(f"{what} raised {describe(exc)}{at_user_line(exc)}") from None


def _attribute(impl: Any, name: str) -> Any:
    """``getattr(impl, name, None)``, also when its ``__getattr__`` raises something
    else than AttributeError (a proxy's KeyError): then it has no such method."""
    try:
        return getattr(impl, name, None)
    except Exception:  # noqa: BLE001
        return None


def describe(exc: BaseException) -> str:
    """``Type: message`` in one line, whatever the exception's ``__str__`` does."""
    text = shown(exc, str)
    return f"{type(exc).__name__}: {text}" if text else type(exc).__name__


def shown(value: Any, how: Callable[[Any], str] = repr, n: int = 200) -> str:
    """``repr`` (or ``str``) of something the implementation made, as one short line;
    it may not even print (a 5,000-digit int, a raising ``__repr__``)."""
    try:
        lines = how(value).strip().splitlines()
    except Exception:  # noqa: BLE001
        return f"(an unprintable {type(value).__name__})"
    text = lines[0] if lines else ""
    return text if len(text) <= n else text[:n] + "…"


@contextlib.contextmanager
def lending(active: bool = True):
    """For a whole ``--python`` run: ``sys.stdout`` is the lender from here on, and
    the real stdout is yielded for deployspec's own output (verdicts, ``--json``).

    The object's threads may print at any time, even after the run, while the
    report is printed or the exit handlers run: so in the deployspec program
    the lender stays (stdout is deployspec's to the end); in pytest or a
    user's program, their stdout is theirs again when the block ends."""
    out = sys.stdout
    if not active:
        yield out
        return
    sys.stdout = borrowed(sys.stderr)
    try:
        yield out
    except BaseException:
        sys.stdout = out  # e.g. a closed pipe: what the caller does next is about the real stdout
        raise
    if not last_resort.own_process():
        sys.stdout = out


class _Overdue(BaseException):
    """Raised by SIGALRM in a call that outlived its timeout (a BaseException, so
    an implementation's ``except Exception`` does not swallow it)."""


_armed = False
_calling = ""
_previous: Any = signal.SIG_DFL
#: the last resort of the call being timed, once it is overdue
_overdue_exit: threading.Timer | None = None


def _overdue(signum, frame):
    global _overdue_exit
    if _armed:
        if _overdue_exit is None and last_resort.own_process():
            _overdue_exit = last_resort.last_resort(
                f"implementation fault: {_calling}, and went on for {last_resort.GRACE:g} s more after "
                f"being interrupted (does it catch every exception?)", 3)
        raise _Overdue


def _stand_down() -> None:
    global _overdue_exit
    if _overdue_exit is not None:
        _overdue_exit.cancel()
        _overdue_exit = None


def _take_alarm() -> bool:
    """Whether SIGALRM can time a call. The handler, once installed, stays until
    :func:`release_alarm` (installing it per call would cost ~6 us, more than the
    rest of a call's bookkeeping); it does nothing while no call is timed."""
    global _previous
    if not hasattr(signal, "setitimer") or threading.current_thread() is not threading.main_thread():
        return False
    handler = signal.getsignal(signal.SIGALRM)
    if handler is _overdue:
        return True
    if handler not in (signal.SIG_DFL, signal.SIG_IGN):
        return False  # someone else's (pytest-timeout): theirs to use
    _previous = signal.signal(signal.SIGALRM, _overdue)
    return True


def release_alarm() -> None:
    """Give SIGALRM back (when the implementation is closed)."""
    if threading.current_thread() is threading.main_thread() and signal.getsignal(signal.SIGALRM) is _overdue:
        signal.signal(signal.SIGALRM, _previous)


class PythonAdapter:
    """The adapter seam over an :class:`Implementation`; its failures become ImplementationError.

    ``timeout``: longest call in seconds (see :func:`call`). Once the object has
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
        copied = self._call("observe", then=_as_json)
        if isinstance(copied, _NotJson):
            raise self._failed(copied.why)
        if len(copied) > protocol.MAX_LINE:
            raise self._failed(f"observe() returned an observation of {len(copied)} bytes as JSON, over the "
                               f"{protocol.MAX_LINE} a reply may have (as over --exec)")
        obs = json.loads(copied)
        problem = self.checker.check(obs)
        if problem:
            raise self._failed(f"observation violates the {self.model.name} observation schema: {problem}")
        return obs

    def close(self) -> None:
        pass

    def close_implementation(self) -> None:
        """Call the object's own ``close()``, if it has one and has not failed (best effort)."""
        if self.dead is None and callable(_attribute(self.impl, "close")):
            try:
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

        def answer(*a: Any) -> Any:
            result = getattr(self.impl, method)(*a)
            return result if then is None or wrong_answer(method, result) is not None else then(result)

        try:
            result = call(answer, *args, what=f"{method}()", timeout=self.timeout)
        except ImplementationError as exc:
            raise self._failed(str(exc)) from None
        except KeyboardInterrupt:
            self.dead = INTERRUPTED
            raise
        if (why := wrong_answer(method, result)) is not None:
            raise self._failed(why)
        return result

    def _failed(self, cause: str) -> ImplementationError:
        self.dead = cause
        return ImplementationError(cause)


@attrs.frozen
class _NotJson:
    """Why what ``observe()`` returned cannot be copied as JSON."""

    why: str


def _as_json(obs: Any) -> str | _NotJson:
    """``obs`` as JSON text, or why not (said as the object's fault, not a crash of its call)."""
    try:
        return json.dumps(obs, allow_nan=False)
    except (TypeError, ValueError, RecursionError) as exc:
        why = str(exc) if isinstance(exc, TypeError) else protocol.unreadable(exc)
        return _NotJson(f"observe() returned something that is not JSON: {why}")
    except Exception as exc:  # noqa: BLE001 - its own mapping's methods raised
        return _NotJson(f"observe() returned an object ({type(obs).__name__}) that raised "
                        f"{describe(exc)} when read")


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
    if method == "perform" and result is not None and not (isinstance(result, str) and str.__len__(result)):
        return f"perform() returned {shown(result)}; expected None (accepted) or a reason string (rejected)"
    return None
