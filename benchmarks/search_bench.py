"""How many examples the random search needs to find each known bug.

    python benchmarks/search_bench.py [--seeds 5] [--examples 2000] [--only SUBSTRING]

For every (design, property) a shipped design declares it violates, and for three
bugs planted one at a time in slots-pipeline-immutable (searched as a contract run
searches an implementation: probes on), each seed's search reports the example in
which it first saw the violation (``stats["found_in_example"]``; the examples that
shrink it afterwards are not counted). Printed: the median and mean per pair, and
the geometric mean of the pairs' means, the figure to compare between two builds of
the machine (``stateful_tests/machine.py``). A pair the search misses within
``--examples`` counts as that many.

The planted bugs are narrow on purpose, as a user's own pipeline's would be: each
touches one action in one slot, which the search must reach with a build pushed
after production's release.
"""

from __future__ import annotations

import math
import statistics
import time

import attrs
from deployspec.reference.core import Rejected
from deployspec.reference.slots import actions, platform
from deployspec.reference.slots.state import RELEASE, Image

from deployspec.adapter import ReferenceAdapter
from deployspec.engines.hypothesis_engine import check_property
from deployspec.models import get_model

SLOTS = get_model("slots")
IMMUTABLE = SLOTS.variant("slots-pipeline-immutable")


def _pinned_to_newest(state, slot: str):
    """``slot`` set to the digest ``:release`` points to now (the bug: the newest build)."""
    digest = state.registry.resolve(Image(tag=RELEASE))
    if digest is None:
        return state
    return state.with_site(slot, attrs.evolve(state.site(slot), image=Image(digest=digest)))


@attrs.frozen
class Planted:
    """slots-pipeline-immutable with one bug: ``bug`` names the action it changes."""

    bug: str
    name: str = "planted"

    def __getattr__(self, name: str):
        return getattr(IMMUTABLE, name)

    def step(self, state, action):
        if self.bug == "restart_newest" and isinstance(action, actions.Restart) and action.slot == "production":
            return platform.restart(_pinned_to_newest(state, "production"), "production")
        if self.bug == "crash_newest" and isinstance(action, actions.CrashRetry) and action.slot == "production":
            done = IMMUTABLE.step(state, action)
            if isinstance(done, Rejected):
                return done
            return platform.crash_retry(_pinned_to_newest(state, "production"), "production", action.instance)
        if self.bug == "swap_newest" and isinstance(action, actions.Swap):
            return IMMUTABLE.step(_pinned_to_newest(state, "staging"), action)
        return IMMUTABLE.step(state, action)


#: (bug, the property it breaks)
PLANTED = (
    ("restart_newest", "production_runs_only_released_images"),  # a portal restart pulls the newest build
    ("crash_newest", "production_runs_only_released_images"),  # a crash retry does
    ("swap_newest", "rollback_restores_previous"),  # a swap ships the newest build, so a swap back rolls forward
)


def targets():
    """(label, search(seed, examples) -> the Result) for every pair measured."""
    for model_name in ("capi", "slots"):
        model = get_model(model_name)
        for variant in model.variants.values():
            for prop in sorted(variant.declares):
                yield (f"{variant.name} / {prop}",
                       lambda seed, n, m=model, v=variant.name, p=prop:
                       check_property(m, v, m.property(p), max_examples=n, seed=seed))
    config = SLOTS.default_config(IMMUTABLE)
    for bug, prop in PLANTED:
        design = Planted(bug)
        yield (f"planted {bug} / {prop}",
               lambda seed, n, d=design, p=prop:
               check_property(SLOTS, d.name, SLOTS.property(p), config=config, max_examples=n, seed=seed,
                              adapter_factory=lambda: ReferenceAdapter(SLOTS, d), probes=True))


def main() -> None:
    import _args

    ap = _args.Parser()
    ap.add_argument("--seeds", type=_args.runs, default=5)
    ap.add_argument("--examples", type=_args.runs, default=2000)
    ap.add_argument("--only", default="", help="measure only the pairs whose label contains this")
    args = ap.parse_args()

    started = time.perf_counter()
    means = []
    print(f"{'design / property':68} {'median':>7} {'mean':>7}  (examples until first seen, seeds 0-{args.seeds - 1})")
    for label, run in targets():
        if args.only not in label:
            continue
        found = []
        for seed in range(args.seeds):
            r = run(seed, args.examples)
            found.append(r.stats["found_in_example"] if r.verdict == "violated" else args.examples)
        means.append(statistics.mean(found))
        print(f"{label:68} {statistics.median(found):>7g} {means[-1]:>7.1f}", flush=True)
    if means:
        print(f"geometric mean of the means over {len(means)} pairs: "
              f"{math.exp(statistics.mean(math.log(m) for m in means)):.2f} examples "
              f"({time.perf_counter() - started:.0f} s)")


if __name__ == "__main__":
    main()
