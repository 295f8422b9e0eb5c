"""The Z3 engine's concrete side: reach, from the initial state, a state in which a
cancel step sees a view equivalent to a symbolic counterexample, and break a spec
property from there (``deployspec.engines.z3_engine`` finds the views).

The cancel views one configuration's states show are found in one breadth-first
search (:class:`CancelViews`), so each further symbolic counterexample is a lookup;
each state showing one is judged on the trace that reached it.
"""

from __future__ import annotations

import time
from typing import Any

import attrs

from deployspec.adapter import ReferenceAdapter
from deployspec.explorer import Layered, ModelGraph, actions_to
from deployspec.reference.capi.actions import Tick
from deployspec.reference.capi.state import CANCELING
from deployspec.session import Session
from deployspec.spec import selection as sel

#: depth bound of the confirming search
MAX_DEPTH = 12


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


class _Spy:
    """The variant with its rule watched: the views it is called with during a dispatch.
    Built once per variant (``attrs.evolve`` of a variant costs more than the step)."""

    def __init__(self, variant):
        self.seen: list[sel.SelectionView] = []
        select = variant.select_prior

        def spy(st, deployment, reports):
            self.seen.append(sel.SelectionView.of(st, deployment, reports))
            return select(st, deployment, reports)

        self.variant = attrs.evolve(variant, select_prior=spy)

    def __call__(self, state, tick: Tick) -> list[sel.SelectionView]:
        self.seen = []
        self.variant.step(state, tick)
        return self.seen


def selection_inputs(variant, state, tick: Tick) -> list[sel.SelectionView]:
    """The views the variant's rule is called with during one dispatch."""
    return _Spy(variant)(state, tick)


def _replay(model, variant, config, prop, path, tick: Tick) -> Session:
    session = Session(model, ReferenceAdapter(model, variant), (prop,), config)
    session.play([*path, tick])
    return session


#: the confirming search's bounds: the view fixes the number of deployments, and whether
#: a process runs matters, not how many instances it has; rolling deployments suffice
SEARCH_BOUNDS = {"max_instances": 1, "max_droplets": 2, "max_in_flight": (1,), "canary_plans": (), "web_instances": ()}


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


@attrs.define
class CancelViews:
    """Every view a cancel step is called with in the states one search reaches, by the
    view's key: built once per configuration, so each symbolic counterexample is looked
    up instead of searched for again (40 views of capi-current each took a search)."""

    graph: ModelGraph
    search: Layered
    #: view key -> (node number, the dispatch), in the order found (the view itself is
    #: seen again when one is confirmed: keeping each took 489 MB for 143,798 states)
    by_key: dict[Any, list[tuple[int, Tick]]]
    figures: dict[str, Any]
    #: the views a dispatch calls the variant's rule with
    inputs: _Spy

    @classmethod
    def of(cls, model, variant, config, *, max_depth: int, budget: float) -> CancelViews:
        started = time.perf_counter()
        graph = ModelGraph(model, variant, config)
        by_key: dict[Any, list] = {}
        inputs = _Spy(variant)

        def on_node(seen, depth, number) -> bool:
            state = seen[0]
            for c, d in enumerate(state.deployments):
                if d.state != CANCELING:
                    continue
                for reports in (True, False):
                    for tick in cancel_ticks(state, c, reports):
                        for v in inputs(state, tick):
                            if v.canceled == c:
                                by_key.setdefault(v.key(), []).append((number, tick))
            return False

        search = Layered(graph, max_depth=max_depth, time_budget=budget)
        search.run(on_node)
        figures = {"states": search.states, "transitions": search.transitions, "depth": search.depth,
                   "complete": search.exhausted, "stopped": search.stopped, "searches": 1,
                   "seconds": round(time.perf_counter() - started, 3), "config": config.to_json()}
        return cls(graph, search, by_key, figures, inputs)


def confirm(model, variant, view: sel.SelectionView, prop, *, config=None, budget: float = 5.0,
            max_depth: int = MAX_DEPTH, views: CancelViews | None = None) -> Confirmation:
    """A trace from the initial state to a state in which a cancel step sees a view
    equivalent to ``view``, which then breaks ``prop`` (judged on the whole trace: the
    history decides a property such as cancel_restores_last_good), shortest first.
    ``views``: the cancel views of this configuration, found before."""
    started = time.perf_counter()
    config = config or search_config(model, variant, view.m)
    if views is None:
        views = CancelViews.of(model, variant, config, max_depth=max_depth, budget=budget)
    figures = dict(views.figures)
    refuted: set[tuple[int, Tick]] = set()
    key = view.key()
    for number, tick in views.by_key.get(key, []):
        if (number, tick) in refuted:
            continue
        if time.perf_counter() - started > budget:
            return Confirmation(view, prop.name, None, figures, "search budget spent")
        path, state = actions_to(views.graph, views.search, number)
        session = _replay(model, variant, config, prop, path, tick)
        # the property must break at the cancel step or after it, not on the way there
        if session.violation is not None and session.violation.step >= len(path):
            figures.update(trace_length=len(session.steps), cancel_step=len(path))
            reached = next(v for v in views.inputs(state, tick) if v.key() == key)
            return Confirmation(view, prop.name, session, figures, reached=reached)
        refuted.add((number, tick))
    if refuted:  # reached: none broke the property (and the search may have stopped short of others)
        why = (f"{len({n for n, _ in refuted})} state(s) showing it did not break {prop.name} given their history"
               + ("" if figures["complete"] else f"; no other within the search bound ({figures['stopped']})"))
    else:
        why = ("no reachable state shows it" if figures["complete"]
               else f"not reached within the search bound ({figures['stopped']})")
    return Confirmation(view, prop.name, None, figures, why)
