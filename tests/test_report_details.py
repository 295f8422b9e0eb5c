"""The matrix and the variants table in detail: which cells a mark goes on, what the
notes under the table say, and that a line stays one line (an implementation's
error is anyone's text)."""

from __future__ import annotations

from deployspec.engines.result import Result
from deployspec.report import declared_by, matrix, variants_table

from .designs_handed_in import MINE


def R(variant, prop, verdict, engine="explore", **kw):
    return Result("capi", variant, prop, engine, verdict, **kw)


def row(table: str, variant: str) -> str:
    return next(line for line in table.splitlines() if line.startswith(variant + " "))


def test_a_close_look_marks_no_disagreement():
    """Without declarations (one variant looked at closely) a violation is the news,
    not a mismatch: no ``!`` and no note; the matrix marks and explains it."""
    rs = [R("capi-safe", "single_active_deployment", "violated")]
    assert "!" not in matrix(rs, declared=False)
    table = matrix(rs, declared=True)
    assert row(table, "capi-safe").split()[1:] == ["VIOLATED", "!"]
    assert "! capi-safe · single_active_deployment: VIOLATED (explore), declared to hold; a close look: " \
        "deployspec check --model capi --variant capi-safe --property single_active_deployment" in table


def test_under_a_close_look_each_variant_says_what_it_declares_and_how_to_judge_it_by_that():
    """A close look exits 1 on any violation: a design of one's own claiming a fix saw
    VIOLATED there with no word of its claim (the matrix's ``!`` comes only without --variant)."""
    rs = [R("capi-safe", "single_active_deployment", "violated"), R("capi-current", "app_stays_available", "holds"),
          R("capi-safe", "app_stays_available", "holds")]
    assert declared_by(rs).splitlines() == [
        ("capi-safe declares it violates nothing (every property must hold); to judge it by that: deployspec "
        "check --model capi --variant capi-safe --declared --property single_active_deployment --property "
        "app_stays_available"),
        ("capi-current declares it violates app_stays_available, capacity_within_bound, user_scale_not_lost, "
        "and beyond the default search cancel_restores_last_good, deployment_converges, "
        "deployment_never_resumes, deployment_ships_its_droplet, single_active_deployment; to judge it by that: "
        "deployspec check --model capi --variant capi-current --declared --property single_active_deployment "
        "--property app_stays_available"),
    ]


def test_the_columns_are_the_properties_judged_and_line_up_under_their_heads():
    """A cell starts under its property's name, whatever the variants' names' lengths."""
    rs = [R("capi-current", "app_stays_available", "violated"), R("capi-safe", "deployment_converges", "holds")]
    lines = matrix(rs, declared=True).splitlines()
    assert lines[1].split() == ["variant", "app_stays_available", "deployment_converges"]
    assert row("\n".join(lines), "capi-current").index("VIOLATED") == lines[1].index("app_stays_available")
    assert row("\n".join(lines), "capi-safe").index("holds") == lines[1].index("deployment_converges")


def test_a_cell_disagrees_when_any_search_that_gave_its_verdict_disagrees():
    """Two proofs of a property capi-pr3072 breaks beyond the default search: one
    within bounds that include the counterexample's must have met it."""
    from deployspec.models import get_model

    where = get_model("capi").variant("capi-pr3072").violates_beyond["deployment_converges"]
    met = {"complete": True, "bounds": dict(where.config)}
    rs = [R("capi-pr3072", "deployment_converges", "holds", stats=met),
          R("capi-pr3072", "deployment_converges", "holds", engine="z3", stats={})]
    assert row(matrix(rs, declared=True), "capi-pr3072").split()[1:] == ["holds", "+", "!"]
    assert row(matrix(rs[1:], declared=True), "capi-pr3072").split()[1:] == ["holds", "+"]


def test_a_cell_is_judged_by_the_searches_that_gave_its_verdict(outside):
    """A design of one's own must be proven where it claims to hold; a budget-stopped
    search that proved nothing ("unconfirmed") beside a complete proof is no disagreement."""
    outside("finalize_in_txn")
    stopped = {"complete": False, "stopped": "time"}
    rs = [R(MINE, "single_active_deployment", "holds", stats={"complete": True}),
          R(MINE, "single_active_deployment", "unconfirmed", engine="z3", stats=stopped)]
    assert "!" not in matrix(rs, declared=True)


