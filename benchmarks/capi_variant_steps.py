"""Steps per second of a Cloud Foundry variant, with and without Hypothesis.

    python benchmarks/capi_variant_steps.py [VARIANT] [SECONDS]

"model" runs random 40-step walks through the session (variant step, observe,
one property, candidate actions): the cost the variant itself adds. "hypothesis"
is the engine's own figure (Result.stats["steps_per_second"]) for one property.
"""

from __future__ import annotations

import random
import time

from deployspec.adapter import ReferenceAdapter
from deployspec.engines.hypothesis_engine import search
from deployspec.models import get_model
from deployspec.session import Session


def model_steps_per_second(variant: str, seconds: float) -> int:
    model = get_model("capi")
    v = model.variant(variant)
    prop = model.property("single_active_deployment")
    config = model.default_config(v)
    rng = random.Random(0)
    steps, started = 0, time.perf_counter()
    while time.perf_counter() - started < seconds:
        session = Session(model, ReferenceAdapter(model, v), (prop,), config)
        for _ in range(40):
            offered = model.candidate_actions(session.obs, config)
            kind = rng.choice(sorted({a.kind for a in offered}))
            session.perform(rng.choice([a for a in offered if a.kind == kind]))
            steps += 1
    return round(steps / (time.perf_counter() - started))


def main() -> None:
    import _args

    from deployspec import argtypes

    ap = _args.Parser(description=__doc__.split("\n\n")[0])
    ap.add_argument("variant", nargs="?", type=_args.capi_variant, default="capi-current")
    ap.add_argument("seconds", nargs="?", type=argtypes.seconds, default=5.0)
    args = ap.parse_args()
    variant, seconds = args.variant, args.seconds
    model = get_model("capi")
    print(f"{variant} model: {model_steps_per_second(variant, seconds)} steps/s")
    r = search(model, variant, model.property("single_active_deployment"),
               budget=seconds, seed=0, out_dir=None)
    print(f"{variant} hypothesis: {r.stats['steps_per_second']} steps/s "
          f"({r.stats['steps']} steps, {r.stats['examples']} examples)")


if __name__ == "__main__":
    main()
