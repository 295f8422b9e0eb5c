"""The exhaustive engine: every reachable state within the model's bounds, breadth first.

A search runs over pairs (model state, the property's monitor memory):

* ``state`` properties are judged on every reachable state (the memory is unused);
* ``trace`` properties advance their memory on every move, so the memory is
  part of what makes a node visited; a refused action is a move too when it
  changes the memory (properties may read refusals);
* ``settled`` properties are judged, from every reachable state, after the
  settle phase ``Session.settle`` runs (the platform ticks and instances start
  until nothing changes or ``config.settle_steps`` is spent), memoised by state.

Breadth first, so the first violation is a shortest trace: its length is the
BFS depth of the violating move. A settled property's trace is the path plus
the settle phase after it; the search goes on until no deeper state can give a
shorter total. The trace is then replayed through a :class:`Session` on the
reference adapter, so the saved file is an ordinary counterexample.

When nothing is violated and the search ran out of states, the result is a
bounded proof: the property holds in every state reachable within the bounds
(the configuration). A time budget (``--budget``), a memory budget or
``max_depth``/``max_states`` stop the search cleanly; the verdict is then
``holds`` with ``stats.complete = false``, and the message says what was seen.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

import attrs

from deployspec import reached, traces
from deployspec.adapter import ReferenceAdapter
from deployspec.engines import incident_text
from deployspec.engines.explore_text import progress_text, proof_text
from deployspec.engines.incident_graph import IncidentGraph
from deployspec.engines.product import ProductGraph, Settler
from deployspec.engines.result import Result
from deployspec.explorer import collision_bound, merged_counts
from deployspec.explorer import layered as layered_search
from deployspec.memory import peak_rss_mb
from deployspec.partitioned import WorkerLost
from deployspec.render_text import action_label
from deployspec.session import Session
from deployspec.spec.core import Step

ENGINE = "explore"
#: resident memory (MiB) beyond which a search stops
MEMORY_BUDGET_MB = 3072


class InternalError(RuntimeError):
    """The replayed trace disagrees with the search: a bug in the engine or the model."""


def explore_config(model, variant) -> Any:
    """The variant's configuration with the model's exploration bounds
    (``config_type.EXPLORE``) for every field the variant does not set itself,
    then the variant's own exploration bounds (``variant.explore``)."""
    base = model.default_config(variant)
    wanted = getattr(model.config_type, "EXPLORE", None) or {}
    own = getattr(variant, "config", None) or {}
    bounds = {k: v for k, v in wanted.items() if k not in own}
    bounds.update(variant.explore)
    return attrs.evolve(base, **bounds)


