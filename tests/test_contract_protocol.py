"""The protocol's messages, schemas, and the reference server, without processes."""

from __future__ import annotations

import functools
import io
import json
import re
from pathlib import Path

import jsonschema
import pytest

from deployspec.adapter import ImplementationError
from deployspec.contract import protocol
from deployspec.contract.examples import ReferenceImplementation
from deployspec.contract.server import Server, serve
from deployspec.models import get_model, model_names

ROOT = Path(__file__).resolve().parents[1]
OBS = {"app": None, "droplets": [], "processes": [], "deployments": []}


@pytest.mark.parametrize("name", protocol.REQUESTS + protocol.REPLIES)
def test_every_message_schema_is_valid_and_shown_in_the_docs(name):
    schema = protocol.schema(name)
    jsonschema.Draft202012Validator.check_schema(schema)
    blocks = [json.loads(b) for b in re.findall(r"```json\n(.*?)```", (ROOT / "docs/protocol.md").read_text(), re.DOTALL)]
    assert schema in blocks, f"docs/protocol.md does not show the {name} schema as shipped"


@pytest.mark.parametrize("name", model_names())
def test_action_schema_file_matches_the_vocabulary(name):
    model = get_model(name)
    shipped = json.loads((ROOT / f"deployspec/contract/schemas/{name}.actions.schema.json").read_text())
    assert shipped == protocol.action_schema(model), "regenerate: python -m deployspec.contract.protocol"
    v = jsonschema.Draft202012Validator(shipped)
    config = model.default_config()
    impl = ReferenceImplementation(name, next(iter(model.variants)))
    impl.reset(config.to_json())
    for action in model.candidate_actions(impl.observe(), config):
        assert v.is_valid(action.to_json()), action
    assert not v.is_valid({"type": "deploy", "max_in_flight": "one"})


def test_requests_the_harness_sends_satisfy_their_schemas():
    from deployspec.reference.capi import Deploy

    for request in (protocol.reset(1, "capi", get_model("capi").default_config().to_json()),
                    protocol.action(2, Deploy().to_json()), protocol.observe(3)):
        jsonschema.validate(request, protocol.schema(request["type"]))


def _reply(obj) -> bytes:
    return json.dumps(obj).encode() + b"\n"


def test_parse_reply_accepts_each_legal_reply():
    act = protocol.action(4, {"type": "cancel"})
    assert protocol.parse_reply(_reply({"id": 4, "type": "rejected", "reason": "no", "observation": OBS}),
                                act)["reason"] == "no"
    err = protocol.parse_reply(_reply({"id": None, "type": "error", "message": "unreadable"}), act)
    assert err["type"] == "error"


