"""``deployspec contract``: the model's machines against an implementation.

For each check (conformance to ``--reference`` first, then each spec property)
the Hypothesis engine searches for a violation with the implementation behind
the adapter seam, shrinks it, and the trace is saved like any counterexample
(engine ``contract``, variant = the implementation's name). Besides the model's
candidate actions the machine probes the ones it leaves out as refused or
no-ops (``model.probe_actions``, docs/contract.md); before it, every action and
probe of the initial state is tried once (``sweep.py``); after a search that found
nothing, the committed counterexamples are replayed (``known.py``). Every check searches
with the same seed; a run of steps the implementation answered once is recalled,
not asked again (``recall.py``). A trace found is then
shortened by replaying it, less one or two steps at a time, on the
implementation (``minimize``, at most ``MINIMIZE_SECONDS``). The first
implementation fault ends the run; what was found before it is kept, the trace
being shortened when the implementation failed included.

Exit status: 0 no check found a violation, 1 a property is violated or the
implementation diverges from the reference, 2 usage error (or a counterexample
``--out`` could not save: the verdicts stand), 3 implementation
fault (crash, hang, garbage, wrong id, schema violation, error reply, a refusal
that changed the state, a reset that does not reset, non-determinism).
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # typing.Self is 3.11's; annotations are not evaluated
    from typing import Self

import attrs

from deployspec import interruption, traces
from deployspec.adapter import ImplementationError
from deployspec.contract import faults, guard, leftovers, recorded, sweep
from deployspec.contract.conformance import conformance_property, name_for
from deployspec.contract.guard import (
    NOT_DETERMINISTIC,
    FaultBox,
    GuardedAdapter,
    ImplementationFault,
    guard_property,
)
from deployspec.contract.loading import instantiate, load_factory, split_spec
from deployspec.contract.protocol import STARTUP_TIMEOUT
from deployspec.contract.python_adapter import PythonAdapter
from deployspec.contract.recall import Answers, RecallingAdapter
from deployspec.contract.subprocess_adapter import Program, SubprocessAdapter
from deployspec.contract.timed_call import release_alarm
from deployspec.coverage import Coverage
from deployspec.engines.result import Result
from deployspec.minimize import CannotReplay, minimize
from deployspec.models import UsageError, unknown_property
from deployspec.reference.core import ActionError
from deployspec.replay import replay
from deployspec.text import quoted

#: a contract run's exit statuses (a usage error, 2, never reaches a run)
OK, VIOLATED, FAULT = 0, 1, 3

#: how long shortening one found trace by replay on the implementation may take
MINIMIZE_SECONDS = 10.0

#: shown under a violation kept as it was seen (``stats["shrunk"]`` false): its trace can
#: be much longer than a shrunk one, and a reader should not look for a minimal one
NOT_SHRUNK = ("(not shrunk: the implementation failed, or did not repeat it, meanwhile; the trace is as it "
              "was seen)")


def not_shrunk(r: Result) -> bool:
    """Whether ``r``'s trace was kept as seen, because the implementation failed while it was shrunk."""
    return r.stats.get("shrunk") is False


@attrs.frozen
class Target:
    """What is under test: ``exec`` a command, or ``python`` a MODULE:FACTORY."""

    kind: str
    spec: str
    #: the name written as the trace's variant (and file name)
    name: str = "implementation"

    def __attrs_post_init__(self) -> None:
        if self.kind not in ("exec", "python"):
            raise ValueError(self.kind)
        if not self.spec.strip():
            raise UsageError(f"--{self.kind}: empty")
        if self.kind == "python":
            split_spec(self.spec)
        if not traces.NAME.fullmatch(self.name):
            raise UsageError(f"--name {quoted(self.name[:64])}{'...' if len(self.name) > 64 else ''}: must be "
                             f"{traces.NAME_RULE}")

    def describe(self) -> str:
        return f"--{self.kind} {quoted(self.spec)}"


