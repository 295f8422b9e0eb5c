"""The pytest plugin: ``pytest --pyargs deployspec.stateful_tests.test_contract --deployspec-…``.

Each case runs pytest in a subprocess, in an empty directory, as a user would.
"""

from __future__ import annotations

import os
import re
import shlex
import subprocess
import sys
from pathlib import Path

import pytest

from deployspec.models import get_model

N_PROPERTIES = len(get_model("capi").properties)

PYTEST = [sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "--pyargs",
          "deployspec.stateful_tests.test_contract", "-rs"]


def pytest_run(tmp_path, *args: str, env: dict | None = None) -> subprocess.CompletedProcess:
    return subprocess.run([*PYTEST, *args], cwd=tmp_path, capture_output=True, text=True, timeout=300,
                          check=False, env=None if env is None else {**os.environ, **env})


def test_without_an_implementation_every_check_is_skipped_with_the_reason(tmp_path):
    r = pytest_run(tmp_path)
    assert r.returncode == 0, r.stdout
    assert f"{N_PROPERTIES} skipped" in r.stdout
    assert "no implementation given: pass --deployspec-exec COMMAND" in r.stdout


def test_a_violation_fails_its_test_with_the_shrunk_trace_and_saves_it(tmp_path):
    out = tmp_path / "found"
    r = pytest_run(tmp_path, "--deployspec-python", "deployspec.contract.examples:capi_2022",
                   "--deployspec-examples", "10", "--deployspec-seed", "2", "--deployspec-out", str(out),
                   "-k", "single_active_deployment")
    assert r.returncode == 1, r.stdout
    assert "1 failed" in r.stdout and "passed" not in r.stdout
    assert "2 active deployments: d0 CANCELING, d1 DEPLOYING" in r.stdout
    (saved,) = out.glob("implementation--single_active_deployment--*.json")
    # the command to paste once it is fixed, as the CLI prints it
    assert (f"replay: deployspec replay {saved} --python deployspec.contract.examples:capi_2022"
            in r.stdout.replace("\n", " ")), r.stdout
    r = pytest_run(tmp_path, *(a for a in r.args[len(PYTEST):] if a not in ("--deployspec-out", str(out))))
    assert "(--deployspec-out DIR saves it, for deployspec replay and deployspec show)" in r.stdout


def test_a_violation_that_cannot_be_saved_says_so_in_its_failure(tmp_path):
    """--deployspec-out's save failing was silent: the failure showed the trace, no path."""
    argv = ("--deployspec-python", "deployspec.contract.examples:capi_2022", "--deployspec-examples", "10",
            "--deployspec-seed", "2", "-k", "single_active_deployment")
    assert pytest_run(tmp_path, *argv, "--deployspec-out", str(tmp_path / "found")).returncode == 1
    (saved,) = (tmp_path / "found").iterdir()
    (tmp_path / "blocked" / saved.name).mkdir(parents=True)
    r = pytest_run(tmp_path, *argv, "--deployspec-out", str(tmp_path / "blocked"))
    assert r.returncode == 1 and "1 failed" in r.stdout
    assert f"not saved: cannot save {tmp_path / 'blocked' / saved.name}: a directory has that name" in r.stdout


def test_a_fault_fails_the_test_with_one_line(tmp_path):
    r = pytest_run(tmp_path, "--deployspec-exec", "exit 5", "-k", "single_active_deployment")
    assert r.returncode == 1
    assert ("\nimplementation fault at reset: "
            "the implementation exited with status 5 before replying to reset\n") in r.stdout
    assert "During handling" not in r.stdout and "Traceback" not in r.stdout


def _crashing_at_cancel(folder: Path) -> None:
    """``crashing:make`` in ``folder``: capi-safe raising at every cancel (PYTHONPATH=folder)."""
    (folder / "crashing.py").write_text(
        "from deployspec.contract.examples import ReferenceImplementation\n"
        "class Crashing(ReferenceImplementation):\n"
        "    def perform(self, action):\n"
        "        if action['type'] == 'cancel':\n"
        "            raise KeyError('deploying_web_process')\n"
        "        return super().perform(action)\n"
        "def make():\n"
        "    return Crashing('capi', 'capi-safe')\n")


