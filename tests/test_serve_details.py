"""``deployspec serve``'s details a mutation pass found unpinned (contract/server.py):
which requests it refuses and how, what it writes, and when."""

from __future__ import annotations

import io
import json
import re

import pytest

from deployspec.contract import protocol
from deployspec.contract.examples import ReferenceImplementation
from deployspec.contract.server import Server, serve

RESET = {"id": 0, "type": "reset", "protocol": 1, "model": "capi", "config": {}}


def _server(impl=None, name=None) -> Server:
    return Server(impl or ReferenceImplementation("capi", "capi-safe"), "capi", name)


def _ask(server: Server, request) -> dict:
    return server.reply_to(json.dumps(request).encode())


def _ready(impl=None) -> Server:
    server = _server(impl)
    assert _ask(server, RESET)["type"] == "reset_ok"
    return server


@pytest.mark.parametrize("request_", [[1, 2], "observe", 3, None])
def test_a_request_that_is_not_an_object_is_said_to_be_one(request_):
    """JSON that is not an object gets the protocol's own words, not an AttributeError of Python's."""
    assert _ask(_ready(), request_) == {"id": None, "type": "error", "message": "a request must be a JSON object"}


@pytest.mark.parametrize("rid", [True, False, -1, "1", 1.0, None])
def test_an_id_that_is_not_an_integer_from_0_is_an_error_with_id_null(rid):
    """A bool (an int to Python), a negative or a float id is unreadable: the reply cannot carry it back."""
    assert _ask(_ready(), {"id": rid, "type": "observe"}) == {
        "id": None, "type": "error", "message": "a request needs an integer id >= 0"}


def test_id_0_is_an_id_and_comes_back_in_an_error_reply():
    """0 is the lowest id: an error for request 0 must still say it is request 0's."""
    reply = _ask(_server(), {"id": 0, "type": "observe"})
    assert reply == {"id": 0, "type": "error", "message": "observe before reset"}


@pytest.mark.parametrize("config", [[], "x", 1, None])
def test_a_reset_whose_config_is_not_an_object_is_refused(config):
    """The implementation is never handed a config it would index as a dict."""
    assert _ask(_server(), {**RESET, "config": config}) == {
        "id": 0, "type": "error", "message": "reset needs a config object"}


def test_a_reset_naming_no_model_is_refused():
    """A reset must name the model it means: a missing one is not taken for this server's."""
    request = {k: v for k, v in RESET.items() if k != "model"}
    assert _ask(_server(), request)["message"] == "this server implements model 'capi', not null"


@pytest.mark.parametrize("version, said", [(True, "true"), (1.0, "1.0"), ("1", "'1'"), (None, "null"), (2, "2")])
def test_a_reset_speaks_protocol_1_as_the_integer_1(version, said):
    """``true`` and ``1.0`` equal 1 in Python, but a peer sending them does not speak
    version 1 (the harness refuses a boolean id too); the value is quoted as it was sent."""
    assert _ask(_server(), {**RESET, "protocol": version}) == {
        "id": 0, "type": "error", "message": f"unsupported protocol version {said} (this server speaks 1)"}


@pytest.mark.parametrize("kind, said", [("observation", "'observation'"), ("performed", "'performed'"),
                                        (None, "null"), (["reset"], '["reset"]'),
                                        ("ca\u00a0pi" + "x" * 50, "'ca\\u00a0pi" + "x" * 32 + "...'")])
def test_an_unknown_request_type_is_an_error_naming_the_known_ones(kind, said):
    """A reply's type sent as a request (or none) is refused, listing reset, action and observe;
    what was sent quoted as JSON spells it (``null``, not Python's ``None``)."""
    assert _ask(_ready(), {"id": 1, "type": kind}) == {
        "id": 1, "type": "error", "message": f"unknown request type {said} (known: reset, action, observe)"}