class Connection:
    """An opened target: hands out guarded adapters, ends the process at close."""

    def __init__(self, target: Target, model, *, timeout: float = 10.0):
        self.target = target
        self.model = model
        self.timeout = timeout
        self.box = FaultBox()
        self.program: Program | None = None
        self._python: PythonAdapter | None = None
        #: the sweep of the initial state and the committed traces' runs, by kind and
        #: configuration (``sweep.key``)
        self.sweeps: dict[tuple[str, str], sweep.Sweep] = {}
        self.impl: Any = None
        #: the variant whose configuration the run sends (``--reference``; None: the model's default)
        self.reference: str | None = None
        #: accepted actions that changed the observation, by kind, over the run (``GuardedAdapter``)
        self.took_effect: dict[str, int] = {}
        #: actions asked of the implementation, by kind, over the run (``GuardedAdapter``)
        self.asked: dict[str, int] = {}
        #: the searches' steps by situation, over the run
        self.coverage = Coverage(model.situation) if model.situation is not None else None
        if target.kind == "exec":
            self.program = Program(target.spec, model=model, timeout=timeout)
        else:
            startup = max(timeout, STARTUP_TIMEOUT)
            leftovers.watch_object_children()  # (the module and the factory may fork too)
            try:
                with guard.during(at="start"):  # (the watchdog's line says it as the fault below does)
                    factory = load_factory(target.spec, startup)  # UsageError for a bad name
                    self.impl = instantiate(factory, target.spec, startup)
            except BaseException as exc:
                release_alarm()
                leftovers.end_object_children()
                if isinstance(exc, ImplementationError):  # a failing import too: a fault, not a usage error
                    raise self.box.record(ImplementationFault(str(exc), where="start")) from None
                raise
            self._python = PythonAdapter(self.impl, model, timeout=timeout)
        #: what the implementation answered, for the searches (``recall.py``)
        self.answers = Answers(self._guarded, self.took_effect)

    def adapter(self, checking: str | None = None) -> GuardedAdapter:
        """An adapter that asks the implementation every step (a replay, the sweep, a shortening)."""
        self.answers.forget_standing()
        return self._guarded(checking)

    def recalling_adapter(self, checking: str | None = None) -> RecallingAdapter:
        """An adapter for a search: steps answered before are recalled, not asked again."""
        return RecallingAdapter(self.answers, checking)

    def _guarded(self, checking: str | None) -> GuardedAdapter:
        inner = SubprocessAdapter(self.program) if self.program else self._python
        return GuardedAdapter(inner, self.box, checking, self.took_effect, self.asked)

    @property
    def implementation(self) -> str | None:
        """The name the implementation gave in its reset reply, if any."""
        return self.program.implementation if self.program else None

    def revive(self) -> None:
        """Forget a fault so the next reset starts the program again (the pytest plugin)."""
        self.box = FaultBox()
        self.answers = Answers(self._guarded, self.took_effect)  # (its runs were the old box's)
        if self.program is not None:
            self.program.close()
            self.program.dead = None
        elif self._python is not None:
            self._python.dead = None

    def close(self) -> None:
        if self.program is not None:
            self.program.close()
        elif self._python is not None:
            self._python.close_implementation()
            release_alarm()
        leftovers.end_object_children()

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc) -> None:
        self.close()


@attrs.define
class ContractRun:
    model: str
    target: Target
    #: the configuration sent in every reset (``config_for``)
    config: Any = None
    results: list[Result] = attrs.field(factory=list)
    fault: ImplementationFault | None = None
    #: the checks the run was to make, in order (those after a fault are not run)
    planned: tuple[str, ...] = ()
    #: the name and version the implementation gave in its reset reply (``--exec``), if any
    implementation: str | None = None
    #: ``--reference``: the variant whose configuration the run sent and which it conforms to
    reference: str | None = None
    #: the bounds ``--bound`` changed in that configuration, by name
    bounds: tuple[str, ...] = ()
    #: ``--fail-vacuous``: a check that holds vacuously fails the run, as a violation does
    fail_vacuous: bool = False
    #: by action kind of the model, how many steps of the run it took effect in (accepted,
    #: and the observation changed), the sweep's and the committed traces' included
    took_effect: dict[str, int] = attrs.field(factory=dict)
    #: by action kind of the model, how many times the implementation was asked to take
    #: one (a step recalled from an earlier example is not asked again)
    asked: dict[str, int] = attrs.field(factory=dict)
    #: the searches' steps by situation (``Coverage.to_json``): first the situations the
    #: ``reference`` design (without one, some reference design) reaches under the
    #: configuration, with their zeros
    situations: dict[str, dict[str, Any]] = attrs.field(factory=dict)

    @property
    def idle(self) -> list[str]:
        """The model's action kinds that took effect nowhere in a run that finished:
        whatever the implementation does with them, no check judged it."""
        if self.fault is not None or not self.took_effect:
            return []
        return [kind for kind, n in self.took_effect.items() if n == 0]

    @property
    def never_asked(self) -> list[str]:
        """Of :attr:`idle`, the kinds the run never asked for: the configuration gave the
        searches no such action to offer (``--bound instances=3 --bound max_instances=3``
        leaves no scale-out), so none was refused either."""
        return [kind for kind in self.idle if not self.asked.get(kind)]

    @property
    def vacuous(self) -> list[str]:
        """The checks that held with none of the actions they are about taking effect."""
        return [r.property for r in self.results if r.verdict == "holds" and r.stats.get("vacuous")]

    @property
    def exit_status(self) -> int:
        if self.fault is not None:
            return FAULT
        if any(r.unsaved for r in self.results):
            return traces.UNSAVED
        if any(r.verdict == "violated" for r in self.results):
            return VIOLATED
        return VIOLATED if self.fail_vacuous and self.vacuous else OK


