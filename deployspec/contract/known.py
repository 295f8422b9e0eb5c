"""The committed counterexamples, replayed on an implementation its search found nothing in.

Each is a way a real design broke (``counterexamples/<model>/``: capi-2022's seed,
what PR #3072 and PR #3084 left, capi-current's late Finalize; cobalt #316's four
scenarios and the tag pipeline's findings). A controller written anew can break
the same way, and a five-step cancel that a random search reaches once in hundreds
of examples (a new user's, docs/contract.md) replays here in a fraction of a
second. They come after the search, so a violation the search finds is its own shrunk
trace; they run under the contract run's own configuration, each as far as the
search could have sent its actions (``sweep.record_runs``), then the platform
settles; every check judges the recordings, as it judges the sweep's. Installed as
the package ``deployspec.counterexamples`` (data, beside the code that reads it).
"""

from __future__ import annotations

import functools
from importlib import resources

from deployspec import traces

#: the package the committed traces are installed as (the repository's counterexamples/)
CORPUS = "deployspec.counterexamples"


def runs(model) -> list[tuple[str, tuple]]:
    """``(name, actions)`` of each committed trace of ``model``, in name order: the
    actions before its settle phase (the implementation then settles by its own rules)."""
    return [(source, actions) for source, _, actions in _corpus(model.name)]


def design_of(source: str) -> str:
    """The design a committed trace (a name :func:`runs` gave) was found on."""
    model = source.split("/")[1]
    return next(design for name, design, _ in _corpus(model) if name == source)


@functools.cache
def _corpus(name: str) -> tuple[tuple[str, str, tuple], ...]:
    from deployspec.models import get_model

    model = get_model(name)
    folder = resources.files(CORPUS).joinpath(name)
    out = []
    for entry in sorted(folder.iterdir() if folder.is_dir() else (), key=lambda e: e.name):  # (none committed: none)
        if entry.name.endswith(".json"):
            with entry.open("rb") as stream:  # (read and checked as any trace file)
                trace = traces.load(f"counterexamples/{name}/{entry.name}", stream=stream)
            steps = trace["steps"][:trace.get("settle_from")]
            out.append((f"counterexamples/{name}/{entry.name}", trace["variant"],
                        tuple(model.action(s["action"]) for s in steps)))
    return tuple(out)
