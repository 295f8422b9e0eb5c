"""An incident: the users' actions, in the order they came, read from a file.

An operator knows what was typed (``cf push``, ``cf restart --strategy rolling``,
``cf cancel-deployment``…) but not how the updater's ticks and the instances' starts
fell between those calls. ``check --incident FILE`` explores every way the platform's
own actions can interleave with them (:mod:`deployspec.engines.incident_graph`), so a
verdict is about the incident, not about one guess at its timing.

The file lists one action per line, as ``show`` and ``replay`` print them
(``push(instances=2)``, ``deploy()``, ``cancel``, ``tick(failed=[d0])``,
``runtime(process=P1)``) or as JSON objects (``{"type": "scale", "instances": 3}``);
``#`` starts a comment. A JSON list of such objects, or a trace file (its users'
steps), is read too. A platform action listed is pinned at its place; ``settle`` says the
platform came to rest there (:class:`Settle`).
"""

from __future__ import annotations

import ast
import io
import json
import re
import sys
from typing import Any, ClassVar

import attrs

from deployspec.contract import protocol
from deployspec.models import UsageError
from deployspec.reference.core import MAX_BOUND, MAX_STEPS, Action, ActionError
from deployspec.text import printable_line, quoted

#: the longest incident read (actions): beyond it, a search over every interleaving is hopeless
MAX_ACTIONS = 200
#: the largest incident file read (bytes)
MAX_BYTES = 1 << 20


@attrs.frozen
class Settle:
    """``settle`` in an incident: the platform came to rest here (every instance started
    or crashed, the updater idle) before the next action; its actions run in any order
    until it rests. Without it, any timing is explored, also one in which the app pushed
    a moment before had not started yet."""

    kind: ClassVar[str] = "settle"
    actor: ClassVar[str] = "platform"

    def to_json(self) -> dict:
        return {"type": "settle"}


SETTLE = Settle()


@attrs.frozen
class Incident:
    """The users' actions of an incident, and where they were read (for titles)."""

    source: str
    actions: tuple[Action | Settle, ...]

    def sized(self, config, bounds: dict[str, Any]) -> dict[str, Any]:
        """``bounds`` fitted to the most instances a call asks for (``push(instances=60)``,
        ``deploy(web_instances=…)``): ``max_instances`` raised to it (as far as a bound
        goes; one ``--bound`` gave stands: the calls are given whatever it says), and the
        settle phase's steps with it, ten per instance unless ``--bound settle_steps`` is
        given (at 80 a rolling restart of 60 instances was cut short, and every design was
        called violated of ``deployment_converges``)."""
        most = max((value for a in self.actions if not isinstance(a, Settle)
                    for name, value in a.to_json().items()
                    if (name == "instances" or name.endswith("_instances")) and type(value) is int), default=0)
        have = config.to_json()
        if type(have.get("max_instances")) is not int or most <= have["max_instances"]:
            return bounds
        raised = {} if "max_instances" in bounds else {"max_instances": min(most, MAX_BOUND)}
        per = getattr(type(config), "SETTLE_PER_INSTANCE", None)
        if per is not None and "settle_steps" not in bounds:
            raised["settle_steps"] = min(MAX_STEPS, max(have["settle_steps"], per * most))
        return bounds | raised


def read(path: str, model) -> Incident:
    """The incident in ``path`` for ``model``, or a one-line UsageError saying where it is wrong."""
    named = quoted(path)  # (- as given: as show and replay take a trace, a file piped in)
    if path == "-":
        path = STDIN
    raw = _raw(path, named)
    if len(raw) > MAX_BYTES:
        raise UsageError(f"--incident {named}: larger than {MAX_BYTES >> 20} MiB; an incident lists actions")
    try:
        text = raw.decode("utf-8-sig")  # (a byte-order mark, as some editors save)
    except UnicodeDecodeError as exc:
        raise UsageError(f"--incident {named}: not UTF-8 text{_encoding_hint(raw, exc)}") from None
    try:
        actions = _actions(text, raw, path, model)
    except UsageError as wrong:
        raise _of_another_model(wrong, text, raw, path, model) from None
    if all(isinstance(a, Settle) for a in actions):  # (none, or settle alone: a proof of no call at all)
        only = " but settle" if actions else ""
        raise UsageError(f"--incident {named}: no actions{only} (one per line, e.g. "
                         f"{EXAMPLES.get(model.name, 'kind()')})")
    if len(actions) > MAX_ACTIONS:
        raise UsageError(f"--incident {named}: {len(actions)} actions, at most {MAX_ACTIONS}")
    return Incident(path, tuple(actions))


#: what an incident read from standard input (``--incident -``) is called
STDIN = "standard input"