def plan_checks(model, reference: str | None, properties: list[str] | None, config) -> list:
    """The checks to run: those named, in the order named; else conformance first (it finds
    divergences fastest), then spec properties."""
    if reference is not None:
        model.variant(reference)  # validates the name
    available = ([name_for(reference)] if reference else []) + [p.name for p in model.properties]
    names = list(dict.fromkeys(properties or available))  # a check named twice runs once, as in check
    out = []
    for name in names:
        if name not in available:
            raise unknown_property(name, available, [model.name], contract=True, reference=reference)
        if reference and name == name_for(reference):
            out.append(conformance_property(model, reference, config))
        else:
            out.append(guard_property(model.property(name)))
    return out


def config_for(model, reference: str | None, bounds: dict | None = None):
    """The configuration sent in every reset: the reference variant's own (the one
    its declared verdicts hold under; conformance asks for exactly what it offers),
    else the model's default; ``bounds`` (``--bound NAME=VALUE``) change some of it,
    judged as ``check`` judges them (``check.configure``), so a run can search wider
    (canaries) or narrower (leave out what the implementation does not support)."""
    config = model.default_config(model.variant(reference) if reference else None)
    return model.with_bounds(config, bounds) if bounds else config


def check_one(conn: Connection, prop, *, config, budget: float | None, seed: int,
              max_examples: int | None = None, out_dir: str | None = None, known: bool = True) -> Result:
    """One property against the implementation; the counterexample saved under ``out_dir``.

    ``budget`` in seconds (rounds of examples, as ``check``), or ``max_examples``
    for one round of at most that many valid examples (Hypothesis's
    ``max_examples``: the invalid ones and the shrinking of a violation come on top,
    and ``stats["examples"]`` counts them all). Before the search every first step is
    run (the sweep); after one that found nothing, unless ``known`` is false, the
    committed counterexamples.
    Raises :class:`ImplementationFault`.
    """
    from deployspec.engines import hypothesis_engine as engine

    model, target = conn.model, conn.target
    failed: list[ImplementationFault] = []  # while shortening a trace

    def searchable(obs: dict, action) -> bool:
        """A shorter trace can name what no longer exists; an implementation need not
        take that, so such a candidate is not tried."""
        return sweep.searchable(model, obs, action, config)

    def replay_on_implementation(candidate: dict):
        try:
            return replay(candidate, adapter=conn.adapter(prop.name), target=target.name, allowed=searchable)
        except ImplementationFault as fault:
            failed.append(fault)
            raise CannotReplay(fault.line()) from None
        except ActionError as exc:  # a step the model cannot even read: keep the trace as it is
            raise CannotReplay(str(exc)) from None

    def shrink(trace: dict) -> dict:
        return minimize(trace, replay_on_implementation, seconds=MINIMIZE_SECONDS)

    # probes: the actions the model's search leaves out as refused or no-ops on the
    # reference; the implementation must do with them what the reference does
    kwargs = {"config": config, "adapter_factory": lambda: conn.recalling_adapter(prop.name),
              "engine_name": "contract", "out_dir": None, "probes": True, "shrink": shrink,
              "coverage": conn.coverage}
    effects_before = dict(conn.took_effect)
    try:
        r, swept = recorded.first_found(conn, prop, config, seed, shrink, recorded.SWEEP)  # every first step, once
        if r is None:
            if max_examples is not None:
                r = engine.check_property(model, target.name, prop, max_examples=max_examples, seed=seed,
                                          **kwargs)
            else:
                r = engine.search(model, target.name, prop, budget=budget, seed=seed, **kwargs)
            r.stats.update(swept)
            if r.verdict == "holds" and known:  # what the search missed of the ways real designs broke
                r = recorded.unless_known(conn, prop, config, seed, shrink, r)
            if r.verdict == "holds":  # a hold in which no push or swap (no deploy) did anything judged none
                judged = recorded.judged_effects(conn, config, known)
                r.stats["vacuous"] = model.vacuous(
                    lambda k: conn.took_effect.get(k, 0) > effects_before.get(k, 0) or k in judged, prop)
    except ImplementationFault as fault:
        first = conn.box.first or fault
        first.found = first.found or fault.found  # a violation seen before the fault
        if first.found is not None and first.found.trace is not None:
            _keep(first.found, conn, out_dir)
        raise first from None
    if r.verdict == "error":
        # Hypothesis saw the same steps give different results: the implementation is not
        # deterministic, or it failed while a violation was being shrunk (its fault made the
        # example look flaky, and is the news). Either way a violation seen on the way is
        # real: it is kept as it was seen, not shrunk, and reported beside the fault.
        fault = conn.box.first or conn.box.record(ImplementationFault(
            _not_deterministic(prop.name, seen=r.trace is not None),
            where="a repeated example", checking=prop.name))
        if r.trace is not None:
            fault.found = Result(model.name, target.name, prop.name, "contract", "violated",
                                 trace_length=len(r.trace["steps"]), message=r.trace["violation"]["message"],
                                 stats={**r.stats, "shrunk": False}, cause=r.cause, trace=r.trace)
            _keep(fault.found, conn, out_dir)
        raise fault
    if r.verdict == "violated" and r.trace is not None:
        _keep(r, conn, out_dir)
    if failed:  # a shorter run of valid actions made the implementation fail
        fault = conn.box.first or failed[0]
        fault.found = r
        raise fault
    return r


