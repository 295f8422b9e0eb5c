"""A design's fields that say what a proposed fix changes: ``deploy_blocked_in`` (a
deploy refused while a deployment is in given states; no shipped design has one)."""

from __future__ import annotations

from .cli_runs import run
from .designs_handed_in import EVOLVED, FINDINGS


def test_a_fix_that_has_a_restart_wait_for_the_cancel_holds_on_the_seed_s_steps(capsys, hand_in):
    """An operator's fix ("cancel then restart waits for the cancel to finish") could not be
    said with the design's fields: a deploy refused while CANCELING is ``deploy_blocked_in``.
    The seed's steps then hold on it, the refused deploy named; capi-current breaks on them."""
    hand_in("waits", EVOLVED.format("name='deploy-waits', deploy_blocked_in={'CANCELING'}"))
    seed = FINDINGS / "capi-2022--app_stays_available--a940739cf1.json"
    status, out, _ = run(capsys, "replay", str(seed), "--variant", "deploy-waits")
    assert (status, out) == (0, (f"{seed}: does not reproduce on deploy-waits: app_stays_available holds "
                                "(1 action(s) refused: step 4 deploy(): Cannot create a deployment while deployment 0 is "
                                "CANCELING)\n"))
    status, _, _ = run(capsys, "replay", str(seed), "--variant", "capi-current")
    assert status == 1


def test_a_gate_on_a_design_that_inherits_known_violations_passes_them_with_declared(capsys, hand_in):
    """A CI user's design inherited capi-current's declared violations: every run of their
    replay gate failed on them. With ``--declared`` a violation the design declares is
    expected (said, exit 0 for it); one it does not declare still fails the run."""
    import json

    hand_in("waits", EVOLVED.format("name='deploy-waits', deploy_blocked_in={'CANCELING'}"))
    inherited = FINDINGS / "capi-current--app_stays_available--abc77ff4b4.json"
    status, out, _ = run(capsys, "replay", str(inherited), "--variant", "deploy-waits", "--declared", "--json")
    (entry,) = json.loads(out)["files"]
    assert status == 0 and (entry["outcome"], entry["declared"]) == ("reproduces", True)
    assert entry["message"].endswith("(declared by deploy-waits: expected)")
    # one it declares it holds: the gate fails
    hand_in("holds", EVOLVED.format("name='claims-all', deploy_blocked_in={'CANCELING'}, declares=set(), "
                                    "violates_beyond={}"))
    status, out, _ = run(capsys, "replay", str(inherited), "--variant", "claims-all", "--declared")
    assert status == 1 and "reproduces on claims-all" in out and "expected" not in out
    status, _, err = run(capsys, "replay", str(inherited), "--python", "deployspec.contract.examples:capi_safe",
                         "--declared")
    assert status == 2 and "an implementation declares nothing" in err


def test_an_expected_violation_is_saved_by_out_all_the_same(capsys, hand_in, tmp_path):
    hand_in("waits", EVOLVED.format("name='deploy-waits', deploy_blocked_in={'CANCELING'}"))
    inherited = FINDINGS / "capi-current--app_stays_available--abc77ff4b4.json"
    status, out, _ = run(capsys, "replay", str(inherited), "--variant", "deploy-waits", "--declared", "--out",
                         str(tmp_path))
    assert status == 0 and "saved: " in out and len(list(tmp_path.glob("*.json"))) == 1


def test_the_page_of_a_trace_of_a_design_handed_in_gives_a_replay_command_that_finds_it(capsys, hand_in, tmp_path):
    """A CI user's teammate copied the HTML page's command and got "not known here"."""
    hand_in("waits", EVOLVED.format("name='deploy-waits', deploy_blocked_in={'CANCELING'}"))
    inherited = FINDINGS / "capi-current--app_stays_available--abc77ff4b4.json"
    run(capsys, "replay", str(inherited), "--variant", "deploy-waits", "--out", str(tmp_path))
    (saved,) = tmp_path.glob("*.json")
    status, page, _ = run(capsys, "show", str(saved), "--format", "html")
    assert status == 0 and f"DEPLOYSPEC_VARIANTS=waits deployspec replay {saved}" in page
    status, page, _ = run(capsys, "show", str(inherited), "--format", "html")  # a shipped design's: as it was
    assert f"<code>deployspec replay {inherited}</code>" in page
