"""The Z3 engine: the prior-web-process selection rule over every well-formed
app state up to a bound, with each symbolic counterexample confirmed on the
concrete model before it is reported.

How it reports (``deployspec check --engine z3``). The engine checks the
selection properties of ``spec/selection/``, not the spec/capi.py properties
themselves, so each spec property P gets the verdict of the selection
properties that guard it (``SelectionProperty.guards``):

* ``violated``: a selection property is violated, its minimal counterexample
  (fewest processes + deployments) is reachable from ``push``, and the trace
  that reaches it and runs the cancel step breaks P. The trace is an ordinary
  counterexample file (``deployspec replay`` reproduces it) with the symbolic
  snapshot under ``extra.selection``;
* ``holds``: every selection property guarding P holds for all well-formed
  states with at most N processes and M deployments (a bounded proof of the
  rule, not of P);
* ``unconfirmed``: a symbolic counterexample exists but no trace reaching it
  within the search bound breaks P. Never saved as a finding;
* ``n/a``: no selection property bears on P (``single_active_deployment``), or
  the variant has no encoded rule.

``stats`` carries the bounds, the solver time, each selection property's
verdict, and for a finding the counterexample's size and its search figures.
"""

from __future__ import annotations

import time
from typing import Any

import attrs
import z3

from deployspec import traces
from deployspec.adapter import ReferenceAdapter
from deployspec.engines.result import Result
from deployspec.explorer import bfs
from deployspec.reference.capi.actions import Tick
from deployspec.reference.capi.state import CANCELING
from deployspec.session import Session
from deployspec.spec import selection as sel
from deployspec.spec.core import Step

#: default bounds of the symbolic state: with one process per deployment plus the
#: pushed one, 8 processes is the most 7 deployments can leave
PROCESSES, DEPLOYMENTS = 8, 7
#: symbolic counterexamples tried per spec property before giving up as unconfirmed
ATTEMPTS = 3
#: depth bound of the confirming search
MAX_DEPTH = 12


# ---------------------------------------------------------------------------
# Symbolic side
# ---------------------------------------------------------------------------


@attrs.frozen
class Analysis:
    """One selection property on one variant within the bounds: proved or violated."""

    property: str
    holds: bool
    seconds: float
    #: for a violated property: does it hold whenever instance reports are available?
    holds_with_reports: bool | None = None

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {"verdict": "holds" if self.holds else "violated",
                               "seconds": round(self.seconds, 3)}
        if self.holds_with_reports is not None:
            out["holds_with_reports_available"] = self.holds_with_reports
        return out


class Problem:
    """One variant's rule over the views within (N, M) that are well-formed for a
    design with ``traits`` (``spec.selection.traits``), built once."""

    def __init__(self, encoding: sel.VariantEncoding, N: int, M: int, traits: frozenset[str]):
        started = time.perf_counter()
        self.encoding, self.N, self.M, self.traits = encoding, N, M, traits
        self.s = sel.Symbolic(N, M)
        self.survivor = encoding.rule.encode(self.s)
        self.base = self.s.domain() + sel.wellformed(self.s, traits)
        self._solver = z3.Solver()
        self._solver.add(self.base)
        self._analyses: dict[str, Analysis] = {}
        self.build_seconds = time.perf_counter() - started

    def _violation(self, prop: sel.SelectionProperty, symptom: str | None) -> list[z3.BoolRef]:
        out = [z3.Not(prop.build(self.s, self.survivor))]
        if symptom is not None:
            out.append(sel.SYMPTOMS[symptom](self.s, self.survivor))
        return out

    def analysis(self, prop: sel.SelectionProperty) -> Analysis:
        """Does ``prop`` hold for every well-formed view within the bounds?"""
        if prop.name not in self._analyses:
            started = time.perf_counter()
            self._solver.push()
            self._solver.add(self._violation(prop, None))
            holds = _decided(self._solver.check()) == z3.unsat
            with_reports = None
            if not holds:
                self._solver.add(self.s.reports)
                with_reports = _decided(self._solver.check()) == z3.unsat
            self._solver.pop()
            self._analyses[prop.name] = Analysis(prop.name, holds, time.perf_counter() - started,
                                                 with_reports)
        return self._analyses[prop.name]

    def minimal(self, prop: sel.SelectionProperty, *, symptom: str | None = None,
                exclude=()) -> sel.SelectionView | None:
        """The smallest view violating ``prop`` (and showing ``symptom``) not equivalent
        to one in ``exclude``, or None."""
        s = self.s
        opt = z3.Optimize()
        opt.add(self.base)
        opt.add(self._violation(prop, symptom))
        for view in exclude:
            opt.add(z3.Not(s.same_class(view)))
        # fewest processes and deployments, then the simplest story: fewest deployments
        # that left DEPLOYING, reports available, fewest running processes and the oldest
        # ones (exact instance counts do not matter to the rules: not minimised, for speed)
        opt.minimize(s.n + s.m)
        opt.minimize(z3.Sum([z3.If(z3.And(s.exists(j), s.c != j, z3.Not(s.is_(j, "DEPLOYING"))), 1, 0)
                             for j in range(s.M)]))
        opt.minimize(z3.If(s.reports, 0, 1))
        opt.minimize(z3.Sum([z3.If(r > 0, 1, 0) for r in s.running]))
        opt.minimize(z3.Sum([z3.If(r > 0, i, 0) for i, r in enumerate(s.running)]))  # the oldest serve
        if _decided(opt.check()) != z3.sat:
            return None
        return s.view(opt.model())