def test_a_fault_at_a_step_is_saved_to_replay(tmp_path):
    """A fault at a step names the file of the steps that led to it, and the command that
    asks them again; without --deployspec-out, how to save it."""
    _crashing_at_cancel(tmp_path)
    argv = ("--deployspec-python", "crashing:make", "--deployspec-examples", "10", "-k", "single_active_deployment")
    env = {"PYTHONPATH": str(tmp_path)}
    r = pytest_run(tmp_path, *argv, "--deployspec-out", str(tmp_path / "found"), env=env)
    assert r.returncode == 1
    (saved,) = (tmp_path / "found").glob("implementation--fault--*.json")
    assert f"\nsaved: {saved} (the fault at the first step); replay: deployspec replay {saved} --python " \
           "crashing:make\n" in r.stdout
    r = pytest_run(tmp_path, *argv, env=env)
    assert "\n(use --deployspec-out DIR to save the steps that led to the fault, to replay them)\n" in r.stdout


def test_a_violation_kept_unshrunk_is_marked_in_the_failure(tmp_path):
    """``drifting`` (capi-2022 for 40 resets, capi-safe after) breaks app_stays_available,
    and answers otherwise when the steps run again: the fault at that step and the trace
    as it was seen, marked as not shrunk."""
    from deployspec.contract.harness import NOT_SHRUNK

    fakes = Path(__file__).with_name("contract_fakes.py")
    command = " ".join(shlex.quote(str(a)) for a in (sys.executable, fakes, "--serve", "drifting"))
    r = pytest_run(tmp_path, "--deployspec-exec", command, "--deployspec-examples", "30",
                   "--deployspec-seed", "0", "-k", "app_stays_available")
    assert r.returncode == 1, r.stdout + r.stderr
    assert re.search(r"implementation fault at step \d+ \(.+\) while checking app_stays_available: "
                     "non-deterministic behaviour", r.stdout)
    assert "app_stays_available violated (engine contract, seed 0)" in r.stdout
    assert NOT_SHRUNK in r.stdout


def test_with_xdist_each_worker_drives_its_own_program(tmp_path):
    server = f"{shlex.quote(sys.executable)} -m deployspec serve --model capi --variant capi-safe"
    r = pytest_run(tmp_path, "-n", "2", "--deployspec-exec", server, "--deployspec-reference", "capi-safe",
                   "--deployspec-examples", "3")
    assert r.returncode == 0, r.stdout + r.stderr
    assert f"{N_PROPERTIES + 1} passed" in r.stdout  # conforms_to_capi-safe and every property


SAFE = ("--deployspec-python", "deployspec.contract.examples:capi_safe")

#: the end of a run whose searches never had a continue_ take effect, as the CLI's summary says it
NO_CANARY = ("\ndeployspec: never took effect: continue_ (refused, or changing nothing, at every step of the run: "
             "no check judged what they do)\n  on the reference designs, --deployspec-bound "
             "'canary_plans=[[],[50],[100],[50,100]]' gives continue_ something to do\n")


@pytest.mark.parametrize("workers", [(), ("-n", "2")])
def test_the_run_ends_naming_what_no_contract_test_judged(tmp_path, workers):
    """Without canary plans no continue_ takes effect: said once at the end of the run (from
    each xdist worker's counts, added up), with the bound that gives it something to do."""
    r = pytest_run(tmp_path, *SAFE, "--deployspec-examples", "5", *workers)
    assert r.returncode == 0, r.stdout
    assert NO_CANARY in r.stdout
    r = pytest_run(tmp_path, *SAFE, "--deployspec-examples", "5", *workers,
                   "--deployspec-bound", "canary_plans=[[],[50],[100],[50,100]]")
    assert r.returncode == 0 and "never took effect" not in r.stdout, r.stdout


def test_a_run_a_fault_cut_short_says_nothing_of_what_it_never_reached(tmp_path):
    r = pytest_run(tmp_path, "--deployspec-python", "deployspec.contract.examples:capi_safe",
                   "--deployspec-examples", "5", "-k", "single_active_deployment or app_stays_available")
    assert "never took effect" in r.stdout  # (deploys only: no continue_)
    _crashing_at_cancel(tmp_path)
    r = pytest_run(tmp_path, "--deployspec-python", "crashing:make", "--deployspec-examples", "5",
                   "-k", "single_active_deployment or app_stays_available", env={"PYTHONPATH": str(tmp_path)})
    assert r.returncode == 1 and "never took effect" not in r.stdout


