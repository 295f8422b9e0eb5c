"""Designs of the user's own (deployspec.variant_plugins): handed in by DEPLOYSPEC_VARIANTS or
an entry point, and known to every command (refused ones: test_variant_plugins_refused.py)."""

import json
from importlib.metadata import EntryPoint

import pytest

from deployspec import models, partitioned, variant_plugins

from .cli_runs import run, valid_json_output
from .designs_handed_in import EVOLVED, FINDINGS, MINE
from .helpers import without_steps
from .test_docs_commands import ROOT, code_blocks


def test_a_design_of_ones_own_is_listed_with_where_it_came_from(capsys, outside):
    outside("finalize_in_txn")
    status, out, _ = run(capsys, "variants", "--json")
    (mine,) = [v for v in valid_json_output(json.loads(out))["capi"]["variants"] if v["name"] == MINE]
    assert status == 0 and mine["source"] == "DEPLOYSPEC_VARIANTS module finalize_in_txn"
    assert mine["declares"] == ["app_stays_available", "cancel_restores_last_good", "capacity_within_bound",
                                "user_scale_not_lost"]
    shipped = [v for v in json.loads(out)["capi"]["variants"] if v["name"] == "capi-current"]
    assert shipped[0]["source"] is None


def test_it_replays_what_broke_the_design_it_changes(capsys, outside):
    """The one change removes the finding it was made for; capi-current keeps it."""
    outside("finalize_in_txn")
    finding = str(next(FINDINGS.glob("capi-current--single_active_deployment--*.json")))
    status, out, _ = run(capsys, "replay", finding, "--variant", MINE)
    assert status == 0 and out.endswith(f"does not reproduce on {MINE}: single_active_deployment holds\n")
    assert run(capsys, "replay", finding)[0] == 1


def test_the_explorer_proves_what_the_change_fixed(capsys, outside):
    outside("finalize_in_txn")
    status, out, _ = run(capsys, "check", "--model", "capi", "--variant", MINE, "--engine", "explore",
                         "--property", "single_active_deployment", "--json")
    (result,) = json.loads(out)["results"]
    assert status == 0 and result["variant"] == MINE and result["verdict"] == "holds"
    assert result["stats"]["complete"] is True


def test_the_explorer_finds_what_the_change_left_of_capi_currents_cancel(capsys, outside):
    """With the window closed, capi-current's cancel rolling back past a canary that served
    (its eight-step finding hid it) is the design's shortest violation of the property: the
    design declares it, and docs/variants.md's design declares what this one does (the
    example's matrix exited 1 when the property grew stricter and neither said so)."""
    outside("finalize_in_txn")
    status, out, _ = run(capsys, "check", "--model", "capi", "--variant", MINE, "--engine", "explore",
                         "--property", "cancel_restores_last_good", "--json")
    (result,) = json.loads(out)["results"]
    assert status == 1 and result["verdict"] == "violated" and result["trace_length"] == 9, result
    assert result["stats"]["complete"] and result["stats"]["shortest"], result["stats"]
    assert result["message"] == ("cancel of d1 left P0 running droplet 0, not the healthy droplet 1 the app ran "
                                 "before the deployment"), result["message"]
    documented: dict = {}
    exec(documented_designs()["mydesigns"], documented)  # noqa: S102 (the doc's own example, as a reader copies it)
    assert documented["FINALIZE_IN_TXN"].declares == models.get_model("capi").variant(MINE).declares


def test_the_matrix_judges_it_by_what_it_declares(outside):
    """``check`` with no --variant runs every variant of the model, this one too, and compares."""
    from deployspec.check import plan
    from deployspec.declarations import matches

    outside("finalize_in_txn")
    model = models.get_model("capi")
    assert (model, MINE) in plan("capi", None)
    assert matches(model, MINE, "app_stays_available", "violated")  # declared
    assert not matches(model, MINE, "app_stays_available", "holds")
    assert not matches(model, MINE, "single_active_deployment", "violated")  # not declared: must hold


def documented_designs() -> dict[str, str]:
    """The modules docs/variants.md writes out (a Python block opening ``# NAME.py``), by name."""
    blocks = [body for language, body in code_blocks((ROOT / "docs" / "variants.md").read_text())
              if language == "python"]
    return {body.splitlines()[0][2:-3]: body + "\n" for body in blocks if body.startswith("# ")}


