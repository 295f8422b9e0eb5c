"""The pytest plugin's details a mutation pass found unpinned (contract/plugin.py, plugin_session.py), in
process: its defaults, the options it checks at start, and what a failed check says."""

from __future__ import annotations

import re
import signal

import pytest

from deployspec.contract import harness, plugin, plugin_session
from deployspec.contract.guard import ImplementationFault
from deployspec.engines.result import Result
from deployspec.models import UsageError

SAFE = "deployspec.contract.examples:capi_safe"


class _Config:
    """A pytest config holding these options (the rest at the plugin's defaults)."""

    def __init__(self, **options):
        from pathlib import Path

        self.rootpath, self.args = Path(__file__).parent.parent, []  # deployspec's own tree, as its suite's
        self.stash = {}  # (what pytest's Stash does here: setdefault and get)
        self.options = {"--deployspec-exec": None, "--deployspec-python": None, "--deployspec-model": "capi",
                        "--deployspec-reference": None, "--deployspec-examples": 100, "--deployspec-seed": 0,
                        "--deployspec-timeout": 10.0, "--deployspec-out": None, "--deployspec-no-known": False,
                        "--deployspec-bound": None}
        self.options.update({f"--deployspec-{k.replace('_', '-')}": v for k, v in options.items()})

    def getoption(self, name):
        return self.options[name]


def test_the_options_defaults_are_the_documented_ones(pytestconfig):
    """100 examples, seed 0, 10 s, model capi: what the help promises and the CLI uses."""
    got = {name: pytestconfig.getoption(name) for name in (
        "--deployspec-model", "--deployspec-examples", "--deployspec-seed", "--deployspec-timeout",
        "--deployspec-no-known")}
    assert got == {"--deployspec-model": "capi", "--deployspec-examples": 100, "--deployspec-seed": 0,
                   "--deployspec-timeout": 10.0, "--deployspec-no-known": False}


def test_a_session_searches_as_its_options_say():
    """Examples, seed, timeout, out and no-known given on the command line reach the search."""
    s = plugin_session.ContractSession(_Config(python=SAFE, examples=7, seed=3, timeout=2.5, out="found", no_known=True))
    assert (s.examples, s.seed, s.timeout, s.out, s.known) == (7, 3, 2.5, "found", False)
    assert plugin_session.ContractSession(_Config(python=SAFE)).known
    assert (s.target.kind, s.target.spec) == ("python", SAFE)
    assert (plugin_session.ContractSession(_Config(exec="prog")).target.kind) == "exec"


def test_closing_a_session_closes_its_implementation():
    """The program (or object) under test is ended with the session, not left running."""
    closed = []
    s = plugin_session.ContractSession(_Config(python=SAFE))
    s._conn = type("Conn", (), {"close": lambda self: closed.append(True), "took_effect": {}, "asked": {}})()
    s.close()
    assert closed == [True]


@pytest.mark.parametrize("options, message", [
    ({"model": "bogus"}, "--deployspec-model: unknown model 'bogus'"),
    ({"reference": "capi-9"}, "--deployspec-reference: unknown variant 'capi-9'"),
    ({"exec": "true", "python": SAFE}, "--deployspec-exec and --deployspec-python exclude each other"),
    ({"exec": ""}, "--deployspec-exec: empty"),
    ({"exec": "./no-such-impl --serve"}, "--deployspec-exec './no-such-impl --serve': ./no-such-impl: no such file"),
    ({"python": "no-colon"}, "--deployspec-python 'no-colon': expected MODULE:FACTORY"),
])
def test_a_bad_option_is_a_usage_error_at_configure(options, message):
    """Checked once before collection, each naming the plugin's own option once."""
    with pytest.raises(pytest.UsageError) as caught:
        plugin.pytest_configure(_Config(**options))
    assert str(caught.value).startswith(message)
    assert str(caught.value).count("--deployspec-") == message.count("--deployspec-")


def test_an_out_folder_is_not_judged_without_an_implementation(tmp_path):
    """Without one every test skips: an --deployspec-out there is no reason to create is no error."""
    (tmp_path / "a-file").write_text("")
    plugin.pytest_configure(_Config(out=str(tmp_path / "a-file" / "found")))
    with pytest.raises(pytest.UsageError, match="cannot create"):
        plugin.pytest_configure(_Config(python=SAFE, out=str(tmp_path / "a-file" / "found")))