def search(model, variant_name: str, prop, *, budget: float | None, seed: int, out_dir: str | None,
           config=None, max_depth: int | None = None, max_states: int | None = None,
           memory_budget_mb: float | None = MEMORY_BUDGET_MB,
           skip_causes: frozenset[str] = frozenset(), workers: int = 1,
           on_progress: Callable[[str], None] | None = None, incident=None,
           settle_grows: bool = False) -> Result:
    """Explore every state of ``variant_name`` reachable within the bounds, for ``prop``.

    ``budget`` is seconds (None: no time limit); ``seed`` is unused (the search is
    deterministic), and its traces record none. ``max_depth`` defaults to the
    configuration's ``max_depth`` when it has one. ``skip_causes``: causes of
    ``prop`` already found; the shortest trace breaking it another way is sought.
    ``workers`` > 1 splits the search over that many processes
    (:mod:`deployspec.partitioned`): the same verdict and trace length, and
    the same states and transitions when it runs to the end. ``on_progress``
    hears, after each BFS layer, how far the search got (``progress_text``).
    ``incident`` (:class:`deployspec.incident.Incident`): only the runs that take its
    actions in order, the platform's between them (:mod:`.incident_graph`; one process).
    ``settle_grows``: a violation whose settle phase the bound cut with the platform still
    busy is not reported nor saved; the result is an error with ``stats["settle_cut"]``, the
    bound, for the caller to search again with a longer one (an incident's calls size the
    bound, and a guess too short for them was called a violation of the design).
    """
    started = time.perf_counter()
    variant = model.variant(variant_name)
    config = config or explore_config(model, variant)
    if max_depth is None:
        max_depth = getattr(config, "max_depth", None)
    if incident is not None:
        graph = IncidentGraph(model, variant, config, prop, incident, skip_causes)
        workers = 1
    else:
        graph = ProductGraph(model, variant, config, prop, skip_causes)
    settler = Settler(model, variant, config, prop) if prop.kind == "settled" else None
    found: dict[str, Any] = {}
    counts = _Counts(graph, settler)

    def on_node(view, depth, n):
        node, obs = view
        if prop.kind == "state" and depth > 0:  # the initial state is not judged
            message = prop.advance(None, Step(depth, {}, "user", None, obs, obs))[1]
            if message is not None and not graph.skipped(message):
                found.update(number=n, message=message, total=depth)
                return True
        if settler is not None and (incident is None or graph.settles(node)):
            message, steps = settler.outcome(node[0])
            if message is not None and not graph.skipped(message) and depth + steps < found.get("total", 1 << 60):
                found.update(number=n, message=message, total=depth + steps, settle=steps, busy=settler.cut_busy)
                if settle_grows and settler.cut_busy:  # (searched again with a longer settle phase: at once)
                    return True
        return False

    def on_edge(_node, _child, info):
        _action, message = info
        if message is not None:
            found.update(message=message, total=graph.layer + 1)  # the goal's number: run's answer
            return True
        return False

    def enough(depth):  # a settled violation: no deeper state gives a shorter trace
        if on_progress is not None:
            on_progress(progress_text(depth, layered.states, time.perf_counter() - started))
        return "total" in found and found["total"] <= depth + 1

    def absorb(shares):  # what the workers of a partitioned search found
        _take_shortest(found, [f for f, _ in shares])
        counts.absorb([c for _, c in shares])

    layered = layered_search(graph, workers, max_depth, max_states, budget, memory_budget_mb)
    try:
        goal = layered.run(on_node, on_edge if prop.kind == "trace" else None, enough,
                           share=lambda: (found, counts.now()), absorb=absorb)
    except WorkerLost as exc:  # killed (out of memory?): what it saw is lost with it
        stats = _stats(model, variant, prop, layered, counts, config, max_depth, memory_budget_mb,
                       time.perf_counter() - started, False)
        return Result(model.name, variant_name, prop.name, ENGINE, "error", message=str(exc), stats=stats)
    except (Exception, SystemExit) as exc:  # a design's rule raised: the shortest path to where, for its report
        failed_at = getattr(layered, "failed_at", None)  # (a search split over workers does not say)
        labels = _labels_to(graph, layered, failed_at) if failed_at is not None else None
        if labels is None:  # no steps to say; none another engine's run left on a kept exception either
            reached.note(exc, "")
        else:
            where = f"the state{reached.after(labels)}" if labels else "the initial state"
            reached.note(exc, f", in a move from {where}")
        raise
    if goal is None and "number" in found:
        goal = found["number"]
    seconds = time.perf_counter() - started
    complete = goal is not None or layered.exhausted  # (a settled violation found has its number: a goal)
    stats = _stats(model, variant, prop, layered, counts, config, max_depth, memory_budget_mb, seconds, complete)
    if prop.kind == "trace":  # (a state is the model's with what the property remembers: more of them)
        stats["with_memory"] = True
    if skip_causes:  # (runs past a way already found are not followed: fewer of them)
        stats["past_causes"] = sorted(skip_causes)
    if incident is not None:
        # (every run: a search for a further cause prunes the runs that break the property a known way)
        _incident_stats(stats, graph, incident, config, every_run=goal is None and complete and not skip_causes)
        if goal is None and complete and graph.reached < len(incident.actions):
            # (a search for a further cause that no run got past: no other cause, said as such;
            # the first search, with nothing skipped, that never took an action judged nothing)
            return Result(model.name, variant_name, prop.name, ENGINE, "holds" if skip_causes else "error",
                          stats=stats, message=incident_text.untaken_text(stats, incident, skip_causes))
    if goal is not None and settle_grows and found.get("busy") and "settle" in found:
        stats["settle_cut"] = config.settle_steps
        return Result(model.name, variant_name, prop.name, ENGINE, "error", stats=stats,
                      message=f"the settle phase was cut at settle_steps={config.settle_steps} with the platform "
                              "still busy")
    if goal is not None:
        # a settled violation is known shortest only if the search went deep enough
        stats["shortest"] = layered.stopped is None
        # vacuity is a proof's question: a violation judged something (its search stopped
        # at it, before most actions were tried, which is no sign of a hollow check)
        stats["vacuous"] = []
    if goal is None:
        return Result(model.name, variant_name, prop.name, ENGINE, "holds", stats=stats,
                      message=proof_text(stats) if incident is None else incident_text.proof_text(stats, incident))
    try:
        return _counterexample(model, variant, variant_name, prop, config, graph, layered, goal,
                               found, seed, out_dir, stats, incident)
    except InternalError as exc:  # e.g. a non-deterministic step function
        return Result(model.name, variant_name, prop.name, ENGINE, "error", message=str(exc), stats=stats)