@pytest.mark.parametrize("line, cause", [
    (b"hello\n", "reply to action cancel is not JSON: 'hello'"),
    # a line that began as JSON: why not, and where (a missing brace at the end of a long line)
    (b'{"id": 4, "type": "performed", "observation": {"app": ' + b"1" * 100 + b"}\n",
     ("is not JSON: '{\"id\": 4, \"type\": \"performed\", \"observation\": {\"app\": 11111111111111111111111111…' "
      "(Expecting ',' delimiter at character 157, after '…1111111111111111111111111111}')")),
    (_reply({"type": "performed", "observation": OBS}), "reply to action cancel has no id; the request's id is 4"),
    (_reply({"type": "error", "message": "boom"}), "has no id; the request's id is 4 (an error reply: 'boom')"),
    (b"[1, 2]\n", "is not a JSON object"),
    (_reply({"id": 5, "type": "performed", "observation": OBS}), "carries id 5, but the request's id is 4"),
    (_reply({"id": 4, "type": "observation", "observation": OBS}),
     "has type 'observation'; expected performed or rejected or error"),
    (_reply({"id": 4, "type": "rejected", "observation": OBS}),
     "violates the protocol (rejected schema): top level: 'reason' is a required property"),
    (_reply({"id": 4, "type": "performed", "observation": OBS, "extra": 1}),
     "Additional properties are not allowed"),
    # what the reply said, as JSON spells it (not Python's True and None)
    (_reply({"id": True, "type": "performed", "observation": OBS}), "carries id true, but the request's id is 4"),
    # an error names its request too, unless it could not read one (id null): not blamed on this one
    (_reply({"id": 9, "type": "error", "message": "x"}), "carries id 9, but the request's id is 4"),
    (_reply({"id": 4, "type": None, "observation": OBS}), "has type null; expected performed or rejected or error"),
    # what Python's json reads but JSON does not have: a float no other parser takes
    (b'{"id": 4, "type": "performed", "observation": {"x": NaN}}\n',
     "reply to action cancel cannot be read: NaN is not a JSON value"),
    (b'{"id": 4, "type": "performed", "observation": {"x": -Infinity}}\n',
     "reply to action cancel cannot be read: -Infinity is not a JSON value"),
    # a name twice: Python's json keeps the last, other parsers the first (request 9 answered, or 4)
    (b'{"id": 9, "type": "performed", "observation": {}, "id": 4}\n',
     'reply to action cancel cannot be read: an object names "id" twice'),
    (b'{"id": 4, "type": "performed", "observation": {"app": null, "app": {}}}\n',
     'reply to action cancel cannot be read: an object names "app" twice'),
    # valid JSON that Python cannot read: a fault naming why, not a RecursionError or ValueError
    (b"[" * 100_000 + b"]" * 100_000 + b"\n", "reply to action cancel cannot be read: it is nested too deeply"),
    (b'{"id": ' + b"4" * 5000 + b', "type": "performed"}\n',
     ("reply to action cancel cannot be read: Exceeds the limit (4300 digits) for integer string conversion: "
     "value has 5000 digits")),
])
def test_parse_reply_names_the_fault(line, cause):
    with pytest.raises(ImplementationError, match=re.escape(cause)):
        protocol.parse_reply(line, protocol.action(4, {"type": "cancel"}))


def test_an_error_with_the_id_of_the_request_before_is_a_second_reply_to_it():
    with pytest.raises(ImplementationError, match="a second reply to observe, which had its reply already"):
        protocol.parse_reply(_reply({"id": 3, "type": "error", "message": "x"}),
                             protocol.action(4, {"type": "cancel"}), protocol.observe(3))


def test_observation_checker_reports_the_path_and_remembers_valid_observations():
    checker = protocol.ObservationChecker(get_model("capi"))
    bad = {**OBS, "processes": [{"id": 0, "droplet": 0, "instances": ["UP"]}]}
    assert checker.check(bad).startswith("processes/0/instances/0: 'UP' is not one of")
    assert checker.check(OBS) is None and len(checker._seen) == 1
    assert checker.check(dict(reversed(list(OBS.items())))) is None and len(checker._seen) == 1
    assert checker.check([]) == "top level: list is not an object"
    huge = {**OBS, "processes": [{"id": 0, "droplet": 0, "instances": ["UP" * 10**6]}]}
    assert len(checker.check(huge)) < 400  # jsonschema quotes the value: clipped to one readable line


def _nested(depth: int) -> list:
    x: list = []
    for _ in range(depth - 1):
        x = [x]
    return x


def _called_from(frames: int, f):
    return f() if frames == 0 else _called_from(frames - 1, f)


@pytest.mark.parametrize("frames", [0, 500])
def test_a_value_nested_past_the_limit_is_one_violation_said_before_validating(frames):
    """Nested past ``MAX_NESTING`` (JSON reads far deeper): a violation in one line, the
    same from any caller's stack and Python version, never a RecursionError out of
    ``check`` (jsonschema and ``repr`` recurse per level). Up to the limit, the schema's
    own message."""
    checker = protocol.ObservationChecker(get_model("capi"))
    limit = protocol.MAX_NESTING
    deep = {**OBS, "droplets": [_nested(limit - 2)]}  # the observation, "droplets", then the rest
    too_deep = {**OBS, "droplets": [_nested(limit - 1)]}
    said = f"top level: it is nested too deeply (over {limit} levels)"
    assert protocol.nested_too_deeply(deep) is False and protocol.nested_too_deeply(too_deep) is True
    assert _called_from(frames, functools.partial(checker.check, deep)).startswith("droplets/0: [[")
    assert _called_from(frames, functools.partial(checker.check, too_deep)) == said
    assert _called_from(frames, functools.partial(checker.check, {**OBS, "droplets": [_nested(900)]})) == said
    reply = _reply({"type": "error", "id": 4, "message": "no", "detail": [_nested(limit - 1)]})
    with pytest.raises(ImplementationError, match=re.escape(said)):
        _called_from(frames, functools.partial(protocol.parse_reply, reply, protocol.action(4, {"type": "cancel"})))