def test_a_request_is_held_to_its_schema():
    """A member the request's schema does not have is an error (an extra member was
    answered as if absent, a user trial's finding, though the schemas forbid it), said by
    its type's schema: ``type`` alone says what a request is, never a stray ``kind``. An
    action request without its action is said so (it reached the implementation as None)."""
    server = _server()
    reply = _ask(server, {"id": 1, "type": "reset", "kind": "observe", "protocol": 1, "model": "capi", "config": {}})
    assert reply == {"id": 1, "type": "error", "message": "not a request of type reset (reset.schema.json): top "
                     "level: Additional properties are not allowed ('kind' was unexpected)"}
    assert _ask(server, {"id": 2, "type": "reset", "protocol": 1, "model": "capi", "config": {}})["type"] == "reset_ok"
    assert _ask(server, {"id": 3, "type": "observe", "extra": 1})["message"].endswith("('extra' was unexpected)")
    assert _ask(server, {"id": 4, "type": "action"})["message"] == (
        "not a request of type action (action.schema.json): top level: 'action' is a required property")


class _Answers:
    """Accepts a reset; its methods return what the test sets."""

    def __init__(self, reset=None, perform=None, observe=None):
        self.answers = {"reset": reset, "perform": perform}
        self.observed = observe or {"app": None, "droplets": [], "processes": [], "deployments": []}

    def reset(self, config):
        return self.answers["reset"]

    def perform(self, action):
        return self.answers["perform"]

    def observe(self):
        return self.observed() if callable(self.observed) else self.observed


async def _coroutine():
    return {}


def test_a_reset_that_returns_something_is_an_error_reply():
    """A reset answering a value is a misunderstood method, said at once, not served as reset_ok."""
    assert _ask(_server(_Answers(reset="done")), RESET) == {
        "id": 0, "type": "error", "message": "reset() returned 'done'; expected None"}


@pytest.mark.parametrize("outcome, why", [
    ("", "perform() returned ''; expected None (accepted) or a reason string (rejected)"),
    (422, "perform() returned 422; expected None (accepted) or a reason string (rejected)"),
])
def test_a_perform_answer_that_is_not_an_outcome_is_an_error_reply(outcome, why):
    """An empty reason is neither accepted nor rejected: not served as 'performed'."""
    server = _ready(_Answers(perform=outcome))
    assert _ask(server, protocol.action(1, {"type": "tick"})) == {"id": 1, "type": "error", "message": why}


def test_an_async_observe_is_an_error_reply_not_a_coroutine_written_as_json():
    """An async observe's coroutine said as such, as in process."""
    server = _ready()
    server.impl = _Answers(observe=_coroutine)
    reply = _ask(server, {"id": 1, "type": "observe"})
    assert reply["type"] == "error" and reply["message"].startswith("observe() returned an awaitable (coroutine)")


def test_an_error_whose_text_cannot_be_made_for_any_reason_is_still_said():
    """A __str__ raising anything (here a RuntimeError) is not a crash of serve."""

    class Odd(Exception):
        def __str__(self):
            raise RuntimeError("no")

    class Raises(_Answers):
        def perform(self, action):
            raise Odd

    reply = _ask(_ready(Raises()), protocol.action(1, {"type": "tick"}))
    assert (reply["id"], reply["type"]) == (1, "error")
    assert re.fullmatch(r"Odd: \(an unprintable Odd\) at test_serve_details\.py:\d+", reply["message"])


def test_a_reply_that_refers_to_itself_is_an_error_reply_keeping_its_id():
    """A circular observation (a ValueError when written) is one error reply, not a crash."""
    looped: dict = {}
    looped["self"] = looped
    server = _ready()
    server.impl = _Answers(observe=looped)
    line = server.answer(b'{"id": 5, "type": "observe"}\n')
    assert json.loads(line) == {"id": 5, "type": "error",
                                "message": "observe() returned something that is not JSON: Circular reference detected"}


def test_a_reply_nested_too_deeply_to_write_says_so():
    """Past the recursion limit the reason is in the protocol's words, as for a request."""
    deep: list = []
    for _ in range(100_000):
        deep = [deep]
    server = _ready()
    server.impl = _Answers(observe={"x": deep})
    line = server.answer(b'{"id": 5, "type": "observe"}\n')
    assert json.loads(line)["message"] == "observe() returned something that is not JSON: it is nested too deeply"


def test_replies_are_compact_json_lines():
    """One line per reply, without spaces after separators, as docs/protocol.md shows transcripts."""
    line = _server(name="ref").answer(json.dumps(RESET).encode() + b"\n")
    assert line == b'{"id":0,"type":"reset_ok","protocol":1,"implementation":"ref"}\n'