def test_the_cli_s_options_are_named_as_the_plugin_s():
    """A CLI message naming --exec, --python or --out must not send a pytest user to an option pytest lacks."""
    assert plugin.ours("cannot save: --out x (or --exec y, --python z:f)") == \
        "cannot save: --deployspec-out x (or --deployspec-exec y, --deployspec-python z:f)"


def test_a_fault_keeps_what_the_implementation_said_and_names_only_deployspec_s_hints(monkeypatch):
    """The whole fault line went through ``ours``: a served program's stderr saying
    ``--python nosuch:f`` came out as ``--deployspec-python``, an option the user never gave."""

    def fails(*args, **kwargs):
        raise ImplementationFault("exited with status 2; its stderr ends with: deployspec: error: --python "
                                  "nosuch:f: no module named 'nosuch'; no reply (hung? see --timeout)",
                                  where="reset")

    monkeypatch.setattr(harness, "check_one", fails)
    s = plugin_session.ContractSession(_Config(exec="deployspec serve --model capi --python nosuch:f"))
    s._conn = _Conn()
    with pytest.raises(pytest.fail.Exception) as caught:
        s.check("single_active_deployment")
    said = str(caught.value)
    assert "deployspec: error: --python nosuch:f" in said and "(hung? see --deployspec-timeout)" in said, said


def test_a_vacuous_hold_made_an_error_fails_in_one_line(monkeypatch):
    """``-W error::deployspec.contract.plugin.VacuousHold`` (docs/contract.md) raised the
    warning through the plugin: a traceback of its source, where every other failure is a line."""
    import warnings

    def vacuous(*args, **kwargs):
        return Result("capi", "x", "single_active_deployment", "hypothesis", "holds",
                      stats={"vacuous": ["deploy"]})

    monkeypatch.setattr(harness, "check_one", vacuous)
    s = plugin_session.ContractSession(_Config(python=SAFE))
    s._conn = _Conn()
    with warnings.catch_warnings():
        warnings.simplefilter("error", plugin.VacuousHold)
        with pytest.raises(pytest.fail.Exception) as caught:
            s.check("single_active_deployment")
    assert not caught.value.pytrace and "holds vacuously" in str(caught.value)
    with pytest.warns(plugin.VacuousHold):  # as a warning, the test passes
        s.check("single_active_deployment")


def test_looking_a_factory_up_gives_sigalrm_back():
    """The import's timer is released: a user's own SIGALRM handler is theirs again."""
    from deployspec.contract import timed_call

    plugin._find_factory(SAFE)
    assert signal.getsignal(signal.SIGALRM) is not timed_call._overdue


def test_a_factory_not_found_when_opening_fails_the_test_in_the_plugin_s_words(monkeypatch):
    """A usage error met at the connection fails the test naming --deployspec-python, not the CLI's --python."""

    def refuse(*args, **kwargs):
        raise UsageError("--python m:f: module m has no 'f'")

    monkeypatch.setattr(harness, "Connection", refuse)
    s = plugin_session.ContractSession(_Config(python="m:f"))
    with pytest.raises(pytest.fail.Exception) as caught:
        s.connection()
    assert str(caught.value) == "--deployspec-python m:f: module m has no 'f'"


class _Conn:
    def __init__(self):
        self.revived = 0

    def revive(self):
        self.revived += 1


def test_a_fault_restarts_the_implementation_for_the_next_test(monkeypatch):
    """The next check must not meet the same broken process: the fault fails this test and revives it."""

    def fails(*args, **kwargs):
        raise ImplementationFault("it crashed", where="reset")

    monkeypatch.setattr(harness, "check_one", fails)
    s = plugin_session.ContractSession(_Config(python=SAFE))
    s._conn = conn = _Conn()
    with pytest.raises(pytest.fail.Exception, match="it crashed"):
        s.check("single_active_deployment")
    assert conn.revived == 1


class _CtrlCInADestructor:
    """Ctrl-C landing where Python cannot raise it (Hypothesis's gc callback, a
    ``__del__``): Python prints it as "Exception ignored" and goes on."""

    def __del__(self):
        signal.raise_signal(signal.SIGINT)


def _holds_after_a_dropped_ctrl_c(*args, **kwargs):
    _CtrlCInADestructor()
    return Result("capi", "x", "single_active_deployment", "hypothesis", "holds", stats={})


