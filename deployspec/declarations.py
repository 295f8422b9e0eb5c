"""Verdicts against what each variant declares: whether a matrix cell agrees (the
matrix's ``!``, ``check``'s exit status and its JUnit cases all follow this), which
verdict a cell shows, and how a cell that does not agree differs."""

from __future__ import annotations

import json

from deployspec.engines.result import Result
from deployspec.models import get_model

#: verdicts that judge nothing (the engine does not bear on the property, or could not
#: confirm what it found): never compared with what a variant declares
INCONCLUSIVE = frozenset({"n/a", "unconfirmed"})
#: which verdict a matrix cell shows when several engines judged the same property
PRECEDENCE = ("violated", "error", "holds", "unconfirmed", "n/a")


def expected(model, variant: str, prop: str) -> str:
    """What the default search must show: "violated" or "holds"."""
    return "violated" if prop in model.variant(variant).declares else "holds"


def declares_violation(model, variant: str, prop: str) -> bool:
    """Whether ``variant`` declares it violates ``prop`` (within the default search or beyond
    it): a violation of it found on the design is expected (``--declared``)."""
    v = model.variant(variant)
    return prop in v.declares or prop in v.violates_beyond


def beyond(model, variant: str, prop: str):
    """Where ``variant`` violates ``prop`` beyond the default search (a ``Beyond``), or None."""
    return model.variant(variant).violates_beyond.get(prop)


def matches(model, variant: str, prop: str, verdict: str, stats: dict | None = None) -> bool:
    """Whether a verdict (and the search's ``stats``) agrees with what the variant declares.

    Beyond the default search either verdict agrees, save a complete proof
    within bounds that include the counterexample's: that search must have met it.
    A design handed in (docs/variants.md) must be proven where it claims to hold: an
    exhaustive search a budget stopped is no agreement (:func:`unproven`)."""
    if verdict in INCONCLUSIVE:
        return True
    if verdict == "holds" and stats and stats.get("of") == "selection rule":
        return True  # the rule holds; the property may still break another way (capi-current)
    where = beyond(model, variant, prop)
    if where is not None:
        if verdict == "holds" and stats and stats.get("complete") and "bounds" in stats:
            return not covers(stats["bounds"], where.config)
        return verdict in ("violated", "holds")
    if verdict == "holds" and unproven(variant, stats):
        return False
    return verdict == expected(model, variant, prop)


#: what stops an exhaustive search short of its bounds (not a bound: max_depth, max_states)
BUDGETS = ("time", "memory", "address_space")


def unproven(variant: str, stats: dict | None) -> bool:
    """Whether ``stats`` are of a design handed in whose exhaustive search a budget stopped
    (the matrix wants its claimed fixes proven within their bounds; a bound the design
    or ``--bound`` sets, such as a depth, is part of what is proven)."""
    from deployspec.variant_plugins import source_of

    return bool(stats) and stats.get("complete") is False and stats.get("stopped") in BUDGETS \
        and source_of(variant) is not None


def disagreement(model, variant: str, prop: str, stats: list[dict]) -> str:
    """How a cell that does not agree differs from its declaration (the matrix's note under
    ``!``, the JUnit case's message): ``stats`` of the searches giving its verdict."""
    if any(unproven(variant, st) for st in stats):
        return "but not proven: the exhaustive search did not finish"
    if beyond(model, variant, prop) is not None:  # (only a complete proof within its bounds differs: matches)
        return "declared violated beyond the default search, within bounds this proof covers"
    return "declared to hold" if expected(model, variant, prop) == "holds" else "declared violated"


def covers(bounds: dict, config: dict) -> bool:
    """Whether a search within ``bounds`` reaches every state one within ``config`` does:
    each size at least as large, each list of options a superset, no depth bound
    where the other has none."""
    for name, have in bounds.items():  # a choice left at its default is not in a saved config
        if isinstance(have, str) and name not in config:
            return False
    for name, needed in config.items():
        have = bounds.get(name)
        if isinstance(needed, list):
            if not isinstance(have, list) or not {json.dumps(x) for x in needed} <= {json.dumps(x) for x in have}:
                return False
        elif needed is None:
            if have is not None:
                return False
        elif isinstance(needed, (str, bool)):  # a choice (a start, a setting), not a size
            if have != needed:
                return False
        elif have is not None and not (isinstance(have, int) and have >= needed):
            return False
    return True


def verdict_word(verdict: str) -> str:
    """A verdict as tables, notes and reports write it: a violation in capitals."""
    return "VIOLATED" if verdict == "violated" else verdict


def shown_verdict(verdicts: set[str]) -> str:
    """The verdict a matrix cell shows of its searches' (``PRECEDENCE``); "-": none."""
    return next((x for x in PRECEDENCE if x in verdicts), min(verdicts, default="-"))


def matches_declarations(results: list[Result]) -> bool:
    """Whether every cell agrees with what its variant declares, as the matrix marks it
    (no ``!``): see :func:`cell_agrees`."""
    return all(cell_agrees(model_name, variant, prop, rs)
               for (model_name, variant, prop), rs in cells(results).items())


def cells(results: list[Result]) -> dict[tuple[str, str, str], list[Result]]:
    """The results grouped by matrix cell (model, variant, property), in the order first seen."""
    out: dict[tuple[str, str, str], list[Result]] = {}
    for r in results:
        out.setdefault((r.model, r.variant, r.property), []).append(r)
    return out


def cell_agrees(model_name: str, variant: str, prop: str, rs: list[Result]) -> bool:
    """Whether one cell's searches agree with what its variant declares: the verdict
    the cell shows, with the statistics of each search that gave it; a search that
    ended in error never agrees. So a random search that missed a declared violation
    the explorer shows is no disagreement."""
    verdict = shown_verdict({r.verdict for r in rs})
    if any(r.verdict == "error" for r in rs):
        return False
    model = get_model(model_name)
    return all(matches(model, variant, prop, verdict, r.stats) for r in rs if r.verdict == verdict)