class _Pipe(io.BytesIO):
    """A stdout counting flushes, and what had been flushed each time."""

    def __init__(self):
        super().__init__()
        self.flushed: list[int] = []

    def flush(self):
        self.flushed.append(len(self.getvalue()))


def test_each_reply_is_flushed_before_the_next_request_is_read():
    """A harness waits for each reply before it sends the next request: an unflushed one is a hang."""
    out = _Pipe()
    seen = []

    def requests():
        for request in (RESET, {"id": 1, "type": "observe"}):
            seen.append(list(out.flushed))
            yield json.dumps(request).encode() + b"\n"

    class Stdin:  # a line each time one is asked for, noting what was flushed by then
        lines = requests()

        def readline(self, limit=-1):
            return next(self.lines, b"")

    assert serve(ReferenceImplementation("capi", "capi-safe"), "capi", stdin=Stdin(), stdout=out) == 0
    assert seen[1] == [len(out.getvalue().splitlines(keepends=True)[0])]
    assert len(out.flushed) == 2


def test_a_harness_that_went_away_ends_serving_with_0():
    """A closed pipe on stdout is the end of the session, not a traceback."""

    class Gone(io.BytesIO):
        def write(self, data):
            raise BrokenPipeError

    requests = io.BytesIO(json.dumps(RESET).encode() + b"\n")
    assert serve(ReferenceImplementation("capi", "capi-safe"), "capi", stdin=requests, stdout=Gone()) == 0


@pytest.mark.parametrize("value", [float("nan"), float("inf"), float("-inf")])
def test_a_float_that_json_cannot_say_is_an_error_reply_not_a_nan_on_the_wire(value):
    """Was: ``"x":NaN`` written as is, which no JSON parser but Python's reads (a harness in JS or Go fails)."""
    server = _ready()
    server.impl = _Answers(observe={"app": None, "droplets": [], "processes": [], "deployments": [], "x": value})
    line = server.answer(b'{"id": 5, "type": "observe"}\n')
    reply = json.loads(line, parse_constant=lambda c: pytest.fail(f"{c} written"))
    assert (reply["id"], reply["type"]) == (5, "error")
    assert reply["message"].startswith("observe() returned something that is not JSON: Out of range float values")


@pytest.mark.parametrize("constant", ["NaN", "Infinity", "-Infinity"])
def test_a_request_holding_a_float_json_has_not_is_refused(constant):
    """A request is JSON: ``NaN`` (which Python's json reads) is not taken as a number of instances."""
    line = b'{"id": 1, "type": "action", "action": {"type": "scale", "instances": ' + constant.encode() + b"}}"
    assert _ready().reply_to(line) == {"id": None, "type": "error",
                                       "message": f"the request cannot be read: {constant} is not a JSON value"}


def test_a_request_line_over_the_protocol_s_limit_is_refused_and_skipped_not_held():
    """``serve < /dev/zero`` took all 23 GB of the machine, and a SIGTERM waited for the read."""
    long = b"x" * (protocol.MAX_LINE + 5) + b"\n"
    stdin = io.BytesIO(long + json.dumps(RESET).encode() + b"\n")
    stdout = io.BytesIO()
    assert serve(ReferenceImplementation("capi", "capi-safe"), "capi", stdin=stdin, stdout=stdout) == 0
    first, second = (json.loads(line) for line in stdout.getvalue().splitlines())
    assert first == {"id": None, "type": "error",
                     "message": f"the request is a line of over {protocol.MAX_LINE} bytes (skipped)"}
    assert second["type"] == "reset_ok"


@pytest.mark.parametrize(("data", "lines"), [
    (b"abcd\nefgh\n", [b"abcd\n", b"efgh\n"]),            # at the limit, with its newline: a request
    (b"abcde\nfg", [None, b"fg"]),                         # over it; then a last line with no newline
    (b"abcdefghijklmnop\nq\n", [None, b"q\n"]),            # read past in pieces, the next one whole
    (b"abcdefghijklmnop", [None]),                         # endless input ends as one skipped line
])
def test_requests_are_lines_of_at_most_the_limit_the_rest_read_past(data, lines):
    from deployspec.contract.server import requests

    assert list(requests(io.BytesIO(data), limit=4)) == lines


