"""``deployspec check``: run engines over variants and properties, judge the verdicts.

A variant declares which properties it is known to violate; the check passes when
each verdict matches (historic designs must still show their bugs, fixed designs
must hold).
"""

from __future__ import annotations

import time
from typing import Callable, Iterable

from deployspec.engines.result import Result
from deployspec.models import UsageError, get_model, model_names

ENGINES = ("hypothesis",)


def engine_function(name: str) -> Callable[..., Result]:
    if name == "hypothesis":
        from deployspec.engines.hypothesis_engine import search

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


def configs(pairs: list[tuple[object, str]], overrides: dict | None) -> dict | None:
    """Each (model, variant)'s configuration with ``--config`` overrides applied,
    validated before anything runs; None when there are no overrides."""
    if overrides is None:
        return None
    out = {}
    for model, variant in pairs:
        base = model.default_config(model.variant(variant)).to_json()
        try:
            out[(model.name, variant)] = model.config_from_json({**base, **overrides})
        except (TypeError, ValueError) as exc:
            raise UsageError(f"--config: {exc}") from None
    return out


def run(
    pairs: list[tuple[object, str]],
    engines: Iterable[str],
    *,
    budget: float,
    seed: int,
    out_dir: str | None,
    on_result: Callable[[Result], None] = lambda r: None,
    on_start: Callable[[str], None] = lambda label: None,
    configs: dict | None = None,
) -> list[Result]:
    results = []
    for model, variant in pairs:
        extra = {"config": configs[(model.name, variant)]} if configs else {}
        for engine in engines:
            fn = engine_function(engine)
            for prop in model.properties:
                on_start(f"{variant} · {prop.name} · {engine}")
                t = time.perf_counter()
                r = fn(model, variant, prop, budget=budget, seed=seed, out_dir=out_dir, **extra)
                r.stats.setdefault("seconds", round(time.perf_counter() - t, 3))
                results.append(r)
                on_result(r)
    return results


def expected(model, variant: str, prop: str) -> str:
    return "violated" if prop in model.variant(variant).declares else "holds"


def matches_declarations(results: list[Result]) -> bool:
    return all(r.verdict == expected(get_model(r.model), r.variant, r.property) for r in results)
