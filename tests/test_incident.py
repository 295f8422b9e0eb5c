"""``check --incident FILE``: the users' actions of an incident, every interleaving of the
platform's actions between them (deployspec/incident.py, engines/incident_graph.py). An
SRE who lived through the seed's outage could only hand-write a trace with made-up
observations, judge one guess at the timing, and read "departs from the recorded steps"
on every line."""

import json
import random
import xml.etree.ElementTree as ET

import pytest

from deployspec import check, incident, traces
from deployspec.adapter import ReferenceAdapter
from deployspec.engines import explore
from deployspec.engines.incident_graph import IncidentGraph
from deployspec.models import UsageError, get_model
from deployspec.replay import replay
from deployspec.session import Session

from .cli_runs import SEED, run, valid_json_output

CAPI = get_model("capi")
#: the seed's story as its operator knows it: the app ran, then restart, cancel, restart
SEED_INCIDENT = "push(instances=2)\nsettle   # it ran for days\ndeploy()\ncancel()\ndeploy()\n"


def _incident(tmp_path, text: str, name: str = "incident.txt") -> incident.Incident:
    path = tmp_path / name
    path.write_text(text)
    return incident.read(str(path), CAPI)


def _search(inc, variant, prop, **kw):
    return explore.search(CAPI, variant, CAPI.property(prop), budget=60, seed=0, out_dir=kw.pop("out_dir", None),
                          incident=inc, **kw)


# --- every interleaving -----------------------------------------------------------------

def test_the_seed_incident_breaks_capi_2022_and_not_capi_safe(tmp_path):
    inc = _incident(tmp_path, SEED_INCIDENT)
    broken = _search(inc, "capi-2022", "app_stays_available", out_dir=str(tmp_path / "out"))
    assert (broken.verdict, broken.cause) == ("violated", "cancel-keeps-unstarted")
    users = [s["action"] for s in broken.trace["steps"] if CAPI.action(s["action"]).actor == "user"]
    assert users == [a.to_json() for a in inc.actions if a.kind != "settle"]  # the incident's calls, in order
    assert broken.trace["title"].startswith("incident.txt on capi-2022: app_stays_available")
    assert replay(traces.load(broken.counterexample)).reproduced  # an ordinary trace
    proof = _search(inc, "capi-safe", "app_stays_available")
    assert proof.verdict == "holds" and proof.stats["complete"]
    assert proof.message.startswith("holds in every interleaving of the platform's actions with the 4 calls of")
    # a cancel that came after the restart had ended was refused: part of the answer
    assert "; the design refused some calls in some runs: cancel (in " in proof.message
    assert proof.stats["incident"]["refused"] == {"cancel": 1}
    assert proof.stats["incident"]["reached"] == 5


def test_the_timing_decides_and_the_search_finds_the_one_that_breaks(tmp_path):
    """capi-current survives the calls made back to back, and goes down when one tick of
    the updater falls between the restart and the cancel (the SRE's two guesses)."""
    inc = _incident(tmp_path, SEED_INCIDENT + "scale(instances=3)\n")
    session = Session(CAPI, ReferenceAdapter(CAPI, CAPI.variant("capi-current")),
                      (CAPI.property("app_stays_available"),), explore.explore_config(CAPI, CAPI.variant("capi-current")))
    back_to_back = [CAPI.action(a) for a in (
        {"type": "push", "instances": 2}, {"type": "runtime", "process": 0}, {"type": "runtime", "process": 0},
        {"type": "deploy"}, {"type": "cancel"}, {"type": "deploy"}, {"type": "scale", "instances": 3})]
    assert session.play(back_to_back) is None
    found = _search(inc, "capi-current", "app_stays_available")
    assert (found.verdict, found.cause) == ("violated", "scale-step")
    # "scale-step" is the updater's step, not the user's scale, which the run did not need
    assert "broken after 4 of its 5 calls, before scale(instances=3)" in found.trace["title"]
    kinds = [s["action"]["type"] for s in found.trace["steps"]]
    assert "tick" in kinds[kinds.index("deploy"):kinds.index("cancel")]