def test_an_object_is_given_the_action_as_the_model_reads_it():
    """``serve --python`` handed the object the action as sent: ``{"type": "push"}`` raw (it
    raised KeyError 'instances'), and a count of 1.5 that left it half changed. It is given
    what ``contract`` gives, defaults filled in, and a wrong one is the model's error."""
    given = []

    class Recording(_Answers):
        def perform(self, action):
            given.append(action)

    server = _ready(Recording())
    assert _ask(server, {"id": 5, "type": "action", "action": {"type": "push"}})["type"] == "performed"
    assert given == [{"type": "push", "instances": 1}]
    reply = _ask(server, {"id": 6, "type": "action", "action": {"type": "push", "instances": 1.5}})
    assert reply["type"] == "error" and reply["message"].startswith("ActionError: action 'push': field 'instances'")
    assert len(given) == 1


class _RaisesOnce(ReferenceImplementation):
    """The reference, whose first ``perform`` since construction raises half-way."""

    def __init__(self):
        super().__init__("capi", "capi-safe")
        self.raised = False

    def perform(self, action):
        if not self.raised:
            self.raised = True
            raise RuntimeError("lost the database")
        return super().perform(action)


def test_after_the_implementation_raised_only_a_reset_is_served():
    """Its state is unknown: an observation or action served after it would be judged as the
    implementation's own, and a client ignoring the error would read a half-made change."""
    server = _ready(_RaisesOnce())
    assert _ask(server, protocol.action(1, {"type": "push"}))["message"].startswith(
        "RuntimeError: lost the database at test_serve_details.py:")
    for request in ({"id": 2, "type": "observe"}, protocol.action(3, {"type": "tick"})):
        assert _ask(server, request) == {
            "id": request["id"], "type": "error",
            "message": f"{request['type']} after the implementation raised (request 1: "
                       "RuntimeError: lost the database): its state is unknown until a reset"}
    assert _ask(server, {**RESET, "id": 4})["type"] == "reset_ok"
    assert _ask(server, protocol.action(5, {"type": "push"}))["type"] == "performed"


def test_a_refused_request_leaves_the_implementation_served():
    """A request the server refuses never reached the implementation: nothing is unknown."""
    server = _ready()
    assert _ask(server, protocol.action(1, {"type": "push", "instances": 1.5}))["type"] == "error"
    assert _ask(server, {"id": 2, "type": "observe"})["type"] == "observation"


def test_a_reset_that_raised_leaves_nothing_to_observe():
    """A reset that failed half-way made no state the next requests could be served from."""
    class ResetRaises(ReferenceImplementation):
        def reset(self, config):
            if config.get("start") == "empty":
                raise ValueError("no such start")
            super().reset(config)

    server = _ready(ResetRaises("capi", "capi-safe"))
    assert _ask(server, {**RESET, "id": 1, "config": {"start": "empty"}})["message"].startswith(
        "ValueError: no such start")
    assert _ask(server, {"id": 2, "type": "observe"}) == {
        "id": 2, "type": "error", "message": "observe before reset"}


def test_a_reset_that_raised_after_an_action_that_raised_is_what_is_said():
    """The observe after both was told of the older failure, the action's."""
    class Both(_RaisesOnce):
        def reset(self, config):
            if self.raised:
                raise ValueError("reset broke")
            super().reset(config)

    server = _ready(Both())
    assert _ask(server, protocol.action(1, {"type": "push"}))["type"] == "error"
    assert _ask(server, {**RESET, "id": 2})["message"].startswith("ValueError: reset broke")
    assert _ask(server, {"id": 3, "type": "observe"}) == {"id": 3, "type": "error", "message": "observe before reset"}


def test_a_failure_of_the_server_s_own_is_not_blamed_on_the_implementation(monkeypatch):
    """Only what the implementation's own calls raise leaves its state unknown."""
    server = _ready()
    monkeypatch.setattr(Server, "_action", lambda self, data: (_ for _ in ()).throw(LookupError("ours")))
    assert _ask(server, protocol.action(1, {"type": "push"}))["message"].startswith("LookupError: ours")
    monkeypatch.undo()
    assert _ask(server, {"id": 2, "type": "observe"})["type"] == "observation"