def test_ctrl_c_dropped_during_a_check_interrupts_the_run_instead_of_passing(monkeypatch):
    """It had let the search run its whole budget (nine minutes for 3,000 examples) and the test pass."""
    monkeypatch.setattr(harness, "check_one", _holds_after_a_dropped_ctrl_c)
    monkeypatch.setattr(signal, "SIGINT", signal.SIGUSR1)  # this test's own signal: pytest keeps Ctrl-C
    dropped = []
    monkeypatch.setattr("sys.unraisablehook", dropped.append)
    previous = signal.signal(signal.SIGUSR1, signal.default_int_handler)
    try:
        s = plugin_session.ContractSession(_Config(python=SAFE))
        s._conn = _Conn()
        with pytest.raises(KeyboardInterrupt):
            s.check("single_active_deployment")
        assert dropped == []  # not printed as "Exception ignored" either
        assert signal.getsignal(signal.SIGUSR1) is signal.default_int_handler  # given back
    finally:
        signal.signal(signal.SIGUSR1, previous)


def test_a_hosts_own_ctrl_c_handler_is_left_alone(monkeypatch):
    monkeypatch.setattr(harness, "check_one", _holds_after_a_dropped_ctrl_c)
    monkeypatch.setattr(signal, "SIGINT", signal.SIGUSR1)
    seen = []
    previous = signal.signal(signal.SIGUSR1, lambda signum, frame: seen.append(signum))
    try:
        s = plugin_session.ContractSession(_Config(python=SAFE))
        s._conn = _Conn()
        s.check("single_active_deployment")  # the host's handler took it; the check held
        assert seen == [signal.SIGUSR1]
    finally:
        signal.signal(signal.SIGUSR1, previous)


def test_a_conformance_failure_shows_where_the_views_diverge_and_where_it_was_saved(tmp_path):
    """capi-2022 against capi-safe: the failure has both views at the diverging step and the saved file."""
    s = plugin_session.ContractSession(_Config(python="deployspec.contract.examples:capi_2022", reference="capi-safe",
                                       examples=30, seed=0, out=str(tmp_path)))
    try:
        with pytest.raises(pytest.fail.Exception) as caught:
            s.check("conforms_to_capi-safe")
    finally:
        s.close()
    text = str(caught.value)
    (saved,) = tmp_path.iterdir()
    assert f"\nsaved: {saved}" in text
    assert re.search(r"\nfirst divergence from capi-safe at step \d+ \(.+\):\n  capi-safe  .+\n  implementation  ",
                     text), text
    # when the search saw it: what --deployspec-examples must reach for this seed
    assert re.search(r"\n\(first seen in example [1-9]\d* of the search, with seed 0\)", text), text


def test_a_reference_design_of_one_s_own_that_raises_fails_the_test_in_one_line(monkeypatch, hand_in):
    """It was a 70-line traceback through deployspec's modules, the design's line at the bottom;
    the CLI says one line (contract --reference)."""
    from .designs_handed_in import EVOLVED

    hand_in("mine", "def prior(state, canceling, reports):\n    return ()[0]\n"
            + EVOLVED.format("name='mine', violates_beyond={}, select_prior=prior"))

    def steps_the_reference(*args, **kwargs):
        from deployspec.models import get_model

        get_model("capi").variant("mine").select_prior(None, None, None)

    monkeypatch.setattr(harness, "check_one", steps_the_reference)
    s = plugin_session.ContractSession(_Config(python=SAFE, reference="mine"))
    s._conn = _Conn()
    with pytest.raises(pytest.fail.Exception) as caught:
        s.check("conforms_to_mine")
    assert str(caught.value) == ("--deployspec-reference: variant mine (DEPLOYSPEC_VARIANTS module mine) raised "
                                 "IndexError: tuple index out of range at mine.py:2")
    assert not caught.value.pytrace and caught.value.__context__ is None


def test_a_design_that_cannot_load_is_its_own_usage_error_not_the_implementation_s(hand_in):
    """It read '--deployspec-python: variants from DEPLOYSPEC_VARIANTS module …': the user
    went to check the factory."""
    hand_in("broken", "raise RuntimeError('no database')\n")
    with pytest.raises(pytest.UsageError) as caught:
        plugin.pytest_configure(_Config(python=SAFE))
    assert str(caught.value).startswith("variants from DEPLOYSPEC_VARIANTS module broken: cannot load: RuntimeError")