def test_an_error_note_names_two_cells_then_counts_and_quotes_one_safe_line():
    """An implementation's error may carry terminal escapes, line breaks and megabytes:
    under the table it is one printable line; only results that ended in error count."""
    boom = "\x1b[2Jboom\nsecond line " + "x" * 1000
    rs = [R("capi-safe", p, "error", message=boom) for p in ("app_stays_available", "deployment_converges")]
    rs.append(R("capi-safe", "deployment_converges", "holds", engine="z3", message="holds for all"))
    notes = [ln for ln in matrix(rs, declared=True).splitlines() if ln.startswith("error in")]
    assert len(notes) == 1
    (note,) = notes
    assert note.startswith("error in capi-safe · app_stays_available (explore), capi-safe · deployment_converges "
                           "(explore): \\x1b[2Jboom\\nsecond line xxx")
    # cut in its middle: an error's end is the steps nearest the fault (a rule's hang ends
    # with the steps that reached it; the end was dropped, though --json had it whole)
    assert "…" in note and note.endswith("xxx") and len(note) < 400 and "more" not in note


def test_the_variants_table_aligns_a_long_name_of_one_s_own(outside):
    """A design's name longer than the shipped ones: its summary and its "violates:"
    line start in the same column."""
    outside("finalize_in_txn")
    lines = variants_table().splitlines()
    from deployspec.models import get_model

    i = next(i for i, ln in enumerate(lines) if ln.startswith(f"  {MINE} "))
    assert lines[i + 1].index("violates:") == lines[i].index(get_model("capi").variant(MINE).summary)
    assert lines[i + 3].strip().startswith("from: DEPLOYSPEC_VARIANTS module finalize_in_txn")


def test_the_variants_table_says_what_breaks_beyond_the_default_search_and_what_declares_nothing():
    """A fixed design declares nothing (so every property must hold); a property it breaks
    only past the default bounds is said with where, so nobody takes the green cell for proof."""
    lines = variants_table().splitlines()
    safe = next(i for i, ln in enumerate(lines) if ln.startswith("  capi-safe "))
    assert lines[safe + 1].split("violates: ")[1] == "nothing (every property must hold)"
    assert any(ln.strip().startswith("and beyond the default search, single_active_deployment: --engine explore")
               for ln in lines)


def test_a_command_printed_for_a_design_handed_in_by_the_variable_carries_the_variable(outside):
    """Copied into a fresh shell, ``deployspec check --variant mine`` said "unknown variant"."""
    outside("finalize_in_txn")
    from deployspec.models import get_model

    get_model("capi")  # loads the designs
    rs = [R(MINE, "single_active_deployment", "holds", stats={"complete": False}),
          R("capi-safe", "single_active_deployment", "holds", stats={"complete": False})]
    table = matrix(rs, declared=True)
    assert f"  DEPLOYSPEC_VARIANTS=finalize_in_txn deployspec check --model capi --variant {MINE} " in table
    assert "  deployspec check --model capi --variant capi-safe " in table
    assert declared_by(rs[:1]).endswith(f": DEPLOYSPEC_VARIANTS=finalize_in_txn deployspec check --model capi "
                                        f"--variant {MINE} --declared --property single_active_deployment")


def _unfinished(**stats) -> str:
    """The command under the matrix that finishes capi-safe's incomplete proof."""
    from deployspec.check import configure
    from deployspec.models import get_model

    bounds = configure(get_model("capi"), "capi-safe", "explore", {}).to_json() | {"max_depth": None}
    stats = {"complete": False, "seconds": 5.1, "stopped": "time"} | stats
    stats["bounds"] = bounds | stats.get("bounds", {})
    table = matrix([R("capi-safe", "single_active_deployment", "holds", stats=stats)], declared=False)
    assert row(table, "capi-safe").split()[1:] == ["holds*"]
    return table.split("to search further (its bounds, the one that stopped it lifted, twice the time or memory it had):\n  ")[1] \
        .splitlines()[0]


