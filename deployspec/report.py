"""Tables for people: the variant x property matrix and the list of variants."""

from __future__ import annotations

import json
import shlex
import textwrap
from typing import Any

from deployspec.engines.result import Result
from deployspec.handing_in import handing_in
from deployspec.models import bound_words, get_model, model_names
from deployspec.terminal import column_groups
from deployspec.text import escaped, first_few, printable_line
from deployspec.variant_plugins import source_of


def matrix(results: list[Result], declared: bool, bounds: dict[str, Any] | None = None,
           width: int | None = None, options: tuple[str, ...] = ()) -> str:
    """Rows are variants, columns properties (one variant's: a row per property); ``!`` marks a cell that does not agree with
    what its variant declares (as ``check``'s exit status and its JUnit cases judge it:
    :func:`declarations.cell_agrees`), ``+`` a property it violates beyond the default
    search, ``*`` an unfinished proof, ``?`` a vacuous one (each said under the table).
    ``bounds``: the run's ``--bound`` values, which the close look a ``!`` suggests keeps;
    ``width``: the screen's (:func:`terminal.columns`), which a wider table is split to fit;
    ``options``: what the command printed to finish an unfinished proof adds (``--declared``
    of an incident's run, which judges its violations by that)."""
    from deployspec.declarations import cells

    grouped = cells(results)
    blocks = []
    for model_name in dict.fromkeys(model_name for model_name, _, _ in grouped):
        model = get_model(model_name)
        mine = {(v, p): rs for (m, v, p), rs in grouped.items() if m == model_name}
        props = [p.name for p in model.properties if any(prop == p.name for _, prop in mine)]
        variants = list(dict.fromkeys(v for v, _ in mine))
        said = _Said(bounds, options)
        if len(variants) == 1 < len(props):  # a close look: one row would be as wide as every name
            (v,) = variants
            name_width = max(len(p) for p in props + ["property"])
            verdicts = [_cell(model, v, p, mine.get((v, p), []), declared, said) for p in props]
            rows = [f"{p:{name_width}}  {cell}" for p, cell in zip(props, verdicts)]
            head = f"{'property':{name_width}}  verdict"
            lines = [f"model {model_name} · variant {v}", head, "-" * max(map(len, [head, *rows])), *rows]
            blocks.append("\n".join(lines + _key_lines(verdicts, declared, width) + said.lines()))
            continue
        cells_of = {v: [_cell(model, v, p, mine.get((v, p), []), declared, said) for p in props]
                    for v in variants}
        lines = [f"model {model_name}"]
        label = max(len(v) for v in variants + ["variant"])
        cols = [max(len(p), 9) for p in props]
        # wider than the screen: blocks of columns that fit, each under the variants' names
        for n, group in enumerate(column_groups(cols, None if width is None else width - label)):
            head = f"{'variant':{label}}  " + "  ".join(f"{props[i]:{cols[i]}}" for i in group)
            lines += [""] * (n > 0) + [head, "-" * len(head)]
            lines += [(f"{v:{label}}  " + "  ".join(f"{cells_of[v][i]:{cols[i]}}" for i in group)).rstrip()
                      for v in variants]
        key = _key_lines([c for row in cells_of.values() for c in row], declared, width)
        blocks.append("\n".join(lines + key + said.lines()))
    return "\n\n".join(blocks)


def _key_lines(cells: list[str], declared: bool, width: int | None) -> list[str]:
    """The key (:func:`_key`) as lines, wrapped to ``width`` where one is known (at least
    forty columns a line: a screen narrower than that is not worth a word a line)."""
    key = _key(cells, declared)
    if not key:
        return []
    return textwrap.wrap(key, max(width - 1, 40), subsequent_indent="  ", break_on_hyphens=False) if width else [key]


#: the marks a cell may carry after its verdict, as written there, and what each means
MARKS = (
    ("*", "*", "a proof a bound or budget stopped before it finished (below)"),
    (" ?", "?", "a vacuous hold (below)"),
    (" ~", "~", "the selection rule holds (--engine z3), not the property itself (below)"),
    (" +", "+", "a violation the default search is not sure to reach (its committed trace below): VIOLATED or holds, either passes"),
    (" !", "!", "NOT what the variant declares (below)"),
)