def test_the_observations_nest_far_less_deep_than_the_limit():
    """What the limit refuses no model's schema accepts (each nests at most 4 deep)."""
    def deepest(schema) -> int:
        if not isinstance(schema, dict):
            return 0
        inner = [schema[k] for k in ("items", "additionalProperties") if isinstance(schema.get(k), dict)]
        inner += [*schema.get("properties", {}).values(), *schema.get("patternProperties", {}).values()]
        alternatives = [deepest(s) for k in ("oneOf", "anyOf", "allOf") for s in schema.get(k, [])]
        kinds = schema.get("type") if isinstance(schema.get("type"), list) else [schema.get("type")]
        own = 1 if {"object", "array"} & set(kinds) else 0
        return max([own + max([deepest(s) for s in inner], default=0), *alternatives])

    for name in model_names():
        assert 2 <= deepest(get_model(name).schema()) <= 4 < protocol.MAX_NESTING


def test_a_running_container_must_name_the_digest_it_runs():
    """A slots container is ``running`` only after pulling a healthy digest (docs/protocol.md);
    one without a digest is said to be the schema's problem at its path, instead of
    ``slot_runs_one_version`` failing to sort ``None`` with a digest later on."""
    impl = ReferenceImplementation("slots", "slots-pipeline-immutable")
    impl.reset({"start": "release"})
    obs = impl.observe()
    checker = protocol.ObservationChecker(get_model("slots"))
    assert checker.check(obs) is None
    name = next(k for k, v in obs["slots"].items() if v["instances"][0]["status"] == "running")
    bad = json.loads(json.dumps(obs))
    bad["slots"][name]["instances"][0]["digest"] = None
    assert checker.check(bad).startswith(f"slots/{name}/instances/0/digest: null is not of type")
    bad["slots"][name]["instances"][0]["status"] = "crash_loop"  # a tag with nothing behind it yet
    assert checker.check(bad) is None

def test_an_implementation_naming_one_id_twice_is_said_so_at_the_second():
    """Two web processes with id 7 passed the schema: a picture drew them as one lane and
    a property reading the process with that id saw either. Ids are numbered, never
    reused; a slot's settings are named once each."""
    checker = protocol.ObservationChecker(get_model("capi"))
    twice = {**OBS, "processes": [{"id": 7, "droplet": 0, "instances": []}, {"id": 7, "droplet": 1, "instances": []}]}
    assert checker.check(twice) == "processes/1/id: items 0 and 1 have the same id 7"
    twice["processes"][1]["id"] = 8
    assert checker.check(twice) is None
    impl = ReferenceImplementation("slots", "slots-webhook-tag")
    impl.reset({"start": "webhook"})
    obs = impl.observe()
    settings = obs["slots"]["production"]["settings"]
    assert settings, "the webhook start turns continuous deployment on in production"
    obs["slots"]["production"]["settings"] = settings + settings[:1]
    assert protocol.ObservationChecker(get_model("slots")).check(obs) == (
        f"slots/production/settings/{len(settings)}/name: items 0 and {len(settings)} have the same name "
        f'"{settings[0]["name"]}"')


