"""``deployspec contract`` options a user reviewed: ``--bound`` and the configuration
shown, ``--budget`` against ``--examples``, the replay command after a saved
counterexample, and the hint for a ``--python`` file name or path.

In-process implementations are defined here and named ``{__name__}:factory``.
"""

from __future__ import annotations

import json
import shlex
import sys

import pytest

from deployspec.cli import main
from deployspec.contract.examples import ReferenceImplementation

SAFE = ("--python", "deployspec.contract.examples:capi_safe")
SEED_BUG = ("--python", "deployspec.contract.examples:capi_2022")


def run(capsys, *argv: str) -> tuple[int, str, str]:
    status = main([str(a) for a in argv])
    out, err = capsys.readouterr()
    return status, out, err


# --- the configuration: chosen, shown, changed with --bound --------------------


class NoCanaries(ReferenceImplementation):
    """capi-safe without canary deployments: it refuses them, as the protocol allows."""

    def perform(self, action):
        if action["type"] == "deploy" and action["strategy"] == "canary":
            return "canary deployments are not supported"
        return super().perform(action)


def no_canaries() -> NoCanaries:
    return NoCanaries("capi", "capi-safe")


#: the configurations the implementation was reset with (``recording``)
RESETS: list[dict] = []


class Recording(ReferenceImplementation):
    def reset(self, config):
        RESETS.append(dict(config))
        super().reset(config)


def recording() -> Recording:
    return Recording("capi", "capi-safe")


def test_the_configuration_is_shown_and_bound_changes_it_in_every_reset(capsys):
    RESETS.clear()
    status, out, _ = run(capsys, "contract", "--python", f"{__name__}:recording", "--model", "capi",
                         "--property", "single_active_deployment", "--examples", "3",
                         "--bound", "max_instances=2", "--bound", "canary_plans=[[50]]", "--json")
    assert status == 0, out
    config = json.loads(out)["config"]
    assert config["max_instances"] == 2 and config["canary_plans"] == [[50]]
    assert config["max_in_flight"] == [1]  # the rest is the model's default
    assert RESETS and all(r == config for r in RESETS)


def test_the_text_summary_names_the_configuration_in_the_syntax_bound_takes(capsys):
    status, out, _ = run(capsys, "contract", *SAFE, "--model", "capi", "--reference", "capi-safe",
                         "--property", "single_active_deployment", "--examples", "2")
    assert status == 0, out
    (line,) = [x for x in out.splitlines() if x.startswith("config (capi-safe's): ")]  # the reference's own
    assert "max_in_flight=[1,2], web_instances=[1,3], canary_plans=[[],[50],[100],[50,100]]" in line
    status, out, _ = run(capsys, "contract", *SAFE, "--model", "capi", "--reference", "capi-safe",
                         "--property", "single_active_deployment", "--examples", "2",
                         "--bound", "canary_plans=[]")
    assert "max_in_flight=[1,2], web_instances=[1,3], canary_plans=[], " in out


def test_a_reference_narrowed_with_bound_accepts_an_implementation_without_canaries(capsys):
    args = ("contract", "--python", f"{__name__}:no_canaries", "--model", "capi", "--reference", "capi-safe",
            "--examples", "20", "--seed", "0")
    status, out, _ = run(capsys, *args, "--property", "conforms_to_capi-safe")
    assert status == 1, out
    assert "capi-safe accepts it, the implementation rejected it (canary deployments are not supported)" in out
    status, out, _ = run(capsys, *args, "--bound", "canary_plans=[]")
    assert status == 0, out  # conformance and every property
    # the spec's properties alone do not mind the refusal, canaries offered or not
    status, out, _ = run(capsys, *args, "--property", "single_active_deployment")
    assert status == 0, out


@pytest.mark.parametrize("bound", ["max_instances", "max_instances=[1,", 'max_instances="3"', "nope=1",
                                   "max_instances=0", "=3"])
def test_a_bad_bound_is_the_usage_error_check_gives(capsys, bound):
    status, out, err = run(capsys, "contract", "--exec", "true", "--model", "capi", "--bound", bound)
    assert (status, out) == (2, "")
    assert len(err.strip().splitlines()) == 1
    assert (2, "", err) == run(capsys, "check", "--model", "capi", "--engine", "hypothesis", "--bound", bound)


# --- --budget or --examples ------------------------------------------------------


def test_budget_and_examples_exclude_each_other(capsys):
    status, out, err = run(capsys, "contract", *SAFE, "--model", "capi", "--examples", "3", "--budget", "1")
    assert (status, out) == (2, "")
    assert "not allowed with argument" in err and len(err.strip().splitlines()) == 1


