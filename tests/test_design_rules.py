"""The rules of a design handed in: each is held to what the rule it replaces takes and
returns, at every call (``deployspec.rule_results``), and combinations of rules and
switches that cannot run as the design means are refused where the design is made."""

import json
from pathlib import Path

import attrs
import pytest
from deployspec.reference.capi import rules
from deployspec.reference.capi.variants import CAPI_CURRENT

from deployspec import models, rule_results

from .cli_runs import run
from .designs_handed_in import EVOLVED, EVOLVED_SLOTS
from .helpers import without_steps


def _error(capsys, variant, prop="cancel_restores_last_good", model="capi"):
    status, out, _ = run(capsys, "check", "--model", model, "--variant", variant, "--engine", "explore",
                         "--property", prop, "--json")
    (result,) = json.loads(out)["results"]
    assert status == 1 and result["verdict"] == "error", result
    return without_steps(result["message"])


def test_a_rule_called_with_other_arguments_is_named_with_where_it_was_written(capsys, hand_in):
    """Another number of arguments is refused as the design loads (``reference.core.rule``,
    test_variant_plugins_refused.py); a callable whose arguments Python cannot tell
    beforehand (a class written in C) is named when it is called."""
    hand_in("badsig", EVOLVED.format("name='badsig', violates_beyond={}, select_prior=dict"))
    assert _error(capsys, "badsig") == (
        "variant badsig (DEPLOYSPEC_VARIANTS module badsig): its rule select_prior does not take the arguments "
        "the rule it replaces does (dict expected at most 1 argument, got 3; the comment on "
        "CapiVariant.select_prior gives them)")


def test_a_rule_that_returns_none_is_named_where_it_returned_not_where_deployspec_used_it(capsys, hand_in):
    """It was reported in deployspec's updater.py (or observe.py, for a state rule), naming no rule."""
    hand_in("forgot", "from deployspec.reference.capi import rules\n"
            "def prior(state, canceling, reports):\n"
            "    rules.running_interim_or_oldest(state, canceling, reports)\n"
            + EVOLVED.format("name='forgot', violates_beyond={}, select_prior=prior"))
    assert _error(capsys, "forgot") == (
        "variant forgot (DEPLOYSPEC_VARIANTS module forgot): its rule select_prior (at forgot.py:2) returned "
        "None, where the rule it replaces returns Process")


def test_a_rule_that_returns_another_kind_of_thing_is_named_with_what_it_returned(capsys, hand_in):
    hand_in("texted", "def reference(state):\n    return 'myapp:release'\n"
            + EVOLVED_SLOTS.format("name='texted', reference=reference"))
    assert _error(capsys, "texted", "no_latent_drift", "slots") == (
        "variant texted (DEPLOYSPEC_VARIANTS module texted): its rule reference (at texted.py:1) returned "
        "str 'myapp:release', where the rule it replaces returns Image or Rejected")


def test_a_type_error_inside_a_rule_is_its_own_line_not_a_call_with_other_arguments(capsys, hand_in):
    hand_in("inner", "def prior(state, canceling, reports):\n    return len(reports)\n"
            + EVOLVED.format("name='inner', violates_beyond={}, select_prior=prior"))
    assert _error(capsys, "inner") == (
        "variant inner (DEPLOYSPEC_VARIANTS module inner) raised TypeError: object of type 'bool' has no "
        "len() at inner.py:2")


def test_shipped_rules_are_not_wrapped_and_a_design_s_own_are_wrapped_once(hand_in):
    """deployspec's own rules are the explorer's hot path; loading a design again (another
    model's turn, a fresh cache) must not stack checks."""
    def prior(state, canceling, reports):
        return rules.running_interim_or_oldest(state, canceling, reports)

    mine = attrs.evolve(CAPI_CURRENT, name="mine", select_prior=prior, violates_beyond={})
    once = rule_results.checked(mine)
    assert once.select_prior is not prior and once.select_prior.__wrapped__ is prior
    assert once.scale_step is CAPI_CURRENT.scale_step and once.cancel_step is CAPI_CURRENT.cancel_step
    assert rule_results.checked(once).select_prior is once.select_prior
    assert rule_results.checked(CAPI_CURRENT) is CAPI_CURRENT


