"""The pytest plugin (entry point ``pytest11``): contract tests from the pytest command line.

    pytest --pyargs deployspec.stateful_tests.test_contract --deployspec-exec "node server.js" [-n auto]

(the module, not the package ``deployspec.stateful_tests``: that would also run
the models' own machine tests; ``-n`` is pytest-xdist's, installed with deployspec).
``stateful_tests/test_contract.py`` has one test per check of the model
(``conforms_to_<reference>`` and every spec property), each searching with the
Hypothesis machine against the implementation. Without ``--deployspec-exec`` or
``--deployspec-python`` those tests are skipped at once. Each pytest-xdist
worker opens its own implementation (a session fixture, ``plugin_session.py``); counterexamples go to
``--deployspec-out`` (saving is atomic, so workers may share it).

Loaded by every pytest run where deployspec is installed, so this module only
registers options and fixtures; everything else is imported when used. The
options follow the CLI's rules (its validators), checked once at start: a
misconfigured CI run is one usage error, not a silent skip or a failure per test.
"""

from __future__ import annotations

import os
import re

import pytest


class VacuousHold(UserWarning):
    """A contract check held although the model's essential actions (capi: deploy; slots:
    push, swap, and set_image or a webhook's delivery) never took effect: pytest lists it in its warnings summary
    (``-W error::deployspec.contract.plugin.VacuousHold`` makes it fail)."""


NO_TARGET = ("no implementation given: pass --deployspec-exec COMMAND or "
             "--deployspec-python MODULE:FACTORY to run the contract tests")


def _cli(validator: str):
    """The command line's value type of that name (``deployspec.argtypes``; the CLI's
    ``examples_count``), imported only when the option is given."""

    def parse(text: str):
        from deployspec import argtypes, cli

        return (getattr(argtypes, validator, None) or getattr(cli, validator))(text)

    parse.__name__ = validator
    return parse


def pytest_addoption(parser) -> None:
    g = parser.getgroup("deployspec", "deployspec contract tests")
    g.addoption("--deployspec-exec", metavar="COMMAND",
                help="a program speaking the deployspec JSON-lines protocol")
    g.addoption("--deployspec-python", metavar="MODULE:FACTORY",
                help="a Python object implementing deployspec.contract.python_adapter.Implementation")
    g.addoption("--deployspec-model", default="capi", metavar="MODEL",
                help="the model it implements (default: capi)")
    g.addoption("--deployspec-reference", metavar="VARIANT",
                help="also check conformance to this reference variant")
    g.addoption("--deployspec-examples", type=_cli("examples_count"), default=100, metavar="N",
                help="examples per check (default 100)")
    g.addoption("--deployspec-seed", type=_cli("nonneg_int"), default=0, metavar="N",
                help="seed of the random search (default 0): the same seed, the same examples")
    g.addoption("--deployspec-timeout", type=_cli("seconds"), default=10.0, metavar="SECONDS",
                help="longest wait for one reply, or one call of a Python object (default 10)")
    g.addoption("--deployspec-bound", action="append", type=_cli("bound"), metavar="NAME=VALUE",
                help="change one bound of the configuration sent in every reset (repeatable), e.g. "
                     "'canary_plans=[[],[50],[100],[50,100]]'; it starts from --deployspec-reference's own "
                     "configuration, else the model's default")
    g.addoption("--deployspec-out", metavar="DIR", help="save counterexamples here")
    g.addoption("--deployspec-no-known", action="store_true",
                help="do not replay the committed counterexamples (how the shipped designs broke) where a "
                     "check's search found nothing")


def _configured(config) -> bool:
    # `is not None`: an empty --deployspec-exec "" is a usage error, not "no implementation"
    return config.getoption("--deployspec-exec") is not None or config.getoption("--deployspec-python") is not None


def pytest_configure(config) -> None:
    """The options that need deployspec to judge, checked once as the CLI checks them,
    before collection (later, a usage error is a traceback): ``DEPLOYSPEC_PROFILE``,
    a model or reference given, and with an implementation everything else."""
    from deployspec.profiles import unknown_profile

    problem = unknown_profile() if _runs_deployspecs_own_tests(config) else None
    if problem is not None:
        raise pytest.UsageError(problem)
    opt = config.getoption
    configured = _configured(config)
    # (without an implementation the tests skip, but a typo is a typo)
    named = configured or opt("--deployspec-model") != "capi" or opt("--deployspec-reference") is not None
    if named:
        _check_designs()
    if configured:
        _checktarget_given(opt)
        _last_resort_ends_the_session(config)
    if named:
        _check_model_and_reference(opt)
    if configured and opt("--deployspec-out") is not None:
        from deployspec.models import UsageError
        from deployspec.outputs import writable_dir

        try:
            writable_dir(opt("--deployspec-out"))
        except UsageError as exc:
            raise pytest.UsageError(ours(str(exc))) from None


#: said where DEPLOYSPEC_PROFILE is set for a run of contract tests, which it does not size
PROFILE_NOT_HERE = ("DEPLOYSPEC_PROFILE sizes deployspec's own test suite, not these contract checks: "
                    "--deployspec-examples N does")
