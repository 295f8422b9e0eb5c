"""Throughput of a contract run over the protocol against the reference server.

    python benchmarks/contract_throughput.py [--seconds 3] [--variant capi-safe]

Runs ``deployspec contract``'s search for every capi property against
``deployspec serve`` (a subprocess speaking JSON lines), then the same search
in process (``--python``) for comparison. Reports steps per second two ways:
*actions* (every action sent to the implementation, settling included: one
protocol round trip each) and *rule steps* (Hypothesis rule steps, as ``check``
counts them). Target: >= 1,000 steps/s over the protocol. Every check searches
with the same seed, and what the implementation answered once is recalled
(``contract/recall.py``): the checks after the first ask it only the steps the
first did not reach, so rule steps per second is the figure to compare.

On a shared machine the wall-clock figure mostly measures the scheduler (each
step wakes the server and then the harness); *per CPU second* (harness and
server CPU time together) is what the same run gives on an idle machine, where
the two processes take turns on the CPU.
"""

from __future__ import annotations

import os
import resource
import shlex
import sys
import time

from deployspec.contract import harness
from deployspec.models import get_model


def measure(target: harness.Target, seconds: float, seed: int) -> dict:
    model = get_model("capi")
    config = harness.config_for(model, None)
    checks = harness.plan_checks(model, None, None, config)
    totals = {"rule_steps": 0, "actions": 0, "examples": 0}
    started, cpu = time.perf_counter(), _cpu()
    counted = {"n": 0}
    perform = harness.GuardedAdapter.perform

    def counting(self, action):  # every action sent to the implementation, by any adapter of the run
        counted["n"] += 1
        return perform(self, action)

    harness.GuardedAdapter.perform = counting
    try:
        with harness.Connection(target, model) as conn:
            for prop in checks:
                r = harness.check_one(conn, prop, config=config, budget=seconds, seed=seed)
                totals["rule_steps"] += r.stats["steps"]
                totals["examples"] += r.stats["examples"]
            totals["recalled"] = conn.answers.recalled
    finally:
        harness.GuardedAdapter.perform = perform
    totals["actions"] = counted["n"]
    totals["seconds"] = time.perf_counter() - started
    totals["cpu"] = _cpu() - cpu  # the server is reaped by now, so its time is counted
    return totals


def _cpu() -> float:
    """CPU seconds of this process and its reaped children (the server)."""
    me, kids = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    return me.ru_utime + me.ru_stime + kids.ru_utime + kids.ru_stime


def main() -> None:
    import _args

    from deployspec import argtypes

    p = _args.Parser(description=__doc__.split("\n\n")[0])
    p.add_argument("--seconds", type=argtypes.seconds, default=3.0, help="search budget per property")
    p.add_argument("--variant", type=_args.capi_variant, default="capi-safe")
    p.add_argument("--seed", type=argtypes.nonneg_int, default=0)
    args = p.parse_args()
    server = f"{shlex.quote(sys.executable)} -m deployspec serve --model capi --variant {args.variant}"
    module_factory = f"deployspec.contract.examples:{args.variant.replace('-', '_')}"
    print(f"load average before: {' '.join(f'{x:.2f}' for x in os.getloadavg())}, cpus: {os.cpu_count()}")
    for label, target in (("protocol (--exec deployspec serve)", harness.Target("exec", server)),
                          ("in process (--python)", harness.Target("python", module_factory))):
        t = measure(target, args.seconds, args.seed)
        print(f"{label}: {t['actions']} actions asked ({t['rule_steps']} rule steps, {t['examples']} examples; "
              f"{t['recalled']} resets and steps recalled, not asked again)")
        print(f"  wall clock  {t['seconds']:6.1f} s  {t['actions'] / t['seconds']:6.0f} actions/s  "
              f"{t['rule_steps'] / t['seconds']:6.0f} rule steps/s")
        print(f"  CPU         {t['cpu']:6.1f} s  {t['actions'] / t['cpu']:6.0f} actions/s  "
              f"{t['rule_steps'] / t['cpu']:6.0f} rule steps/s")
    print(f"load average after: {' '.join(f'{x:.2f}' for x in os.getloadavg())}")


if __name__ == "__main__":
    main()