def test_no_random_interleaving_breaks_what_the_search_proves_or_finds_it_shorter(tmp_path):
    """Random timings of the same calls, played through a Session: whatever they break,
    the search finds too, no longer; what the search proves, none breaks."""
    inc = _incident(tmp_path, "push(instances=2)\ndeploy()\ncancel()\ndeploy()\n")
    rng, broke = random.Random(7), 0
    for variant in ("capi-2022", "capi-pr3072", "capi-current", "capi-safe"):
        v = CAPI.variant(variant)
        config = explore.explore_config(CAPI, v)
        offered = CAPI.offered(v)
        verdicts = {p.name: _search(inc, variant, p.name) for p in CAPI.properties}
        for _ in range(40):
            props = tuple(p for p in CAPI.properties if p.kind != "settled")
            session = Session(CAPI, ReferenceAdapter(CAPI, v), props, config)
            for action in inc.actions:
                for _ in range(rng.randrange(4)):
                    platform = [a for a in offered(session.obs, config) if a.actor == "platform"]
                    if platform:
                        session.perform(rng.choice(platform))
                session.perform(action)
            if session.violation is not None:
                broke += 1
                r = verdicts[session.violation.property]
                assert r.verdict == "violated" and r.trace_length <= len(session.steps), (variant, session.steps)
    assert broke >= 20  # (the check judged something)


def test_a_refused_call_is_part_of_the_incident(tmp_path):
    """A scale while a deployment rolls is refused (capi-safe); the calls after it are still made."""
    inc = _incident(tmp_path, "push(instances=1)\nsettle\ndeploy()\nscale(instances=2)\ncancel()\n")
    r = _search(inc, "capi-safe", "app_stays_available")
    assert r.verdict == "holds" and r.stats["incident"]["reached"] == 5
    assert r.stats["incident"]["refused"]["scale"] >= 1 and "refused some calls in some runs: scale (in " in r.message
    # a state property's search takes the refused call as a move too (its node is new: the index moved)
    graph = IncidentGraph(CAPI, CAPI.variant("capi-safe"), explore.explore_config(CAPI, CAPI.variant("capi-safe")),
                          CAPI.property("single_active_deployment"), inc)
    assert graph.settles((None, None, 5)) and not graph.settles((None, None, 4))  # a settled property: at the end


def test_the_line_per_design_says_only_what_was_proved():
    from deployspec.engines.result import Result
    from deployspec.incident_command import verdicts as _incident_verdicts

    def r(variant, prop, verdict, complete=True):
        return Result("capi", variant, prop, "explore", verdict, stats={"complete": complete})

    said = _incident_verdicts("i.txt", [
        r("a", "p", "holds"), r("a", "q", "violated"),
        r("b", "p", "holds", complete=False), r("b", "q", "error"),
        r("c", "p", "error"), r("c", "q", "error"),
        r("d", "p", "holds"), r("d", "q", "holds")]).splitlines()
    assert said == [
        "the incident i.txt on a: violated in some interleaving: q",
        ("the incident i.txt on b: nothing violated in the interleavings searched (incomplete: see above); "
        "not judged (error): q"),
        "the incident i.txt on c: nothing judged; not judged (error): p, q",
        "the incident i.txt on d: nothing violated in any interleaving"]


def test_an_incident_whose_platform_never_rests_judges_nothing_after_it(tmp_path, monkeypatch):
    monkeypatch.setattr(IncidentGraph, "_at_rest", lambda self, state: False)
    inc = _incident(tmp_path, "push(instances=1)\nsettle\ncancel()\n")
    r = _search(inc, "capi-safe", "single_active_deployment")
    assert r.verdict == "error"
    assert r.message.startswith("the incident's action 2 (settle()) was never taken in ")
    assert r.message.endswith("the platform never came to rest there on this design; nothing is judged of what follows")
    # a search for a further cause that no run got past: no other cause, not "in every interleaving"
    # (the slots webhook design broke production_runs_only_released_images three ways before a settle)
    slots = get_model("slots")
    path = tmp_path / "slots.txt"
    path.write_text("push()\nsettle\nswap()\n")
    found = check.causes(explore.search, slots, "slots-webhook-tag", slots.property("production_runs_only_released_images"),
                         limit=8, budget=30, cause_budget=30, seed=0, out_dir=None, engine="explore",
                         incident=incident.read(str(path), slots))
    *violations, last = found
    assert {r.verdict for r in violations} == {"violated"} and len(violations) >= 2
    assert last.verdict == "violated"
    assert last.stats["other_causes"].startswith("no other cause: no run got to the incident's action 2 (settle()) "
                                                 "without breaking the property a way already found (")


