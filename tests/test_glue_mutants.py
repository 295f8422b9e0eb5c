"""Details of the glue between the command line and the engines that a bug would get wrong
quietly.

Found missing by mutation testing of the glue between the command line and the engines
(``rule_results``, ``rule_watch``, ``check``, ``commands``, ``replay_command``,
``declarations``, ``contract/subprocess_adapter``, ``contract/loading``, ``user_code``):
what a rule handed in may raise or call and how its calls are timed, how a program under
test is read, what ``--python`` says of a bad name, and how the standard descriptors are
put back.
"""

from __future__ import annotations

import os

import pytest

from deployspec import rule_results
from deployspec.adapter import StopServing

# --- the rules of a design handed in (rule_results) ------------------------------------


def test_a_rule_s_os_exit_is_refused_even_when_the_real_one_would_not_end_the_tests():
    """A rule of a design handed in that calls ``os._exit(0)`` must be an error, never the
    end of deployspec with status 0 (read as a pass). Checked with a stand-in for the real
    ``os._exit``, so that a wrapper that let it through fails this test rather than ending
    the test run with status 0."""
    def real_exit(status=0):
        raise AssertionError(f"os._exit({status}) reached the real one")

    def prior(state, canceling, reports):
        os._exit(0)

    rule = rule_results._wrapped("CapiVariant.select_prior", prior, (int,))
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(os, "_exit", real_exit)
        with pytest.raises(rule_results.RuleResultError, match=r"called os._exit\(0\)"):
            rule(None, False, None)


def test_deployspec_s_own_stop_passes_through_a_rule_as_it_is():
    """A stop of deployspec's own raised while a rule handed in runs (``serve``'s SIGTERM,
    a ``StopServing``) must pass on unchanged: turned into a rule error (a TypeError), the
    server would answer it as an error reply and serve on instead of ending."""
    def prior(state, canceling, reports):
        raise StopServing

    rule = rule_results._wrapped("CapiVariant.select_prior", prior, (int,))
    with pytest.raises(StopServing):
        rule(None, False, None)


# --- timing the rules handed in (rule_watch) -------------------------------------------


def test_a_rule_calling_another_stays_timed_after_the_inner_one_returns(monkeypatch):
    """One rule of a design calling another: the outer call is the one timed, and the inner
    call's end must not forget it, or a loop after the inner call would hold ``check`` past
    its budget (and ``replay`` for ever) without a word."""
    import threading

    from deployspec import rule_watch

    monkeypatch.setattr(rule_watch, "LIMIT", 1e9)
    seen = []
    inner = rule_results._wrapped("CapiVariant.select_prior", lambda state, canceling, reports: 1, (int,))

    def outer(state, canceling, reports):
        seen.append(rule_watch.running.get(threading.get_ident()))
        inner(state, canceling, reports)
        seen.append(rule_watch.running.get(threading.get_ident()))
        return 2

    rule = rule_results._wrapped("CapiVariant.select_prior", outer, (int,))
    assert rule(None, False, None) == 2
    assert seen[0] is not None and seen[1] is seen[0]
    assert threading.get_ident() not in rule_watch.running


def test_a_call_whose_frame_is_off_its_thread_s_stack_is_dropped_at_the_next_look(monkeypatch):
    """A call the watcher finds no longer on its thread's stack (its thread ended, or the
    wrapper was left without marking it) is forgotten, not timed on: timed on, it would
    be stopped as hung (or the program ended) while the thread ran other code."""
    import sys
    import threading

    from deployspec import rule_watch

    monkeypatch.setattr(rule_watch, "LIMIT", 1e9)

    def returned():
        return sys._getframe()

    me = threading.get_ident()
    stale = rule_watch.Call(returned(), "prior (at mine.py:1)")
    with rule_watch.lock:
        rule_watch.running[me] = stale
    try:
        rule_watch._look()
        assert rule_watch.running.get(me) is not stale
    finally:
        with rule_watch.lock:
            if rule_watch.running.get(me) is stale:
                del rule_watch.running[me]


def test_a_rule_in_a_forked_child_is_timed_by_a_watcher_of_the_child_s_own(monkeypatch):
    """A forked process (a ``--workers`` search's worker) has none of its parent's threads:
    it must start a watcher of its own, or a rule looping there is never stopped and the
    search hangs past its budget."""
    import time

    from deployspec import rule_watch

    monkeypatch.setattr(rule_watch, "LIMIT", 0.2)
    monkeypatch.setattr(rule_watch, "_EVERY", 0.02)
    quick = rule_results._wrapped("CapiVariant.select_prior", lambda state, canceling, reports: 1, (int,))
    quick(None, False, None)  # the parent's watcher runs
    assert rule_watch._watcher is not None

    def loops(state, canceling, reports):
        deadline = time.monotonic() + 20
        while time.monotonic() < deadline:
            time.sleep(0.01)
        return 1

    rule = rule_results._wrapped("CapiVariant.select_prior", loops, (int,))
    pid = os.fork()
    if pid == 0:
        try:
            rule(None, False, None)
            os._exit(4)  # it ran to its end: nothing stopped it
        except rule_results.RuleHungError:
            os._exit(3)
        finally:
            os._exit(5)
    _, status = os.waitpid(pid, 0)
    assert os.waitstatus_to_exitcode(status) == 3


