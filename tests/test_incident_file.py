"""An incident's file as ``check --incident`` reads it (deployspec/incident.py): lines as
``show`` prints them, JSON, a trace's user steps, and every wrong file said in one line,
with the command or action meant where it can tell."""

import os

import pytest
from deployspec.reference.core import Rejected
from deployspec.spec.core import action_label

from deployspec import incident, traces
from deployspec.engines import explore
from deployspec.models import UsageError, get_model

from .cli_runs import SEED
from .test_incident import CAPI, SEED_INCIDENT, _incident

# --- reading an incident ------------------------------------------------------------------

def test_lines_read_as_show_prints_them(tmp_path):
    inc = _incident(tmp_path, "# comment\n\npush(instances=2)  # the app\nsettle\ndeploy(strategy='canary', "
                              "canary_steps=[50])\ncontinue()\ntick(failed=d0)\nruntime(process=P1)\n"
                              '{"type": "scale", "instances": 3}\ncancel\n')
    assert [a.to_json() for a in inc.actions] == [
        {"type": "push", "instances": 2}, {"type": "settle"},
        CAPI.action({"type": "deploy", "strategy": "canary", "canary_steps": [50]}).to_json(),
        {"type": "continue_"}, CAPI.action({"type": "tick", "failed": [0]}).to_json(),
        {"type": "runtime", "process": 1}, {"type": "scale", "instances": 3}, {"type": "cancel"}]


def test_a_trace_file_gives_its_users_steps(tmp_path):
    inc = incident.read(str(SEED), CAPI)
    trace = traces.load(SEED)
    users = [s["action"] for s in trace["steps"] if CAPI.action(s["action"]).actor == "user"]
    assert [a.to_json() for a in inc.actions] == users and len(users) < len(trace["steps"])
    assert [a.kind for a in _incident(tmp_path, '[{"type": "push"}, {"type": "settle"}]', "i.json").actions] == \
        ["push", "settle"]


@pytest.mark.parametrize("line, hint", [
    ("az webapp deployment slot swap -g rg -n app --slot staging", "az webapp deployment slot swap is swap() here"),
    ("az webapp restart -g rg -n app --slot staging", "az webapp restart is restart(slot='staging') here"),
    ("az webapp config container set -g rg -n app", "is set_image(slot='production') here"),  # (az's default)
    ("swap it", "(e.g. swap(), set_image(slot='staging'), or a JSON object)"),  # (not capi's example)
    # (a user trial: a preview read as a swap, a scale-out with no action named, capi's scale)
    ("az webapp deployment slot swap -g rg -n app --slot staging --action preview", "and swaps nothing: restart(slot='staging') here"),
    ("az appservice plan update -g rg -n plan --number-of-workers 3", "is scale_out() (once per instance added) here"),
    ("scale(instances=3)\nswap()", "scale() is scale_out() (App Service adds one instance per scale_out) here"),
    # (a file all of whose lines are capi's: that first, this as the alternative)
    ("scale(instances=3)", "(or, meant for slots: line 2: scale() is scale_out() (App Service adds one instance"),
])
def test_a_slots_incident_gets_the_az_command_s_action_as_a_hint(tmp_path, line, hint):
    said = _refused_after_a_push(tmp_path, "slots", line)
    assert said.startswith(f"--incident {incident.quoted(str(tmp_path / 'cmds.txt'))}: ") and hint in said


def _refused_after_a_push(tmp_path, model: str, line: str) -> str:
    """The one-line error of a file of ``push()`` and ``line`` read for ``model``."""
    path = tmp_path / "cmds.txt"
    path.write_text(f"push()\n{line}\n")
    with pytest.raises(UsageError) as caught:
        incident.read(str(path), get_model(model))
    return str(caught.value)