def test_the_documented_designs_are_handed_in_as_written(capsys, hand_in):
    """The docs' examples, copied into a file by a reader, load (a capi and an App Service one)."""
    designs = documented_designs()
    assert set(designs) == {"mydesigns", "myslots", "myrule"}
    for module, source in designs.items():
        hand_in(module, source)
        status, out, err = run(capsys, "variants")
        assert (status, err) == (0, "") and f"from: DEPLOYSPEC_VARIANTS module {module}" in out


def test_the_documented_app_service_design_breaks_what_the_docs_say(capsys, hand_in):
    hand_in("myslots", documented_designs()["myslots"])
    status, out, _ = run(capsys, "check", "--model", "slots", "--variant", "slots-digest-or-tag", "--engine",
                         "explore", "--property", "no_latent_drift", "--property",
                         "production_runs_only_released_images", "--json")
    results = {r["property"]: r for r in valid_json_output(json.loads(out))["results"]}
    assert status == 1 and {p: r["verdict"] for p, r in results.items()} == {
        "no_latent_drift": "violated", "production_runs_only_released_images": "violated"}
    assert results["no_latent_drift"]["message"].startswith("staging instance 0 runs nothing but release now "
                                                            "resolves to d0")
    assert {p: r["trace_length"] for p, r in results.items()} == {"no_latent_drift": 2,
                                                                 "production_runs_only_released_images": 3}


def test_what_a_design_prints_while_it_loads_stays_off_stdout(capsys, outside, tmp_path, monkeypatch):
    (tmp_path / "noisy.py").write_text("print('hello from import')\n" + EVOLVED.format("name='noisy'"))
    monkeypatch.syspath_prepend(str(tmp_path))
    outside("noisy")
    status, out, err = run(capsys, "variants", "--json")
    assert status == 0 and "noisy" in [v["name"] for v in json.loads(out)["capi"]["variants"]]
    assert "hello from import" in err


def test_serve_answers_for_a_design_that_prints_while_it_loads(capsys, outside, tmp_path, monkeypatch):
    """serve takes the protocol's channel before it loads the model (and the user's designs)."""
    import shlex
    import sys

    (tmp_path / "noisy.py").write_text("print('hello from import')\n" + EVOLVED.format("name='noisy'"))
    monkeypatch.setenv("PYTHONPATH", str(tmp_path))  # for serve's process
    monkeypatch.syspath_prepend(str(tmp_path))  # for contract's (not only after the test above)
    outside("noisy")
    served = f"{shlex.quote(sys.executable)} -m deployspec serve --model capi --variant noisy"
    status, out, _ = run(capsys, "contract", "--exec", served, "--model", "capi", "--examples", "5",
                         "--property", "single_active_deployment")
    assert status == 0, out