def test_the_command_that_finishes_a_proof_keeps_its_bounds_and_workers_and_lifts_what_stopped_it():
    """It dropped --bound and --workers and always said --budget 120: pasted, it proved the
    default bounds instead ("holds for all 47892 states"), as if the larger proof had finished."""
    head = "deployspec check --model capi --variant capi-safe --engine explore --property single_active_deployment"
    assert _unfinished(bounds={"max_deployments": 3}, workers=2) == \
        f"{head} --bound max_deployments=3 --workers 2 --budget 120"
    assert _unfinished(seconds=300.2, bounds={"max_in_flight": [1, 2]}) == \
        f"{head} --bound 'max_in_flight=[1,2]' --budget 601"  # twice what it ran
    assert _unfinished(stopped="max_depth", seconds=0.4, bounds={"max_depth": 3, "max_instances": 3}) == \
        f"{head} --bound max_instances=3 --budget 120"  # the depth bound lifted
    assert _unfinished(stopped="memory", workers=2, memory_budget_mb=3072, seconds=50) == \
        f"{head} --workers 2 --memory 6144 --budget 120"  # twice the memory it had
    assert _unfinished(stopped="memory") == ("capi-safe · single_active_deployment: the memory budget stopped it: "
                                             "a larger --memory MIB, or narrower --bound options")
    assert _unfinished(stopped="address_space") == ("capi-safe · single_active_deployment: the address-space "
                                                   "limit (ulimit -v) stopped it: a higher limit, or narrower "
                                                   "--bound options")


def test_only_a_holding_cell_is_marked_unfinished():
    """A violation found by one search stands, whether or not another search of the cell was
    cut short: no ``*``, and no command to finish a proof of what is already broken."""
    stopped = {"complete": False, "stopped": "time", "seconds": 5.0, "bounds": {}}
    for verdict in ("violated", "error"):
        rs = [R("capi-safe", "single_active_deployment", verdict, engine="hypothesis"),
              R("capi-safe", "single_active_deployment", "holds", stats=stopped)]
        table = matrix(rs, declared=False)
        assert "*" not in row(table, "capi-safe") and "to search further" not in table


def test_a_close_look_at_every_property_prints_no_property_options():
    """The command to judge by the declarations names properties only when some were asked."""
    from deployspec.models import get_model

    every = [R("capi-safe", p.name, "holds") for p in get_model("capi").properties]
    assert declared_by(every).endswith(": deployspec check --model capi --variant capi-safe --declared")
    assert declared_by(every[:1]).endswith(f": deployspec check --model capi --variant capi-safe --declared "
                                           f"--property {every[0].property}")


def test_a_design_from_an_entry_point_needs_no_variable_in_a_printed_command(monkeypatch):
    """Installed designs load in any shell: only a design the variable handed in carries it,
    even when the variable is set for other designs."""
    from deployspec import variant_plugins
    from deployspec.handing_in import handing_in

    monkeypatch.setenv("DEPLOYSPEC_VARIANTS", "otherdesigns")
    monkeypatch.delenv("PYTHONPATH", raising=False)
    monkeypatch.setattr(variant_plugins, "source_of", lambda name: "entry point mine (mypkg.designs:VARIANTS)")
    assert handing_in("mine") == ""
    monkeypatch.setattr(variant_plugins, "source_of", lambda name: "DEPLOYSPEC_VARIANTS module otherdesigns")
    assert handing_in("mine") == "DEPLOYSPEC_VARIANTS=otherdesigns "


def test_a_printed_command_carries_the_pythonpath_its_design_was_found_on(outside, monkeypatch, tmp_path):
    """``PYTHONPATH=src DEPLOYSPEC_VARIANTS=mine deployspec check`` printed replay commands
    without ``PYTHONPATH``, which said "No module named mine" in the next shell. A module
    found in the current folder needs none, whatever PYTHONPATH holds."""
    from deployspec.handing_in import handing_in
    from deployspec.models import get_model

    from .designs_handed_in import DESIGNS

    monkeypatch.setenv("PYTHONPATH", f"{DESIGNS}:elsewhere")
    monkeypatch.chdir(tmp_path)
    outside("finalize_in_txn")
    get_model("capi").variant(MINE)  # (loads the designs handed in)
    assert handing_in(MINE) == f"PYTHONPATH={DESIGNS}:elsewhere DEPLOYSPEC_VARIANTS=finalize_in_txn "
    assert handing_in() == handing_in(MINE)
    assert handing_in("capi-safe") == ""
    monkeypatch.chdir(DESIGNS)
    assert handing_in(MINE) == "DEPLOYSPEC_VARIANTS=finalize_in_txn "
    # PYTHONPATH=designs from the folder above: the module lies under the current folder, but
    # is not found from it (a review: the first try asked only for "under")
    monkeypatch.chdir(DESIGNS.parent)
    monkeypatch.setenv("PYTHONPATH", "designs")
    assert handing_in(MINE) == "PYTHONPATH=designs DEPLOYSPEC_VARIANTS=finalize_in_txn "


