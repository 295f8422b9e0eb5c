"""Behaviours of ``replay`` and the command glue that a mutation pass over ``replay``,
``replay_command``, ``commands``, ``scenario``, ``adapter``, ``shortened`` and ``program``
found unpinned: what ``replay --json`` says of a reproduction, what a trace without a
cause or one edited at its first step is told, a fault before the first file in the
--json document and the JUnit report, links in a replayed folder, where a shortening
replay stops, how many steps reached a raising rule, and a Ctrl-C ignored on entry that
lands while the program loads. Each test was written against a hand-made mutant the rest
of the suite let through; its docstring names it."""

from __future__ import annotations

import copy
import json
import signal
import subprocess
import sys
import time
from pathlib import Path

from deployspec import junit, shortened
from deployspec.replay import replay

from .cli_runs import SEED, deployspec, run
from .junit_reports import cases_of, outcome_of
from .test_engine_glue_mutants import _raising_toy
from .toy import Move


def _seed() -> dict:
    return json.loads(SEED.read_text())


def _written(tmp_path, trace: dict, name: str = "edited.json") -> str:
    path = tmp_path / name
    path.write_text(json.dumps(trace))
    return str(path)


# --- replay_command.py: what a verdict says ----------------------------------------


def test_replay_json_says_where_and_how_the_replay_broke_and_what_the_file_recorded(capsys, tmp_path):
    """docs/json.md: a file's ``variant`` is the one it was recorded with, ``step`` and
    ``cause`` say where and how it showed again (not what the file recorded), ``rejected``
    counts the actions the target refused. Here a refused cancel comes first, so the replay
    breaks at step 6 (recorded: 5), and capi-current breaks it by another cause.
    (Mutants C19 ``step`` the recorded one, C20 ``cause`` the recorded one, C21 ``rejected``
    0 on a reproduction, C23 ``variant`` the target.)"""
    trace = _seed()
    trace["steps"].insert(0, {"action": {"type": "cancel"}, "rejected": "no app",
                              "observation": copy.deepcopy(trace["initial"])})
    path = _written(tmp_path, trace)
    status, out, _ = run(capsys, "replay", path, "--variant", "capi-current", "--json")
    (entry,) = json.loads(out)["files"]
    assert status == 1
    assert {k: entry[k] for k in ("variant", "outcome", "step", "cause", "rejected")} == {
        "variant": "capi-2022", "outcome": "reproduces", "step": 6, "cause": "scale-step", "rejected": 1}


def test_a_trace_without_a_cause_is_judged_by_its_property_alone(capsys, tmp_path):
    """docs/trace-format.md: a file without a cause (older ones) is judged by property alone:
    the replay names the cause it found, and no "recorded cause" it differs from. (Mutant
    C17: ``if v.cause != recorded``: "not the recorded cause None".)"""
    trace = _seed()
    del trace["violation"]["cause"]
    path = _written(tmp_path, trace)
    status, out, _ = run(capsys, "replay", path, "--variant", "capi-current")
    assert (status, out) == (1, (f"{path}: reproduces on capi-current: app_stays_available at step 5 (cause "
                                 "scale-step): no routable web instance left after step 5 (tick())\n"))


def test_a_replay_that_parts_from_the_recorded_steps_at_the_first_says_so(capsys, tmp_path):
    """Step 0 is a step like any other: a file whose first step the replay does not follow
    says where it parts. (Mutant C33: ``if parted:``, which took step 0 for none.)"""
    trace = _seed()
    trace["steps"][0]["rejected"] = "refused"
    path = _written(tmp_path, trace)
    status, out, _ = run(capsys, "replay", path)
    assert status == 1 and out.startswith(
        f"{path}: reproduces on capi-2022 (departs from the recorded steps at step 0: the file, or the design "
        "or model it replays on, changed since it was saved): app_stays_available at step 5 ")