@pytest.mark.parametrize("module, body, raised", [
    ("rulebroken", "raise RuntimeError('my rule is broken')", "RuntimeError: my rule is broken"),
    # its exit is not deployspec's: check and contract ended with status 4, nothing said
    ("ruleexits", "import sys; sys.exit(4)", "SystemExit: 4"),
])
def test_a_rule_that_raises_is_an_error_of_that_search_and_no_replay_verdict(capsys, tmp_path, hand_in, module, body,
                                                                            raised):
    hand_in(module, f"def boom(state):\n    {body}\n"
            + EVOLVED.format("name='raises', previous_deployment=boom, violates_beyond={}"))
    why = f"variant raises (DEPLOYSPEC_VARIANTS module {module}) raised {raised} at {module}.py:2"
    status, out, _ = run(capsys, "check", "--model", "capi", "--variant", "raises", "--engine", "explore",
                         "--property", "single_active_deployment", "--json")
    (result,) = valid_json_output(json.loads(out))["results"]  # (an error's stats: its seconds)
    assert set(result["stats"]) == {"seconds"}
    assert status == 1 and (result["verdict"], without_steps(result["message"])) == ("error", why)
    finding = next(FINDINGS.glob("capi-current--single_active_deployment--*.json"))
    status, out, err = run(capsys, "replay", str(finding), "--variant", "raises")
    assert (status, out, err) == (2, "", f"deployspec: error: {finding}: {why}\n")
    # with files after it: the error first, then what it left, in one line (the files came first)
    more = sorted(FINDINGS.glob("capi-current--*.json"))[:3]
    status, out, err = run(capsys, "replay", str(finding), *map(str, more), "--variant", "raises")
    left = [str(p) for p in more if p != finding]
    assert (status, out) == (2, "") and err.count("\n") == 1
    assert err.startswith(f"deployspec: error: {finding}: {why}; not replayed after the fault: {len(left)} file(s)")
    # in a long folder's names (CI's checkout was 6 characters longer): fewer names, the error whole
    deep = tmp_path / ("a-folder-with-a-long-name-" * 6) / "traces"
    deep.mkdir(parents=True)
    copied = [deep / p.name for p in (finding, *more)]
    for source, copy in zip((finding, *more), copied):
        copy.write_bytes(source.read_bytes())
    status, out, err = run(capsys, "replay", *map(str, copied), "--variant", "raises")
    assert (status, out) == (2, "") and err.count("\n") == 1 and len(err) <= 520 and "…" not in err
    assert err.startswith(f"deployspec: error: {copied[0]}: {why}; not replayed after the fault: {len(left)} file(s)")
    # the reference of a contract run: its conformance check has no verdict either
    status, out, err = run(capsys, "contract", "--python", "deployspec.contract.examples:capi_safe", "--model",
                           "capi", "--reference", "raises", "--property", "conforms_to_raises", "--examples", "3",
                           "--json")
    assert (status, out) == (2, "") and without_steps(err.rstrip("\n")).endswith(f"deployspec: error: --reference: {why}")
    # a --python that cannot be loaded is the argument's error, not the reference design's
    status, out, err = run(capsys, "contract", "--python", "no_such_module_here:f", "--model", "capi",
                           "--reference", "raises", "--examples", "3")
    assert (status, out) == (2, "") and err.startswith("deployspec: error: --python no_such_module_here:f: no module"), err


def test_a_conformance_trace_whose_reference_raises_blames_that_design(capsys, hand_in, tmp_path):
    """A conformance trace replayed on its variant, on an implementation, or drawn: the
    reference's rule raising is that design's error (it was a traceback with exit 1, the
    status of a finding that reproduces, or an implementation fault of a correct one)."""
    hand_in("rulebroken", "def boom(state):\n    raise RuntimeError('my rule is broken')\n"
            + EVOLVED.format("name='raises', previous_deployment=boom, violates_beyond={}"))
    why = "variant raises (DEPLOYSPEC_VARIANTS module rulebroken) raised RuntimeError: my rule is broken at rulebroken.py:2"
    seed = json.loads((ROOT / "counterexamples" / "capi" / "capi-2022--app_stays_available--a940739cf1.json").read_text())
    trace = tmp_path / "conf.json"
    trace.write_text(json.dumps(dict(seed, variant="capi-safe", property="conforms_to_raises",
                                     violation={"step": 5, "message": "differs"})))
    for target in ([], ["--python", "deployspec.contract.examples:capi_safe"]):
        status, out, err = run(capsys, "replay", str(trace), *target)
        assert (status, out, err) == (2, "", f"deployspec: error: {trace}: {why}\n"), target
    status, out, err = run(capsys, "show", str(trace))  # the steps drawn; where it parted, not
    assert status == 0 and err == ""
    assert out.endswith(f"(where it parted from the reference is not shown: {why})\n")


