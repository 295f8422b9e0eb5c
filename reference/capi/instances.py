"""What the deployment updater learns from Diego about a web process's instances.

``InstancesReporter#instance_count_summary`` (cloud_controller_ng 3bbba90,
``lib/cloud_controller/diego/reporters/instances_reporter.rb``) sorts a process's
instances into three counts, and the updater reads nothing else:

* routable: RUNNING and routable (the model's ``RUNNING``);
* starting: healthy but not yet routable (the model's ``STARTING``; upstream
  also RUNNING-but-not-routable, which the model folds into STARTING; one reader
  differs: capi-current's cancel step keeps an interim with any RUNNING instance,
  routable or not, ``has_running_instance?`` in ``actions/cancel.rb`` at 3bbba90,
  where the model's keeps only one that serves; readiness checks, 2023-08, make
  such instances possible only there, whose cancel already breaks the properties);
* unhealthy: everything else (the model's ``CRASHED``; upstream also DOWN,
  i.e. missing or unplaced, and UNKNOWN).

Missing (DOWN) instances are not modelled: upstream they count as unhealthy,
which the model's CRASHED already exercises (both block up-scaling and neither
serves); the only difference, that a DOWN instance may later start, would add
states without adding a behaviour of the updater.
"""

from __future__ import annotations

import attrs

from .state import CRASHED, RUNNING, STARTING, Process


@attrs.frozen
class InstanceSummary:
    routable: int
    starting: int
    unhealthy: int


#: instances -> their summary (a frozen value): a few distinct tuples of instances
#: make up every process a search meets, so each is counted once
_SUMMARIES: dict[tuple[str, ...], InstanceSummary] = {}
SUMMARIES_MAX = 10_000


def summarise(process: Process) -> InstanceSummary:
    instances = process.instances
    found = _SUMMARIES.get(instances)
    if found is None:
        if len(_SUMMARIES) >= SUMMARIES_MAX:
            _SUMMARIES.clear()
        found = _SUMMARIES[instances] = InstanceSummary(
            instances.count(RUNNING), instances.count(STARTING), instances.count(CRASHED))
    return found