def test_a_checked_rule_gives_what_the_rule_gave(hand_in):
    hand_in("same", "from deployspec.reference.capi import rules\n"
            "def prior(state, canceling, reports):\n"
            "    return rules.running_interim_or_oldest(state, canceling, reports)\n"
            + EVOLVED.format("name='same', violates_beyond={}, select_prior=prior"))
    model = models.get_model("capi")
    mine, shipped = model.variant("same"), model.variant("capi-current")
    assert mine.select_prior is not shipped.select_prior  # wrapped
    from deployspec.engines.explore import explore_config
    from deployspec.explorer import bfs

    config = attrs.evolve(explore_config(model, shipped), max_deployments=1)
    counts = [(r.states, r.transitions) for r in
              (bfs(model, v, config, goal=lambda s, o: False) for v in (mine, shipped))]
    assert counts[0] == counts[1] and counts[0][0] > 100


@pytest.mark.parametrize(("changes", "refusal"), [
    ("scale_down=scaling.scale_down_idle_first",
     ("down_counts_stale=True models upstream's oldest-first DownScaler, so it cannot go with "
     "scale_down=scale_down_idle_first; give down_counts_stale=False with a scale_down of your own")),
    ("scale_step=updater.scale_step_one_at_a_time",
     ("finish_after_commit=True has the dispatcher call scale_step with finish=False, which "
     "scale_step_one_at_a_time does not take")),
])
def test_a_switch_that_would_leave_a_rule_unused_or_uncallable_is_refused_where_it_was_written(
        capsys, hand_in, changes, refusal):
    """On capi-current, a scale_down of one's own ran only in steps whose clean-up wrote nothing
    (the stale-count path goes oldest first), without a word; a four-argument scale step failed
    at the first finished step."""
    hand_in("combined", "import attrs\nfrom deployspec.reference.capi import scaling, updater\n"
            "from deployspec.reference.capi.variants import CAPI_CURRENT\n"
            f"VARIANTS = [attrs.evolve(CAPI_CURRENT, name='combined', {changes})]\n")
    status, _, err = run(capsys, "variants")
    assert status == 2 and refusal in err and err.rstrip().endswith("at combined.py:4")
    assert err.count("\n") == 1


def test_the_documented_rule_of_one_s_own_runs_in_every_engine(capsys, hand_in):
    """docs/variants.md's example of a rule written by hand (not a shipped one recombined)."""
    from .test_variant_plugins import documented_designs

    hand_in("myrule", documented_designs()["myrule"])
    for engine in ("explore", "hypothesis"):
        status, out, _ = run(capsys, "check", "--model", "capi", "--variant", "capi-current-most-running",
                             "--engine", engine, "--property", "cancel_restores_last_good", "--budget", "2",
                             "--bound", "max_deployments=1", "--json")
        (result,) = [r for r in json.loads(out)["results"] if r["engine"] == engine]
        assert result["verdict"] in ("holds", "violated") and status == (result["verdict"] == "violated"), result


def test_a_rule_of_one_s_own_calling_another_with_other_arguments_is_said_at_its_line(capsys, hand_in):
    """The call is the caller's fault: it was blamed on the rule called, and no line was named."""
    hand_in("callswrong", "import attrs\nfrom deployspec.reference.capi import rules, updater\n"
            "from deployspec.reference.capi.variants import CAPI_CURRENT\n"
            "def cleanup(state, deployment):\n    return rules.zero_canceled_superseded(state, deployment)\n"
            "def step(variant, state, deployment, reports, finish=True):\n"
            "    variant.cleanup(state)\n"
            "    return updater.scale_or_canary_step(variant, state, deployment, reports, finish=finish)\n"
            "VARIANTS = [attrs.evolve(CAPI_CURRENT, name='callswrong', violates_beyond={}, cleanup=cleanup, "
            "scale_step=step)]\n")
    assert _error(capsys, "callswrong", "deployment_converges") == (
        "variant callswrong (DEPLOYSPEC_VARIANTS module callswrong) raised TypeError: cleanup() missing 1 "
        "required positional argument: 'deployment' at callswrong.py:7")