def test_examples_bounds_the_valid_examples_and_the_help_says_the_column_counts_more(capsys):
    status, out, _ = run(capsys, "contract", *SAFE, "--model", "capi", "--property", "single_active_deployment",
                         "--examples", "10", "--json")
    assert status == 0
    (result,) = json.loads(out)["results"]
    # nothing found, nothing to shrink: N, and the few examples Hypothesis discards as
    # overruns (none at seed 0; 4 in 104 on capi-safe over 100)
    assert 10 <= result["stats"]["examples"] <= 12
    assert "found_in_example" not in result["stats"]
    status, out, _ = run(capsys, "contract", "--python", "deployspec.contract.examples:capi_2022", "--model", "capi",
                         "--property", "single_active_deployment", "--examples", "10", "--no-known", "--json")
    assert status == 1
    (result,) = json.loads(out)["results"]
    assert 1 <= result["stats"]["found_in_example"] <= min(10, result["stats"]["examples"])  # then its shrinking
    status, out, _ = run(capsys, "contract", "--python", "deployspec.contract.examples:capi_2022", "--model", "capi",
                         "--property", "single_active_deployment", "--examples", "10", "--no-known")
    assert status == 1
    found_in = result["stats"]["found_in_example"]
    lines = out.splitlines()
    row = next(line for line in lines if line.startswith("single_active_deployment "))
    assert row.split()[1:4] == ["VIOLATED", str(found_in), str(result["stats"]["examples"])]  # first seen, examples
    assert ("first seen: the example in which the search first saw the violation (the examples column counts every "
            "example run, shrinking too)") in lines
    with pytest.raises(SystemExit):
        main(["contract", "--help"])
    text = " ".join(capsys.readouterr().out.split())
    assert "exactly one round" not in text
    assert "at most N valid examples per check" in text and "the shrinking of a violation" in text
    assert "discards as invalid (their draws overran its data limit; they do not count toward N)" in text
    assert "the column 'first seen' says in which example the search found each violation" in text


# --- after a counterexample: how to replay it, how to save it --------------------


def test_a_saved_counterexample_is_followed_by_the_command_that_replays_it(capsys, tmp_path):
    out_dir = tmp_path / "found it"  # a space: the command must quote it
    server = f"{shlex.quote(sys.executable)} -m deployspec serve --model capi --variant capi-2022"
    status, out, _ = run(capsys, "contract", "--exec", server, "--model", "capi",
                         "--property", "app_stays_available", "--examples", "10", "--timeout", "20",
                         "--out", out_dir)
    assert status == 1, out
    (path,) = out_dir.glob("*.json")
    lines = out.splitlines()
    replay = lines[lines.index(f"saved: {path}") + 1]
    argv = shlex.split(replay.removeprefix("replay: "))
    assert argv == ["deployspec", "replay", str(path), "--exec", server, "--timeout", "20"]
    assert run(capsys, *argv[1:])[0] == 1  # it reproduces
    assert "use --out" not in out


def test_without_out_how_to_save_is_said_once_at_the_end(capsys):
    status, out, _ = run(capsys, "contract", *SEED_BUG, "--model", "capi", "--property", "app_stays_available",
                         "--property", "single_active_deployment", "--examples", "10")
    assert status == 1, out
    assert out.count("capi / implementation: ") == 2 and "replay:" not in out
    assert out.count("use --out DIR") == 1
    assert out.rstrip().endswith("(use --out DIR to save the counterexamples)")


# --- --python given a file name or a path ----------------------------------------


@pytest.fixture
def in_tmp(tmp_path, monkeypatch):
    """The current directory is an empty one; modules imported from it are forgotten after."""
    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(sys, "path", list(sys.path))
    before = set(sys.modules)
    yield tmp_path
    for name in set(sys.modules) - before:
        del sys.modules[name]


@pytest.mark.parametrize("spec, meant", [
    ("myimpl_absent.py:factory", "--python myimpl_absent:factory"),
    ("myimpl_here.py:factory", "--python myimpl_here:factory"),  # the file exists: still not a module name
    ("/tmp/x:f", "--python x:f with PYTHONPATH=/tmp"),
    ("./sub/impl.py:make", "--python sub.impl:make"),
    ("../up/impl.py:f", "--python impl:f with PYTHONPATH=../up"),
])
def test_a_file_name_or_path_for_python_hints_at_the_module_name(capsys, in_tmp, spec, meant):
    (in_tmp / "myimpl_here.py").write_text("def factory():\n    raise AssertionError('not called')\n")
    status, out, err = run(capsys, "contract", "--python", spec, "--model", "capi")
    assert (status, out) == (2, "")
    assert f"--python {spec}: no module named " in err and len(err.strip().splitlines()) == 1
    assert "a module name importable from the current directory or PYTHONPATH, without .py or a path" in err
    assert err.rstrip().endswith(f"did you mean {meant}?)")
    assert "fault" not in err  # './x' was imported as a relative name: a fault, exit 3


def test_a_module_name_not_found_gets_the_hint_but_no_guess(capsys, in_tmp):
    status, _, err = run(capsys, "contract", "--python", "nosuch.mod:f", "--model", "capi")
    assert status == 2
    assert "no module named 'nosuch' (MODULE is a module name importable" in err and "did you mean" not in err


def test_a_timeout_for_a_replay_on_a_design_is_refused_not_ignored(capsys):
    """A replay on a design has no replies to wait for: --timeout was taken and did nothing."""
    from .cli_runs import SEED

    assert run(capsys, "replay", str(SEED), "--timeout", "5") == (
        2, "", ("deployspec: error: replay: --timeout bounds an implementation's replies; give --exec or "
                "--python, or leave it out\n"))
    status, out, _ = run(capsys, "replay", str(SEED), "--python", "deployspec.contract.examples:capi_2022",
                         "--timeout", "5")
    assert status == 1 and "reproduces on --python" in out