class SolverUnknown(Exception):
    """Z3 answered ``unknown``: no verdict can be claimed."""


def _decided(answer: z3.CheckSatResult) -> z3.CheckSatResult:
    if answer == z3.unknown:
        raise SolverUnknown("Z3 could not decide the query")
    return answer


_PROBLEMS: dict[tuple, Problem] = {}


def problem(encoding: sel.VariantEncoding, N: int, M: int, traits: frozenset[str]) -> Problem:
    """Cached: ``check`` asks once per spec property."""
    key = (encoding, N, M, traits)
    if key not in _PROBLEMS:
        _PROBLEMS[key] = Problem(encoding, N, M, traits)
    return _PROBLEMS[key]


# ---------------------------------------------------------------------------
# Concrete side: reach an equivalent state from push and break a spec property
# ---------------------------------------------------------------------------


@attrs.frozen
class Confirmation:
    view: sel.SelectionView
    property: str
    session: Session | None  # the confirming run, None when unconfirmed
    search: dict[str, Any]
    why: str = ""
    #: the concrete view the cancel step saw on the confirming trace (equivalent to ``view``)
    reached: sel.SelectionView | None = None


def cancel_ticks(state, canceled: int, reports: bool) -> list[Tick]:
    """Dispatches that run the cancel step of ``canceled``: alone (the other active
    deployments' steps fail this time), then with every step."""
    unavailable = () if reports else (canceled,)
    others = tuple(d.id for d in state.deployments if d.id != canceled and d.active)
    ticks = [Tick(failed=others, reports_unavailable=unavailable)]
    if others:
        ticks.append(Tick(reports_unavailable=unavailable))
    return ticks


def selection_inputs(variant, state, tick: Tick) -> list[sel.SelectionView]:
    """The views the variant's rule is called with during one dispatch."""
    seen: list[sel.SelectionView] = []

    def spy(st, deployment, reports):
        seen.append(sel.SelectionView.of(st, deployment, reports))
        return variant.select_prior(st, deployment, reports)

    attrs.evolve(variant, select_prior=spy).step(state, tick)
    return seen


class _StartAt(ReferenceAdapter):
    """A reference adapter whose runs start from a given state."""

    def __init__(self, model, variant, state):
        super().__init__(model, variant)
        self.start = state

    def reset(self, config) -> None:
        self.state = self.start


def _breaks_from(model, variant, config, prop, state, tick: Tick) -> bool:
    """Does running ``tick`` and settling from ``state`` break ``prop``, judged as if
    the user had just asked for this state (a cheap stand-in for the history)?"""
    session = Session(model, _StartAt(model, variant, state), (prop,), config)
    obs = session.obs
    session.monitor.advance(Step(-1, {"type": "push", "instances": 1}, "user", None, obs, obs))
    if session.perform(tick) is not None:
        return True
    return session.settle() is not None


def _replay(model, variant, config, prop, path, tick: Tick) -> Session:
    session = Session(model, ReferenceAdapter(model, variant), (prop,), config)
    session.play([*path, tick])
    return session


#: the confirming search's bounds: the view fixes the number of deployments, and whether
#: a process runs matters, not how many instances it has; rolling deployments suffice
SEARCH_BOUNDS = {"max_instances": 1, "max_droplets": 2, "max_in_flight": (1,), "canary_plans": ()}