def _raw(path: str, named: str) -> bytes:
    """The file's bytes (at most one past ``MAX_BYTES``), or a one-line UsageError."""
    if path == STDIN:
        if sys.stdin is None or sys.stdin.closed:
            raise UsageError("--incident -: standard input is closed; name the incident's file")
        return sys.stdin.buffer.read(MAX_BYTES + 1)
    try:
        with open(path, "rb") as f:
            return f.read(MAX_BYTES + 1)
    except OSError as exc:
        raise UsageError(f"--incident {named}: cannot read: {exc.strerror or exc}") from None


def _encoding_hint(raw: bytes, exc: UnicodeDecodeError) -> str:
    """Where the text stops being UTF-8, and what it is where that is plain: PowerShell's
    ``>`` writes UTF-16, which read as "not UTF-8 text" and nothing more."""
    if raw.startswith((b"\xff\xfe", b"\xfe\xff")):
        return " (it is UTF-16, as PowerShell's > writes: save it as UTF-8, e.g. Out-File -Encoding utf8)"
    text = exc.object  # (what was decoded: after a UTF-8 byte-order mark, which offsets count from)
    line = text.count(b"\n", 0, exc.start) + 1
    return f" (line {line}: byte 0x{text[exc.start]:02x}; save it as UTF-8)"


def _actions(text: str, raw: bytes, path: str, model) -> list[Action | Settle]:
    actions = _from_json(text, raw, path, model) if text.lstrip().startswith(("[", "{")) else None
    if actions is None:  # (lines as an editor numbers them: not split at form feeds or U+2028)
        actions = [_from_line(line, f"line {n}", model, quoted(path))
                   for n, line in enumerate(text.split("\n"), 1) if _content(line)]
    return actions


def _of_another_model(wrong: UsageError, text: str, raw: bytes, path: str, model) -> UsageError:
    """``wrong``, or, where the whole file reads as another model's actions, that: a Cloud
    Foundry incident run on App Service designs was told ``push`` has no field ``instances``."""
    from deployspec.models import get_model, model_names

    for other in model_names():
        if other == model.name:
            continue
        try:
            if _actions(text, raw, path, get_model(other)):
                meant = f" (or, meant for {model.name}: {wrong.hint})" if isinstance(wrong, _Like) else ""
                return UsageError(f"--incident {quoted(path)}: its actions are the {other} model's, and the "
                                  f"--variant designs are of {model.name}: name {other} designs (deployspec "
                                  f"variants){meant}")
        except UsageError:
            continue
    return wrong


class _Like(UsageError):
    """A line that is another model's action, with what it is in this one (``LIKE``)."""

    def __init__(self, hint: str, named: str) -> None:
        super().__init__(f"--incident {named}: {hint} (docs/incidents.md)")
        self.hint = hint


def _content(line: str) -> str:
    return line.split("#", 1)[0].strip() if not line.lstrip().startswith("{") else line.strip()


def _from_json(text: str, raw: bytes, path: str, model) -> list[Action | Settle] | None:
    """A JSON list of actions, or a trace's users' actions; None if ``text`` is not JSON
    (the lines are read then)."""
    named = quoted(path)
    try:
        data = protocol.loads(text)  # (as strict as every JSON deployspec reads: no name twice, no NaN)
    except json.JSONDecodeError:
        return None
    except (ValueError, RecursionError) as exc:
        raise UsageError(f"--incident {named}: JSON, but {protocol.unreadable(exc)}") from None
    if isinstance(data, dict) and "format" not in data:  # one action (a JSON line alone)
        data = [data]
    if isinstance(data, dict):
        from deployspec import traces

        trace = traces.load(path, io.BytesIO(raw))  # (what was read: standard input is read once)
        if trace["model"] != model.name:
            raise UsageError(f"--incident {named}: a trace of {trace['model']}, not of {model.name}")
        actions = (model.action(s["action"]) for s in trace["steps"])  # (a trace read is valid)
        return [a for a in actions if a.actor == "user"]  # (the settle phase is the platform's)
    if not isinstance(data, list):
        raise UsageError(f"--incident {named}: JSON, but neither a list of actions nor a trace")
    return [_settle_or_action(item, model, f"--incident {named}: item {i}") for i, item in enumerate(data)]


def _settle_or_action(data: Any, model, where: str) -> Action | Settle:
    """An incident's entry as JSON: ``settle``, or an action of ``model``'s; ``where``
    starts the one-line error."""
    if data == {"type": "settle"}:
        return SETTLE
    try:
        return model.action(data)
    except ActionError as exc:
        kind = data.get("type") if isinstance(data, dict) else None
        said = _command_hint(kind, model) if isinstance(kind, str) and kind not in model.vocabulary else None
        raise UsageError(f"{where}: {exc}{'; ' + said if said else ''}") from None


