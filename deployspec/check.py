"""``deployspec check``: run engines over variants and properties, judge the verdicts.

A variant declares which properties it is known to violate; the check passes when
each verdict matches (historic designs must still show their bugs, fixed designs
must hold).
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable, Iterable

from deployspec.engines.result import Result
from deployspec.models import UsageError, get_model, model_names

ENGINES = ("hypothesis", "z3", "explore")
#: seconds per variant and property when --budget is not given
DEFAULT_BUDGET = {"hypothesis": 2.0, "z3": 10.0, "explore": 120.0}

#: verdicts that judge nothing (the engine does not bear on the property, or could not
#: confirm what it found): never compared with what a variant declares
INCONCLUSIVE = frozenset({"n/a", "unconfirmed"})
#: which verdict a matrix cell shows when several engines judged the same property
PRECEDENCE = ("violated", "error", "holds", "unconfirmed", "n/a")


def engine_function(name: str) -> Callable[..., Result]:
    if name == "hypothesis":
        from deployspec.engines.hypothesis_engine import search

        return search
    if name == "z3":
        from deployspec.engines.z3_engine import search

        return search
    if name == "explore":
        from deployspec.engines.explore import search

        return search
    raise UsageError(f"unknown engine {name!r} (known: {', '.join(ENGINES)}, all)")


def plan(model: str | None, variants: list[str] | None) -> list[tuple[object, str]]:
    """(model, variant) pairs to check, validating names."""
    models = [get_model(model)] if model else [get_model(m) for m in model_names()]
    if not variants:
        return [(m, v) for m in models for v in m.variants]
    out = []
    for name in variants:
        owner = next((m for m in models if name in m.variants), None)
        if owner is None:
            if model:
                get_model(model).variant(name)  # raises with the known names
            known = [v for m in models for v in m.variants]
            raise UsageError(f"unknown variant {name!r} (known: {', '.join(known)})")
        out.append((owner, name))
    return out


def run(
    pairs: list[tuple[object, str]],
    engines: Iterable[str],
    *,
    budget: float | None,
    seed: int,
    out_dir: str | None,
    on_result: Callable[[Result], None] = lambda r: None,
    on_start: Callable[[str], None] = lambda label: None,
    bounds: dict | None = None,
) -> list[Result]:
    results = []
    for model, variant in pairs:
        for engine in engines:
            fn = engine_function(engine)
            extra = {"config": configure(model, variant, engine, bounds)} if bounds else {}
            for prop in model.properties:
                on_start(f"{variant} · {prop.name} · {engine}")
                t = time.perf_counter()
                limit = DEFAULT_BUDGET.get(engine, 2.0) if budget is None else budget
                r = fn(model, variant, prop, budget=limit, seed=seed, out_dir=out_dir, **extra)
                r.stats.setdefault("seconds", round(time.perf_counter() - t, 3))
                results.append(r)
                on_result(r)
    return results


def configure(model, variant: str, engine: str, bounds: dict):
    """The configuration an engine runs ``variant`` with, some bounds changed
    (``--bound NAME=VALUE``); each engine starts from its own defaults."""
    import inspect

    params = inspect.signature(engine_function(engine)).parameters
    if "config" not in params and not any(p.kind is p.VAR_KEYWORD for p in params.values()):
        raise UsageError(f"engine {engine} does not take --bound")
    v = model.variant(variant)
    if engine == "explore":
        from deployspec.engines.explore import explore_config

        base = explore_config(model, v)
    else:
        base = model.default_config(v)
    current = base.to_json()
    for name, value in bounds.items():
        was = current.get(name)
        if name in current and was is not None and value is not None and type(value) is not type(was):
            raise UsageError(f"--bound {name}: expected {type(was).__name__} like {json.dumps(was)}, "
                             f"got {json.dumps(value)}")
    try:
        return model.config_from_json(current | bounds)
    except (ValueError, TypeError) as exc:
        raise UsageError(f"--bound: {exc}") from None


def expected(model, variant: str, prop: str) -> str:
    return "violated" if prop in model.variant(variant).declares else "holds"


def matches_declarations(results: list[Result]) -> bool:
    return all(r.verdict in INCONCLUSIVE or r.verdict == expected(get_model(r.model), r.variant, r.property)
               for r in results)