def test_a_pinned_platform_action_happens_only_where_it_can(tmp_path):
    """``runtime(process=P0)`` pinned: the runs where P0 has a starting instance then; a
    process that never has one leaves the rest untaken (an error), not a refusal passed over."""
    r = _search(_incident(tmp_path, "push(instances=1)\nruntime(process=P0)\ncancel()\n"), "capi-safe",
                "app_stays_available")
    assert r.verdict == "holds" and r.stats["incident"]["reached"] == 3
    r = _search(_incident(tmp_path, "push(instances=1)\nruntime(process=P5)\ncancel()\n"), "capi-safe",
                "app_stays_available")
    assert r.verdict == "error" and "the platform never could take it there on this design" in r.message
    # a tick failing a deployment that does not exist names nothing real: never taken (the step
    # ignores it, and a proof had passed it over)
    r = _search(_incident(tmp_path, "push(instances=1)\ntick(failed=d7)\ndeploy()\n"), "capi-safe",
                "app_stays_available")
    assert r.verdict == "error" and r.message.startswith("the incident's action 2 (tick(failed=d7)) was never taken")
    # one the design refuses wherever a run gets there says the design's reason (an operator
    # wrote crash_retry for a running container's crash, and read "on this design" as a fault of it)
    slots = get_model("slots")
    path = tmp_path / "retry.txt"
    path.write_text("push()\nset_image(slot='staging')\nvalidate()\nswap()\ncrash_retry(slot='production', instance=0)\n")
    r = explore.search(slots, "slots-pipeline-immutable", slots.property("production_runs_only_released_images"),
                       budget=60, seed=0, out_dir=None, incident=incident.read(str(path), slots))
    assert r.verdict == "error" and r.stats["incident"]["refused_because"] == "production instance 0 is not failing to start"
    assert "the design refused it wherever a run got there (production instance 0 is not failing to start)" in r.message
    # one the candidates leave out as a stutter still happened: a recycle of production that pulls
    # the digest it runs (an App Service user's incident said "nothing judged" of the safe design)
    slots = get_model("slots")
    path = tmp_path / "slots.txt"
    path.write_text("push()\nset_image(slot='staging')\nvalidate()\nswap()\nrecycle(slot='production', instance=0)\n")
    r = explore.search(slots, "slots-pipeline-immutable", slots.property("production_runs_only_released_images"),
                       budget=30, seed=0, out_dir=None, incident=incident.read(str(path), slots))
    assert r.verdict == "holds" and r.stats["incident"]["reached"] == 5
    assert r.message.endswith(" s; from start=empty)")  # (the slots' start decides what a run meets: named)


def test_a_trailing_settle_lets_the_platform_act_in_any_order_until_it_rests(tmp_path):
    """At a ``settle`` only the settle phase's fixed order (starts first, then a plain tick)
    was offered: the seed's incident with a last ``settle`` was proved on capi-2022 (an
    audit's brute force broke it in 7 steps: a tick before the new instance starts)."""
    r = _search(_incident(tmp_path, SEED_INCIDENT + "settle\n"), "capi-2022", "app_stays_available")
    assert (r.verdict, r.cause, r.trace_length) == ("violated", "cancel-keeps-unstarted", 7)


def test_a_search_cut_short_says_what_it_never_reached_and_blames_no_settle(tmp_path):
    inc = _incident(tmp_path, SEED_INCIDENT + "settle\ncancel()\n")
    config = explore.explore_config(CAPI, CAPI.variant("capi-safe"))
    r = _search(inc, "capi-safe", "app_stays_available", config=config, max_depth=5)
    assert r.verdict == "holds" and not r.stats["complete"]
    assert "(incomplete: depth bound reached at depth 5" in r.message
    assert "the incident's actions from action 5 on were never reached" in r.message and "rest" not in r.message


# --- the command --------------------------------------------------------------------------