#: each model's platform commands, by a phrase of theirs, as its actions (docs/trace-format.md): a hint
COMMANDS = {
    "capi": {"cf push": "push(instances=N) for a new app, deploy(new_droplet=true) with --strategy rolling",
             "cf restart": "deploy() (with --strategy rolling)", "cf restage": "deploy(new_droplet=true)",
             "cf cancel-deployment": "cancel()", "cf continue-deployment": "continue()",
             "cf scale": "scale(instances=N)", "cf rollback": "deploy(revision=D)", "cf stage": "stage()",
             "cf set-droplet": "stage()"},
    "slots": {"az webapp deployment slot swap": "swap()", "az webapp restart": "restart(slot='{slot}')",
              "az webapp config container set": "set_image(slot='{slot}')", "docker push": "push()",
              "az acr build": "push()", "az acr import": "push()",
              "az webapp start": "restart(slot='{slot}') (a start pulls the image)",
              "az webapp scale": "scale_out() (once per instance added)",
              "az appservice plan update": "scale_out() (once per instance added)"},
}
#: another model's action a user of this one may write for its own: what it is here
LIKE = {"slots": {"scale": "scale_out() (App Service adds one instance per scale_out)"}}
#: the cf commands a canary strategy turns into a canary deployment, as that deployment
_CANARY = {"cf restart": "deploy(strategy='canary', canary_steps=[…])",
           "cf restage": "deploy(new_droplet=true, strategy='canary', canary_steps=[…])",
           "cf push": "deploy(new_droplet=true, strategy='canary', canary_steps=[…])",
           "cf rollback": "deploy(revision=D, strategy='canary', canary_steps=[…])"}
#: commands whose flags make them another thing than ``COMMANDS`` says, by the command (the
#: tool's name given: ``restart`` alone is no cf command line) and a pattern of its flags: what
#: to write instead (a user trial followed "cf restart is deploy()" for a canary restart and
#: lost the canary)
NOT_LIKE = {
    "capi": (*((command, r"--strategy[ =]canary",
                f"{command} --strategy canary is {deployment} here (--instance-steps 20,50: canary_steps=[20, 50])")
               for command, deployment in _CANARY.items()),
             ("cf scale", r"(^| )-[mkl]( |$)", ("cf scale -m, -k or -l restarts the app with new limits: not "
                                               "modelled (cf scale -i N is scale(instances=N))")),
             ("cf restart", r"^(?!.*--strategy)", ("cf restart without --strategy stops every instance, then starts "
                                                  "them: not modelled (with --strategy rolling it is deploy())")),
             ("cf restage", r"^(?!.*--strategy)", ("cf restage without --strategy stops every instance, then stages "
                                                  "and starts them: not modelled (with --strategy rolling it is "
                                                  "deploy(new_droplet=true))"))),
    "slots": (("az webapp deployment slot swap", r"--action[ =]preview",
               ("a swap preview restarts staging with production's settings (a swap's first phase), which pulls "
                "its image again, and swaps nothing: restart(slot='staging') here")),
              ("az webapp deployment slot swap", r"--action[ =]reset",
               ("a swap reset restarts staging with its own settings again, which pulls its image, and swaps "
                "nothing: restart(slot='staging') here")),
              ("az webapp config container set", r"@sha256:",
               ("az webapp config container set is set_image(slot='{slot}') here; the design decides what it "
                "writes (a digest design, the digest of :release's newest build): a digest of your choosing "
                "cannot be named")),
              ("az webapp stop", r"", "az webapp stop is not modelled (a stopped site runs nothing)")),
}
#: an argument given by name, in each model's words
_NAMED_EXAMPLE = {"capi": "instances=3", "slots": "slot='staging'"}
#: an example of each model's lines, for a line that is no action
EXAMPLES = {"capi": "deploy(), scale(instances=3)", "slots": "swap(), set_image(slot='staging')"}


def _command_hint(text: str, model) -> str | None:
    """``cf cancel-deployment is cancel() here`` where ``text`` names one of the model's
    platform commands (the tool's name may be left out)."""
    words = " ".join(text.split())
    named = re.search(r"(?:--slot|-s)[ =](\S+)", words)  # (az's default slot is production)
    slot = named[1] if named else "production"
    other = ""
    if slot not in ("production", "staging"):  # (a slot of another name: the model has two)
        slot, other = "staging", f", if {slot} is your staging slot (the model's are production and staging)"
    for command, flags, said in NOT_LIKE.get(model.name, ()):
        if (words == command or words.startswith(command + " ")) and re.search(flags, words[len(command):].strip()):
            return said.format(slot=slot) + (other if "{slot}" in said else "")
    for command, action in COMMANDS.get(model.name, {}).items():
        if _after_command(words, command) is not None:
            return f"{command} is {action.format(slot=slot)} here{other if '{slot}' in action else ''}"
    return None