def test_an_incomplete_proof_says_how_to_finish_it():
    cut = Result("capi", "capi-safe", "deployment_converges", "explore", "holds", stats={"complete": False})
    text = matrix([cut], declared=False)
    assert "holds*" in text
    assert ("  deployspec check --model capi --variant capi-safe --engine explore "
            "--property deployment_converges --budget 120") in text


def test_an_error_cell_says_why_under_the_table_once_per_message():
    """A killed --jobs process turned most cells into "error !" with the reason only in --json."""
    lost = "a search process stopped without answering (killed: out of memory?)"
    rs = [Result("capi", "capi-safe", p, "hypothesis", "error", message=lost)
          for p in ("app_stays_available", "single_active_deployment", "deployment_converges")]
    rs += [Result("capi", "capi-2022", "app_stays_available", "hypothesis", "error", message="boom"),
           Result("capi", "capi-2022", "single_active_deployment", "hypothesis", "violated"),
           Result("capi", "capi-2022", "single_active_deployment", "explore", "error", message="hidden")]
    notes = [ln for ln in matrix(rs, declared=True).splitlines() if ln.startswith("error in")]
    assert notes == [
        "error in capi-safe · single_active_deployment (hypothesis), capi-safe · app_stays_available "
        "(hypothesis) and 1 more: " + lost,
        "error in capi-2022 · single_active_deployment (explore): hidden",
        "error in capi-2022 · app_stays_available (hypothesis): boom",
    ]  # an error beside a violation is said too: it makes the run a mismatch


def test_a_violation_beside_an_engine_error_is_marked_as_the_exit_status_judges_it():
    """A cell whose random search found the declared violation and whose exhaustive search
    ended in error: check exits 1 (MISMATCH … marked !) and its JUnit case is an error, but
    the matrix showed a clean VIOLATED with no ``!`` and no word of the error."""
    from deployspec.declarations import matches_declarations
    rs = [Result("capi", "capi-2022", "single_active_deployment", "hypothesis", "violated"),
          Result("capi", "capi-2022", "single_active_deployment", "explore", "error", message="out of memory")]
    text = matrix(rs, declared=True)
    row = next(ln for ln in text.splitlines() if ln.startswith("capi-2022"))
    assert row.split()[1:] == ["VIOLATED", "!"]
    assert not matches_declarations(rs)
    assert ("! capi-2022 · single_active_deployment: VIOLATED (hypothesis), but explore ended in error "
            "(below); a close look:") in text
    assert "error in capi-2022 · single_active_deployment (explore): out of memory" in text
    agreed = matrix(rs[:1], declared=True)  # the same violation alone agrees: no mark
    assert "!" not in agreed and matches_declarations(rs[:1])


def test_an_error_cell_is_said_to_judge_nothing_and_gets_no_plus():
    """An error is no verdict on the declaration: its note says so (not "declared to hold"),
    and the + of a violation beyond the default search belongs to judged cells only."""
    rs = [Result("capi", "capi-pr3072", "deployment_converges", "hypothesis", "error", message="boom"),
          Result("capi", "capi-pr3072", "deployment_converges", "z3", "n/a")]
    text = matrix(rs, declared=True)
    row = next(ln for ln in text.splitlines() if ln.startswith("capi-pr3072"))
    assert row.split()[1:] == ["error", "!"]
    assert "! capi-pr3072 · deployment_converges: error (hypothesis), ended in error (below), judging nothing" in text


def test_a_design_declaring_only_a_violation_beyond_the_default_search_is_not_said_to_hold_everything():
    """``violates: nothing (must hold every property)`` was followed by the violation it
    declares beyond the default search: the line contradicted the next."""
    import attrs
    from deployspec.reference.capi.variants import CAPI_CURRENT, CAPI_SAFE

    from deployspec.report import declared

    beyond = attrs.evolve(CAPI_SAFE, declares=frozenset(), violates_beyond=dict(CAPI_CURRENT.violates_beyond))
    assert declared(beyond) == "nothing within the default search"
    assert declared(CAPI_SAFE) == "nothing (every property must hold)"
    assert declared(CAPI_CURRENT) == ", ".join(sorted(CAPI_CURRENT.declares))