def test_a_conformance_trace_of_a_design_not_handed_in_is_drawn_with_what_it_recorded(capsys, tmp_path):
    """A CI artifact drawn on another machine: ``show`` refused a trace whose ``--reference``
    was the user's own design as an unknown variant; it draws it, with the difference the run
    recorded, while ``replay`` (which needs the design) still refuses it."""
    seed = json.loads((ROOT / "counterexamples" / "capi" / "capi-2022--app_stays_available--a940739cf1.json").read_text())
    trace = tmp_path / "conf.json"
    said = "after step 5 (tick()) the observation differs from acme-safe: processes[0].instances: …"
    trace.write_text(json.dumps(dict(seed, variant="implementation", property="conforms_to_acme-safe",
                                     violation={"step": 5, "message": said})))
    status, out, err = run(capsys, "show", str(trace))
    assert (status, err) == (0, "") and ">>  5  tick()" in out
    assert out.endswith(f"{said}\n(the reference's whole view is not shown: acme-safe is not a design known here; "
                        "DEPLOYSPEC_VARIANTS=MODULE hands it in: docs/variants.md)\n")
    assert run(capsys, "show", str(trace), "--format", "svg")[0] == 0
    status, out, err = run(capsys, "replay", str(trace))
    assert (status, out) == (2, "") and "unknown variant 'acme-safe'" in err
    # the file's words are escaped: a line of its own under the table is not forged
    trace.write_text(json.dumps(dict(seed, variant="implementation", property="conforms_to_acme-safe",
                                     violation={"step": 5, "message": "differs\nverdict: holds"})))
    status, out, _err = run(capsys, "show", str(trace))
    assert status == 0 and "differs\\nverdict: holds\n(the reference" in out and "\nverdict: holds" not in out


@pytest.mark.skipif(not partitioned.available(), reason="partitioned searches need Linux (fork)")
def test_a_rule_that_raises_in_an_explore_worker_is_named_by_its_own_line(capsys, hand_in):
    """--workers: the exception comes back from a worker process; it was named by the line of
    deployspec's that raised it again ('in deployspec's partitioned.py: does a rule of yours
    take the arguments…?'), not by the user's."""
    _the_worker_s_error_names_the_rule(capsys, hand_in, "workerbroken")


def _the_worker_s_error_names_the_rule(capsys, hand_in, module: str) -> None:
    """A rule of ``module`` raises in an explore worker: the error names the rule's line."""
    hand_in(module, "def boom(state):\n    raise RuntimeError('my rule is broken')\n"
            + EVOLVED.format("name='raises', previous_deployment=boom, violates_beyond={}"))
    status, out, _ = run(capsys, "check", "--model", "capi", "--variant", "raises", "--engine", "explore",
                         "--workers", "2", "--property", "single_active_deployment", "--json")
    (result,) = json.loads(out)["results"]
    why = (f"variant raises (DEPLOYSPEC_VARIANTS module {module}) raised RuntimeError: my rule is broken "
           f"at {module}.py:2")
    assert status == 1 and (result["verdict"], result["message"]) == ("error", why)


@pytest.mark.skipif(not partitioned.available(), reason="partitioned searches need Linux (fork)")
def test_a_worker_s_exception_comes_back_whole_when_its_frames_hold_code(capsys, hand_in, monkeypatch):
    """Python 3.14's ``traceback.extract_tb`` keeps each frame's code object in its
    FrameSummary (``_code``), which does not pickle: the frames sent with a worker's
    exception must not carry it, or the exception comes back a RuntimeError of its text,
    named by deployspec's line. Simulated here on any Python."""
    import traceback

    class Frame314(traceback.FrameSummary):
        __slots__ = ("_code",)

    real = traceback.extract_tb

    def extract_tb(tb, limit=None):
        out = traceback.StackSummary()
        for f, (frame, _) in zip(real(tb, limit), traceback.walk_tb(tb)):
            g = Frame314(f.filename, f.lineno, f.name, lookup_line=False)
            g._code = frame.f_code
            out.append(g)
        return out

    monkeypatch.setattr(traceback, "extract_tb", extract_tb)  # the workers fork with it
    _the_worker_s_error_names_the_rule(capsys, hand_in, "workercode")