def search_config(model, variant, deployments: int, base=None):
    """The confirming search's configuration: ``base`` (the variant's own, or what
    ``--bound`` made of it) with the sizes above; its switches (windows, kinds of
    deploy) stay as they are."""
    config = base if base is not None else model.default_config(variant)
    known = attrs.fields_dict(type(config))
    bounds = {k: v for k, v in SEARCH_BOUNDS.items() if k in known}
    if "max_deployments" in known:
        bounds["max_deployments"] = deployments
    return attrs.evolve(config, **bounds)


def confirm(model, variant, view: sel.SelectionView, prop, *, config=None,
            budget: float = 5.0, max_depth: int = MAX_DEPTH) -> Confirmation:
    """Search breadth-first from the initial state for a state in which a cancel
    step sees a view equivalent to ``view`` and the trace then breaks ``prop``."""
    config = config or search_config(model, variant, view.m)
    key, c = view.key(), view.canceled
    chosen: dict[Any, tuple[Tick, sel.SelectionView]] = {}
    refuted: set = set()
    started = time.perf_counter()
    figures = {"states": 0, "transitions": 0, "seconds": 0.0, "searches": 0}

    def goal(state, obs) -> bool:
        if len(state.deployments) != view.m or state.deployments[c].state != CANCELING or state in refuted:
            return False
        for tick in cancel_ticks(state, c, view.reports):
            same = [v for v in selection_inputs(variant, state, tick) if v.key() == key]
            if same and _breaks_from(model, variant, config, prop, state, tick):
                chosen[state] = (tick, same[0])
                return True
        return False

    while True:
        left = budget - (time.perf_counter() - started)
        if left <= 0:
            return Confirmation(view, prop.name, None, figures, "search budget spent")
        r = bfs(model, variant, config, goal=goal, max_depth=max_depth, time_budget=left)
        figures["states"] += r.states
        figures["transitions"] += r.transitions
        figures["searches"] += 1
        figures.update(depth=r.depth, complete=r.complete, stopped=r.stopped,
                       seconds=round(time.perf_counter() - started, 3), config=config.to_json())
        if r.path is None:
            why = ("no reachable state shows it" if r.complete
                   else f"not reached within the search bound ({r.stopped})")
            if refuted:
                why += f"; {len(refuted)} state(s) showing it did not break {prop.name} given their history"
            return Confirmation(view, prop.name, None, figures, why)
        tick, reached = chosen[r.goal_state]
        session = _replay(model, variant, config, prop, r.path, tick)
        # the property must break at the cancel step or after it, not on the way there
        if session.violation is not None and session.violation.step >= len(r.path):
            figures.update(trace_length=len(session.steps), cancel_step=len(r.path))
            return Confirmation(view, prop.name, session, figures, reached=reached)
        refuted.add(r.goal_state)  # the history clears it: look further


# ---------------------------------------------------------------------------
# The engine entry point
# ---------------------------------------------------------------------------


def search(model, variant_name: str, prop, *, budget: float, seed: int, out_dir: str | None,
           processes: int = PROCESSES, deployments: int = DEPLOYMENTS,
           encodings: dict[str, sel.VariantEncoding] | None = None, config=None,
           **_ignored) -> Result:
    """The verdict of the selection rule on spec property ``prop`` (see the module doc).

    ``config`` (``--bound``) matters through its switches: which well-formedness
    constraints hold (a window it opens drops those the window breaks) and what the
    confirming search may do; its sizes do not bound the symbolic state."""
    started = time.perf_counter()
    N, M = processes, deployments
    variant = model.variant(variant_name)
    encoding = (encodings or sel.VARIANTS).get(variant_name)

    def result(verdict: str, message: str, stats: dict | None = None, **kw) -> Result:
        stats = dict(stats or {})
        stats.setdefault("seconds", round(time.perf_counter() - started, 3))
        stats["of"] = "selection rule"  # a proof of the rule, not of the property (declarations.matches)
        return Result(model.name, variant_name, prop.name, "z3", verdict, message=message, stats=stats, **kw)

    if encoding is None:
        return result("n/a", _not_encoded(variant_name))
    if variant.select_prior is not encoding.rule.rule:
        return result("error", f"{variant_name} selects with {variant.select_prior.__name__}, but "
                               f"spec/selection/ encodes {encoding.rule.rule.__name__}")
    guards = [p for p in sel.PROPERTIES if prop.name in p.guards]
    if not guards:
        return result("n/a", f"the selection rule does not bear on {prop.name}")
    try:
        rule = problem(encoding, N, M, sel.traits(variant, encoding, config))
        found = [rule.analysis(g) for g in guards]
    except SolverUnknown as exc:
        return result("error", str(exc))
    stats: dict[str, Any] = {
        "bounds": {"processes": N, "deployments": M},
        "traits": sorted(rule.traits),
        # building the encoding plus proving these properties
        "solver_seconds": round(rule.build_seconds + sum(a.seconds for a in found), 3),
        "selection": {a.property: a.to_json() for a in found},
    }
    violated = [g for g, a in zip(guards, found) if not a.holds]
    bound = f"all well-formed states with <= {N} processes and <= {M} deployments"
    if not violated:
        names = ", ".join(g.name for g in guards)
        return result("holds", f"selection rule holds for {bound} ({names}; solver "
                               f"{stats['solver_seconds']:.2f} s)", stats)
    unconfirmed: list[dict] = []
    for g in violated:
        confirmed = _confirmed(model, variant, rule, g, prop, config, started + budget, unconfirmed)
        if confirmed is not None:
            return _finding(model, variant_name, prop, g, *confirmed, stats, seed, out_dir, result)
    stats["unconfirmed"] = unconfirmed
    names = ", ".join(g.name for g in violated)
    return result("unconfirmed", f"symbolic counterexample(s) of {names}; none confirmed as a "
                                 f"{prop.name} violation within the search bound", stats)