@pytest.mark.parametrize("argv, said", [
    (["--model", "capi"], "--incident needs the designs to check it on: --variant V"),
    (["--variant", "capi-safe", "--engine", "z3"], "not --engine z3; leave --engine out"),
    (["--variant", "capi-safe", "--workers", "2"], "in one process: leave --workers out"),
    (["--variant", "capi-safe", "--variant", "slots-pipeline-immutable"], "variants are of capi and slots"),
])
def test_the_command_refuses_what_an_incident_cannot_be_searched_with(capsys, tmp_path, argv, said):
    (tmp_path / "i.txt").write_text(SEED_INCIDENT)
    status, out, err = run(capsys, "check", *argv, "--incident", str(tmp_path / "i.txt"))
    assert (status, out) == (2, "") and said in err and err.count("\n") == 1


def test_the_command_judges_each_design_by_the_incident_with_jobs(capsys, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "i.txt").write_text(SEED_INCIDENT)
    status, out, _err = run(capsys, "check", "--variant", "capi-2022", "--variant", "capi-safe", "--incident",
                           str(tmp_path / "i.txt"), "--property", "app_stays_available", "--jobs", "2",
                           "--out", str(tmp_path / "out"), "--json")
    assert status == 1
    doc = json.loads(out)
    valid_json_output(doc)
    results = {(r["variant"], r["verdict"]) for r in doc["results"]}
    assert results == {("capi-2022", "violated"), ("capi-safe", "holds")}
    (saved,) = (tmp_path / "out").glob("*.json")
    assert run(capsys, "replay", str(saved))[0] == 1  # it reproduces, as any counterexample
    report = tmp_path / "incident.xml"
    status, out, _err = run(capsys, "check", "--variant", "capi-2022", "--variant", "capi-safe", "--incident",
                            str(tmp_path / "i.txt"), "--property", "app_stays_available",
                            "--property", "single_active_deployment", "--junit", str(report))
    assert ET.parse(report).getroot().find("testsuite").get("name") == \
        "check --incident i.txt capi · capi-2022"  # (beside another incident's, or a plain check's)
    assert {c.get("classname") for c in ET.parse(report).getroot().iter("testcase")} == \
        {"deployspec.incident.i.capi.capi-2022", "deployspec.incident.i.capi.capi-safe"}
    assert "process peak memory" not in out  # (a verdict line per search: the counts are --json's)
    assert out.splitlines()[-2:] == [  # a line per design (it said "violated" of both)
        (f"the incident {tmp_path / 'i.txt'} on capi-2022: violated in some interleaving: single_active_deployment, "
        "app_stays_available"),
        f"the incident {tmp_path / 'i.txt'} on capi-safe: nothing violated in any interleaving"]


def test_same_named_incident_files_in_two_folders_are_two_suites_in_a_report(capsys, tmp_path, monkeypatch):
    """Two teams' ``incident.txt``, each in its own folder: their reports were one suite and
    one class in a CI's test view. The file is named as given (relative to the current
    folder where it is under it); a space in a name is no space in a class."""
    monkeypatch.chdir(tmp_path)
    names = {}
    for folder in ("team a", "b"):
        (tmp_path / folder).mkdir()
        (tmp_path / folder / "incident.txt").write_text(SEED_INCIDENT)
        report = tmp_path / f"{folder}.xml"
        given = str(tmp_path / folder / "incident.txt") if folder == "b" else f"{folder}/incident.txt"
        run(capsys, "check", "--variant", "capi-safe", "--incident", given, "--property", "app_stays_available",
            "--junit", str(report))
        root = ET.parse(report).getroot()
        names[folder] = (root.find("testsuite").get("name"), {c.get("classname") for c in root.iter("testcase")})
    assert names == {
        "team a": ("check --incident team a/incident.txt capi · capi-safe",
                   {"deployspec.incident.team_a.incident.capi.capi-safe"}),
        "b": ("check --incident b/incident.txt capi · capi-safe", {"deployspec.incident.b.incident.capi.capi-safe"})}


def test_replay_of_an_incident_s_calls_points_to_check_incident(capsys, tmp_path):
    (tmp_path / "i.txt").write_text(SEED_INCIDENT)
    status, _out, err = run(capsys, "replay", str(tmp_path / "i.txt"))
    assert status == 2 and err.rstrip().endswith(
        "(a list of calls, one per line? check --incident FILE --variant V searches it)")