@pytest.mark.parametrize("jobs", ["1", "2"])
def test_what_a_design_prints_goes_to_stderr_not_into_the_report(capfd, hand_in, tmp_path, monkeypatch, jobs):
    """A rule is the user's code and may print; stdout is --json's (and the matrix's).
    With --jobs the searches run in other processes, which print there too."""
    monkeypatch.setenv("PYTHONPATH", str(tmp_path))  # for the --jobs processes
    hand_in("noisyrule", "import attrs\nfrom deployspec.reference.capi.variants import CAPI_CURRENT\n"
            "def noisy(*args):\n    print('debug: choosing')\n    return CAPI_CURRENT.previous_deployment(*args)\n"
            "VARIANTS = [attrs.evolve(CAPI_CURRENT, name='noisy', previous_deployment=noisy, violates_beyond={})]\n")
    status, out, err = run(capfd, "check", "--model", "capi", "--variant", "noisy", "--engine", "explore",
                           "--property", "single_active_deployment", "--property", "capacity_within_bound",
                           "--budget", "2", "--jobs", jobs, "--json")  # (capfd: the processes' own streams)
    assert {r["variant"] for r in valid_json_output(json.loads(out))["results"]} == {"noisy"}
    assert "debug: choosing" in err and status in (0, 1)


