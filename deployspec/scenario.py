"""Counterexamples written by hand: a known story replayed into a trace file.

Some findings have a name before any engine finds them (docs-dev-guide #563).
When a search keeps shrinking to a shorter story of the same property, the named
one is recorded from its actions, judged like any other run, and saved in the
same format (``engine: "scenario"``), so it replays and is compared like the rest.
"""

from __future__ import annotations

from deployspec import traces
from deployspec.adapter import ReferenceAdapter
from deployspec.session import Session


def record(
    model, variant: str, config, prop, actions, *, title: str, note: str = "", settle: bool = True
) -> dict:
    """Run ``actions`` on ``variant`` (then let the platform settle, unless
    ``settle`` is false) and return the trace; raises ValueError if the property
    holds (a scenario must show what it claims)."""
    session = Session(model, ReferenceAdapter(model, model.variant(variant)), (prop,), config)
    if session.play(actions, settle) is None:
        raise ValueError(f"{title}: {prop.name} holds on {variant}")
    trace = traces.build(
        model=model.name,
        variant=variant,
        config=config.to_json(),
        property=prop.name,
        engine="scenario",
        seed=None,
        session=session,
    )
    trace["title"] = title
    if note:
        trace["note"] = note
    return trace