def test_a_fault_before_the_first_file_is_in_the_json_and_fails_the_junit_report(capsys, tmp_path, monkeypatch):
    """An implementation that fails as it starts: exit 3, ``--json``'s ``fault`` names it
    (docs/json.md: the failure that stopped the run) and the JUnit report has an error case
    for it; else a CI's test view saw one skipped case and no failure. (Mutant C5: the
    fault at start not kept among the verdicts.)"""
    monkeypatch.setattr(sys, "path", list(sys.path))
    monkeypatch.chdir(Path(__file__).parent)  # --python finds contract_fakes in the current folder
    report = tmp_path / "replay.xml"
    status, out, _ = run(capsys, "replay", str(SEED), "--python", "contract_fakes:factory_exits", "--json",
                         "--junit", str(report))
    doc = json.loads(out)
    assert status == 3 and doc["exit_status"] == 3
    assert doc["fault"] is not None and doc["fault"]["where"] == "start"
    assert [f["outcome"] for f in doc["files"]] == ["not_replayed"]
    cases = cases_of(report)
    assert outcome_of(cases["start"]) == junit.ERROR
    assert outcome_of(cases[str(SEED)]) == junit.SKIPPED


def test_a_link_to_a_folder_inside_a_replayed_folder_is_not_followed(capsys, tmp_path):
    """A folder stands for the traces in it and its subfolders, not through links to
    folders: a link beside the folder it names replayed each trace twice (a loop: a link to
    its own parent, walked until the path is too long). (Mutant C30: ``followlinks=True``.)"""
    import shutil

    (tmp_path / "sub").mkdir()
    shutil.copy(SEED, tmp_path / "sub" / SEED.name)
    (tmp_path / "alias").symlink_to(tmp_path / "sub", target_is_directory=True)
    status, out, err = run(capsys, "replay", str(tmp_path))
    assert (status, err) == (1, "")
    assert out.count("reproduces on capi-2022") == 1 and str(tmp_path / "sub" / SEED.name) in out


def test_an_unknown_variant_is_said_as_such_not_as_another_model_s(capsys):
    """``--variant`` naming no design at all is refused as unknown, with the names known
    (and the one meant), not as "a design of another model" of the first file. (Mutant
    C11: ``find_variant`` not asked first.)"""
    status, out, err = run(capsys, "replay", str(SEED), "--variant", "capi-saf")
    assert (status, out) == (2, "")
    assert err.startswith("deployspec: error: unknown variant 'capi-saf': did you mean 'capi-safe'? (known: ")
    assert len(err.splitlines()) == 1


# --- replay.py: a shortening replay -------------------------------------------------


def test_a_replay_stops_short_before_an_action_allowed_refuses():
    """``allowed`` (a contract's shortening: what no search would send): the replay stops
    before the refused action, not reproduced, sends nothing after it and does not settle.
    (Mutant R13: the refused action skipped and the rest sent, a candidate other than the
    one judged.)"""
    outcome = replay(_seed(), allowed=lambda obs, action: action.to_json()["type"] != "cancel")
    assert [s["action"]["type"] for s in outcome.session.steps] == ["push", "runtime", "deploy"]
    assert not outcome.reproduced and outcome.session.settle_from is None


# --- shortened.py -------------------------------------------------------------------


def test_a_replay_that_raises_at_a_step_counts_the_steps_up_to_it():
    """``raised_by`` says how many actions were taken, the one that raised included: a
    candidate keeps no step after it (else a shortening cut short by time names a step
    that never ran as the one the rule raised at). (Mutant SH2: every action counted.)"""
    model, config, variant = _raising_toy()
    raised = shortened.raised_by(model, variant, config, (), [Move("a"), Move("a"), Move("b")])
    assert raised is not None and raised[0][2] is False and raised[1] == 2


# --- program.py ---------------------------------------------------------------------


def test_a_sigint_ignored_on_entry_stays_ignored_while_the_program_loads():
    """As for a command started with & in a script, from its first moment: a Ctrl-C that
    lands while the modules load is not held and taken as an interruption once the
    arguments are read. (Mutant P1: every signal held, an ignored one too: status 130.)"""
    proc = deployspec("replay", str(SEED), stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                      preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_IGN))
    deadline = time.monotonic() + 60
    while proc.poll() is None and time.monotonic() < deadline:
        proc.send_signal(signal.SIGINT)  # throughout: while it loads, and after
        time.sleep(0.005)
    assert proc.wait(60) == 1, proc.stderr.read()  # the seed reproduces: not 130
    proc.stderr.close()