def test_capi_lists_out_of_their_order_are_said_at_the_first_item_out_of_place():
    """The properties read deployment d as ``deployments[d]``, droplet i as ``droplets[i]`` and
    the first process as the oldest: listed newest first, a correct implementation was
    judged to break cancel_restores_last_good (the other deployment's cancel); numbered from
    1, it failed as a property that "cannot read" the observation."""
    checker = protocol.ObservationChecker(get_model("capi"))
    impl = ReferenceImplementation("capi", "capi-safe")
    impl.reset({})
    for action in ({"type": "push", "instances": 1}, {"type": "stage", "healthy": True}, {"type": "deploy"}):
        assert impl.perform(action) is None
    obs = impl.observe()
    assert [len(obs[k]) for k in ("droplets", "processes", "deployments")] == [2, 2, 1]
    assert checker.check(obs) is None
    newest_first = {**obs, "processes": obs["processes"][::-1]}
    assert checker.check(newest_first) == "processes/1/id: 0: not above the id before it, 1 (oldest first, ids increasing)"
    gap = {**obs, "processes": [dict(obs["processes"][0], id=0), dict(obs["processes"][1], id=5)]}
    assert checker.check(gap) is None  # processes are the ones that exist: ids may skip
    for key in ("droplets", "deployments"):
        from_one = {**obs, key: [dict(item, id=item["id"] + 1) for item in obs[key]]}
        assert checker.check(from_one) == (f"{key}/0/id: 1: item 0 must have id 0 (numbered 0, 1, 2… in "
                                           "creation order, oldest first)")


@pytest.mark.parametrize("member", ["max_in_flight", "strategy", "canary_steps", "canary_step", "web_instances"])
def test_a_capi_deployment_without_a_member_is_refused_by_the_schema(member):
    """Each member is required, null ones too (Go's ``omitempty`` leaves them out): left out,
    the properties read their defaults, and an implementation that accepted
    deploy(max_in_flight=2) and did not say so was judged over capacity at max_in_flight 1."""
    checker = protocol.ObservationChecker(get_model("capi"))
    impl = ReferenceImplementation("capi", "capi-safe")
    impl.reset({})
    for action in ({"type": "push", "instances": 1}, {"type": "deploy"}):
        assert impl.perform(action) is None
    obs = impl.observe()
    assert checker.check(obs) is None
    del obs["deployments"][0][member]
    assert checker.check(obs) == f"deployments/0: '{member}' is a required property"


def test_server_transcript():
    server = Server(ReferenceImplementation("capi", "capi-2022"), "capi", name="ref")
    ask = lambda obj: server.reply_to(json.dumps(obj).encode())
    assert ask({"id": 1, "type": "observe"})["message"] == "observe before reset"
    assert ask({"id": 2, "type": "reset", "protocol": 2, "model": "capi", "config": {}})["type"] == "error"
    assert ask({"id": 3, "type": "reset", "protocol": 1, "model": "slots", "config": {}})["message"] == \
        "this server implements model 'capi', not 'slots'"
    assert ask(protocol.reset(4, "capi", {})) == {"id": 4, "type": "reset_ok", "protocol": 1, "implementation": "ref"}
    pushed = ask(protocol.action(5, {"type": "push", "instances": 1}))
    assert pushed["type"] == "performed" and pushed["observation"]["processes"][0]["instances"] == ["STARTING"]
    refused = ask(protocol.action(6, {"type": "push", "instances": 1}))
    assert refused["type"] == "rejected" and refused["reason"] == "the app already exists"
    assert ask(protocol.action(7, {"type": "fly"}))["type"] == "error"
    assert server.reply_to(b"not json") == {"id": None, "type": "error", "message": "the request is not JSON"}
    assert server.reply_to(b'{"id": 1, "type": "observe", "x": "\xff"}') == {  # JSON, but not UTF-8
        "id": None, "type": "error", "message": "the request is not UTF-8"}
    for reply in (pushed, refused):
        jsonschema.validate(reply, protocol.schema(reply["type"]))