def _key(cells: list[str], declared: bool) -> str:
    """The line under a matrix saying what its marks mean, those that stand in it; in
    ``check``'s matrix, also that a verdict as the variant declares it passes (a reader
    new to it takes the historic designs' VIOLATED cells for failures)."""
    said = ["VIOLATED is expected where the variant declares it (deployspec variants)"] if declared else []
    said += [f"{mark} {words}" for written, mark, words in MARKS if any(written in c for c in cells)]
    return f"key: {'; '.join(said)}" if said else ""


class _Said:
    """What a model's table says under it: the commands that finish unfinished proofs,
    a note per marked cell, and each engine error with the cells it decided."""

    def __init__(self, bounds: dict[str, Any] | None = None, options: tuple[str, ...] = ()) -> None:
        #: the run's ``--bound`` values: a close look suggested here looks at what it looked at
        self.bounds = bounds or {}
        #: what a command to finish an unfinished proof adds (``matrix``'s ``options``)
        self.options = options
        self.unfinished: list[str] = []
        self.notes: list[str] = []
        self.errors: dict[str, list[str]] = {}  # message -> the cells it came from
        #: the cells the Z3 engine's proof of the selection rule alone holds (one note for all)
        self.rule_only: list[str] = []

    def lines(self) -> list[str]:
        out = []
        if self.unfinished:
            out.append("* incomplete: a bound or budget stopped an exhaustive search first; to search further "
                       "(its bounds, the one that stopped it lifted, twice the time or memory it had):")
            out += [f"  {command}" for command in self.unfinished]
        out += self.notes
        if self.rule_only:
            out.append(f"~ {first_few(self.rule_only, 3)}: the Z3 engine proves the web process a cancel keeps; the "
                       "cancel step and the rest of the design are not encoded, so the property itself is not "
                       "proven there (--engine explore judges it)")
        for message, where in self.errors.items():  # why: the cell alone does not say
            out.append(f"error in {first_few(where, 2)}: {printable_line(message, 300, both_ends=True)}")
        return out


def cell_of(results: list[Result]) -> str:
    """The verdict one property's searches on one variant give, with the marks a close
    look's table puts beside it (``*`` unfinished, `` ?`` vacuous; not the matrix's ``+``
    and ``!``, which the declarations give), for the line said as they end."""
    first = results[0]
    return _cell(get_model(first.model), first.variant, first.property, results, False, _Said())


def _cell(model, v: str, p: str, rs: list[Result], declared: bool, said: _Said) -> str:
    """One cell's text (the verdict its searches give, with its markers); what it needs
    said under the table goes to ``said``."""
    from deployspec.declarations import shown_verdict, verdict_word

    for r in rs:  # every engine's error, whichever verdict the cell shows
        if r.verdict == "error":
            said.errors.setdefault(r.message or "no message", []).append(f"{v} · {p} ({r.engine})")
    verdict = shown_verdict({r.verdict for r in rs})
    cell = verdict_word(verdict)
    for marker in (_unfinished, _vacuous, _rule_only, _beyond, _disagrees, _settle_given):
        cell += marker(model, v, p, rs, verdict, declared, said)
    return cell


# The markers of a cell, in the order they follow its verdict: each gives its mark
# ("" for none) and puts its note in ``said``.

def _unfinished(model, v: str, p: str, rs: list[Result], verdict: str, declared: bool, said: _Said) -> str:
    """``*``: it holds, but a bound or budget stopped an exhaustive search first."""
    stopped = [r for r in rs if r.stats.get("complete") is False]
    if verdict != "holds" or not stopped:
        return ""
    said.unfinished.append(" ".join([finishing(model, v, p, stopped[0].stats), *said.options]))
    return "*"


