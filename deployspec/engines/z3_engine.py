"""The Z3 engine: the prior-web-process selection rule over every well-formed
app state up to a bound, with each symbolic counterexample confirmed on the
concrete model before it is reported.

How it reports (``deployspec check --engine z3``). The engine checks the
selection properties of ``spec/selection/``, not the spec/capi.py properties
themselves, so each spec property P gets the verdict of the selection
properties that guard it (``SelectionProperty.guards``):

* ``violated``: a selection property is violated, its minimal counterexample
  (fewest processes + deployments) is reachable from ``push``
  (:mod:`deployspec.engines.z3_confirm` looks for it), and the trace
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
from deployspec.engines.result import Result
from deployspec.engines.z3_confirm import (
    MAX_DEPTH,
    CancelViews,
    Confirmation,
    confirm,
    search_config,
)
from deployspec.spec import selection as sel

# Z3 takes SIGINT for itself while it solves (it cancels the query and hands the signal to
# nobody): a Ctrl-C there was lost, and the run went on to its end, exit 0. Left to Python,
# the stop comes as soon as the query returns (each takes well under a second here).
z3.set_param("ctrl_c", False)

#: default bounds of the symbolic state: with one process per deployment plus the
#: pushed one, 8 processes is the most 7 deployments can leave
PROCESSES, DEPLOYMENTS = 8, 7
#: symbolic counterexamples tried per selection property (in turn with the others that
#: guard the spec property) before giving up as unconfirmed, unless the budget ends first
ATTEMPTS = 40


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
        # then the same view whatever the solver met before (its pick among equals did depend
        # on that: the matrix and a close look reported different traces): the lowest
        # state and reason codes, deployment by deployment
        for j in range(s.M):
            opt.minimize(s.state[j])
            opt.minimize(s.reason[j])
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
    guards = guarding(prop.name)
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
                               f"{stats['solver_seconds']:.2f} s); {prop.name} itself is not proven: the "
                               "cancel step and the rest of the design are not encoded (--engine explore "
                               "judges it)", stats)
    unconfirmed: list[dict] = []
    # one try of each violated selection property in turn: the views of one that its search
    # cannot reach must not spend the budget another's first view would be confirmed in
    tried: dict[str, list[sel.SelectionView]] = {g.name: [] for g in violated}
    searched: dict[int, CancelViews] = {}  # by deployment count: each configuration searched once
    left = list(violated)
    for _ in range(ATTEMPTS):
        for g in list(left):
            confirmed = _confirmed(model, variant, rule, g, prop, config, started + budget, tried[g.name],
                                   unconfirmed, searched)
            if confirmed is None:
                left.remove(g)  # no other view, or out of time
            elif confirmed is not False:
                return _finding(model, variant_name, prop, g, *confirmed, stats, seed, out_dir, result)
        if not left:
            break
    stats["unconfirmed"] = unconfirmed
    names = ", ".join(g.name for g in violated)
    if not unconfirmed:  # (no view was searched for: the budget ended first)
        return result("unconfirmed", f"symbolic counterexample(s) of {names}; the budget ran out before "
                                     "any was searched for on the concrete model (--budget)", stats)
    return result("unconfirmed", f"symbolic counterexample(s) of {names}; none confirmed as a violation "
                                 f"of {prop.name} within the search bound", stats)


def guarding(prop_name: str) -> list:
    """The selection properties whose verdict is spec property ``prop_name``'s here."""
    return [p for p in sel.PROPERTIES if prop_name in p.guards]


def judges(variant_name: str, prop_name: str) -> bool:
    """Whether a search of this cell can judge it (else its answer is ``n/a``)."""
    return variant_name in sel.VARIANTS and bool(guarding(prop_name))


def none_judged(variants: list[str]) -> str:
    """Why a run of ``variants`` whose every cell is ``n/a`` here is refused before it starts:
    a design handed in, said as its cell would say it; else which cells the engine judges."""
    from deployspec.variant_plugins import source_of

    mine = [v for v in variants if v not in sel.VARIANTS and source_of(v) is not None]
    if mine and len(mine) == len(variants):  # designs handed in alone: why none of theirs is judged
        return _not_encoded(mine[0])
    props = sorted({name for p in sel.PROPERTIES for name in p.guards})
    return (f"--engine z3 proves the Cloud Controller's choice of the web process a cancel keeps, which "
            f"judges capi's {', '.join(props)} on {', '.join(sel.VARIANTS)}; no search asked here is one "
            "of those: --engine hypothesis or explore judges every property")


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


def _confirmed(model, variant, rule, g, prop, config, deadline: float, tried: list[sel.SelectionView],
               unconfirmed: list[dict], searched: dict[int, CancelViews],
               ) -> tuple[sel.SelectionView, Confirmation] | bool | None:
    """The next minimal symbolic counterexample of selection property ``g`` (not in
    ``tried``), looked for as a concrete violation of ``prop`` until ``deadline``
    (perf_counter) among the cancel views of its configuration's search (``searched``,
    by deployment count, made here the first time): its view and confirmation; False
    when not confirmed (added to ``tried`` and ``unconfirmed``); None when there is no
    other view, or no time. The search's depth is ``--bound max_depth`` when given."""
    left = deadline - time.perf_counter()
    if left <= 0:
        return None
    try:
        view = rule.minimal(g, symptom=prop.name if prop.name in sel.SYMPTOMS else None, exclude=tried)
    except SolverUnknown:
        return None
    if view is None:
        return None
    config = search_config(model, variant, view.m, config)
    if view.m not in searched:
        depth = getattr(config, "max_depth", None)
        searched[view.m] = CancelViews.of(model, variant, config, budget=left,
                                          max_depth=MAX_DEPTH if depth is None else depth)
    outcome = confirm(model, variant, view, prop, budget=max(0.0, deadline - time.perf_counter()), config=config,
                      views=searched[view.m])
    if outcome.session is not None:
        return view, outcome
    tried.append(view)
    unconfirmed.append({"selection_property": g.name, "view": view.describe(),
                        "why": outcome.why, "search": outcome.search})
    return False


def title_of(selection_property: str, processes: int, deployments: int) -> str:
    """A z3 finding's title: what its trace shows, in words (a CI user read the bare
    ``survivor_runs: 3 processes, 2 deployments`` as a test's label)."""
    return (f"the web process a cancel keeps breaks {selection_property} (a view the Z3 engine found, "
            f"{processes} processes and {deployments} deployments, reached by these steps)")


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
    trace["title"] = title_of(g.name, view.n, view.m)
    stats["counterexample"] = {"selection_property": g.name, "processes": view.n,
                               "deployments": view.m, "view": view.describe(), "confirmed": True,
                               "search": outcome.search}
    v = session.violation
    only = " (only when instance reports are unavailable)" if stats["selection"][g.name].get(
        "holds_with_reports_available") else ""
    return result("violated", f"{g.name}{only} ({view.describe()}): {v.message}", stats,
                  trace_length=len(trace["steps"]), trace=trace, cause=v.cause, **traces.keep(trace, out_dir))