def test_serve_answers_what_python_cannot_read_with_an_error_reply():
    """JSON nested 100,000 deep or with a 5,000-digit id is valid, but Python cannot
    read it; and an implementation may return an observation that cannot be written."""

    class Unwritable(ReferenceImplementation):
        def observe(self):
            return {**super().observe(), "x": {1, 2}}

    requests = [b"[" * 100_000 + b"]" * 100_000, b'{"id": ' + b"1" * 5000 + b', "type": "observe"}',
                b'{"id": 7, "type": "observe", "type": "reset"}',
                _reply(protocol.reset(1, "capi", {})).rstrip(), _reply(protocol.observe(2)).rstrip()]
    out = io.BytesIO()
    assert serve(Unwritable("capi", "capi-safe"), "capi", stdin=io.BytesIO(b"\n".join(requests) + b"\n"),
                 stdout=out) == 0
    replies = [json.loads(line) for line in out.getvalue().splitlines()]
    assert [(r["id"], r["type"], r.get("message")) for r in replies] == [
        (None, "error", "the request cannot be read: it is nested too deeply"),
        (None, "error", ("the request cannot be read: Exceeds the limit (4300 digits) for integer string "
                        "conversion: value has 5000 digits")),
        (None, "error", 'the request cannot be read: an object names "type" twice'),
        (1, "reset_ok", None),
        (2, "error", "observe() returned something that is not JSON: Object of type set is not JSON serializable")]


def test_serve_answers_line_by_line_until_end_of_input():
    requests = b"".join(_reply(r) for r in (protocol.reset(1, "capi", {}), protocol.observe(2))) + b"\n"
    out = io.BytesIO()
    assert serve(ReferenceImplementation("capi", "capi-safe"), "capi", stdin=io.BytesIO(requests), stdout=out) == 0
    replies = [json.loads(line) for line in out.getvalue().splitlines()]
    assert [r["type"] for r in replies] == ["reset_ok", "observation"]
    assert replies[1]["observation"] == OBS


def test_the_quick_validity_check_never_accepts_what_the_schema_rejects():
    samples = [OBS, [], None, "x", 1, True, -1, 1.0, "", {"id": 1}]
    for name in protocol.REPLIES:
        sch = protocol.schema(name)
        keys = list(sch["properties"]) + ["extra"]
        for n, key in enumerate(keys):
            for value in samples:
                msg = {"id": 3, "type": name, "protocol": 1, "reason": "r", "message": "m", "observation": OBS}
                msg = {k: v for k, v in msg.items() if k in sch["properties"]}
                msg[key] = value
                if protocol._plainly_valid(sch, msg):
                    assert protocol.validator(name).is_valid(msg), msg
                if n == 0:
                    del msg[key]
                    assert not protocol._plainly_valid(sch, msg)


def test_sigterm_while_serve_answers_a_request_ends_the_server():
    """The server turns every Exception of a request into an error reply; SIGTERM's
    exception (a BaseException) must not be one, or the server serves on."""
    from deployspec.contract.serve_command import _Terminated
    from deployspec.contract.server import Server

    class Stopped:
        def reset(self, config):
            pass

        def observe(self):
            raise _Terminated

    server = Server(Stopped(), "capi")
    server.ready = True
    with pytest.raises(_Terminated):
        server.answer(b'{"id": 1, "type": "observe"}\n')


def test_what_the_docs_say_of_web_instances_0_and_max_depth_null_holds():
    """docs/protocol.md: a deploy's ``web_instances: 0`` means "not given" (null in the
    observation); a reset's ``max_depth`` bounds only the explorer (null: no bound), and a
    contract run never reads it."""
    from deployspec.contract import harness

    docs = (ROOT / "docs/protocol.md").read_text()
    assert "`web_instances: 0` means *not given*" in docs and '`"web_instances": null`' in docs
    assert "`max_depth` is one of those" in docs and "`null` means no bound" in docs
    model = get_model("capi")
    config = model.default_config().to_json()
    assert config["max_depth"] is None  # what every reset carries unless --bound says otherwise
    deploy = {"type": "deploy", "max_in_flight": 1, "strategy": "rolling", "canary_steps": []}
    given_shown = []
    for variant in model.variants:
        for given in (0, 2):
            impl = ReferenceImplementation("capi", variant)
            impl.reset(config)
            impl.perform({"type": "push", "instances": 3})
            refused = impl.perform({**deploy, "web_instances": given})
            assert refused is None or given, variant  # the designs before PR #4247 refuse the option
            if refused is None:
                given_shown.append((given, impl.observe()["deployments"][0]["web_instances"]))
    assert set(given_shown) == {(0, None), (2, 2)}

    def stats(bounds):
        run = harness.run(model, harness.Target("python", "deployspec.contract.examples:capi_safe"),
                          properties=["single_active_deployment"], max_examples=5, seed=0, bounds=bounds)
        (r,) = run.results
        return r.verdict, r.stats["examples"], r.stats["steps"]

    assert stats(None) == stats({"max_depth": 1})