def test_a_rule_that_calls_os_exit_is_an_error_not_a_silent_pass(capsys, hand_in, tmp_path):
    """It ended check at once with status 0, no output and no --junit report."""
    hand_in("exitsinrule", "import os\ndef prior(state, canceling, reports):\n    os._exit(0)\n"
            + EVOLVED.format("name='exits', violates_beyond={}, select_prior=prior"))
    report = tmp_path / "junit.xml"
    status, out, _ = run(capsys, "check", "--model", "capi", "--variant", "exits", "--engine", "explore",
                         "--property", "cancel_restores_last_good", "--json", "--junit", str(report))
    (result,) = json.loads(out)["results"]
    assert (status, result["verdict"]) == (1, "error") and report.is_file()
    assert without_steps(result["message"]) == ("variant exits (DEPLOYSPEC_VARIANTS module exitsinrule): its rule select_prior "
                                 "(at exitsinrule.py:2) called os._exit(0)")


def test_a_rule_that_wraps_a_shipped_one_is_still_held_to_its_results(capsys, hand_in):
    """``functools.wraps`` copies the shipped rule's ``__module__`` (deployspec.…) onto the
    wrapper, which was then taken for deployspec's own and not wrapped at all (no result
    check, no time limit, no refusal of ``os._exit``, which ended check with status 0)."""
    hand_in("wrapsrule", "import functools\nfrom deployspec.reference.capi import rules\n"
            "@functools.wraps(rules.running_interim_or_oldest)\n"
            "def prior(state, canceling, reports):\n    rules.running_interim_or_oldest(state, canceling, reports)\n"
            + EVOLVED.format("name='wraps', violates_beyond={}, select_prior=prior"))
    assert _error(capsys, "wraps") == ("variant wraps (DEPLOYSPEC_VARIANTS module wrapsrule): its rule "
                                       "select_prior (at wrapsrule.py:3) returned None, where the rule it "
                                       "replaces returns Process")


@pytest.mark.parametrize("engine", ["explore", "hypothesis"])
@pytest.mark.parametrize(("raised", "said"), [
    ("Stop('no prior')", "raised Stop: no prior"),
    ("GeneratorExit", "raised GeneratorExit"),
    ("Unprintable()", "raised Unprintable: (an unprintable Unprintable)"),  # its __str__ raised over it
])
def test_a_rule_raising_a_base_exception_is_an_error_of_its_design_not_a_traceback(capsys, hand_in, engine,
                                                                                   raised, said):
    """A BaseException that is no Exception (its own, GeneratorExit) went through every
    engine and ended check with a traceback; replay read that as "reproduces"."""
    module = f"base_{raised[:4].lower()}_{engine}"  # (a module of its own per case: imported once)
    hand_in(module, f"def prior(state, canceling, reports):\n    raise {raised}\n" + _STOPS
            + EVOLVED.format(f"name='{module}', violates_beyond={{}}, select_prior=prior"))
    status, out, _ = run(capsys, "check", "--model", "capi", "--variant", module, "--engine", engine,
                         "--property", "cancel_restores_last_good", "--json")
    (result,) = json.loads(out)["results"]
    assert (status, result["verdict"]) == (1, "error")
    assert without_steps(result["message"]) == (f"variant {module} (DEPLOYSPEC_VARIANTS module {module}): its rule select_prior "
                                 f"(at {module}.py:1) {said} at {module}.py:2")
    trace = Path(__file__).parents[1] / "counterexamples" / "capi" / "capi-current--cancel_restores_last_good--c98dd14efa.json"
    status, _, err = run(capsys, "replay", str(trace), "--variant", module)
    assert status == 2 and err == f"deployspec: error: {trace}: {without_steps(result['message'])}\n"  # (no search)


_STOPS = ("class Stop(BaseException):\n    pass\n"
          "class Unprintable(BaseException):\n    def __str__(self):\n        raise ValueError('no text')\n")