@pytest.mark.parametrize("line, hint", [
    # (a user trial followed "cf restart is deploy()" for a canary restart, and lost the canary)
    ("cf restart myapp --strategy canary --instance-steps 20,50", ("is deploy(strategy='canary', canary_steps=[…]) "
                                                                  "here (--instance-steps 20,50: canary_steps=[20, 50])")),
    ("cf push myapp --strategy canary", "is deploy(new_droplet=true, strategy='canary', canary_steps=[…]) here"),
    ("cf scale myapp -m 1G", "cf scale -m, -k or -l restarts the app with new limits: not modelled"),
    ("cf scale myapp -i 3", "cf scale is scale(instances=N) here"),
    ("cf restart myapp", "cf restart without --strategy stops every instance, then starts them: not modelled"),
    ("cf restart myapp --strategy rolling", "cf restart is deploy() (with --strategy rolling) here"),
    ("restart myapp", "cf restart is deploy() (with --strategy rolling) here"),  # (no cf: no command line)
    ("cf restage myapp --strategy canary", "is deploy(new_droplet=true, strategy='canary', canary_steps=[…]) here"),
    ("cf rollback myapp --version 2 --strategy canary", "is deploy(revision=D, strategy='canary', canary_steps"),
    ("cf restage myapp", "cf restage without --strategy stops every instance, then stages and starts them"),
    ("cf scale myapp -l 1M", "cf scale -m, -k or -l restarts the app with new limits: not modelled"),
    # (a preview restarts staging, which pulls its tag again: "leave it out" lost a pull, an operator said)
    ("az webapp deployment slot swap -g rg -n app --slot staging --action reset",
     "and swaps nothing: restart(slot='staging') here"),
    ("az webapp deployment slot swap -g rg -n app --slot staging --action preview",
     "a swap preview restarts staging with production's settings"),
    ("az webapp config container set -n app --docker-custom-image-name acr/app@sha256:abc",
     "is set_image(slot='production') here; the design decides what it writes"),
    ("az webapp restart -n app --slot stage",
     "is restart(slot='staging') here, if stage is your staging slot (the model's are production and staging)"),
    ("az acr import -n reg --source x -t app:release", "az acr import is push() here"),
    ("az webapp start -n app --slot staging", "az webapp start is restart(slot='staging') (a start pulls"),
    ("az webapp stop -n app", "az webapp stop is not modelled"),
])
def test_a_command_s_flags_that_make_it_another_thing_give_their_own_hint(tmp_path, line, hint):
    assert hint in _refused_after_a_push(tmp_path, "slots" if line.startswith("az") else "capi", line)


@pytest.mark.parametrize("text, said", [
    ("deploy(\n", "line 1: 'deploy(' is not an action (e.g. deploy()"),
    ("push(2)\n", "line 1: cannot read the arguments of push: give each argument by name (instances=3)"),
    ("# only\n\n", "no actions (one per line"),
    ("settle\nsettle\n", "no actions but settle (one per line"),  # (it proved the platform idle, "0 calls")
    ("cf cancel-deployment myapp\n", "is not an action: cf cancel-deployment is cancel() here"),
    ("restart\n", "unknown action type 'restart' (known: cancel, continue_, deploy"),
    ("push()\nscale(instances=-1)\n", "line 2: action 'scale': instances must be >= 0"),
    ("{nope\n", "line 1: not a JSON object"),
    ('[{"type": "warp"}]', "item 0: unknown action type 'warp'"),
    ('push(**{"instances": 2})\n', "give each argument by name"),
    ("push(instances=2, instances=3)\n", "instances given twice"),
    ("push(instances=(1).__class__)\n", "instances: only a literal value"),
    ("[" * 100_000, "JSON, but it is nested too deeply"),
    ('[{"type": "scale", "instances": 2, "instances": 3}]', 'JSON, but an object names "instances" twice'),
    ('{"type": "scale", "instances": NaN}\n', "NaN is not a JSON value"),
    ("push()\fcancel()\n", "line 1: cannot read the arguments of push"),  # (a line as an editor counts it)
])
def test_a_wrong_incident_is_one_line_naming_where(tmp_path, text, said):
    with pytest.raises(UsageError) as caught:
        _incident(tmp_path, text)
    message = str(caught.value)
    assert said in message and "\n" not in message and message.startswith("--incident ")


def test_a_byte_order_mark_and_a_piped_trace_are_read(tmp_path):
    (tmp_path / "bom.txt").write_bytes(b"\xef\xbb\xbfpush(instances=1)\n")
    assert [a.kind for a in incident.read(str(tmp_path / "bom.txt"), CAPI).actions] == ["push"]
    # a trace piped in (/dev/stdin): read once (it was read again, and found empty)
    r, w = os.pipe()
    os.write(w, SEED.read_bytes())
    os.close(w)
    try:
        assert incident.read(f"/dev/fd/{r}", CAPI).actions == incident.read(str(SEED), CAPI).actions
    finally:
        os.close(r)


