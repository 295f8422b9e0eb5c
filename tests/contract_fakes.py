"""The contract fakes by name: ``--python contract_fakes:NAME``, or as a program ``python contract_fakes.py``."""

# The fakes live in one module per kind of misbehaviour: fakes_protocol (programs that
# misbehave over the protocol), fakes_crashing, fakes_garbage and fakes_unrepeatable (--python
# faults), fakes_nonconforming, fakes_probed and fakes_sweep (they work, but differ). The tests,
# and the messages they expect, name every one as ``contract_fakes:NAME``.

from __future__ import annotations

import sys

from fakes_crashing import (
    Hangs,
    blocks_the_alarm,
    closes_its_streams,
    crashes_at_the_second_cancel,
    ends_the_process,
    exits,
    factory_exits,
    generator_exits,
    hangs,
    raising,
    reset_dies_later,
    swallows,
)
from fakes_garbage import (
    async_perform,
    bad_observation,
    bad_outcome,
    chatty,
    deep_observation,
    inconsistent,
    logs_for_ever,
    logs_from_a_thread,
    nan_observation,
    not_an_implementation,
    odd_observation,
    odd_reason,
    proxy,
    reset_answers,
    unprintable,
    wanders,
)
from fakes_nonconforming import (
    refuses_but_scales,
    refuses_idle_ticks,
    refuses_nothing,
    reworded,
    scales_while_deploying,
    starts_with_a_droplet,
    starts_with_one_instance,
    swaps_without_waiting,
)
from fakes_probed import factory_named, ignores_failed_steps
from fakes_protocol import serve_then_misbehave
from fakes_sweep import RESETS, counting, strict_about_ids, stuck_from_the_start
from fakes_unrepeatable import drifting, fickle, forgetful, moody

from deployspec.contract.server import serve

#: what the tests name, beside the accepts_refused_KIND, refuses_no_op_KIND and slots_… factories
#: that __getattr__ makes
__all__ = [
    "RESETS", "Hangs", "async_perform", "bad_observation", "bad_outcome", "blocks_the_alarm", "chatty", "closes_its_streams", "counting", "crashes_at_the_second_cancel", "deep_observation", "drifting", "ends_the_process", "exits",
    "factory_exits", "fickle", "forgetful", "generator_exits", "hangs", "ignores_failed_steps", "inconsistent", "logs_for_ever", "logs_from_a_thread", "moody", "nan_observation",
    "not_an_implementation", "odd_observation", "odd_reason", "proxy", "raising", "refuses_but_scales",
    "refuses_idle_ticks", "refuses_nothing", "reset_answers", "reset_dies_later", "reworded", "scales_while_deploying", "starts_with_a_droplet",
    "starts_with_one_instance", "strict_about_ids", "stuck_from_the_start", "swallows", "swaps_without_waiting", "unprintable", "wanders",
]


def __getattr__(name: str):
    """``accepts_refused_push`` and the like: factories made from their name (fakes_probed)."""
    factory = factory_named(name)
    if factory is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return factory


def main(argv: list[str]) -> int:
    """``python contract_fakes.py VARIANT MODE N [PIDFILE]``: the reference VARIANT behind the
    protocol until the N-th action request, then misbehaving as MODE says (fakes_protocol).
    ``python contract_fakes.py --serve NAME``: the factory NAME behind the protocol."""
    if argv[0] == "--serve":  # a factory above, behind the protocol
        factory = getattr(sys.modules[__name__], argv[1])  # also the ones __getattr__ makes
        impl = factory()
        return serve(impl, getattr(getattr(impl, "model", None), "name", "capi"))  # the model it implements
    return serve_then_misbehave(argv)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