def test_a_rule_s_exception_group_holding_a_ctrl_c_or_an_exit_is_that(capsys, hand_in):
    """What a rule's ``TaskGroup`` gathers: a Ctrl-C in it is the user's (``deployspec``: interrupted, 130),
    an exit the rule's (said at its line), not a design's BaseException like any other."""
    hand_in("group_ki", "def prior(state, canceling, reports):\n"
            "    raise BaseExceptionGroup('g', [ValueError('v'), BaseExceptionGroup('h', [KeyboardInterrupt()])])\n"
            + EVOLVED.format("name='group-ki', violates_beyond={}, select_prior=prior"))
    with pytest.raises(KeyboardInterrupt):  # (main's caller, the program's entry, says "interrupted", 130)
        run(capsys, "check", "--model", "capi", "--variant", "group-ki", "--engine", "explore",
            "--property", "cancel_restores_last_good")
    hand_in("group_exit", "def prior(state, canceling, reports):\n    raise BaseExceptionGroup('g', [SystemExit(3)])\n"
            + EVOLVED.format("name='group-exit', violates_beyond={}, select_prior=prior"))
    status, out, _ = run(capsys, "check", "--model", "capi", "--variant", "group-exit", "--engine", "explore",
                         "--property", "cancel_restores_last_good", "--json")
    (result,) = json.loads(out)["results"]
    assert (status, result["verdict"]) == (1, "error")
    assert without_steps(result["message"]) == ("variant group-exit (DEPLOYSPEC_VARIANTS module group_exit) raised "
                                                "SystemExit: 3 at group_exit.py:2")


def test_a_design_of_another_model_refused_does_not_stop_a_typo_being_told(capsys, hand_in):
    """Asking the other models whose a misspelt name is loaded them, a slots design's refusal
    taking the place of "unknown variant"."""
    hand_in("badslots", EVOLVED_SLOTS.format("name='my-slots', config={'max_pushes': -1}"))
    status, _, err = run(capsys, "check", "--model", "capi", "--variant", "capi-saf")
    assert status == 2 and err.startswith("deployspec: error: unknown variant 'capi-saf' for model capi")


def test_the_documented_rule_of_one_s_own_is_judged_as_it_declares(capsys, hand_in):
    """It gave violates_beyond={} though it keeps capi-current's finish window: its own
    page's judged command said MISMATCH (cancel_restores_last_good broken, declared to hold)."""
    from deployspec.declarations import matches

    from .test_variant_plugins import documented_designs

    hand_in("myrule", documented_designs()["myrule"])
    status, out, _ = run(capsys, "check", "--model", "capi", "--variant", "capi-current-most-running",
                         "--engine", "explore", "--property", "cancel_restores_last_good", "--json")
    (result,) = json.loads(out)["results"]
    model = models.get_model("capi")
    assert result["verdict"] in ("holds", "violated") and status == (result["verdict"] == "violated")
    assert matches(model, "capi-current-most-running", "cancel_restores_last_good", result["verdict"],
                   result["stats"])


# the refusal is an exception raised in __del__, which Python reports as ignored: that is the point
@pytest.mark.filterwarnings("ignore::pytest.PytestUnraisableExceptionWarning")
def test_a_wrong_result_is_let_go_while_os_exit_is_still_refused(monkeypatch):
    """Dropped after the rule's guard ended, a wrong result's __del__ reached the real
    os._exit (checked with a stand-in that records, so a regression fails here instead of
    ending the tests with status 0)."""
    import os

    reached = []
    monkeypatch.setattr(os, "_exit", lambda status=0: reached.append(status))

    class Dying:
        def __del__(self):
            os._exit(0)

    rule = rule_results._wrapped("CapiVariant.select_prior", lambda: Dying(), (int,))
    with pytest.raises(rule_results.RuleResultError, match="returned Dying"):
        rule()
    assert reached == []


