"""Each Python rule of ``reference/capi/rules.py`` as a Z3 term, and which variant uses which."""

from __future__ import annotations

from collections.abc import Callable

import attrs
import z3
from deployspec.reference.capi import rules
from deployspec.reference.capi.state import (
    DEPLOYED,
    SUPERSEDED,
)

from .symbolic import Symbolic
from .view import NOT_RECORDED, ONE_ACTIVE, PUSHED, RETRY, TWO_ACTIVE

# ---------------------------------------------------------------------------
# The rules, as Z3 terms: the survivor's slot, or RETRY
# ---------------------------------------------------------------------------


def _newest(s: Symbolic, eligible: Callable[[int], z3.BoolRef], otherwise: z3.ArithRef) -> z3.ArithRef:
    """The highest slot for which ``eligible`` holds, else ``otherwise``."""
    term = otherwise
    for i in range(s.N):
        term = z3.If(z3.And(s.live(i), eligible(i)), i, term)
    return term


def _is_interim(s: Symbolic, i: int) -> z3.BoolRef:
    """Process i is the deploying process of a DEPLOYED/SUPERSEDED deployment."""
    return z3.And(s.owner[i] != PUSHED, s.is_(s.owner[i], DEPLOYED, SUPERSEDED))


def _oldest_or_retry(s: Symbolic) -> z3.ArithRef:
    return z3.If(s.n >= 1, 0, RETRY)


def encode_newest_other_process(s: Symbolic) -> z3.ArithRef:
    return _newest(s, lambda i: s.owner[i] != s.c, z3.IntVal(RETRY))


def encode_interim_or_oldest(s: Symbolic) -> z3.ArithRef:
    return _newest(s, lambda i: _is_interim(s, i), _oldest_or_retry(s))


def encode_running_interim_or_oldest(s: Symbolic) -> z3.ArithRef:
    return _newest(s, lambda i: z3.And(_is_interim(s, i), s.reports, s.running[i] > 0),
                   _oldest_or_retry(s))


def encode_running_interim_or_oldest_strict(s: Symbolic) -> z3.ArithRef:
    return z3.If(s.reports, encode_running_interim_or_oldest(s), RETRY)


def cannot_serve(s: Symbolic, slot: z3.ArithRef) -> z3.BoolRef:
    """The process in ``slot`` has a CRASHED instance and no RUNNING one (false for RETRY)."""
    return z3.And(s.slot_value(s.crashed, slot) > 0, s.slot_value(s.running, slot) == 0)


def _gives_way_if_crashing(s: Symbolic, prior: z3.ArithRef) -> z3.ArithRef:
    """A prior that cannot serve gives way to the newest process with a RUNNING
    instance, if any (the canceled deployment's own included)."""
    s.reads_crashed = True
    return z3.If(cannot_serve(s, prior), _newest(s, lambda i: s.running[i] > 0, prior), prior)


def encode_running_interim_or_oldest_that_can_serve(s: Symbolic) -> z3.ArithRef:
    """The strict rule, giving way when its prior cannot serve."""
    return _gives_way_if_crashing(s, encode_running_interim_or_oldest_strict(s))


def encode_running_interim_or_recorded_that_can_serve(s: Symbolic) -> z3.ArithRef:
    """The strict rule, but when its prior does not run, the recorded process if
    there is one; giving way when that cannot serve."""
    s.reads_recorded = True
    prior = encode_running_interim_or_oldest_strict(s)
    idle = z3.And(prior != RETRY, s.slot_value(s.running, prior) == 0)
    return _gives_way_if_crashing(s, z3.If(z3.And(idle, s.recorded != NOT_RECORDED), s.recorded, prior))


@attrs.frozen
class RuleEncoding:
    """A Python rule of ``reference/capi/rules.py`` and its Z3 term."""

    rule: rules.PriorSelection
    encode: Callable[[Symbolic], z3.ArithRef]


RULES: dict[str, RuleEncoding] = {
    "newest_other_process": RuleEncoding(rules.newest_other_process, encode_newest_other_process),
    "interim_or_oldest": RuleEncoding(rules.interim_or_oldest, encode_interim_or_oldest),
    "running_interim_or_oldest": RuleEncoding(rules.running_interim_or_oldest,
                                              encode_running_interim_or_oldest),
    "running_interim_or_oldest_strict": RuleEncoding(rules.running_interim_or_oldest_strict,
                                                     encode_running_interim_or_oldest_strict),
    "running_interim_or_oldest_that_can_serve": RuleEncoding(
        rules.running_interim_or_oldest_that_can_serve, encode_running_interim_or_oldest_that_can_serve),
    "running_interim_or_recorded_that_can_serve": RuleEncoding(
        rules.running_interim_or_recorded_that_can_serve, encode_running_interim_or_recorded_that_can_serve),
}


@attrs.frozen
class VariantEncoding:
    """What the Z3 engine needs of a variant: its rule and its family."""

    rule: RuleEncoding
    family: str


#: by variant name; a name missing from the model's variants is simply not checked
VARIANTS: dict[str, VariantEncoding] = {
    "capi-2022": VariantEncoding(RULES["newest_other_process"], TWO_ACTIVE),
    "capi-pr3072": VariantEncoding(RULES["interim_or_oldest"], ONE_ACTIVE),
    "capi-pr3084": VariantEncoding(RULES["running_interim_or_oldest"], ONE_ACTIVE),
    # today's actions/cancel.rb (3bbba90698) keeps PR #3084's rule; create supersedes as #3072
    "capi-current": VariantEncoding(RULES["running_interim_or_oldest"], ONE_ACTIVE),
    "capi-safe": VariantEncoding(RULES["running_interim_or_recorded_that_can_serve"], ONE_ACTIVE),
}