@pytest.mark.parametrize("args, message", [
    (("--deployspec-exec", ""), "--deployspec-exec: empty"),  # was: every test skipped, exit 0
    # was: every test failed, each with the shell's exit status 127
    (("--deployspec-exec", "{tmp}/impl"), "--deployspec-exec '{tmp}/impl': {tmp}/impl: no such file"),
    ((*SAFE, "--deployspec-examples", "0"), "argument --deployspec-examples: must be >= 1, got 0"),
    ((*SAFE, "--deployspec-examples", "-3"), "argument --deployspec-examples: must be >= 1, got -3"),
    ((*SAFE, "--deployspec-examples", "10000001"), "argument --deployspec-examples: at most 10000000, got 10000001"),
    ((*SAFE, "--deployspec-timeout", "0"), "argument --deployspec-timeout: "),
    ((*SAFE, "--deployspec-timeout", "-1"), "argument --deployspec-timeout: "),
    ((*SAFE, "--deployspec-seed", "-1"), "argument --deployspec-seed: must be >= 0, got -1"),
    ((*SAFE, "--deployspec-reference", "capi-9999"), "--deployspec-reference: unknown variant 'capi-9999'"),
    ((*SAFE, "--deployspec-bound", "canary_plans=[[]"), "argument --deployspec-bound: canary_plans: not a JSON value"),
    ((*SAFE, "--deployspec-bound", "nosuch=1"), "--deployspec-bound: unknown configuration field(s): nosuch"),
    ((*SAFE, "--deployspec-bound", "max_instances=2", "--deployspec-bound", "max_instances=3"),
     "--deployspec-bound max_instances: given twice (2 and 3)"),
    ((*SAFE, "--deployspec-out", "{tmp}/a-file/found"), "--deployspec-out {tmp}/a-file/found: cannot create"),
    ((*SAFE, "--deployspec-out", "{tmp}/" + "a" * 300), ": cannot create: File name too long"),  # was INTERNALERROR
    ((*SAFE, "--deployspec-out", "-"), "--deployspec-out -: standard output cannot hold a folder of traces"),
    # without an implementation the tests skip, but a typo is still said (was: a traceback, or nothing)
    (("--deployspec-model", "bogus"), "--deployspec-model: unknown model 'bogus'"),
    (("--deployspec-reference", "capi-9"), "--deployspec-reference: unknown variant 'capi-9'"),
    ((*SAFE, "--deployspec-exec", "true"), "--deployspec-exec and --deployspec-python exclude each other"),
    (("--deployspec-python", "no-colon"), "--deployspec-python 'no-colon': expected MODULE:FACTORY"),
    # was: one failure per test
    (("--deployspec-python", "nosuch.mod:f"), "--deployspec-python nosuch.mod:f: no module named 'nosuch' ("),
    (("--deployspec-python", "deployspec.contract.examples:nope"),
     "--deployspec-python deployspec.contract.examples:nope: module deployspec.contract.examples has no 'nope'"),
    (("--deployspec-python", "/tmp/x.py:f"), "did you mean --deployspec-python x:f with PYTHONPATH=/tmp?"),
])
def test_a_bad_option_is_one_usage_error_before_any_test(tmp_path, args, message):
    (tmp_path / "a-file").write_text("")
    r = pytest_run(tmp_path, *(a.format(tmp=tmp_path) for a in args))
    assert r.returncode == pytest.ExitCode.USAGE_ERROR, r.stdout + r.stderr
    assert message.format(tmp=tmp_path) in r.stderr
    assert "Traceback" not in r.stdout + r.stderr and "test_contract[" not in r.stdout


def test_a_module_that_fails_to_import_fails_each_test_in_one_line(tmp_path):
    """Not a usage error: the module is there, the implementation failed (a fault at start)."""
    (tmp_path / "breaks_on_import.py").write_text("raise RuntimeError('no database')\n")
    r = pytest_run(tmp_path, "--deployspec-python", "breaks_on_import:f", "-k", "single_active_deployment")
    assert r.returncode == 1, r.stdout + r.stderr
    # where in the user's code, as for a design's rule: a traceback into it is what they need
    assert ("\nimplementation fault at start: importing breaks_on_import raised RuntimeError: no database "
            "at breaks_on_import.py:1\n") in r.stdout
    assert "Traceback" not in r.stdout and "UsageError" not in r.stdout