@pytest.mark.parametrize("name", model_names())
def test_the_action_schema_says_which_fields_are_sent_only_when_set(name):
    """An implementer reads the schema to know what arrives: a field the harness leaves out
    at its default (``SENT_IF_SET``, capi's ``deploy`` ``new_droplet``) is not "always sent",
    and the schema and docs/protocol.md must not say every field is."""
    import attrs
    from deployspec.reference.core import SENT_IF_SET

    model = get_model(name)
    schema = protocol.action_schema(model)
    by_kind = {v["title"]: v for v in schema["oneOf"]}
    optional = []
    for kind, cls in model.vocabulary.items():
        for field in attrs.fields(cls):
            prop = by_kind[kind]["properties"][field.name]
            sent_if_set = bool(field.metadata.get(SENT_IF_SET))
            assert ("only when" in prop.get("description", "")) == sent_if_set, (kind, field.name)
            if sent_if_set:
                optional.append(field.name)
    if optional:
        assert "always sends every field" not in schema["description"]
    docs = (ROOT / "docs/protocol.md").read_text()
    assert "the harness always sends every\nfield." not in docs


def test_only_an_error_reply_may_carry_a_null_id():
    """P2: an observation with id null answers no request: refused, naming the id."""
    request = {"id": 3, "type": "observe"}
    line = json.dumps({"id": None, "type": "observation", "observation": {}}).encode()
    with pytest.raises(ImplementationError, match="carries id null, but the request.s id is 3"):
        protocol.parse_reply(line, request)


@pytest.mark.parametrize("version", [1.0, True, "1"])
def test_a_reset_ok_speaks_protocol_1_only_as_the_integer_1(version):
    """JSON Schema's ``const: 1`` also admits 1.0 (and Python's ``==`` true): the schema
    asks for an integer, as serve does of a reset."""
    reset = protocol.reset(1, "capi", {})
    with pytest.raises(ImplementationError, match=r"violates the protocol \(reset_ok schema\): protocol: "):
        protocol.parse_reply(_reply({"id": 1, "type": "reset_ok", "protocol": version}), reset)
    assert protocol.parse_reply(_reply({"id": 1, "type": "reset_ok", "protocol": 1}), reset)["protocol"] == 1



def test_the_worked_transcript_in_the_docs_is_what_the_harness_sends_and_the_server_answers():
    """docs/protocol.md's transcript is what implementers copy: its reset lacked the
    max_depth the harness sends. Each request is the harness's, each answer the
    reference server's, byte for byte."""
    text = (Path(__file__).parent.parent / "docs" / "protocol.md").read_text()
    block = text.split("## A worked transcript", 1)[1].split("```", 2)[1]
    lines = [ln for ln in block.splitlines() if ln.startswith(("> ", "< "))]
    asked, answered = [ln[2:] for ln in lines[::2]], [ln[2:] for ln in lines[1::2]]
    assert len(asked) == len(answered) == 9 and all(ln.startswith("> ") for ln in lines[::2])
    config = get_model("capi").default_config().to_json()
    assert json.loads(asked[0]) == protocol.reset(1, "capi", config)
    server = Server(ReferenceImplementation("capi", "capi-2022"), "capi", name="deployspec capi-2022")
    for request, answer in zip(asked, answered):
        assert json.dumps(server.reply_to(request.encode()), separators=(",", ":")) == answer