# --- a program under test (contract/subprocess_adapter) --------------------------------


def test_an_empty_reply_line_is_said_at_once_not_waited_on_as_a_hang():
    """A program that answers with an empty line (a stray ``print()``) has replied, with no
    JSON: said as that, at once; waiting for a line after it would report a hang (or,
    with the program's line after it, never read that line)."""
    from deployspec.adapter import ImplementationError
    from deployspec.contract import protocol
    from deployspec.contract.subprocess_adapter import Program
    from deployspec.models import get_model

    program = Program("printf '\\n'; sleep 30", model=get_model("capi"), timeout=20, startup_timeout=20)
    with program, pytest.raises(ImplementationError) as caught:
        program.ask(protocol.observe(1))
    assert "is not JSON" in str(caught.value) and "no reply" not in str(caught.value)


def test_a_program_asked_again_after_ctrl_c_is_interrupted_not_a_fault():
    """Once a request was interrupted (Ctrl-C), a later request (a machine's teardown)
    must stop at once as an interruption, not be reported as the implementation's fault
    ("interrupted") nor wait on the program again."""
    from deployspec.contract import protocol
    from deployspec.contract.subprocess_adapter import INTERRUPTED, Program
    from deployspec.models import get_model

    program = Program("cat", model=get_model("capi"))
    program.dead = INTERRUPTED
    with pytest.raises(KeyboardInterrupt):
        program.ask(protocol.observe(1))
    assert program.proc is None


def test_a_program_that_ended_is_reported_with_the_last_line_of_its_stderr():
    """The last words on stderr are usually why it ended (a traceback's last line, the
    exception): the report quotes the last line, not the first."""
    from deployspec.adapter import ImplementationError
    from deployspec.contract import protocol
    from deployspec.contract.subprocess_adapter import Program
    from deployspec.models import get_model

    program = Program("echo starting >&2; echo 'ValueError: no config' >&2; exit 3",
                      model=get_model("capi"), timeout=20, startup_timeout=20)
    with program, pytest.raises(ImplementationError) as caught:
        program.ask(protocol.observe(1))
    said = str(caught.value)
    assert "exited with status 3" in said and said.endswith("its stderr ends with: ValueError: no config"), said


# --- --python MODULE:FACTORY (contract/loading) ----------------------------------------


def test_a_python_spec_without_a_factory_says_what_the_spec_must_be():
    """``--python mypkg.impl:`` (the factory forgotten) is told the form the option takes,
    with an example, not that the module has no attribute ''."""
    from deployspec.contract.loading import split_spec
    from deployspec.models import UsageError

    with pytest.raises(UsageError, match="expected MODULE:FACTORY"):
        split_spec("mypkg.impl:")


def test_a_module_whose_dependency_is_missing_is_its_fault_not_a_wrong_name(tmp_path, monkeypatch):
    """``--python gluedep_impl:make`` whose module imports ``gluedep`` (not installed): the
    name given is right, and the missing dependency is the implementation's fault, not a
    usage error sending the user to fix a name that is fine (the dependency's name is a
    prefix of the module's, not a package of it)."""
    import sys

    from deployspec.adapter import ImplementationError
    from deployspec.contract.loading import load_factory

    (tmp_path / "gluedep_impl.py").write_text("import gluedep\n\ndef make():\n    return None\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.delitem(sys.modules, "gluedep_impl", raising=False)
    with pytest.raises(ImplementationError, match="importing gluedep_impl raised ModuleNotFoundError"):
        load_factory("gluedep_impl:make")


def test_a_factory_that_is_not_callable_is_a_usage_error():
    """``--python os:sep`` names a string, not a factory: a usage error saying so (exit 2),
    not a fault of an implementation that was never made."""
    from deployspec.contract.loading import load_factory
    from deployspec.models import UsageError

    with pytest.raises(UsageError, match="sep is not callable"):
        load_factory("os:sep")


# --- the user's code guarded (user_code) -----------------------------------------------


def test_a_descriptor_deployspec_moved_between_calls_is_put_back_where_it_then_was():
    """Between two calls of the user's code deployspec may point stdout elsewhere itself
    (``serve`` does); the copy kept from the call before is stale then, and a descriptor
    the next call closes must be put back onto where it was at that call's start."""
    from deployspec.user_code import DescriptorsMoved, descriptors_kept

    from .helpers import in_a_child

    def body(report):
        with descriptors_kept():
            pass  # a copy of stdout as it is now
        _, w = os.pipe()
        os.dup2(w, 1)  # elsewhere, by deployspec, between the calls
        before = os.fstat(1)
        try:
            with descriptors_kept():
                os.close(1)
        except DescriptorsMoved as exc:
            os.write(report, str(exc).encode())
        now = os.fstat(1)
        return 0 if (now.st_dev, now.st_ino) == (before.st_dev, before.st_ino) else 1

    assert in_a_child(body) == (0, "closed file descriptor 1 (stdout) (deployspec writes there; put back)")