def test_an_incident_s_unfinished_search_is_finished_by_a_search_of_the_same_incident(capsys, tmp_path):
    (tmp_path / "i.txt").write_text(SEED_INCIDENT + "scale(instances=3)\n")
    argv = ["check", "--variant", "capi-safe", "--property", "app_stays_available", "--incident",
            str(tmp_path / "i.txt")]
    status, out, _err = run(capsys, *argv, "--bound", "max_depth=5")
    assert status == 0 and "holds*" in out
    (finish,) = [line.strip() for line in out.splitlines() if line.startswith("  deployspec check")]
    assert f"--incident {tmp_path / 'i.txt'} " in finish and "--engine" not in finish  # (not every run)
    status, out, _err = run(capsys, *finish.split()[1:])
    assert status == 0 and "holds*" not in out and "nothing violated in any interleaving" in out
    status, out, _err = run(capsys, *argv, "--bound", "max_depth=5", "--declared")  # (kept: it judges the violations)
    assert next(line for line in out.splitlines() if line.startswith("  deployspec check")).endswith(" --declared")


def test_the_command_finishing_an_incident_s_search_leaves_out_what_its_calls_sized(capsys, tmp_path):
    """It gave back the settle_steps the calls had sized (200 for 20 instances), which the
    finishing run took as given: not doubled where it cut the settle phase, and the false
    violation a user trial found came back (a review). A bound given stays."""
    (tmp_path / "in20.txt").write_text("push(instances=20)\nsettle\ndeploy()\ncancel()\ndeploy()\n")
    argv = ["check", "--incident", str(tmp_path / "in20.txt"), "--variant", "capi-current", "--property",
            "deployment_converges", "--bound", "max_depth=5"]
    _status, out, _err = run(capsys, *argv)
    (finish,) = [line.strip() for line in out.splitlines() if line.startswith("  deployspec check")]
    assert "settle_steps" not in finish and "max_instances" not in finish
    status, out, _err = run(capsys, *finish.split()[1:], "--json")
    (r,) = json.loads(out)["results"]
    assert (status, r["verdict"]) == (0, "holds") and r["stats"]["incident"]["sized"] == ["max_instances", "settle_steps"]
    _status, out, _err = run(capsys, *argv, "--bound", "settle_steps=300")
    (finish,) = [line.strip() for line in out.splitlines() if line.startswith("  deployspec check")]
    assert "--bound settle_steps=300" in finish and "max_instances" not in finish


def out_line(capsys, *argv) -> str:
    """The last line ``check`` prints."""
    return run(capsys, *argv)[1].rstrip().splitlines()[-1]


def test_a_proof_names_the_calls_the_design_accepted_that_came_to_nothing(capsys, tmp_path):
    """A rollback swap that aborted (its slot failed to start) is neither a refusal nor a
    swap ``rollback_restores_previous`` judges: an App Service engineer read "holds" and
    thought the rollback had worked."""
    path = tmp_path / "rollback.txt"
    path.write_text("push()\nsettle\nswap()\npush(healthy=false)\nsettle\nswap()\n")
    status, out, _err = run(capsys, "check", "--incident", str(path), "--variant", "slots-pipeline-tag", "--property",
                            "rollback_restores_previous", "--bound", "start=release", "--json")
    (r,) = valid_json_output(json.loads(out))["results"]
    # (its slot restarts on the moved tag in every run: the rollback aborted in each, which
    # "came to nothing in some runs" understated, a user trial's finding)
    incident_stats = r["stats"]["incident"]
    assert status == 0 and r["verdict"] == "holds" and incident_stats["always_failed"] == {"6": "swap aborted"}
    assert "failed" not in incident_stats and "in some runs" not in r["message"]
    assert "; swap() (action 6: swap aborted where accepted) took effect in no run" in r["message"]
    assert out_line(capsys, "check", "--incident", str(path), "--variant", "slots-pipeline-tag", "--property",
                    "rollback_restores_previous", "--bound", "start=release").endswith(
        "nothing violated in any interleaving; action 6 took effect in no run")
    # a search that saw some runs only (the budget, a bound) says "in some runs", as before
    import attrs

    slots = get_model("slots")
    variant = slots.variant("slots-pipeline-tag")
    config = attrs.evolve(explore.explore_config(slots, variant), start="release")
    cut = explore.search(slots, "slots-pipeline-tag", slots.property("rollback_restores_previous"), budget=60,
                         seed=0, out_dir=None, config=config, incident=incident.read(str(path), slots),
                         max_states=20)
    assert not cut.stats["complete"] and "always_failed" not in cut.stats["incident"]
    assert cut.stats["incident"]["failed"]["swap aborted"] >= 1
    capi = _search(_incident(tmp_path, SEED_INCIDENT), "capi-safe", "app_stays_available")
    assert "failed" not in capi.stats["incident"] and "came to nothing" not in capi.message