def test_the_documented_commands_run_the_contract_tests_only():
    """``--pyargs deployspec.stateful_tests`` would also run the models' own machine tests."""
    docs = (Path(__file__).parents[1] / "docs" / "contract.md").read_text()
    commands = re.findall(r"^pytest --pyargs (\S+)", docs, re.MULTILINE)
    assert commands and set(commands) == {"deployspec.stateful_tests.test_contract"}
    assert "pytest-xdist" in docs[docs.index("## In pytest"):]


def test_a_fault_while_shortening_a_trace_shows_the_fault_and_the_violation(tmp_path):
    """The implementation fails on a shorter replay of a trace it broke a property on
    (``harness.replay`` made to fail on the second call, by a plugin loaded with ``-p``)."""
    (tmp_path / "fails_on_second_replay.py").write_text(
        "from deployspec.contract import harness\n"
        "from deployspec.contract.guard import ImplementationFault\n"
        "calls = []\n"
        "real = harness.replay\n"
        "def replay(trace, **kwargs):\n"
        "    calls.append(1)\n"
        "    if len(calls) == 2:\n"
        "        raise ImplementationFault('it crashed', where='step 0 (push(instances=1))')\n"
        "    return real(trace, **kwargs)\n"
        "harness.replay = replay\n"
    )
    out = tmp_path / "found"
    r = subprocess.run([*PYTEST, "-p", "fails_on_second_replay", "--deployspec-python",
                        "deployspec.contract.examples:capi_2022", "--deployspec-examples", "10",
                        "--deployspec-seed", "2", "--deployspec-out", str(out), "-k", "single_active_deployment"],
                       cwd=tmp_path, capture_output=True, text=True, timeout=300, check=False,
                       env={**os.environ, "PYTHONPATH": str(tmp_path)})
    assert r.returncode == 1, r.stdout + r.stderr
    assert "implementation fault at step 0 (push(instances=1)): it crashed" in r.stdout
    assert "2 active deployments: d0 CANCELING, d1 DEPLOYING" in r.stdout
    assert len(list(out.glob("implementation--single_active_deployment--*.json"))) == 1


@pytest.mark.parametrize("implementation", [(), SAFE])
def test_an_unknown_profile_is_one_usage_error_before_collection(tmp_path, implementation):
    """A conftest that raised while pytest imported it was a traceback and 'found no collectors'.
    The state-machine tests shipped beside the contract tests read the variable; the contract
    tests alone do not (they take --deployspec-examples)."""
    machines = ("--pyargs", "deployspec.stateful_tests.test_capi_machine")
    r = pytest_run(tmp_path, *machines, *implementation, env={"DEPLOYSPEC_PROFILE": "thourough"})
    assert r.returncode == pytest.ExitCode.USAGE_ERROR, r.stdout + r.stderr
    assert r.stderr.strip() == "ERROR: DEPLOYSPEC_PROFILE='thourough': unknown profile (known: ci, thorough)"
    assert "Traceback" not in r.stdout + r.stderr
    r = pytest_run(tmp_path, env={"DEPLOYSPEC_PROFILE": "thourough"})
    assert r.returncode == 0 and f"{N_PROPERTIES} skipped" in r.stdout, r.stdout + r.stderr
    r = pytest_run(tmp_path, env={"DEPLOYSPEC_PROFILE": ""})  # set but empty: the default
    assert r.returncode == 0 and f"{N_PROPERTIES} skipped" in r.stdout


def test_another_projects_run_is_not_stopped_by_a_profile_it_never_reads(tmp_path):
    """The plugin is loaded wherever deployspec is installed; the variable sets deployspec's
    own tests only."""
    # a stand-in for any test of theirs that passes (what it checks is not the point here)
    (tmp_path / "test_theirs.py").write_text("def test_theirs():\n    assert True\n")
    r = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider"], cwd=tmp_path,
                       capture_output=True, text=True, timeout=300, check=False,
                       env={**os.environ, "DEPLOYSPEC_PROFILE": "thourough"})
    assert r.returncode == 0 and "1 passed" in r.stdout, r.stdout + r.stderr