def _vacuous(model, v: str, p: str, rs: list[Result], verdict: str, declared: bool, said: _Said) -> str:
    """`` ?``: it holds, but what the property judges never took effect."""
    vacuous = vacuous_kinds(rs, verdict)
    if not vacuous:
        return ""
    said.notes.append(f"? {v} · {p}: {vacuous_said(vacuous, model, v)}")
    return " ?"


def _rule_only(model, v: str, p: str, rs: list[Result], verdict: str, declared: bool, said: _Said) -> str:
    """`` ~``: it holds by the Z3 engine alone, whose proof is of the web process a cancel
    keeps, not of the property: a soundness review's capi-safe with capi-current's cancel
    step held there, and the explorer took the app down in 4 steps."""
    holding = [r for r in rs if r.verdict == "holds"]
    if verdict != "holds" or not holding or any(r.stats.get("of") != "selection rule" for r in holding):
        return ""
    said.rule_only.append(f"{v} · {p}")
    return " ~"


def _settle_given(model, v: str, p: str, rs: list[Result], verdict: str, declared: bool, said: _Said) -> str:
    """No mark; a note where every violation is a settle phase a ``--bound settle_steps`` given
    below these bounds' own cut before the platform came to rest (a user's ``settle_steps=1``
    called capi-safe VIOLATED, and it read as a wrong result)."""
    given = said.bounds.get("settle_steps")
    violated = [r for r in rs if r.verdict == "violated"]
    if given is None or verdict != "violated" or not violated or \
            not all(f"the settle phase was cut at settle_steps={given}:" in (r.message or "") for r in violated):
        return ""
    from deployspec.check import configure

    engine = violated[0].engine
    own = configure(model, v, engine, {k: b for k, b in said.bounds.items() if k != "settle_steps"}).settle_steps
    if given < own:
        said.notes.append(f"{v} · {p}: violated where settle_steps={given}, as given, cut the settle phase "
                          f"before the platform came to rest; these bounds' own is {own}: a longer settle "
                          "phase may see it finish (docs/properties.md)")
    return ""


def vacuous_kinds(rs: list[Result], verdict: str) -> list[str]:
    """What never took effect in the searches of a cell that holds (none: not vacuous)."""
    if verdict != "holds":
        return []
    return sorted({k for r in rs if r.verdict == verdict for k in r.stats.get("vacuous", ())})


def vacuous_said(kinds: list[str], model, variant: str) -> str:
    """Why a hold is vacuous: nothing of ``kinds`` took effect within the bounds, or, where
    the design has them act under no bounds (capi before canaries: ``continue_``), that."""
    from deployspec.models import nothing_to_do

    widening = model.never_acts(kinds, model.variant(variant))
    if widening is not None:
        return f"vacuous, {nothing_to_do(variant, ' or '.join(kinds), widening)}"
    return f"vacuous, no {' or '.join(kinds)} took effect within the bounds"


def _judged(verdict: str) -> bool:
    from deployspec.declarations import INCONCLUSIVE

    return verdict not in INCONCLUSIVE and verdict != "-"


def _beyond(model, v: str, p: str, rs: list[Result], verdict: str, declared: bool, said: _Said) -> str:
    """`` +``: a violation the declarations place beyond the default search."""
    from deployspec.declarations import beyond

    where = beyond(model, v, p) if declared and _judged(verdict) and verdict != "error" else None
    if where is None:
        return ""
    said.notes.append(f"+ {v} violates {p} beyond the default search: {escaped(str(where))}")  # a design's words
    return " +"


def _disagrees(model, v: str, p: str, rs: list[Result], verdict: str, declared: bool, said: _Said) -> str:
    """`` !``: what the searches show is not what the variant declares."""
    from deployspec.declarations import cell_agrees

    if not declared or not _judged(verdict) or cell_agrees(model.name, v, p, rs):
        return ""
    said.notes.append(_mismatch(model, v, p, verdict, rs, said.bounds))
    return " !"