def test_an_incident_s_own_instance_counts_size_the_search(capsys, tmp_path):
    """A rolling restart of 60 instances: the settle phase's 80 steps (sized for the default
    2 instances) cut it short, and every design was called violated of deployment_converges."""
    (tmp_path / "big.txt").write_text("push(instances=60)\nsettle\ndeploy()\n")
    status, out, _err = run(capsys, "check", "--incident", str(tmp_path / "big.txt"), "--variant", "capi-safe",
                            "--property", "deployment_converges", "--json")
    (r,) = valid_json_output(json.loads(out))["results"]
    assert (status, r["verdict"]) == (0, "holds")
    assert r["stats"]["bounds"]["max_instances"] == 60 and r["stats"]["bounds"]["settle_steps"] == 600
    inc = _incident(tmp_path, "push(instances=60)\n")  # a bound given stands, and one above the calls is kept
    config = explore.explore_config(CAPI, CAPI.variant("capi-safe"))
    assert inc.sized(config, {"settle_steps": 90}) == {"settle_steps": 90, "max_instances": 60}
    assert inc.sized(config, {"max_instances": 3}) == {"max_instances": 3, "settle_steps": 600}
    assert _incident(tmp_path, "scale(instances=1)\n").sized(config, {}) == {}
    # beyond the largest bound (64): the bound as far as it goes, the settle phase for them all
    # (a review's push of 65 was refused, "--bound: max_instances must be at most 64")
    assert _incident(tmp_path, "push(instances=65)\n").sized(config, {}) == {"max_instances": 64, "settle_steps": 650}
    (tmp_path / "65.txt").write_text("push(instances=65)\nsettle\n")
    assert run(capsys, "check", "--incident", str(tmp_path / "65.txt"), "--variant", "capi-safe", "--property",
               "deployment_converges")[0] == 0


def test_an_incident_s_settle_phase_cut_while_the_platform_is_busy_is_searched_again_longer(capsys, tmp_path):
    """capi-current's settle after a restart, a cancel and a restart of 20 instances takes
    232 steps: the 200 sized for 20 instances cut it with the platform still busy, and the
    design was called violated of deployment_converges (a user trial). The search goes
    again with twice the steps; a deployment stalled for good (a tick that changes nothing
    ends the settle phase before any bound) is still a violation at the bound it began
    with, and a bound given stands. (A settle phase going round a loop: the Settler test
    below.)"""
    (tmp_path / "in20.txt").write_text("push(instances=20)\nsettle\ndeploy()\ncancel()\ndeploy()\n")
    argv = ("check", "--incident", str(tmp_path / "in20.txt"), "--variant", "capi-current",
            "--property", "deployment_converges", "--json")
    status, out, _err = run(capsys, *argv)
    (r,) = valid_json_output(json.loads(out))["results"]
    assert (status, r["verdict"], r["stats"]["bounds"]["settle_steps"]) == (0, "holds", 400)
    status, out, _err = run(capsys, *argv, "--bound", "settle_steps=200")
    (r,) = json.loads(out)["results"]
    assert (status, r["verdict"]) == (1, "violated")
    assert "(the settle phase was cut at settle_steps=200: the platform had not come to rest)" in r["message"]
    stalled = min((SEED.parent).glob("capi-current--deployment_converges--*.json"))
    status, out, _err = run(capsys, "check", "--incident", str(stalled), "--variant", "capi-current",
                            "--property", "deployment_converges", "--json")
    (r,) = json.loads(out)["results"]
    assert (status, r["verdict"], r["stats"]["bounds"]["settle_steps"]) == (1, "violated", 80)
    assert "cut" not in r["message"]