def test_one_variant_s_table_has_a_row_per_property_and_no_trailing_spaces():
    """A close look at one variant was one row as wide as every property's name (280
    characters on capi, a user's report): it is a row per property, marks kept; the
    matrix over several variants stays as it was, with no trailing spaces."""
    rs = [R("capi-safe", "single_active_deployment", "violated"),
          R("capi-safe", "app_stays_available", "holds", stats={"complete": False, "stopped": "time",
                                                                "bounds": {}, "depth": 3})]
    assert matrix(rs, declared=False).splitlines()[:5] == [
        "model capi · variant capi-safe",
        "property                  verdict",
        "----------------------------------",
        "single_active_deployment  VIOLATED",
        "app_stays_available       holds*"]
    one = matrix(rs[:1], declared=False).splitlines()
    assert one[0] == "model capi" and one[3] == "capi-safe  VIOLATED"  # one cell: as narrow either way
    rs.append(R("capi-2022", "single_active_deployment", "violated"))
    lines = matrix(rs, declared=False).splitlines()
    assert lines[0] == "model capi" and lines[1].split() == ["variant", "single_active_deployment",
                                                             "app_stays_available"]
    assert not any(line != line.rstrip() for line in lines)


def test_a_vacuous_hold_of_a_design_that_never_has_the_action_act_says_why():
    """capi designs before canaries hold canary_pauses_at_every_step with no continue_: the
    note said "within the bounds", as if a bound could change it."""
    stats = {"complete": True, "vacuous": ["continue_"]}
    table = matrix([R("capi-2022", "canary_pauses_at_every_step", "holds", stats=stats),
                    R("capi-safe", "canary_pauses_at_every_step", "holds", stats=stats)], declared=False)
    notes = [line for line in table.splitlines() if line.startswith("? ")]
    assert notes == [
        ("? capi-2022 · canary_pauses_at_every_step: vacuous, capi-2022 gives continue_ nothing to do under any "
         "bounds (it has no canary deployments)"),
        "? capi-safe · canary_pauses_at_every_step: vacuous, no continue_ took effect within the bounds"]


def test_a_violation_only_a_settle_bound_given_too_short_shows_says_so():
    """A user's ``--bound settle_steps=1`` called capi-safe VIOLATED, which read as a wrong
    result: the table says the bound given cut the settle phase, and what these bounds' own is."""
    cut = R("capi-safe", "deployment_converges", "violated",
            message="d0 is still DEPLOYING after settling (the settle phase was cut at settle_steps=1: the "
                    "platform had not come to rest)")
    note = ("capi-safe · deployment_converges: violated where settle_steps=1, as given, cut the settle phase "
            "before the platform came to rest; these bounds' own is 80")
    assert note in matrix([cut], declared=False, bounds={"settle_steps": 1})
    assert "as given" not in matrix([cut], declared=False)  # (deployspec's own bound: nothing given)
    whole = R("capi-2022", "deployment_converges", "violated", message="d0 is CANCELING after settling")
    assert "as given" not in matrix([whole], declared=False, bounds={"settle_steps": 1})
    longer = R("capi-safe", "deployment_converges", "violated",
               message="d0 is still DEPLOYING after settling (the settle phase was cut at settle_steps=100: the "
                       "platform had not come to rest)")
    assert "as given" not in matrix([longer], declared=False, bounds={"settle_steps": 100})  # (above its own)


def test_variants_says_each_design_s_own_configuration():
    """A design evolved from slots-webhook-staging-tag inherits its start (both slots on the
    tag, the webhook's way in), which a user could not see: `variants` says it."""
    blocks, name = {}, None
    for line in variants_table().splitlines():
        if line.startswith("  ") and not line.startswith("   "):
            name = line.split()[0]
        if name is not None:
            blocks.setdefault(name, []).append(line.strip())
    assert 'configured: start="webhook-staging"' in blocks["slots-webhook-staging-tag"]
    assert not any(line.startswith("configured:") for line in blocks["slots-pipeline-tag"])
