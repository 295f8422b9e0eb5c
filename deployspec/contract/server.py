"""The protocol's server side: any JSON-shaped implementation on stdin/stdout.

``deployspec serve --model capi --variant capi-safe`` runs a reference variant
here, so implementers have a working peer to read transcripts from, and the
protocol is tested end to end. A request that cannot be served gets an
``error`` reply (id null when even the id is unreadable), never a crash: that
includes JSON nested too deeply or with numbers too long for Python to read,
a reply the implementation made unwritable, and whatever the implementation
raises (SystemExit and GeneratorExit too: its exit is not the server's to take,
as in process) but KeyboardInterrupt and :class:`StopServing`. An implementation that
raised is in a state nobody knows: until the next reset, its actions and observations are
``error`` replies saying so. A refusal of the model is ``rejected``. The server ends at end
of input.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Iterator
from typing import Any, BinaryIO

from deployspec.adapter import StopServing
from deployspec.contract import leftovers, protocol
from deployspec.contract.python_adapter import Wrong, as_json, read_back, wrong_answer
from deployspec.reference.core import shown
from deployspec.text import quoted
from deployspec.user_code import at_user_line, describe


class _Unanswerable(Exception):
    """A request that gets an ``error`` reply with this message (a bad request, or an
    implementation's answer that cannot be one)."""


class Server:
    def __init__(self, impl: Any, model_name: str, name: str | None = None):
        self.impl = impl
        self.model_name = model_name
        self.name = name
        self.ready = False
        self.raised: str | None = None  # what the implementation raised since its last reset
        self._asked: int | None = None  # the id of the request being served

    def handle(self, request: Any) -> dict:
        if not isinstance(request, dict):
            raise _Unanswerable("a request must be a JSON object")
        rid, kind = request.get("id"), request.get("type")
        if not isinstance(rid, int) or isinstance(rid, bool) or rid < 0:
            raise _Unanswerable("a request needs an integer id >= 0")
        if kind == "reset":
            version = request.get("protocol")
            if version != protocol.VERSION or type(version) is not int:  # (true == 1.0 == 1 in Python)
                raise _Unanswerable(f"unsupported protocol version {shown(version)} "
                                    f"(this server speaks {protocol.VERSION})")
            if request.get("model") != self.model_name:
                raise _Unanswerable(f"this server implements model {quoted(self.model_name)}, "
                                    f"not {shown(request.get('model'))}")
            config = request.get("config")
            if not isinstance(config, dict):
                raise _Unanswerable("reset needs a config object")
            self._fits("reset", request)
            self.ready, self.raised = False, None  # (a reset that raises leaves nothing to serve)
            self._called("reset", config)
            self.ready = True
            reply = {"id": rid, "type": "reset_ok", "protocol": protocol.VERSION}
            if self.name:
                reply["implementation"] = self.name
            return reply
        self._asked = rid
        if kind not in ("action", "observe"):
            raise _Unanswerable(f"unknown request type {shown(kind)} (known: {', '.join(protocol.REQUESTS)})")
        if self.raised is not None:
            raise _Unanswerable(f"{kind} after the implementation raised ({self.raised}): "
                                "its state is unknown until a reset")
        if not self.ready:
            raise _Unanswerable(f"{kind} before reset")
        self._fits(kind, request)
        if kind == "observe":
            return {"id": rid, "type": "observation", "observation": self._called("observe")}
        reason = self._called("perform", self._action(request["action"]))
        if reason is None:
            return {"id": rid, "type": "performed", "observation": self._called("observe")}
        return {"id": rid, "type": "rejected", "reason": reason, "observation": self._called("observe")}

    @staticmethod
    def _fits(kind: str, request: dict) -> None:
        """A request as its schema has it (an extra member was answered as if absent, and an
        action request without its action reached the implementation)."""
        problem = protocol.first_error(protocol.validator(kind), request)
        if problem is not None:
            raise _Unanswerable(f"not a request of type {kind} ({kind}.schema.json): {problem}")

    def _action(self, data: dict) -> dict:
        """The action as the model reads it, its defaults filled in: a ``--python`` object is
        given what ``contract`` would give it (it was handed ``{"type": "push"}`` raw, and a
        count of 1.5 left it half changed), a reference design what it reads anyway."""
        from deployspec.models import get_model
        from deployspec.reference.core import ActionError

        try:
            return get_model(self.model_name).action(data).to_json()
        except ActionError as exc:
            raise _Unanswerable(describe(exc)) from None

    def _called(self, method: str, *args: Any) -> Any:
        """What the implementation's ``method`` returns; one that cannot be its answer
        (an async method's, a reset's value) is an error reply, as in process."""
        try:
            result = getattr(self.impl, method)(*args)
        except (KeyboardInterrupt, StopServing):
            raise
        except BaseException as exc:  # its state is unknown now (not the server's own failures)
            if self.ready:
                self.raised = f"request {self._asked}: {describe(exc)}"
            raise
        if (why := wrong_answer(method, result)) is not None:
            raise _Unanswerable(why)
        if method == "observe":  # a plain copy now, as in process: serialising it runs its own code
            copied = as_json(result)
            if not isinstance(copied, Wrong):
                copied = read_back(copied)
            if isinstance(copied, Wrong):
                raise _Unanswerable(copied.why)
            return copied
        return result

    def reply_to(self, line: bytes) -> dict:
        try:
            request = protocol.loads(line)
        except UnicodeDecodeError:
            return {"id": None, "type": "error", "message": "the request is not UTF-8"}
        except json.JSONDecodeError:
            return {"id": None, "type": "error", "message": "the request is not JSON"}
        except (ValueError, RecursionError) as exc:
            return {"id": None, "type": "error", "message": f"the request cannot be read: {protocol.unreadable(exc)}"}
        rid = request.get("id") if isinstance(request, dict) else None
        rid = rid if isinstance(rid, int) and not isinstance(rid, bool) and rid >= 0 else None
        try:
            return self.handle(request)
        except (KeyboardInterrupt, StopServing):
            raise
        except BaseException as exc:  # noqa: BLE001 - every failure is an error reply, never a crash
            message = str(exc) if isinstance(exc, _Unanswerable) else f"{describe(exc)}{at_user_line(exc)}"
            return {"id": rid, "type": "error", "message": message}

    def answer(self, line: bytes) -> bytes:
        """The reply line to one request line."""
        reply = self.reply_to(line)
        try:
            return _dumps(reply).encode() + b"\n"
        except (TypeError, ValueError, RecursionError) as exc:  # the implementation returned non-JSON
            why = protocol.unreadable(exc) if not isinstance(exc, TypeError) else str(exc)
            return _dumps({"id": reply.get("id"), "type": "error",
                           "message": f"the reply cannot be written as JSON: {why}"}).encode() + b"\n"


# allow_nan=False: NaN and Infinity are not JSON (docs/protocol.md: UTF-8 JSON both ways); a
# float the implementation made one is an unwritable reply, not a line a JSON parser refuses
_dumps = json.JSONEncoder(separators=(",", ":"), allow_nan=False).encode


def serve(impl: Any, model_name: str, name: str | None = None,
          stdin: BinaryIO | None = None, stdout: BinaryIO | None = None) -> int:
    """Answer requests until end of input; returns the exit status (0)."""
    stdin = stdin or sys.stdin.buffer
    stdout = stdout or sys.stdout.buffer
    server = Server(impl, model_name, name)
    try:
        for line in requests(stdin):
            if line is None:
                stdout.write(_dumps({"id": None, "type": "error", "message": (
                    f"the request is a line of over {protocol.MAX_LINE} bytes (skipped)")}).encode() + b"\n")
            elif line.strip():
                stdout.write(server.answer(line))
            else:
                continue
            stdout.flush()
            leftovers.reap_object_children()  # (what a served --python object's descendants left)
    except BrokenPipeError:  # the harness went away: nothing left to answer
        pass
    return 0


def requests(stdin: BinaryIO, limit: int = protocol.MAX_LINE) -> Iterator[bytes | None]:
    """The lines of ``stdin``; None for one longer than ``limit`` bytes, which is read past in
    pieces and never held whole (endless input without a newline, ``/dev/zero``, would
    otherwise take all the memory there is, and a signal would wait for the read to end)."""
    while True:
        line = stdin.readline(limit + 1)
        if not line:
            return
        if len(line) <= limit or line.endswith(b"\n"):
            yield line
            continue
        while line and not line.endswith(b"\n"):
            line = stdin.readline(limit)
        yield None