def _not_encoded(variant_name: str) -> str:
    """Why a variant without an encoding is not judged: it is of another model, or a design handed in."""
    from deployspec.variant_plugins import source_of

    if source_of(variant_name) is None:  # a shipped design of another model (slots)
        return (f"no Z3 encoding of {variant_name}'s selection rule (the Z3 engine encodes the Cloud "
                "Controller's choice of the web process a cancel keeps)")
    # a design handed in: the constraints were checked on the shipped designs only
    return (f"no Z3 encoding of {variant_name}'s selection rule: --engine z3 proves the rules of the shipped "
            "capi variants, whose reachable states its well-formedness constraints are checked against "
            "(spec/selection/ VARIANTS); --engine explore judges a design of your own")


def _confirmed(model, variant, rule, g, prop, config, deadline: float,
               unconfirmed: list[dict]) -> tuple[sel.SelectionView, Confirmation] | None:
    """Up to ATTEMPTS minimal symbolic counterexamples of selection property ``g``, each
    searched for as a concrete violation of ``prop`` until ``deadline`` (perf_counter):
    the first confirmed (its view and confirmation), or None; each one not confirmed is
    added to ``unconfirmed``."""
    tried: list[sel.SelectionView] = []
    for _ in range(ATTEMPTS):
        left = deadline - time.perf_counter()
        if left <= 0:
            return None
        try:
            view = rule.minimal(g, symptom=prop.name if prop.name in sel.SYMPTOMS else None, exclude=tried)
        except SolverUnknown:
            return None
        if view is None:
            return None
        outcome = confirm(model, variant, view, prop, budget=left, config=search_config(model, variant, view.m, config))
        if outcome.session is not None:
            return view, outcome
        tried.append(view)
        unconfirmed.append({"selection_property": g.name, "view": view.describe(),
                            "why": outcome.why, "search": outcome.search})
    return None


def _finding(model, variant_name, prop, g, view, outcome: Confirmation, stats, seed, out_dir, result):
    session = outcome.session
    snapshot = {
        "selection_property": g.name,
        "bounds": stats["bounds"],
        "view": view.to_json(),
        "summary": view.describe(),
        "reached": outcome.reached.to_json(),
        "cancel_step": outcome.search["cancel_step"],
        "search": outcome.search,
    }
    trace = traces.build(model=model.name, variant=variant_name,
                         config=outcome.search["config"], property=prop.name, engine="z3",
                         seed=seed, session=session, extra={"selection": snapshot})
    trace["title"] = f"{g.name}: {view.n} processes, {view.m} deployments"
    path, unsaved, kept = traces.keep(trace, out_dir)
    stats["counterexample"] = {"selection_property": g.name, "processes": view.n,
                               "deployments": view.m, "view": view.describe(), "confirmed": True,
                               "search": outcome.search}
    v = session.violation
    only = " (only when instance reports are unavailable)" if stats["selection"][g.name].get(
        "holds_with_reports_available") else ""
    return result("violated", f"{g.name}{only} ({view.describe()}): {v.message}", stats,
                  counterexample=path, trace_length=len(trace["steps"]), trace=trace, cause=v.cause,
                  unsaved=unsaved, kept=kept)
