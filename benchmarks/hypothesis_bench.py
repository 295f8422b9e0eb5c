"""Speed of the Hypothesis engine on the Cloud Foundry model.

    python benchmarks/hypothesis_bench.py [--seeds 20]

Reports (1) for capi-2022, the median time to the first counterexample of
``app_stays_available`` (the seed's bug) over N seeds, shrinking included, and
(2) Hypothesis steps per second on capi-safe, where every property holds so the
whole budget is spent generating. Figures are medians, so one slow run from a
busy machine does not move them.
"""

from __future__ import annotations

import statistics
import time

from deployspec.engines.hypothesis_engine import check_property, search
from deployspec.models import get_model


def main() -> None:
    import _args

    ap = _args.Parser()
    ap.add_argument("--seeds", type=_args.runs, default=20)
    args = ap.parse_args()
    capi = get_model("capi")

    times, lengths = [], []
    for seed in range(args.seeds):
        t = time.perf_counter()
        r = search(capi, "capi-2022", capi.property("app_stays_available"), budget=30, seed=seed, out_dir=None)
        times.append(time.perf_counter() - t)
        lengths.append(r.trace_length)
        assert r.verdict == "violated", f"seed {seed}: not found"
    print(f"capi-2022 seed bug (app_stays_available): median {statistics.median(times):.2f} s "
          f"to a shrunk counterexample over {args.seeds} seeds "
          f"(min {min(times):.2f}, max {max(times):.2f}; median length {statistics.median(lengths)})")

    rates = []
    for seed in range(5):
        r = check_property(capi, "capi-safe", capi.property("deployment_converges"), max_examples=200, seed=seed)
        assert r.verdict == "holds"
        rates.append(r.stats["steps_per_second"])
    print(f"capi-safe: median {statistics.median(rates):.0f} Hypothesis steps/s over 5 runs of 200 examples "
          f"(min {min(rates)}, max {max(rates)})")


if __name__ == "__main__":
    main()