@pytest.mark.parametrize("theirs", ["theirs", "ci"])
@pytest.mark.parametrize("profile", ["", "thorough"])
def test_collecting_deployspecs_tests_leaves_the_settings_of_ones_own_tests_alone(tmp_path, profile, theirs):
    """The package's conftest loaded deployspec's profile for the whole run: a user's own
    Hypothesis tests collected beside the contract tests ran ``ci``'s 60 examples with no
    deadline (2000 with DEPLOYSPEC_PROFILE=thorough), whatever profile they had loaded.
    Then registering deployspec's ``ci`` again (the state-machine modules, as imported)
    reloaded Hypothesis's ``ci`` profile, the one it loads itself when CI is set."""
    (tmp_path / "conftest.py").write_text(
        "from hypothesis import settings\n"
        f"settings.register_profile({theirs!r}, max_examples=7, deadline=200)\n"
        f"settings.load_profile({theirs!r})\n")
    (tmp_path / "test_theirs.py").write_text(
        "from hypothesis import settings\n"
        "def test_their_profile_holds():\n"
        "    assert (settings.default.max_examples, settings.default.deadline.total_seconds()) == (7, 0.2)\n")
    r = pytest_run(tmp_path, "test_theirs.py", env={"DEPLOYSPEC_PROFILE": profile})
    assert r.returncode == 0 and "1 passed" in r.stdout and f"{N_PROPERTIES} skipped" in r.stdout, r.stdout
    machines = ("deployspec.stateful_tests.test_capi_machine", "deployspec.stateful_tests.test_slots_machine")
    r = pytest_run(tmp_path, *machines, "test_theirs.py", "-k", "their_profile",
                   env={"DEPLOYSPEC_PROFILE": profile, "CI": "true"})
    assert r.returncode == 0 and "1 passed" in r.stdout, r.stdout


def test_the_shipped_state_machine_tests_take_deployspecs_profile_with_every_health_check_off():
    """As Hypothesis's own TestCase settings have them (filter_too_much, data_too_large…),
    with DEPLOYSPEC_PROFILE's examples and steps."""
    code = ("from hypothesis import HealthCheck\n"
            "from deployspec.stateful_tests.test_capi_machine import TestCapiSafe\n"
            "from deployspec.stateful_tests.test_slots_machine import TestSlotsImmutable\n"
            "for t in (TestCapiSafe, TestSlotsImmutable):\n"
            "    s = t.settings\n"
            "    print(s.max_examples, s.stateful_step_count, s.deadline, set(s.suppress_health_check) == set(HealthCheck))\n")
    for profile, want in (("", "60 30 None True"), ("thorough", "2000 60 None True")):
        r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120, check=False,
                           env={**os.environ, "DEPLOYSPEC_PROFILE": profile})
        assert r.stdout.splitlines() == [want, want], r.stdout + r.stderr