class _Counts:
    """Moves per action kind and the settle phase's figures: this process's, or
    summed over the workers of a partitioned search (``absorb``)."""

    def __init__(self, graph: ProductGraph, settler: Settler | None):
        self.graph, self.settler = graph, settler
        self.merged: dict | None = None

    def now(self) -> dict:
        g, st = self.graph, self.settler
        return {"by_kind": g.by_kind, "rejected_by_kind": g.rejected_by_kind,
                "settle_memo": len(st.memo) if st else 0, "settle_steps": st.steps_taken if st else 0}

    def absorb(self, shares: list[dict]) -> None:
        self.merged = {
            "by_kind": merged_counts([c["by_kind"] for c in shares]),
            "rejected_by_kind": merged_counts([c["rejected_by_kind"] for c in shares]),
            # the workers' memos overlap (settle phases cross partitions): a sum, not a union
            "settle_memo": sum(c["settle_memo"] for c in shares),
            "settle_steps": sum(c["settle_steps"] for c in shares),
        }

    def total(self) -> dict:
        return self.now() if self.merged is None else self.merged


def _take_shortest(found: dict, shares: list[dict]) -> None:
    """What the workers found, into ``found``: the shortest total (the first
    worker's on a tie), only if strictly shorter than what is there, as in one process."""
    best = min((f for f in shares if "total" in f), key=lambda f: f["total"], default=None)
    if best is not None and best["total"] < found.get("total", 1 << 60):
        found.clear()
        found.update(best)


def _labels_to(graph, layered, number: int) -> list[str] | None:
    """The actions of the shortest path to node ``number``, as labels (None if the rules
    raise on the way there too: they did not when the search went there)."""
    node, labels = graph.root(), []
    try:
        for depth, e in enumerate(layered.path_to(number)):
            graph.layer = depth
            node, action = graph.child_by_edge(node, e)
            labels.append(action_label(action.to_json()))
    except Exception:  # noqa: BLE001 - the report goes without the path
        return None
    return labels


def _counterexample(model, variant, variant_name, prop, config, graph, layered, goal, found,
                    seed, out_dir, stats, incident=None) -> Result:
    """Replay the shortest path through a Session so the file is an ordinary trace."""
    actions, node = [], graph.root()
    for depth, e in enumerate(layered.path_to(goal)):
        graph.layer = depth
        node, action = graph.child_by_edge(node, e)
        actions.append(action)
    skip = frozenset((prop.name, c) for c in graph.skip_causes)
    session = Session(model, ReferenceAdapter(model, variant), (prop,), config, skip)
    for action in actions:
        session.perform(action)
    if prop.kind == "settled":
        session.settle()
    v = session.violation
    expected = found["total"]
    if v is None or v.property != prop.name or len(session.steps) != expected:
        seen = "no violation" if v is None else f"a violation of {v.property}"
        raise InternalError(
            f"explore: the replayed trace of {prop.name} on {variant_name} does not match the "
            f"search ({seen} in {len(session.steps)} steps, expected one in {expected}): the same "
            "steps gave another result, so a step is not a function of the state alone "
            "(a rule that reads the clock, randomness or a variable of its own?)"
        )
    stats["bfs_depth"] = len(actions)
    trace = traces.build(model=model.name, variant=variant_name, config=config.to_json(),
                         property=prop.name, engine=ENGINE, seed=None, session=session,
                         extra={"explore": {k: stats[k] for k in ("states", "transitions", "bfs_depth")}})
    if incident is not None:
        trace["title"] = incident_text.title_of(incident, variant_name, prop.name, node[2])
        trace["extra"]["incident"] = {"file": incident.source, "actions": [a.to_json() for a in incident.actions]}
    return Result(model.name, variant_name, prop.name, ENGINE, "violated",
                  trace_length=len(trace["steps"]), message=v.message, stats=stats, cause=v.cause,
                  trace=trace, **traces.keep(trace, out_dir))


