"""The exhaustive engine's results as text: proofs, progress and statistics."""

from __future__ import annotations

from deployspec.engines.result import Result


def progress_text(depth: int, states: int, seconds: float) -> str:
    """How far a running search got, for a progress line."""
    rate = f" · {states / seconds:,.0f}/s" if seconds >= 0.5 else ""
    return f"depth {depth} · {states:,} states{rate}"


def bounds_text(bounds: dict) -> str:
    return ", ".join(f"{k}={v}" for k, v in bounds.items() if v is not False and v not in (None, [], ()))


#: what stopped an exhaustive search early (``stats["stopped"]``), in words
WHY = {"time": "time budget spent", "memory": "memory budget spent",
       "address_space": "address-space limit (ulimit -v) nearly reached",
       "max_depth": "depth bound reached", "max_states": "state bound reached"}


def states_said(stats: dict) -> str:
    """What the proof's states are, where they are not the model's alone: a trace property's
    (a state with what the property remembers of the run before it) are more than the model's,
    a search for a further cause's fewer (it follows no run past a way already found)."""
    said = []
    if stats.get("with_memory"):
        said.append("with what the property remembers")
    if past := stats.get("past_causes"):
        said.append(f"none past {' or '.join(past)}" if len(past) <= 2 else f"none past the {len(past)} ways found")
    return f" ({'; '.join(said)})" if said else ""


def proof_text(stats: dict) -> str:
    if stats["complete"]:
        every = "the 1 state" if stats["states"] == 1 else f"all {stats['states']:,} states"
        return (
            f"holds for {every}{states_said(stats)} reachable within bounds "
            f"({bounds_text(stats['bounds'])}): {stats['transitions']:,} transitions, depth "
            f"{stats['depth']}, {stats['seconds']:.1f} s, {stats['states_per_second']:,} states/s"
            + vacuity_text(stats) + untried_text(stats)
        )
    why = WHY.get(stats["stopped"], stats["stopped"])
    if stats["stopped"] == "memory" and stats.get("memory_budget_mb"):  # what it had, and how to give more
        why = f"memory budget of {stats['memory_budget_mb']:,g} MiB spent (--memory MIB gives more)"
    return (
        f"no violation within {stats['states']:,} state{'' if stats['states'] == 1 else 's'}{states_said(stats)} "
        "explored within bounds "
        f"({bounds_text(stats['bounds'])}) (incomplete: {why} at depth {stats['depth']}, "
        f"{stats['seconds']:.1f} s)" + vacuity_text(stats) + untried_text(stats)
    )


def untried_text(stats: dict) -> str:
    """What the random search tries that these bounds left out (``explore.untried``):
    behaviour the proof says nothing about."""
    untried, off = stats.get("untried"), stats.get("off")
    said = ""
    if untried:
        tried = "; ".join(name if values is True else f"{name} up to {values}" if isinstance(values, int)
                          else f"{name} {', '.join(map(str, values))}" for name, values in untried.items())
        said = f"; left out by these bounds, tried by the random search: {tried} (--bound widens them)"
    if off:
        said += f"; off here: {', '.join(off)} (--bound NAME=true turns one on)"
    return said


def vacuity_text(stats: dict) -> str:
    """What a proof says nothing about: the essential actions that never moved."""
    if not stats.get("vacuous"):
        return ""
    return (f"; vacuous: no {' or '.join(stats['vacuous'])} ever took effect within these bounds "
            f"(every one was refused or changed nothing)")


def summary(result: Result) -> str:
    """Statistics as text for the ``check`` output."""
    s = result.stats
    if result.verdict in ("holds", "error"):
        verdict = result.message if result.verdict == "holds" else f"error: {result.message}"
    else:
        cause = f" (cause {result.cause})" if result.cause else ""
        steps = "step" if result.trace_length == 1 else "steps"
        if s.get("shortest") is False:  # found before a budget cut the search: a shorter one may exist
            verdict = (f"{result.verdict}{cause}, trace {result.trace_length} {steps} (not known to be the "
                       f"shortest: {WHY.get(s.get('stopped'), s.get('stopped'))} at depth {s.get('depth')})")
        else:
            verdict = f"{result.verdict}{cause}, shortest trace {result.trace_length} {steps}"
    lines = [f"{result.variant} · {result.property} · explore: {verdict}"]
    if "states" not in s:  # it never ran (its process was lost)
        return lines[0]
    memory = f"process peak memory {s['peak_memory_mb']} MiB" + (
        f" (+ {' + '.join(map(str, s['worker_added_memory_mb']))} MiB added by {s['workers']} workers)"
        if s.get("worker_added_memory_mb") else "")
    if result.verdict == "holds" and s.get("complete"):  # the proof's line gave the counts
        lines.append(f"  {memory}")
    else:
        lines.append(f"  {s['states']:,} states, {s['transitions']:,} transitions, max depth {s['depth']}, "
                     f"{s['seconds']:.1f} s ({s['states_per_second']:,} states/s), {memory}")
    moves = ", ".join(f"{k} {n}" for k, n in s["by_action"].items() if n)
    lines.append(f"  transitions by action: {moves or 'none'}")
    if s["never_enabled"] and result.verdict != "holds":  # (the search stopped at it, or failed)
        before = "the violation" if result.verdict == "violated" else "the search ended"
        lines.append(f"  not taken before {before}: {', '.join(s['never_enabled'])}")
    elif s["never_enabled"]:
        # (said as what the design does with them: a fix that makes a restart a no-op reads
        # "never took effect", which users took for a gap in the search)
        what = ("within these bounds none of them changes anything on this design" if s.get("complete")
                else "the search stopped before it saw every state")
        lines.append(f"  never took effect: {', '.join(s['never_enabled'])} (wherever the search went, each "
                     f"was refused or would change nothing: {what})")
    return "\n".join(lines)
