"""One contract test's check against the implementation the pytest run was given: the
session (one per pytest-xdist worker) that opens it once, searches one check per test,
fails the test as the CLI would report it, and hands on what the run exercised
(``plugin_coverage``). Imported by the plugin's fixture, when a contract test runs."""

from __future__ import annotations

import contextlib
import signal
import warnings

import pytest

from deployspec import interruption, variant_plugins
from deployspec.contract import faults, harness, plugin_coverage
from deployspec.contract.cli import violation_text
from deployspec.contract.conformance import PREFIX
from deployspec.contract.guard import ImplementationFault
from deployspec.contract.plugin import (
    WORKER_KEY,
    VacuousHold,
    bounds,
    ours,
    ours_in_fault,
    target_given,
)
from deployspec.contract.summary import first_seen
from deployspec.models import UsageError, get_model


class ContractSession:
    """One opened implementation per pytest session (per xdist worker)."""

    def __init__(self, config):
        opt = config.getoption
        self.model = get_model(opt("--deployspec-model"))
        self.reference = opt("--deployspec-reference")
        self.examples = opt("--deployspec-examples")
        self.seed = opt("--deployspec-seed")
        self.out = opt("--deployspec-out")
        self.known = not opt("--deployspec-no-known")
        self.bounds = bounds(opt)
        self.config = harness.config_for(self.model, self.reference, self.bounds)
        self.target = target_given(opt)
        self.timeout = opt("--deployspec-timeout")
        self._conn = None
        self._pytest_config = config
        #: for the note at the end of the run (``plugin_coverage``): the conformance check's
        #: verdict, if it ran, and how many tests ended in the implementation's fault
        self._conformance: str | None = None
        self._faults = 0

    def connection(self):

        if self._conn is None:
            try:
                self._conn = harness.Connection(self.target, self.model, timeout=self.timeout)
            except ImplementationFault as exc:
                fault = exc.line()
            except UsageError as exc:  # MODULE or FACTORY not found (pytest.exit in an xdist worker: INTERNALERROR)
                fault = ours(str(exc))
            else:
                return self._conn
            pytest.fail(fault, pytrace=False)
        return self._conn

    def check(self, name: str) -> None:
        """Search for a violation of one check; fail the test with the shrunk trace."""

        (prop,) = harness.plan_checks(self.model, self.reference, [name], self.config)
        conn = self.connection()
        fault = broken = None
        try:
            with _ctrl_c_kept():
                r = harness.check_one(conn, prop, config=self.config, budget=None, seed=self.seed,
                                      max_examples=self.examples, out_dir=self.out, known=self.known)
                interruption.raise_if_pending()  # dropped on the way: pytest's interruption, not a pass
        except ImplementationFault as exc:
            fault = exc
        except (Exception, SystemExit) as exc:  # a --deployspec-reference design of one's own failed
            broken = variant_plugins.fault(self.reference, exc) if self.reference else None
            if broken is None:
                raise
        if broken is not None:  # one line, as the CLI says it (not a traceback through deployspec)
            pytest.fail(f"--deployspec-reference: {broken}", pytrace=False)
        found = None
        if fault is not None:
            self._faults += 1
            faults.keep_fault(fault, conn, self.out, self.seed)  # (with --deployspec-out: to replay)
            conn.revive()  # the next test starts the implementation afresh
            found = fault.found  # a violation found before it failed, while shortening its trace
        else:
            found = r if r.verdict == "violated" else None
            if self.reference and name == PREFIX + self.reference:
                self._conformance = r.verdict
        text = ""
        if found is not None:  # as the CLI says it

            text = violation_text(found, self.target, self.timeout)
            text += first_seen(found)  # what --deployspec-examples must reach, as the CLI's column says
            if not found.counterexample and not found.unsaved:
                text += "\n(--deployspec-out DIR saves it, for deployspec replay and deployspec show)"
        if fault is not None:
            saved = faults.saved_text(fault, self.target, self.timeout, "--deployspec-out DIR")
            text = ours_in_fault(fault.with_history()) + (f"\n{saved}" if saved else "") + \
                ("\n\n" + text if text else "")
        if text:
            pytest.fail(text, pytrace=False)
        if r.stats.get("vacuous"):  # it held, having judged none of what these do: said, as the CLI's "?"

            said = VacuousHold(f"{name} holds vacuously: {harness.not_taking_effect(r.stats['vacuous'])} "
                               "(each was refused or changed nothing), so nothing they do was judged")
            try:
                warnings.warn(said, stacklevel=1)
                return
            except VacuousHold:  # -W error::…VacuousHold: a failure in one line, as every other
                pass
            pytest.fail(str(said), pytrace=False)  # (outside the except: said once, not "during handling")

    def close(self) -> None:
        if self._conn is not None:
            self._conn.close()

            told = plugin_coverage.counts(self._conn, self._conformance, self._faults)
            config = self._pytest_config
            if hasattr(config, "workeroutput"):  # (an xdist worker: the controller says it)
                config.workeroutput[WORKER_KEY] = told
            else:
                plugin_coverage.tally(config, told)


def _ctrl_c_kept():
    """Ctrl-C stops the check wherever the search is (pytest then reports the run
    interrupted), also when Python dropped it in Hypothesis's gc callback, where the
    search would have run its whole budget and the test passed. Left alone when the
    host has a SIGINT handler of its own (a conftest's)."""


    if signal.getsignal(signal.SIGINT) is not signal.default_int_handler:
        return contextlib.nullcontext()
    return interruption.kept((signal.SIGINT,))