@pytest.mark.parametrize(("engine", "steps"), [
    ("explore", ", in a move from the state after push(instances=1)"),  # the shortest path there
    ("hypothesis", ", at step 1 (deploy(strategy=canary)) after push(instances=1)"),  # the example, shortest
])
def test_a_rule_that_raises_is_said_with_the_steps_that_reached_it(capsys, hand_in, engine, steps):
    """The file and line alone left the design's author to find the steps again by hand."""
    hand_in("canaryonly", "from deployspec.reference.capi import rules\n"
            "def start(state, action, owic):\n"
            "    return {1: 1}[owic + 1] if action.strategy == 'canary' else rules.one_starting_instance(state, action, owic)\n"
            + EVOLVED.format("name='canary-only', violates_beyond={}, starting_instances=start"))
    # (a property capi-current holds: a violation found first would end the random search
    # before a canary deploy raises, as push, deploy, deploy does capacity_within_bound's)
    status, out, _ = run(capsys, "check", "--model", "capi", "--variant", "canary-only", "--engine", engine,
                         "--property", "single_active_deployment", "--json")
    (result,) = json.loads(out)["results"]
    assert (status, result["verdict"]) == (1, "error")
    assert result["message"] == ("variant canary-only (DEPLOYSPEC_VARIANTS module canaryonly) raised KeyError: 2 "
                                 f"at canaryonly.py:3{steps}")


def test_a_rule_raising_an_exception_object_it_keeps_is_said_with_each_engine_s_own_steps(capsys, hand_in):
    """A design may raise one exception object it keeps (``ERR = KeyError(2)``, ``raise
    ERR``): each run that raises it notes its steps on the same object. The first failing
    example Hypothesis tried (8 steps with seed 0) was said instead of the shrunk one, and
    under ``--engine all`` the explorer's report took the Hypothesis run's steps (split over
    workers too)."""
    hand_in("keptraise", "from deployspec.reference.capi import rules\nERR = KeyError(2)\n"
            "def start(state, action, owic):\n"
            "    if action.strategy == 'canary':\n        raise ERR\n"
            "    return rules.one_starting_instance(state, action, owic)\n"
            + EVOLVED.format("name='kept-raise', violates_beyond={}, starting_instances=start"))
    status, out, _ = run(capsys, "check", "--model", "capi", "--variant", "kept-raise", "--engine", "all",
                         "--property", "capacity_within_bound", "--seed", "0", "--json")
    said = {r["engine"]: r["message"] for r in json.loads(out)["results"] if r["verdict"] == "error"}
    assert status == 1 and sorted(said) == ["explore", "hypothesis"], out
    assert said["hypothesis"].endswith(" at keptraise.py:5, at step 1 (deploy(strategy=canary)) after push(instances=1)")
    assert said["explore"].endswith(" at keptraise.py:5, in a move from the state after push(instances=1)")
    # split over workers the explorer names no steps (its workers do not say where), nor the ones
    # the Hypothesis run left on the object, which came back with it from the workers
    status, out, _ = run(capsys, "check", "--model", "capi", "--variant", "kept-raise", "--engine", "all",
                         "--property", "capacity_within_bound", "--seed", "0", "--workers", "2", "--json")
    said = {r["engine"]: r["message"] for r in json.loads(out)["results"] if r["verdict"] == "error"}
    assert status == 1 and said["explore"].endswith(" at keptraise.py:5"), said
    assert said["hypothesis"].endswith(" at step 1 (deploy(strategy=canary)) after push(instances=1)")


@pytest.mark.parametrize("own", ["__dict__ = None", "@property\n    def __dict__(self):\n        raise OSError('mine')"])
def test_a_rule_raising_an_exception_whose_class_redefines_its_dict_is_said_as_itself(capsys, hand_in, own):
    """The steps are kept on the exception through ``BaseException``'s own dictionary: a
    class whose ``__dict__`` is None (or a property of its code) was reported as deployspec's
    own TypeError (or the property's error) at exception_notes.py, not as the rule's."""
    hand_in("oddexc", "from deployspec.reference.capi import rules\n"
            f"class Odd(Exception):\n    {own}\n"
            "def start(state, action, owic):\n"
            "    if action.strategy == 'canary':\n        raise Odd('odd')\n"
            "    return rules.one_starting_instance(state, action, owic)\n"
            + EVOLVED.format("name='odd-raise', violates_beyond={}, starting_instances=start"))
    line = 4 + own.count("\n")
    status, out, _ = run(capsys, "check", "--model", "capi", "--variant", "odd-raise", "--engine", "explore",
                         "--property", "capacity_within_bound", "--json")
    (result,) = json.loads(out)["results"]
    assert (status, result["verdict"]) == (1, "error")
    assert result["message"] == ("variant odd-raise (DEPLOYSPEC_VARIANTS module oddexc) raised Odd: odd "
                                 f"at oddexc.py:{line + 2}, in a move from the state after push(instances=1)")