def not_taking_effect(kinds) -> str:
    """How every report says a vacuous hold's ``stats["vacuous"]`` (``check_one``)."""
    return f"no {' or '.join(kinds)} took effect in any example"


def _not_deterministic(checking: str, *, seen: bool) -> str:
    """The cause of a fault Hypothesis reports as flaky, in the user's terms: its own
    words ("Inconsistent data generation! … Is your data generation depending on
    external state?") are about the test's code, which here is ours, not theirs."""
    kept = (f"; the {checking} violation it showed once is kept as it was seen, not shrunk"
            if seen else "")
    return (f"{NOT_DETERMINISTIC}: the implementation is not deterministic (is reset complete? is anything random or "
            f"time-dependent?){kept}")


def _keep(r: Result, conn: Connection, out_dir: str | None) -> None:
    """Name the implementation in a violation's trace and save it under ``out_dir`` (once)."""
    if r.counterexample is not None:
        return
    r.trace["extra"] = {**r.trace.get("extra", {}), "implementation": identity(conn)}
    if not_shrunk(r):  # the file says it too (a replay of it may not reproduce on this implementation)
        r.trace["extra"]["shrunk"] = False
    for field, value in traces.keep(r.trace, out_dir).items():
        setattr(r, field, value)


def identity(conn: Connection) -> dict:
    """What a trace says of the implementation it was found on (``extra.implementation``):
    how it was given, the name it gave, the run's ``--reference``, and its ``--timeout``
    where not the default (a replay of a slow one needs it: the page's replay line)."""
    return identity_of(conn.target, conn.implementation, conn.reference, conn.timeout)


def identity_of(target: Target, name: str | None, reference: str | None, timeout: float) -> dict:
    """:func:`identity`, from what a connection knows."""
    from deployspec.contract.cli import DEFAULT_TIMEOUT

    return {target.kind: target.spec, "name": name, "reference": reference} | (
        {"timeout": timeout} if timeout != DEFAULT_TIMEOUT else {})


def run(model, target: Target, *, reference: str | None = None, properties: list[str] | None = None,
        budget: float = 2.0, max_examples: int | None = None, seed: int = 0, out_dir: str | None = None,
        timeout: float = 10.0, bounds: dict | None = None, known: bool = True,
        on_start: Callable[[str], None] = lambda label: None,
        on_result: Callable[[Result], None] = lambda r: None) -> ContractRun:
    config = config_for(model, reference, bounds)
    checks = plan_checks(model, reference, properties, config)
    run = ContractRun(model.name, target, config, planned=tuple(p.name for p in checks), reference=reference,
                      bounds=tuple(bounds or ()))
    try:
        conn = Connection(target, model, timeout=timeout)
    except ImplementationFault as fault:
        run.fault = fault
        return run
    conn.reference = reference
    with conn:
        for prop in checks:
            on_start(f"{target.name} · {prop.name}")
            started = time.perf_counter()
            try:
                r = check_one(conn, prop, config=config, budget=budget, max_examples=max_examples,
                              seed=seed, out_dir=out_dir, known=known)
            except ImplementationFault as fault:
                fault.seconds = time.perf_counter() - started
                if fault.found is not None:  # the violation it had found before failing
                    run.results.append(fault.found)
                    on_result(fault.found)
                faults.keep_fault(fault, conn, out_dir, seed)
                run.fault = fault
                break
            interruption.raise_if_pending()  # swallowed on the way (a __del__): a stop, not a verdict
            run.results.append(r)
            on_result(r)
        run.implementation = conn.implementation
        run.took_effect = {kind: conn.took_effect.get(kind, 0) for kind in model.vocabulary}
        run.asked = {kind: conn.asked.get(kind, 0) for kind in model.vocabulary}
        if conn.coverage is not None:
            reachable = model.situations(config.to_json(), model.variant(reference) if reference else None)
            run.situations = conn.coverage.to_json(reachable)
    return run