def test_a_call_refused_in_every_run_is_named_as_such(capsys, tmp_path):
    """A file in the wrong order (deploy before push): "refused in some runs" and "nothing
    violated" read as a proof of the incident (a user trial)."""
    (tmp_path / "order.txt").write_text("deploy()\npush(instances=2)\nsettle\ndeploy()\nscale(instances=3)\n")
    status, out, _err = run(capsys, "check", "--incident", str(tmp_path / "order.txt"), "--variant", "capi-safe",
                            "--property", "app_stays_available", "--json")
    (r,) = valid_json_output(json.loads(out))["results"]
    assert status == 0 and r["stats"]["incident"]["always_refused"] == [1]
    assert r["stats"]["incident"]["refused"] == {"scale": r["stats"]["incident"]["refused"]["scale"]}  # (not deploy)
    assert "; the design refused deploy() (action 1) in every run: a rule of the design (a gate doing its work), " \
           "or calls out of order" in r["message"]
    status, out, _err = run(capsys, "check", "--incident", str(tmp_path / "order.txt"), "--variant", "capi-safe",
                            "--property", "app_stays_available")
    assert out.splitlines()[-1].endswith("nothing violated in any interleaving; it refused action 1 in every run")
    inc = _incident(tmp_path, SEED_INCIDENT)  # (a call refused in some runs only is not)
    assert "always_refused" not in _search(inc, "capi-safe", "app_stays_available").stats["incident"]


def test_the_designs_an_incident_needs_are_named_in_its_model(capsys, tmp_path):
    (tmp_path / "i.txt").write_text("push()\n")
    status, _out, err = run(capsys, "check", "--model", "slots", "--incident", str(tmp_path / "i.txt"))
    assert status == 2 and "e.g. --variant slots-pipeline-tag --variant slots-pipeline-immutable" in err
    (tmp_path / "e.txt").write_text("# nothing yet\n")
    with pytest.raises(UsageError, match=r"no actions \(one per line, e.g. swap\(\), set_image"):
        incident.read(str(tmp_path / "e.txt"), get_model("slots"))


def test_a_settle_phase_cut_at_its_bound_is_told_busy_from_going_round_a_loop():
    """``Settler.cut_busy``: the settle phase is one sequence, so one that has gone round a
    loop by the bound has met a state again there (a livelock: judged as ever); one that
    has not is still busy (an incident's own bound is then doubled). A stall (a tick that
    changes nothing) ends the phase before any bound."""
    from types import SimpleNamespace

    from deployspec.engines.product import Settler

    def settler(step):
        model = SimpleNamespace(observe=lambda s: {"at": s},
                                settle_action=lambda obs: SimpleNamespace(kind="runtime"))
        prop = SimpleNamespace(at_settled=lambda obs: f"still at {obs['at']}")
        return Settler(model, SimpleNamespace(step=lambda s, a: step(s)), SimpleNamespace(settle_steps=10), prop)

    looping = settler(lambda s: (s + 1) % 3)  # 0, 1, 2, 0, …: round a loop of three states
    assert looping.outcome(0) == ("still at 1", 10) and looping.cut_busy is False
    counting = settler(lambda s: s + 1)  # never the same state twice: still busy at the bound
    assert counting.outcome(0) == ("still at 10", 10) and counting.cut_busy is True
    late = settler(lambda s: s + 1 if s < 8 else 8 + (s - 7) % 3)  # a loop entered late, not gone round by 10
    assert late.outcome(0)[1] == 10 and late.cut_busy is True


def test_a_longer_settle_search_that_cannot_finish_leaves_the_violation_at_the_bound_that_cut_it():
    """``check.settle_grown``: the retry with twice the steps ran out of budget (an incomplete
    "holds", which exits 0); the search at the bound that cut the settle phase is made again,
    with the whole budget (the first reached the cut within it) and without growing, and its
    violation, said as cut, is the verdict (a review: unknown is no pass)."""
    from deployspec.engines.result import Result

    asked = []

    def search(bounds, grows, seconds):
        asked.append((bounds["settle_steps"], grows, seconds))
        if bounds["settle_steps"] == 200:
            return [Result("capi", "v", "p", "explore", "violated", message="still DEPLOYING (cut)")]
        return [Result("capi", "v", "p", "explore", "holds", stats={"complete": False})]

    cut = [Result("capi", "v", "p", "explore", "error", stats={"settle_cut": 200})]
    (r,) = check.settle_grown(search, cut, {"settle_steps": 200}, 30.0)
    assert r.verdict == "violated" and r.stats["settle_searches"]["searches"] == 3
    assert [(steps, grows) for steps, grows, _ in asked] == [(400, True), (200, False)]
    assert asked[-1][2] == 30.0