def test_an_incident_that_is_not_text_or_too_long_is_refused(tmp_path):
    (tmp_path / "bin").write_bytes(b"\xff\xfe\x00")
    with pytest.raises(UsageError, match="not UTF-8 text"):
        incident.read(str(tmp_path / "bin"), CAPI)
    # what it is where that is plain (PowerShell's > writes UTF-16), else where it stops being UTF-8
    (tmp_path / "u16.txt").write_bytes("push(instances=2)\n".encode("utf-16"))
    with pytest.raises(UsageError, match=r"not UTF-8 text \(it is UTF-16, as PowerShell's > writes: save it as "
                                         r"UTF-8"):
        incident.read(str(tmp_path / "u16.txt"), CAPI)
    (tmp_path / "cp.txt").write_bytes("push(instances=2)\n# café\n".encode("cp1252"))
    with pytest.raises(UsageError, match=r"not UTF-8 text \(line 2: byte 0xe9; save it as UTF-8\)"):
        incident.read(str(tmp_path / "cp.txt"), CAPI)
    (tmp_path / "bom.txt").write_bytes(b"\xef\xbb\xbfpush(instances=2)\n\xe9\n")  # (offsets after the mark)
    with pytest.raises(UsageError, match=r"not UTF-8 text \(line 2: byte 0xe9; save it as UTF-8\)"):
        incident.read(str(tmp_path / "bom.txt"), CAPI)
    with pytest.raises(UsageError, match=f"at most {incident.MAX_ACTIONS}"):
        _incident(tmp_path, "cancel()\n" * (incident.MAX_ACTIONS + 1))


#: the widest capi search's calls: canaries, both windows, rolling pushes, rollbacks
_WIDE = {"capi": {"canary_plans": [[], [50], [50, 100]], "finish_window": True, "snapshot_window": True,
                  "push_rolling": True, "rollback": True, "max_deployments": 3, "max_in_flight": [1, 2],
                  "web_instances": [2]}, "slots": {}}


@pytest.mark.parametrize("model_name", ["capi", "slots"])
def test_every_action_reads_back_as_show_prints_it(tmp_path, model_name):
    """An incident is written from what ``show`` printed: ``deploy(strategy=canary)``,
    ``set_image(slot=staging)`` and ``tick(failed=d0,d1)`` were refused (a user trial)."""
    model, said = get_model(model_name), {}
    for variant in model.variants.values():
        config = model.with_bounds(explore.explore_config(model, variant), _WIDE[model_name])
        frontier, seen = [model.initial_state(config)], set()
        while frontier and len(seen) < 1500:  # (a walk over a design's states: every action offered there)
            state = frontier.pop()
            obs = model.observe(state)
            for action in [*model.offered(variant)(obs, config), *model.probe_actions(obs, config)]:
                said[action_label(action.to_json())] = action.to_json()
                after = variant.step(state, action)
                if type(after) is not Rejected and after not in seen:
                    seen.add(after)
                    frontier.append(after)
    if model_name == "capi":  # (a tick naming two deployments: beyond this walk)
        two = model.action({"type": "tick", "failed": [0, 1], "reports_unavailable": [2]}).to_json()
        said[action_label(two)] = two
    path = tmp_path / "shown.txt"
    if model_name == "capi":  # (a deployment and a process: not one list)
        path.write_text("tick(failed=d0,P1)\n")
        with pytest.raises(UsageError, match="cannot read the arguments of tick"):
            incident.read(str(path), model)
    path.write_text("\n".join(said))
    assert [a.to_json() for a in incident.read(str(path), model).actions] == list(said.values())
    assert any("strategy=canary" in s for s in said) or model_name == "slots"
    assert any("slot=staging" in s for s in said) or model_name == "capi"


def test_an_incident_of_the_other_model_is_named_so(tmp_path):
    """A Cloud Foundry incident run on App Service designs was told ``push`` has no field
    ``instances``; an App Service one on capi designs, that ``swap`` is unknown."""
    path = tmp_path / "cf.txt"
    path.write_text(SEED_INCIDENT)
    with pytest.raises(UsageError, match=r"its actions are the capi model's, and the --variant designs are of slots"):
        incident.read(str(path), get_model("slots"))
    path.write_text("push()\nsettle\nswap()\n")
    with pytest.raises(UsageError, match=r"its actions are the slots model's, and the --variant designs are of capi"):
        incident.read(str(path), CAPI)
    path.write_text("push()\nswap(slot=2)\n")  # (of neither: the error of the designs' own model)
    with pytest.raises(UsageError, match=r"line 2: unknown action type 'swap'"):
        incident.read(str(path), CAPI)


def test_an_incident_is_read_from_standard_input_given_as_dash(monkeypatch):
    """``--incident -`` was "No such file or directory", where show and replay take ``-``."""
    import io
    import sys

    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(b"push(instances=2)\nsettle\ndeploy()\n")))
    inc = incident.read("-", CAPI)
    assert inc.source == "standard input" and [a.kind for a in inc.actions] == ["push", "settle", "deploy"]
    monkeypatch.setattr(sys, "stdin", None)
    with pytest.raises(UsageError, match="standard input is closed; name the incident's file"):
        incident.read("-", CAPI)