#: the contract tests' module, which reads --deployspec-examples, not DEPLOYSPEC_PROFILE
_CONTRACT_TESTS = "deployspec.stateful_tests.test_contract"


def _runs_deployspecs_own_tests(config) -> bool:
    """Whether this run may collect deployspec's own tests, the ones ``DEPLOYSPEC_PROFILE``
    sets: in its source tree, or named with ``--pyargs deployspec.…``. Another project's
    run, where the plugin is loaded only because deployspec is installed, is not stopped
    by a variable it never reads; nor is a run of the contract tests alone (they take
    ``--deployspec-examples``)."""
    root = config.rootpath
    if (root / "deployspec" / "profiles.py").is_file() and (root / "stateful_tests").is_dir():
        return True
    return any(str(arg).startswith("deployspec.") and not str(arg).startswith(_CONTRACT_TESTS)
               for arg in config.args)


def _check_designs() -> None:
    """Designs of one's own (``DEPLOYSPEC_VARIANTS``, entry points) loaded first: one that
    fails is said as the CLI says it, not as a fault of the option that loaded it first
    (``--deployspec-python: variants from DEPLOYSPEC_VARIANTS module …``)."""
    from deployspec.models import UsageError, get_model, model_names

    try:
        for name in model_names():
            get_model(name)
    except UsageError as exc:
        raise pytest.UsageError(str(exc)) from None


def _last_resort_ends_the_session(config) -> None:
    """A call of the implementation that will not let go (it swallows its timeout, and
    Ctrl-C with it) ends this session, its line on the terminal's stderr (pytest's capture
    let go first), rather than hang it for ever: a user trial killed it with -9. Under
    pytest-xdist it ends the worker, which the controller reports lost."""
    from deployspec.contract import last_resort

    plugins = getattr(config, "pluginmanager", None)
    if plugins is None:  # (no pytest session's: a test's stand-in, whose process is not to end)
        return
    last_resort.IN_PYTEST = True
    capture = plugins.getplugin("capturemanager")
    if capture is not None:
        def uncaptured(line: str) -> None:
            capture.suspend_global_capture(in_=True)

        last_resort.before_end.append(uncaptured)


def _checktarget_given(opt) -> None:
    from deployspec.contract import harness
    from deployspec.contract.cli import cannot_start
    from deployspec.models import UsageError

    if opt("--deployspec-exec") is not None and opt("--deployspec-python") is not None:
        raise pytest.UsageError("--deployspec-exec and --deployspec-python exclude each other")
    kind = "exec" if opt("--deployspec-exec") is not None else "python"
    option = f"--deployspec-{kind}"
    try:
        harness.Target(kind, opt(option))
        if kind == "exec":
            cannot_start(opt(option), option)
        if kind == "python":
            _find_factory(opt(option))
    except UsageError as exc:
        text = ours(str(exc))
        raise pytest.UsageError(text if text.startswith("--") else f"{option}: {text}") from None


def _check_model_and_reference(opt) -> None:
    from deployspec.contract import harness
    from deployspec.models import UsageError, get_model

    option = "--deployspec-model"
    try:
        model = get_model(opt(option))
        option = "--deployspec-reference"
        if opt(option):
            model.variant(opt(option))
        option = ""  # (a bound's error names its option)
        harness.config_for(model, opt("--deployspec-reference"), bounds(opt))
    except UsageError as exc:
        raise pytest.UsageError(f"{option}: {exc}" if option else ours(str(exc))) from None


def target_given(opt):
    """The implementation given (``--deployspec-exec`` or ``--deployspec-python``)."""
    from deployspec.contract import harness

    if opt("--deployspec-exec") is not None:  # (an empty one is refused at start)
        return harness.Target("exec", opt("--deployspec-exec"))
    return harness.Target("python", opt("--deployspec-python"))


def bounds(opt) -> dict | None:
    """``--deployspec-bound NAME=VALUE`` options as the CLI's ``--bound`` takes them."""
    from deployspec.models import bounds_given

    return bounds_given(opt("--deployspec-bound"))


def ours(text: str) -> str:
    """A CLI message in the plugin's words: the CLI's options (--exec, --python, --out,
    --timeout, also in a hint) named as ours."""
    text = re.sub(r"(?<![\w-])--(exec|python|out|timeout|reference|bound)\b", r"--deployspec-\1", text)
    return re.sub(r"(?<![\w-])--property\b", "-k", text)  # (one check: its test, by name)


#: deployspec's own hints in a fault line that name the CLI's options
#: (``subprocess_adapter``, ``timed_call``, ``python_adapter``)
_HINTS = ("see --timeout", "or --timeout if longer", "(as over --exec)")


def ours_in_fault(text: str) -> str:
    """A fault line with deployspec's own hints in the plugin's words; what the
    implementation said (its exception, its stderr, a served program's own options) is
    kept as it said it (``ours`` over the whole line made ``--python`` in a served
    program's stderr ``--deployspec-python``)."""
    for hint in _HINTS:
        text = text.replace(hint, ours(hint))
    return text


