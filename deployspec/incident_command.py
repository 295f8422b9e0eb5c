"""What ``check`` does differently for ``--incident`` (docs/incidents.md): the options it
demands, the file it reads, and the line per design it ends with."""

from __future__ import annotations

from deployspec import incident
from deployspec.incident import Incident
from deployspec.models import UsageError


def check_options(args) -> None:
    """``--incident``'s demands, checked before anything runs: a close look (--variant), by
    the explorer (the engine it implies, set here), in one process per search."""
    if args.incident is None:
        return
    if args.engine not in (None, "explore"):
        raise UsageError(f"--incident is searched by the explorer (every interleaving), not --engine {args.engine}; "
                         "leave --engine out")
    if not args.variant:
        named = {"slots": "slots-pipeline-tag --variant slots-pipeline-immutable"}.get(
            args.model, "capi-current --variant capi-safe")
        raise UsageError(f"--incident needs the designs to check it on: --variant V (repeatable), "
                         f"e.g. --variant {named}")
    if args.workers > 1:
        raise UsageError("--incident searches each design in one process: leave --workers out (--jobs runs "
                         "the searches side by side)")
    args.engine = "explore"


def read(path: str, pairs) -> Incident:
    """The incident in ``path``, in the vocabulary of the one model the variants are of."""
    models = list(dict.fromkeys(m.name for m, _ in pairs))
    if len(models) > 1:
        raise UsageError(f"--incident is one model's actions, and these variants are of {' and '.join(models)}: "
                         "check each model's in a run of its own")
    return incident.read(path, pairs[0][0])


def verdicts(incident: str, results, declared: bool = False) -> str:
    """A line per design: what the incident did to it (a proof said only of what was proved);
    with ``declared`` (``--declared``), which of its violations the design does not declare."""
    from deployspec.declarations import declares_violation
    from deployspec.models import get_model

    lines = []
    for variant in dict.fromkeys(r.variant for r in results):
        mine = [r for r in results if r.variant == variant]
        broken = list(dict.fromkeys(r.property for r in mine if r.verdict == "violated"))
        failed = list(dict.fromkeys(r.property for r in mine if r.verdict == "error"))
        judged = [r for r in mine if r.verdict != "error"]
        if broken:
            said = f"violated in some interleaving: {', '.join(broken)}"
            if declared:
                model = get_model(mine[0].model)
                news = [p for p in broken if not declares_violation(model, variant, p)]
                said += f"; not declared by it: {', '.join(news)}" if news else " (each declared by it: expected)"
        elif not judged:
            said = "nothing judged"
        elif all(r.stats.get("complete", True) for r in judged):
            said = "nothing violated in any interleaving"
        else:
            said = "nothing violated in the interleavings searched (incomplete: see above)"
        if failed:
            said += f"; not judged (error): {', '.join(failed)}"
        refused = sorted({n for r in judged for n in r.stats.get("incident", {}).get("always_refused", ())})
        if refused:  # (a proof of a file whose calls no design takes is no proof of the incident)
            said += f"; it refused action{'s' if len(refused) > 1 else ''} {', '.join(map(str, refused))} in every run"
        nothing = sorted({int(n) for r in judged for n in r.stats.get("incident", {}).get("always_failed", {})})
        if nothing:  # (a rollback that never happened: the proof is of a run without it)
            said += f"; action{'s' if len(nothing) > 1 else ''} {', '.join(map(str, nothing))} took effect in no run"
        lines.append(f"the incident {incident} on {variant}: {said}")
    return "\n".join(lines)