def _mismatch(model, v: str, p: str, verdict: str, rs: list[Result], bounds: dict[str, Any]) -> str:
    """The note under a cell marked ``!``: what it shows, by which engines, how that
    differs from the declaration (or that an engine ended in error), and the close look,
    with the run's ``bounds`` (without them it looked at another configuration, and could
    show the opposite verdict)."""
    from deployspec.declarations import beyond, disagreement, verdict_word

    gave = [r for r in rs if r.verdict == verdict]
    failed = sorted({r.engine for r in rs if r.verdict == "error"})
    why = ("ended in error (below), judging nothing" if verdict == "error"
           else f"but {', '.join(failed)} ended in error (below)" if failed
           else disagreement(model, v, p, [r.stats for r in gave]))
    look = f"{handing_in(v)}deployspec check --model {model.name} --variant {v} --property {p}"
    proof = next((r.stats for r in gave if r.engine == "explore" and r.stats.get("bounds")), None)
    words, given = [], dict(bounds)
    if beyond(model, v, p) is not None and proof is not None:  # within the bounds of the declaration
        words, given = ["--engine", "explore"], given | _given(model, v, proof)
    words += bound_words(given)
    if words:
        look += " " + " ".join(shlex.quote(w) for w in words)
    return (f"! {v} · {p}: {verdict_word(verdict)} ({', '.join(sorted({r.engine for r in gave}))}), {why}; "
            f"a close look: {look}")


def _given(model, variant: str, stats: dict) -> dict:
    """The bounds an exhaustive search ran with that are not the variant's defaults."""
    from deployspec.check import configure

    default = configure(model, variant, "explore", {})
    defaults = default.to_json() | {"max_depth": getattr(default, "max_depth", None)}
    return {k: value for k, value in stats.get("bounds", {}).items() if defaults.get(k, value) != value}


def finishing(model, variant: str, prop: str, stats: dict) -> str:
    """The command that searches further where a bound or budget stopped an exhaustive search: the
    bounds it ran with (those not the variant's defaults), its ``--workers``, and what
    stopped it lifted: no ``max_depth``, a ``--budget`` of twice the time it ran (at
    least the default), a ``--memory`` of twice the budget it spent; an incident's search
    (``check --incident``) again with its incident, or it would search every run instead."""
    import math

    from deployspec.check import DEFAULT_BUDGET

    given = _given(model, variant, stats)
    if stats.get("stopped") == "max_depth":
        given.pop("max_depth", None)
    workers = stats.get("workers", 1)
    spent = stats.get("memory_budget_mb")
    if stats.get("stopped") == "memory" and not spent:  # (a result without its budget: none to double)
        return (f"{variant} · {prop}: the memory budget stopped it: a larger --memory MIB, or narrower "
                "--bound options")
    if stats.get("stopped") == "address_space":
        return (f"{variant} · {prop}: the address-space limit (ulimit -v) stopped it: a higher limit, or "
                "narrower --bound options")
    budget = max(DEFAULT_BUDGET["explore"], math.ceil(2 * stats.get("seconds", 0)))
    words = ["--engine", "explore", "--property", prop]
    if "incident" in stats:  # (a search of an incident's runs: the same runs, searched further)
        from deployspec.incident import STDIN

        file = stats["incident"]["file"]
        words = ["--incident", "-" if file == STDIN else file, "--property", prop]
        for name in stats["incident"].get("sized", ()):  # (sized again from its calls: a sized
            given.pop(name, None)  # settle_steps given back was taken as the user's, and cut short)
    words += bound_words(given)
    words += ["--workers", str(workers)] if workers > 1 else []
    if stats.get("stopped") == "memory":  # twice what it spent (if the machine has it)
        words += ["--memory", str(2 * math.ceil(spent))]
    words += ["--budget", f"{budget:g}"]
    return (f"{handing_in(variant)}deployspec check --model {model.name} --variant {shlex.quote(variant)} "
            + " ".join(shlex.quote(w) for w in words))


def declared_by(results: list[Result]) -> str:
    """Under a close look's table (``check --variant``), which exits 1 on any violation:
    what each variant declares, and the command that judges it by that (``--declared``)."""
    lines = []
    for model_name, name in dict.fromkeys((r.model, r.variant) for r in results):
        variant = get_model(model_name).variant(name)
        says = declared(variant)
        beyond = sorted(variant.violates_beyond)
        if beyond:
            says += f", and beyond the default search {', '.join(beyond)}"
        lines.append(f"{name} declares it violates {says}; to judge it by that: {handing_in(name)}deployspec "
                     f"check --model {model_name} --variant {shlex.quote(name)} --declared"
                     f"{_properties_of(results, model_name)}")
    return "\n".join(lines)