def test_a_list_made_once_serves_every_model(capsys, outside, tmp_path, monkeypatch):
    """A generator is read once, for every model, not used up by the first model loaded."""
    (tmp_path / "gen.py").write_text(
        "import attrs\nfrom deployspec.reference.capi.variants import CAPI_CURRENT\n"
        "from deployspec.reference.slots.variants import SLOTS_PIPELINE_IMMUTABLE\n"
        "VARIANTS = (v for v in [attrs.evolve(CAPI_CURRENT, name='gen-capi', violates_beyond={}),\n"
        "                        attrs.evolve(SLOTS_PIPELINE_IMMUTABLE, name='gen-slots')])\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    outside("gen")
    status, out, _ = run(capsys, "variants", "--json")
    listed = json.loads(out)
    assert status == 0
    assert "gen-capi" in [v["name"] for v in listed["capi"]["variants"]]
    assert "gen-slots" in [v["name"] for v in listed["slots"]["variants"]]


def test_an_entry_point_hands_in_the_same(capsys, outside, monkeypatch):
    point = EntryPoint("mine", "finalize_in_txn:VARIANTS", variant_plugins.GROUP)
    monkeypatch.setattr(variant_plugins, "entry_points", lambda group: [point] if group == variant_plugins.GROUP else [])
    status, out, _ = run(capsys, "variants")
    assert status == 0 and "from: entry point mine (finalize_in_txn:VARIANTS)" in out


def test_a_design_s_bounds_are_held_as_the_configuration_holds_them(hand_in):
    """A list given where the configuration holds a tuple (--bound's JSON gives lists) runs as
    the tuple: the search hashes its configuration."""
    hand_in("listed", EVOLVED.format("name='listed', config={'max_in_flight': [1, 2]}, "
                                     "explore={'canary_plans': [[], [100]]}"))
    listed = models.get_model("capi").variant("listed")
    assert (listed.config, listed.explore) == ({"max_in_flight": (1, 2)}, {"canary_plans": ((), (100,))})


def test_every_shipped_design_renamed_is_handed_in_as_it_is(hand_in):
    """The check of bounds refuses nothing a shipped design has, and changes none of it."""
    from deployspec.reference import capi, slots

    shipped = {**capi.VARIANTS, **slots.VARIANTS}
    hand_in("renamed", "import attrs\nfrom deployspec.reference import capi, slots\n"
            "VARIANTS = [attrs.evolve(v, name='my-' + v.name) for v in [*capi.VARIANTS.values(), "
            "*slots.VARIANTS.values()]]\n")
    for name, v in shipped.items():
        mine = models.find_variant("my-" + name)[1]
        assert (mine.config, getattr(mine, "explore", None)) == (v.config, getattr(v, "explore", None))


def test_a_module_both_installed_and_named_in_the_variable_is_loaded_once(capsys, outside, monkeypatch):
    point = EntryPoint("mine", "finalize_in_txn", variant_plugins.GROUP)
    monkeypatch.setattr(variant_plugins, "entry_points", lambda group: [point])
    outside("finalize_in_txn")
    status, out, err = run(capsys, "variants")
    assert (status, err) == (0, "") and out.count(f"  {MINE} ") == 1


def test_a_set_written_with_braces_is_held_as_the_shipped_frozensets_are(capsys, hand_in):
    """`scale_blocked_in={"DEPLOYING"}` loaded, then every search ended in an error (a
    variant is hashed: the explorer memoises by it). (Every state capi-safe blocks: one
    that leaves out the canary's PREPAUSED and PAUSED breaks the bound, as it should.)"""
    hand_in("braces", "import attrs\nfrom deployspec.reference.capi.variants import CAPI_SAFE\n"
                      "VARIANTS = [attrs.evolve(CAPI_SAFE, name='safe-braces', declares=set(),\n"
                      "    scale_blocked_in={'DEPLOYING', 'PREPAUSED', 'PAUSED', 'CANCELING'})]\n")
    variant = models.get_model("capi").variant("safe-braces")
    assert isinstance(variant.scale_blocked_in, frozenset) and isinstance(variant.declares, frozenset)
    hash(variant)
    status, out, _ = run(capsys, "check", "--model", "capi", "--variant", "safe-braces", "--engine", "explore",
                         "--property", "capacity_within_bound")
    assert status == 0 and "holds for all" in out, out


def test_a_module_that_closes_the_streams_as_it_loads_leaves_deployspec_s_output_whole(capsys, hand_in):
    """Its stdout is deployspec's stderr while it loads: closing either lost check's --json."""
    hand_in("closer", "import sys\nsys.stdout.buffer.close()\nsys.stdout.close()\nsys.stderr.close()\n"
                      "VARIANTS = []\n")
    status, out, err = run(capsys, "check", "--model", "capi", "--variant", "capi-safe", "--engine", "explore",
                           "--property", "capacity_within_bound", "--json")
    assert status == 0 and json.loads(out)["results"][0]["verdict"] == "holds"
    assert "capacity_within_bound · explore: holds" in err


def test_a_designs_module_may_import_the_example_objects_and_be_served_by_its_own_name(capsys, hand_in):
    """``from deployspec.contract.examples import ReferenceImplementation`` (what
    docs/contract.md offers to build on) asked the module for ``__path__``, which loaded
    every model from inside the designs module being loaded: refused as "get_model at
    import?". And a design named with ``_`` is served in process by that name."""
    hand_in("ownimpl", "from deployspec.contract.examples import ReferenceImplementation\n"
            + EVOLVED.format("name='most_running'"))
    status, out, err = run(capsys, "variants")
    assert status == 0 and "most_running" in out, err
    status, out, err = run(capsys, "contract", "--python", "deployspec.contract.examples:most_running",
                           "--model", "capi", "--examples", "3", "--property", "single_active_deployment")
    assert status == 0, err


def test_a_slots_design_sets_its_own_exploration_bounds_as_a_capi_one_does():
    """``explore`` is a field of both models' variants (slots had none: every reader of it
    probed with getattr), and the exhaustive search takes it over the model's bounds."""
    import attrs
    from deployspec.reference.slots.variants import SLOTS_PIPELINE_IMMUTABLE

    from deployspec.engines.explore import explore_config
    from deployspec.models import get_model

    slots = get_model("slots")
    assert explore_config(slots, SLOTS_PIPELINE_IMMUTABLE).max_pushes == slots.config_type.EXPLORE["max_pushes"]
    mine = attrs.evolve(SLOTS_PIPELINE_IMMUTABLE, name="mine", explore={"max_pushes": 2})
    assert explore_config(slots, mine).max_pushes == 2


def test_a_design_s_own_words_are_listed_escaped(capsys, hand_in):
    """Its summary, upstream and reasons went to the terminal as written: an escape cleared
    the screen and set the window's title, a newline broke the table's columns. Text of a
    ``str`` subclass is read as plain text (its own ``isprintable`` let them through)."""
    from deployspec import report

    hand_in("wordy", "import attrs\nfrom deployspec.reference.core import Beyond\n"
                     "from deployspec.reference.capi.variants import CAPI_SAFE\n"
                     "class Sly(str):\n    def isprintable(self):\n        return True\n"
                     "VARIANTS = [attrs.evolve(CAPI_SAFE, name='wordy', declares=set(),\n"
                     "    summary=Sly('clears\\x1b[2J\\x1b]0;title\\x07\\nsecond line'),\n"
                     "    upstream='see\\x00there\\u202e',\n"
                     "    violates_beyond={'app_stays_available': Beyond(config={}, trace='t.json', why=Sly('rings\\x07'))})]\n")
    status, out, _ = run(capsys, "variants")
    assert status == 0
    (line,) = [x for x in out.splitlines() if x.lstrip().startswith("wordy ")]
    assert line.endswith(r"clears\x1b[2J\x1b]0;title\x07\nsecond line")
    assert r"upstream: see\x00there\u202e" in out and r"app_stays_available: rings\x07; t.json" in out
    assert "\x1b" not in out and "\x07" not in out and "\x00" not in out and "second line" not in out.replace(
        r"\nsecond line", "")
    said = report._Said()  # the matrix's note under a cell marked +
    assert report._beyond(models.get_model("capi"), "wordy", "app_stays_available", [], "holds", True, said) == " +"
    assert said.notes == [r"+ wordy violates app_stays_available beyond the default search: rings\x07; t.json"]


def test_a_jobs_process_killed_fails_its_own_search_and_the_others_run_again(capsys, hand_in, tmp_path, monkeypatch):
    """The out-of-memory killer ends one --jobs process: the pool breaks and ends the
    others. Every search not yet judged was an error, "killed: out of memory?", the
    ones of the processes that were not killed and those not yet begun too."""
    monkeypatch.setenv("PYTHONPATH", str(tmp_path))  # for the --jobs processes
    monkeypatch.setenv("DIES_ONCE_MARK", str(tmp_path / "died"))
    hand_in("diesonce", "import attrs, os, signal\nfrom deployspec.reference.capi.variants import CAPI_CURRENT\n"
            "def dies(*args):\n"
            "    try:\n        os.close(os.open(os.environ['DIES_ONCE_MARK'], os.O_CREAT | os.O_EXCL))\n"
            "    except FileExistsError:\n        return CAPI_CURRENT.previous_deployment(*args)\n"
            "    os.kill(os.getpid(), signal.SIGKILL)\n"
            "VARIANTS = [attrs.evolve(CAPI_CURRENT, name='dies-once', previous_deployment=dies, violates_beyond={})]\n")
    properties = ("single_active_deployment", "capacity_within_bound", "user_scale_not_lost")
    status, out, err = run(capsys, "check", "--model", "capi", "--variant", "dies-once", "--engine", "explore",
                           *(a for p in properties for a in ("--property", p)), "--jobs", "2", "--json")
    results = valid_json_output(json.loads(out))["results"]
    errors = [r for r in results if r["verdict"] == "error"]
    assert status == 1 and (tmp_path / "died").exists() and len(errors) == 1, (errors, err)
    assert errors[0]["message"] == "its search process stopped without answering (killed by SIGKILL; out of memory?)"
    judged = {r["property"] for r in results if r["verdict"] in ("holds", "violated")}
    assert judged == set(properties) - {errors[0]["property"]}


def test_a_rule_that_raises_in_the_close_look_s_explorer_is_its_error_beside_the_random_search_s_finding(
        capsys, hand_in):
    """The random search found the violation, the explorer's moves then reached the state
    where the rule raises: the error was said as the random search's ('(hypothesis)', with
    the explorer's words), and the violation it found was lost."""
    hand_in("b_raise", "def boom(state, canceling, reports):\n"
                       "    return [p for p in state.processes if p.id != canceling.deploying_process][0]\n"
            + EVOLVED.format("name='capi-boom', select_prior=boom, violates_beyond={}"))
    status, out, _ = run(capsys, "check", "--model", "capi", "--variant", "capi-boom", "--property",
                         "app_stays_available", "--budget", "5", "--seed", "1", "--json")
    results = valid_json_output(json.loads(out))["results"]
    assert status == 1
    found = [(r["engine"], r["verdict"]) for r in results]
    # the random search's violation, the causes the explorer found before its moves met the
    # raising rule (each with its trace), then that search's error
    assert found[0] == ("hypothesis", "violated") and found[-1] == ("explore", "error")
    assert set(found[1:-1]) <= {("explore", "violated")}
    assert results[-1]["message"].startswith("variant capi-boom (DEPLOYSPEC_VARIANTS module b_raise) raised IndexError")
    assert "in a move from the state after" in results[-1]["message"]
