"""The ``serve`` subcommand: a reference variant, or a Python object, behind the JSON-lines
protocol on standard input and output (its options: :func:`deployspec.contract.cli.add_parsers`)."""

from __future__ import annotations

import contextlib
import os
import signal
import sys
import threading

from deployspec.adapter import ImplementationError, StopServing
from deployspec.models import UsageError, find_variant, get_model
from deployspec.text import printable_line
from deployspec.user_code import lent_streams


def cmd_serve(args) -> int:
    from deployspec.contract import leftovers
    from deployspec.contract.examples import ReferenceImplementation
    from deployspec.contract.server import serve

    if sys.stdin is None:
        raise UsageError("standard input is closed: serve reads its requests there")
    if args.model is None and args.python is not None:
        raise UsageError("serve --python needs --model: the model the object implements (capi, slots)")
    requests, replies = _protocol_channel()  # first: loading a model loads the user's designs too
    model = get_model(args.model) if args.model is not None else find_variant(args.variant)[0]
    with _sigterm_ends_serving(), lent_streams():  # the served object may not close deployspec's streams
        try:
            if args.python is not None:
                leftovers.watch_object_children()  # ended with serving (``finally``)
                impl, name = _served_object(args.python), args.python
            else:
                model.variant(args.variant)
                impl = ReferenceImplementation(model.name, args.variant)
                name = impl.name
            return serve(impl, model.name, name=name, stdin=requests, stdout=replies)
        except ImplementationError as exc:  # its import or factory failed: a fault, as contract says it
            print(f"deployspec: error: {printable_line(str(exc), 500, both_ends=True)}", file=sys.stderr, flush=True)
            return 3
        except _Terminated:
            return 0
        finally:
            leftovers.end_object_children()


def _served_object(spec: str):
    """The object ``--python`` names (a bad name is a usage error, as for ``contract``)."""
    from deployspec.contract import loading

    stop = (_Terminated,)  # SIGTERM while importing or making it is the end of serving, not its fault
    return loading.instantiate(loading.load_factory(spec, passing=stop), spec, passing=stop)


def _protocol_channel():
    """stdin and stdout for the protocol alone: the served code gets /dev/null as its
    input and stderr as its output (``print``, a C library writing to fd 1), so nothing
    it writes can be taken for a reply, as with ``contract --python``."""
    sys.stdout.flush()
    requests = os.fdopen(os.dup(sys.stdin.fileno()), "rb")
    replies = os.fdopen(os.dup(sys.stdout.fileno()), "wb")
    os.dup2(sys.stderr.fileno(), sys.stdout.fileno())
    nothing = os.open(os.devnull, os.O_RDONLY)
    os.dup2(nothing, sys.stdin.fileno())
    os.close(nothing)
    return requests, replies


class _Terminated(StopServing):
    """SIGTERM reached ``serve`` (a StopServing: the server turns whatever else a call
    raises into an error reply, and would serve on)."""


@contextlib.contextmanager
def _sigterm_ends_serving():
    """SIGTERM is how supervisors (a test harness, Docker, systemd) stop a server: for
    ``serve`` it is a normal end, status 0 and nothing said, like the end of input.
    Ctrl-C stays "interrupted" (130); a SIGTERM ignored on entry stays ignored."""
    if threading.current_thread() is not threading.main_thread() or \
            signal.getsignal(signal.SIGTERM) is signal.SIG_IGN:
        yield
        return

    def stop(signum, frame):
        raise _Terminated

    previous = signal.signal(signal.SIGTERM, stop)
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, previous)