def declared(variant) -> str:
    """The properties a variant declares violated, in words; with none, whether every
    property must hold or only within the default search (one it violates beyond it)."""
    if variant.declares:
        return ", ".join(sorted(variant.declares))
    return "nothing within the default search" if variant.violates_beyond else "nothing (every property must hold)"


def _properties_of(results: list[Result], model_name: str) -> str:
    asked = list(dict.fromkeys(r.property for r in results if r.model == model_name))
    model = get_model(model_name)
    if len(asked) == len(model.properties):
        return ""
    return "".join(f" --property {p}" for p in asked)


def variants_table(width: int | None = None) -> str:
    """``variants``: every model's variants, what each declares and where it comes from.
    A design handed in wrote its summary and reasons: control characters and newlines
    are shown escaped, so they neither drive the terminal nor break the columns.
    ``width``: the screen's; a longer line goes on under its own column, not under the names."""
    lines = []
    models = [get_model(name) for name in model_names()]
    w = max([26, *(len(v) + 1 for m in models for v in m.variants)])  # a long name of the user's own too

    def say(name: str, text: str) -> None:
        lead = f"  {name:{w}} "
        if width is None or len(lead) + len(text) <= width:
            lines.append((lead + text).rstrip())
            return
        if width - len(lead) >= 30:  # under its own column
            lines.extend(textwrap.wrap(text, width - 1, initial_indent=lead, subsequent_indent=" " * (len(lead) + 2),
                                       break_on_hyphens=False, break_long_words=False))
            return
        # under thirty columns beside the names (a strip no one reads): the name on its line,
        # the text under it, four columns in
        if name:
            lines.append(f"  {name}")
        lines.extend(textwrap.wrap(text, max(width - 1, 24), initial_indent="    ", subsequent_indent="      ",
                                   break_on_hyphens=False, break_long_words=False))

    for model in models:
        head = f"model {model.name}: {model.description}"
        lines.extend(textwrap.wrap(head, max(width - 1, 24), subsequent_indent="  ", break_on_hyphens=False,
                                   break_long_words=False) if width and len(head) > width else [head])
        for v in model.variants.values():
            say(v.name, escaped(v.summary))
            say("", f"violates: {declared(v)}")
            for prop, where in sorted(v.violates_beyond.items()):
                say("", f"and beyond the default search, {prop}: {escaped(str(where))}")
            say("", f"upstream: {escaped(v.upstream)}")
            if source_of(v.name) is not None:  # a design of the user's own (docs/variants.md)
                say("", f"from: {escaped(source_of(v.name))}")
            if getattr(v, "config", None):  # (a design's own start, inherited by one evolved from it)
                say("", "configured: " + ", ".join(f"{k}={escaped(json.dumps(c))}" for k, c in v.config.items()))
        lines.append("")
    return "\n".join(lines).rstrip()


def variants_json() -> dict:
    """``variants --json``: every model's variants with what each declares."""
    out = {}
    for name in model_names():
        model = get_model(name)
        out[name] = {
            "description": model.description,
            "properties": [p.name for p in model.properties],
            "variants": [
                {"name": v.name, "summary": v.summary, "upstream": v.upstream,
                 "declares": sorted(v.declares),
                 "violates_beyond": {prop: {"why": where.why, "trace": where.trace} for prop, where in
                                     sorted(v.violates_beyond.items())},
                 "config": _jsonable(v.config), "explore": _jsonable(v.explore),
                 "source": source_of(v.name)}  # null: shipped with deployspec
                for v in model.variants.values()
            ],
        }
    return out


def _jsonable(bounds: dict) -> dict:
    """A variant's bounds (tuples of tuples) as JSON."""
    import json

    return json.loads(json.dumps(bounds))