def _find_factory(spec: str) -> None:
    """Import MODULE and look FACTORY up now, as the CLI does before any check: a
    name not found is one usage error, not one failure per test. A module that
    fails to import is the implementation's fault: each test reports it."""
    from deployspec.adapter import ImplementationError
    from deployspec.contract.loading import load_factory
    from deployspec.contract.protocol import STARTUP_TIMEOUT
    from deployspec.contract.timed_call import release_alarm

    try:
        load_factory(spec, STARTUP_TIMEOUT)
    except ImplementationError:
        pass
    finally:
        release_alarm()


def pytest_generate_tests(metafunc) -> None:
    if "deployspec_check" not in metafunc.fixturenames:
        return
    from deployspec.contract.conformance import name_for
    from deployspec.models import UsageError, get_model

    opt = metafunc.config.getoption
    try:
        model = get_model(opt("--deployspec-model"))
    except UsageError as exc:
        raise pytest.UsageError(f"--deployspec-model: {exc}") from None
    reference = opt("--deployspec-reference")
    names = ([name_for(reference)] if reference else []) + [p.name for p in model.properties]
    metafunc.parametrize("deployspec_check", names)


_COLLECTED = pytest.StashKey[bool]()
#: whether a contract test was collected and then deselected (the summary's hint)
_DESELECTED = pytest.StashKey[bool]()


def _contract_tests(items) -> bool:
    return any("deployspec_check" in getattr(item, "fixturenames", ()) for item in items)


def pytest_deselected(items) -> None:
    if items and _contract_tests(items):
        items[0].config.stash[_DESELECTED] = True


def pytest_collection_finish(session) -> None:
    """Whether a contract test is among the items run, once every plugin has deselected
    (``-k``, ``--lf``, a hook wrapper's own); an xdist worker tells its controller (and
    whether it deselected one)."""
    selected = _contract_tests(session.items)
    config = session.config
    if hasattr(config, "workeroutput"):
        config.workeroutput["deployspec_contract_selected"] = selected
        config.workeroutput["deployspec_contract_deselected"] = config.stash.get(_DESELECTED, False)
    elif selected:
        config.stash[_COLLECTED] = True


@pytest.hookimpl(optionalhook=True)
def pytest_testnodedown(node, error) -> None:
    """(pytest-xdist's controller collects nothing itself: what each worker told.)"""
    told = getattr(node, "workeroutput", {})
    if told.get("deployspec_contract_selected"):
        node.config.stash[_COLLECTED] = True
    if told.get("deployspec_contract_deselected"):
        node.config.stash[_DESELECTED] = True
    if told.get(WORKER_KEY):
        from deployspec.contract import plugin_coverage

        plugin_coverage.tally(node.config, told[WORKER_KEY])


def pytest_terminal_summary(terminalreporter, exitstatus, config) -> None:
    """An implementation given to a run that selected no contract test (the module not
    named, or a ``-k`` that matched none) is said, not a silent pass of what the run did
    collect (an ``addopts`` carrying ``--deployspec-exec`` would gate nothing). A line,
    not a usage error: collection is over, and in an xdist worker that is an INTERNALERROR."""
    if not _configured(config) or hasattr(config, "workerinput"):
        return
    if not config.stash.get(_COLLECTED, False):
        hint = LEFT_OUT if config.stash.get(_DESELECTED, False) else NAME_THEM
        terminalreporter.write_line(f"deployspec: {NO_CONTRACT_TEST} {hint}", yellow=True, bold=True)
        return
    if os.environ.get("DEPLOYSPEC_PROFILE") and not _runs_deployspecs_own_tests(config):
        # (a user set it, as the README's hunt does, and ran the same 100 examples: said)
        terminalreporter.write_line(f"deployspec: {PROFILE_NOT_HERE}", yellow=True)
    from deployspec.contract import plugin_coverage
    from deployspec.models import get_model

    opt = config.getoption
    note = plugin_coverage.lines(config, get_model(opt("--deployspec-model")), opt("--deployspec-reference"),
                                 target_given(opt), bounds(opt))
    for line in note:  # what no contract test judged, as the CLI's summary says it (advice indented)
        terminalreporter.write_line(("" if line.startswith(" ") else "deployspec: ") + ours(line), yellow=True)


#: the key under which an xdist worker hands its counts to the controller (``plugin_coverage``)
WORKER_KEY = "deployspec_contract_coverage"
#: said when an implementation is given and no contract test was selected, then why
NO_CONTRACT_TEST = "an implementation was given, but no contract test was selected: nothing judged it"
#: none was collected
NAME_THEM = "(name them: pytest --pyargs deployspec.stateful_tests.test_contract …)"
#: some were collected, and every one deselected
LEFT_OUT = "(they were collected, then every one left out: by -k, -m, --lf or --deselect?)"


@pytest.fixture(scope="session")
def deployspec_contract(request):
    """The implementation under test, or a skip when none was given."""
    if not _configured(request.config):
        pytest.skip(NO_TARGET)
    from deployspec.contract.plugin_session import ContractSession

    session = ContractSession(request.config)
    yield session
    session.close()