def _after_command(words: str, command: str) -> str | None:
    """What follows ``command`` (its tool's name may be left out) in ``words``, or None
    where they are another command."""
    for said in (command, command.split(" ", 1)[1]):
        if words == said or words.startswith(said + " "):
            return words[len(said):].strip()
    return None


#: a line in the form ``show`` prints: ``kind`` or ``kind(name=value, …)``
_CALL = re.compile(r"([A-Za-z_][A-Za-z0-9_]*)\s*(?:\((.*)\))?\s*")
#: a number as ``show`` prints it: P1 (a web process), d0 (a deployment)
_NUMBERED = re.compile(r"[Pd](\d+)")
#: a list of deployments or processes as ``show`` prints it, unbracketed: ``failed=d0,d1``
_SHOWN_LIST = re.compile(r"=\s*(([dP])\d+(?:\s*,\s*\2\d+)+)\b(?!\s*=)")
#: JSON's words and Python's, as values
_WORDS = {"true": True, "false": False, "null": None, "True": True, "False": False, "None": None}


def _from_line(line: str, where: str, model, named: str) -> Action | Settle:
    text = _content(line)
    if text.startswith("{"):
        try:
            data = protocol.loads(text)
        except json.JSONDecodeError as exc:
            raise UsageError(f"--incident {named}: {where}: not a JSON object ({exc.msg})") from None
        except (ValueError, RecursionError) as exc:
            raise UsageError(f"--incident {named}: {where}: {protocol.unreadable(exc)}") from None
    else:
        data = _call(text, where, model, named)
    return _settle_or_action(data, model, f"--incident {named}: {where}")


def _call(text: str, where: str, model, named: str) -> dict:
    """``deploy(strategy='canary', canary_steps=[50])`` as the action's JSON."""
    if text in ("settle", "settle()"):
        return {"type": "settle"}
    m = _CALL.fullmatch(text)
    if m is None:
        said = _command_hint(text, model)
        hint = f": {said}" if said else f" (e.g. {EXAMPLES.get(model.name, 'kind(name=value)')}, or a JSON object)"
        raise UsageError(f"--incident {named}: {where}: {printable_line(text, 60)!r} is not an action{hint} "
                         "(docs/incidents.md)")
    kind, args = m[1], m[2] or ""
    if kind not in model.vocabulary and kind + "_" in model.vocabulary:  # continue(): continue_
        kind += "_"
    if kind not in model.vocabulary and kind in LIKE.get(model.name, {}):
        raise _Like(f"{where}: {kind}() is {LIKE[model.name][kind]} here", named)
    args = _SHOWN_LIST.sub(lambda m: f"=[{m[1]}]", args)  # (show's tick(failed=d0,d1): a list)
    try:
        call = ast.parse(f"f({args})", mode="eval").body
        names = [k.arg for k in call.keywords]
        if call.args or None in names:
            raise ValueError(f"give each argument by name ({_NAMED_EXAMPLE.get(model.name, 'name=value')})")
        if len(set(names)) < len(names):
            raise ValueError(f"{next(n for n in names if names.count(n) > 1)} given twice")
        data = {k.arg: _value(k.arg, k.value) for k in call.keywords}
    except (SyntaxError, ValueError, RecursionError, MemoryError) as exc:
        why = exc.msg if isinstance(exc, SyntaxError) else str(exc) if isinstance(exc, ValueError) else "too deep"
        raise UsageError(f"--incident {named}: {where}: cannot read the arguments of {kind}: {why}") from None
    cls = model.vocabulary.get(kind)
    fields = attrs.fields_dict(cls) if cls is not None else {}
    for name, value in list(data.items()):  # a list field given one deployment: tick(failed=d0)
        field = fields.get(name)
        if field is not None and isinstance(field.default, tuple) and isinstance(value, int):
            data[name] = [value]
    return {"type": kind, **data}


def _value(name: str, node: ast.AST) -> Any:
    """A literal argument: a number, a string, a list of them, true/false/null (JSON's or
    Python's words), P1 or d0 as ``show`` prints a process or a deployment, and a bare
    word as ``show`` prints a name (``strategy=canary``, ``slot=staging``): the text."""
    if isinstance(node, ast.Constant) and (node.value is None or isinstance(node.value, (int, float, str))):
        return node.value  # (bool is an int)
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub) and isinstance(node.operand, ast.Constant) \
            and type(node.operand.value) in (int, float):
        return -node.operand.value
    if isinstance(node, (ast.List, ast.Tuple)):
        return [_value(name, item) for item in node.elts]
    if isinstance(node, ast.Name):
        numbered = _NUMBERED.fullmatch(node.id)
        if numbered:
            return int(numbered[1])
        return _WORDS.get(node.id, node.id)
    raise ValueError(f"{name}: only a literal value (a number, a word, 'text', [a list], true, false)")