@pytest.mark.parametrize("prop", ["cancel_restores_last_good", "app_stays_available"])
def test_a_rule_that_raises_while_the_platform_settles_is_said_with_the_fewest_steps(capsys, hand_in, prop):
    """Hypothesis kept every step of an example whose rule raised only while settling
    ("after 33 steps, …, scale(instances=1), runtime(process=P3)"); replay takes the
    steps that do not matter away, down to the explorer's shortest path."""
    hand_in("cancelraises", "def pick(state, deployment, reports):\n    raise ValueError('nope')\n"
            + EVOLVED.format("name='cancel-raises', violates_beyond={}, select_prior=pick"))
    status, out, _ = run(capsys, "check", "--model", "capi", "--variant", "cancel-raises", "--engine", "hypothesis",
                         "--property", prop, "--json")
    (result,) = json.loads(out)["results"]
    assert (status, result["verdict"]) == (1, "error")
    assert result["message"] == ("variant cancel-raises (DEPLOYSPEC_VARIANTS module cancelraises) raised ValueError: "
                                 "nope at cancelraises.py:2, while the platform settled after push(instances=1), "
                                 "deploy(), cancel()")


def test_steps_are_taken_away_while_the_rest_still_raises():
    from deployspec.shortened import shortest

    needed = {3, 17, 18}
    tried = []

    def kept(candidate):
        tried.append(len(candidate))
        return candidate if needed <= set(candidate) else None

    assert shortest(list(range(40)), kept) == [3, 17, 18]
    assert len(tried) < 120  # runs first: not one replay per step per pass
    assert shortest([5, 6], lambda c: None) == [5, 6]
    assert shortest([], lambda c: c) == []
    # what raised at a step keeps no step after it: the rest of a candidate is cut there
    assert shortest(list(range(10)), lambda c: c[:c.index(4) + 1] if 4 in c else None) == [4]


@pytest.mark.parametrize("module, first, then, said", [
    ("once", "ValueError('only the first time')", "", "ValueError: only the first time at once.py:6"),
    # Hypothesis holds a BaseException in a wrapper of its own: "_WrappedBaseException" was said
    ("exits", "SystemExit(3)", "", "SystemExit: 3 at exits.py:6"),
    # the replay raised another error: it did fail, differently
    ("twice", "ValueError('first')", "TypeError", "ValueError: first at twice.py:6"),
])
def test_a_rule_that_raised_once_only_is_said_with_what_it_raised(capsys, hand_in, module, first, then, said):
    """Hypothesis's Flaky was said in its own words ("run_state_machine(data=data(...))
    produces unreliable results: Failed on the first call but did not on a subsequent one
    (1 sub-exception)"): no design, no rule's line, not the exception it raised."""
    hand_in(module, "calls = []\n"
            "from deployspec.reference.capi import rules\n"
            "def prior(state, canceling, reports):\n"
            "    calls.append(1)\n"
            "    if len(calls) == 1:\n"
            f"        raise {first}\n"
            "    if len(calls) == 2 and TypeError.__name__ in " + repr(then) + ":\n"
            "        raise TypeError('another error the second time')\n"
            "    return rules.running_interim_or_oldest_that_can_serve(state, canceling, reports)\n"
            + EVOLVED.format(f"name={module!r}, violates_beyond={{}}, select_prior=prior"))
    status, out, _ = run(capsys, "check", "--model", "capi", "--variant", module, "--engine", "hypothesis",
                         "--property", "cancel_restores_last_good", "--json")
    (result,) = json.loads(out)["results"]
    assert (status, result["verdict"]) == (1, "error"), result
    assert result["message"].startswith(
        f"non-deterministic behaviour: variant {module} (DEPLOYSPEC_VARIANTS module {module}) raised {said}"
    ), result["message"]
    assert result["message"].endswith(
        f"; the same steps run again raised TypeError: another error the second time at {module}.py:8" if then
        else "; the same steps run again did not fail"), result["message"]
