"""Canary step plans: how many canary and original instances each step keeps.

``DeploymentModel#canary_step_plan`` (cloud_controller_ng 78d93d458d, PR #4219;
the ``web_instances`` rule from 9d4dee352b, PR #4247; unchanged since at 3bbba90,
``app/models/runtime/deployment_model.rb``). With
``N = web_instances`` when it is given and smaller than the original count, else
the original count (owic), a step of weight ``w`` percent asks for
``c = round(N * w / 100)`` canary instances (at least 1) and keeps
``o = N - c + 1`` original ones (0 at a 100 % step): one original more than a
plain split, so a canary step needs ``N + 1`` instances besides max_in_flight.
Without steps the plan is one canary instance beside all ``owic`` originals.
"""

from __future__ import annotations

from collections.abc import Callable

from .state import Deployment

#: (canary instances, original instances) for each step, in order.
Plan = tuple[tuple[int, int], ...]
#: (owic, web_instances or None, instance weights) -> plan
PlanRule = Callable[[int, "int | None", tuple[int, ...]], Plan]


def ruby_round(x: float) -> int:
    """``Float#round``: half away from zero (``10 * 0.25`` gives 3, not Python's 2)."""
    whole = int(x)
    return whole + (1 if x - whole >= 0.5 else 0) if x >= 0 else -ruby_round(-x)


def desired(owic: int, web_instances: int | None) -> int:
    """``DeploymentModel#desired_web_instances``: the count a deployment takes the app to,
    ``web_instances`` if given, else owic."""
    return owic if web_instances is None else web_instances


def plan_size(owic: int, web_instances: int | None) -> int:
    """N: ``web_instances`` if given and below the original count, else owic."""
    if web_instances is not None and web_instances < owic:
        return web_instances
    return owic


def canary_count(n: int, weight: int) -> int:
    """A step's canary instances: ``round(N * w / 100)``, at least 1."""
    return ruby_round(n * (weight / 100.0)) or 1


def step_plan(owic: int, web_instances: int | None, weights: tuple[int, ...]) -> Plan:
    """Upstream's plan, keeping one extra original instance (``N - c + 1``)."""
    return _plan(owic, web_instances, weights, extra_original=1)


def step_plan_without_extra(owic: int, web_instances: int | None, weights: tuple[int, ...]) -> Plan:
    """capi-safe: the plain split the weights describe, ``c + o <= N`` with
    ``c <= N``, so a step never needs more than N instances besides max_in_flight,
    and an app scaled to 0 gets no canary instance that would outlive the deployment.

    N is the count the deployment takes the app to (``web_instances`` if given, else
    owic), not upstream's smaller of the two: a deployment that supersedes one asking for
    more than the original count (owic 0, ``web_instances`` 1) would otherwise split 0
    and leave nothing serving at its canary step (docs/explore-findings 3). The original
    instances stay at most owic, all the older processes are sure to have."""
    n = desired(owic, web_instances)
    if not weights:
        canary = min(1, n)
        return ((canary, min(n - canary, owic)),)
    return tuple((canary, min(original, owic)) for canary, original in
                 _plan(n, None, weights, extra_original=0, at_most_n=True))


def _plan(
    owic: int,
    web_instances: int | None,
    weights: tuple[int, ...],
    extra_original: int,
    at_most_n: bool = False,
) -> Plan:
    if not weights:
        return ((1, owic),)
    n = plan_size(owic, web_instances)
    out = []
    for weight in weights:
        canary = min(canary_count(n, weight), n) if at_most_n else canary_count(n, weight)
        original = 0 if weight == 100 else n - canary + extra_original
        out.append((canary, original))
    return tuple(out)


def current_step(rule: PlanRule, d: Deployment) -> tuple[int, int]:
    """``canary_step``: the plan entry of ``canary_current_step`` (1-based, default 1)."""
    return rule(d.owic, d.web_instances, d.canary_steps)[max(d.canary_step, 1) - 1]