@pytest.mark.parametrize("xdist", [(), ("-n", "2")])
def test_an_implementation_given_to_a_run_with_no_contract_test_says_so(tmp_path, xdist):
    """An ``addopts`` carrying --deployspec-exec in a run that never names the contract tests
    passed in silence: nothing judged the implementation. (A test of theirs whose name says
    "test_contract" is not one; nor is a contract test a hook wrapper deselected last.)"""
    from deployspec.contract.plugin import LEFT_OUT, NAME_THEM, NO_CONTRACT_TEST

    # a test of theirs whose file name contains "test_contract": what it checks is not the point
    (tmp_path / "test_contracts_billing.py").write_text("def test_theirs():\n    pass\n")
    run = [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", *xdist, "--deployspec-python", SAFE[1]]
    r = subprocess.run([*run, "test_contracts_billing.py"], cwd=tmp_path, capture_output=True, text=True,
                       timeout=300, check=False)
    assert r.returncode == 0 and f"{NO_CONTRACT_TEST} {NAME_THEM}" in r.stdout.replace("\n", " "), r.stdout + r.stderr
    r = pytest_run(tmp_path, *xdist, *SAFE, "--deployspec-examples", "3", "-k", "single_active_deployment")
    assert r.returncode == 0 and NO_CONTRACT_TEST not in r.stdout.replace("\n", " "), r.stdout + r.stderr
    r = pytest_run(tmp_path, *xdist, *SAFE, "-k", "no_such_check")  # -k deselected every one (they were named)
    assert f"{NO_CONTRACT_TEST} {LEFT_OUT}" in r.stdout.replace("\n", " "), r.stdout + r.stderr
    (tmp_path / "conftest.py").write_text(
        "import pytest\n"
        "@pytest.hookimpl(wrapper=True)\n"
        "def pytest_collection_modifyitems(config, items):\n"
        "    result = yield\n"
        "    gone = [i for i in items if 'test_contract[' in i.nodeid]\n"
        "    config.hook.pytest_deselected(items=gone)\n"
        "    items[:] = [i for i in items if i not in gone]\n"
        "    return result\n")
    r = pytest_run(tmp_path, *xdist, *SAFE, "test_contracts_billing.py")
    assert r.returncode == 0 and f"{NO_CONTRACT_TEST} {LEFT_OUT}" in r.stdout.replace("\n", " "), r.stdout + r.stderr


def test_a_check_that_holds_vacuously_warns_and_a_hang_names_the_plugins_option(tmp_path):
    """A controller refusing every deploy passes every check: pytest's warnings summary
    says so (the CLI's "holds ?"). A hang's hint names --deployspec-timeout, not the CLI's."""
    (tmp_path / "frozen.py").write_text(
        "class Frozen:\n"
        "    def reset(self, config):\n        pass\n"
        "    def perform(self, action):\n        return 'frozen'\n"
        "    def observe(self):\n"
        "        return {'app': None, 'droplets': [], 'processes': [], 'deployments': []}\n")
    env = {"PYTHONPATH": str(tmp_path)}
    r = pytest_run(tmp_path, "--deployspec-python", "frozen:Frozen", "--deployspec-examples", "5",
                   "-k", "single_active_deployment", env=env)
    assert r.returncode == 0 and "1 passed" in r.stdout, r.stdout
    assert ("VacuousHold: single_active_deployment holds vacuously: no deploy took effect in any "
            "example") in r.stdout.replace("\n", " ")
    (tmp_path / "stuck.py").write_text(  # answers a reset and what it observes, then hangs on an action
        "import json, sys, time\n"
        "empty = {'app': None, 'droplets': [], 'processes': [], 'deployments': []}\n"
        "for line in sys.stdin:\n"
        "    r = json.loads(line)\n"
        "    if r['type'] == 'action':\n        time.sleep(60)\n"
        "    reply = {'type': 'reset_ok', 'protocol': 1} if r['type'] == 'reset' else "
        "{'type': 'observation', 'observation': empty}\n"
        "    print(json.dumps({'id': r['id'], **reply}), flush=True)\n")
    r = pytest_run(tmp_path, "--deployspec-exec", f"{shlex.quote(sys.executable)} stuck.py",
                   "--deployspec-timeout", "0.3", "-k", "single_active_deployment")
    assert r.returncode == 1 and "(hung? see --deployspec-timeout; or its reply waits unflushed" in r.stdout, r.stdout


def test_a_profile_set_for_a_run_of_contract_tests_is_said_to_size_nothing_there(tmp_path):
    """DEPLOYSPEC_PROFILE=thorough, as the README's longer hunt has it, ran the contract checks'
    same 100 examples in silence (a user trial): the summary says what sizes them."""
    from deployspec.contract.plugin import PROFILE_NOT_HERE

    argv = (*SAFE, "--deployspec-examples", "3", "-k", "single_active_deployment")
    r = pytest_run(tmp_path, *argv, env={"DEPLOYSPEC_PROFILE": "thorough"})
    assert r.returncode == 0 and PROFILE_NOT_HERE in r.stdout.replace("\n", " "), r.stdout + r.stderr
    r = pytest_run(tmp_path, *argv, env={"DEPLOYSPEC_PROFILE": ""})
    assert r.returncode == 0 and "DEPLOYSPEC_PROFILE" not in r.stdout, r.stdout + r.stderr