def _incident_stats(stats: dict, graph, incident, config, every_run: bool) -> None:
    """An incident's figures (``stats["incident"]``). Its calls are given, so the sizes
    that bound a search's calls, the switches that only open calls (``CALLS``), the actions
    that never took effect and vacuity say nothing of its interleavings: left out; the
    switches that open the platform's own behaviour stay."""
    stats["incident"] = {"file": incident.source, "actions": len(incident.actions), "reached": graph.reached,
                         "calls": incident_text.calls_in(incident.actions), "refused": graph.refused(every_run)}
    always_failed = graph.always_failed() if every_run else {}
    failed = dict(graph.failed)
    elsewhere = {said for i, said in graph.failed_at.items() if i + 1 not in always_failed}
    for said in set(always_failed.values()) - elsewhere:  # (said on their own: not "in some runs")
        failed.pop(said, None)
    if failed:
        stats["incident"]["failed"] = failed
    if every_run and graph.always_refused():  # (a search a violation or a bound stopped saw some runs only)
        stats["incident"]["always_refused"] = graph.always_refused()
    if always_failed:
        stats["incident"]["always_failed"] = {str(n): said for n, said in always_failed.items()}
    if graph.reached < len(incident.actions) and graph.reached in graph.reasons:  # (why it stuck there)
        stats["incident"]["refused_because"] = graph.reasons[graph.reached]
    if getattr(config, "start", None) is not None:  # (where its runs begin: App Service's slots, before the calls)
        stats["incident"]["start"] = config.start
    calls_only = getattr(type(config), "CALLS", ())
    stats["untried"] = {k: v for k, v in stats["untried"].items() if v is True and k not in calls_only}
    stats["off"] = [k for k in stats["off"] if k not in calls_only]
    stats["never_enabled"], stats["vacuous"] = [], []


def untried(offered, config) -> dict[str, Any]:
    """What the random search's configuration (``offered``) tries that the one searched
    leaves out: each size it takes further (its bound, an integer), of each list of
    options (canary plans, web_instances, max_in_flight) the values missing, each switch
    on there and off here (``True``). A soundness review's design that skipped a
    multi-step canary's steps was proved here, with only the plans [] and [100]
    explored, and found by the random search."""
    wide, searched = offered.to_json(), config.to_json()
    out: dict[str, Any] = {}
    for name, values in wide.items():
        have = searched.get(name)
        if isinstance(values, list):
            missing = [v for v in values if v not in (have or [])]
            if missing:
                out[name] = missing
        elif values is True and not have:
            out[name] = True
        elif type(values) is int and type(have) is int and have < values and name != "settle_steps":
            out[name] = values  # (settle_steps bounds a phase's length, not what is explored)
    return out


def _opens(config, switch: str, variant) -> bool:
    """Whether turning ``switch`` on opens anything on ``variant`` (``OPENS_ONLY_WITH``)."""
    feature = getattr(type(config), "OPENS_ONLY_WITH", {}).get(switch)
    return feature is None or bool(getattr(variant, feature, True))


def _stats(model, variant, prop, layered, counts, config, max_depth, memory_budget_mb, seconds,
           complete) -> dict:
    states = layered.states
    moved = counts.total()
    by_kind = {k: moved["by_kind"].get(k, 0) for k in model.vocabulary}
    left_out = untried(model.default_config(variant), config)
    stats = {
        "states": states,
        "transitions": layered.transitions,
        "depth": layered.depth,
        "seconds": round(seconds, 3),
        "states_per_second": round(states / seconds) if seconds else None,
        "complete": complete,
        "stopped": layered.stopped,
        "bounds": config.to_json() | {"max_depth": max_depth},
        "by_action": by_kind,
        "rejected_by_action": {k: moved["rejected_by_kind"].get(k, 0) for k in model.vocabulary},
        "never_enabled": [k for k, n in by_kind.items() if n == 0],
        "vacuous": model.vacuous(lambda k: by_kind.get(k, 0) > 0, prop),
        "untried": left_out,
        # (a switch off in both searches opens behaviour neither tries: a CI user read the
        # untried note as every gap, and cf push --strategy rolling and cf rollback were off)
        "off": [name for name in getattr(type(config), "OPENING", ()) if getattr(config, name) is False
                and name not in left_out and _opens(config, name, variant)],
        "peak_memory_mb": round(peak_rss_mb(), 1),
        "memory_budget_mb": memory_budget_mb,
        "visited_bytes": layered.storage_bytes(),
        "collision_bound": collision_bound(states),
    }
    if counts.settler is not None:
        stats["settle_memo"] = moved["settle_memo"]
        stats["settle_steps_run"] = moved["settle_steps"]
    workers = getattr(layered, "workers", 1)
    if workers > 1:
        stats["workers"] = workers
        # what each worker added to the memory it shares with this process
        stats["worker_added_memory_mb"] = [round(m, 1) for m in layered.worker_added_mb]
    return stats
