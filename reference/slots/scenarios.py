"""The four failure scenarios of microsoft/cobalt #316, as action sequences.

"A" starts as production and "B" as staging, as in the issue. Each scenario is
written against the design cobalt had (``slots-webhook-tag``, 242e0a9), from where
its Terraform left the app (``start=webhook``: production on ``:release``, not built
yet, with DOCKER_ENABLE_CI and the webhook), and follows the issue's narrative step
by step; the committed traces in ``counterexamples/slots/`` are built from these by
``python -m deployspec.reference.slots.scenarios counterexamples/slots``. The same
actions run on the other designs from where theirs leave it (``build(scenario,
variant)``): the findings table of docs/findings.md.
"""

from __future__ import annotations

import os
import sys
import tempfile
from pathlib import Path

import attrs
from deployspec.reference.core import Action

from .actions import CrashRetry, Push, ScaleOut, SetImage, Swap, Validate

RECORDED_ON = "slots-webhook-tag"


@attrs.frozen
class Scenario:
    name: str  # the file name, without .json
    title: str
    property: str
    actions: tuple[Action, ...]
    note: str


SCENARIOS = (
    Scenario(
        name="scenario-1-rollback-by-swap",
        title="cobalt #316 scenario 1: failure to roll back application deployments via swap",
        property="rollback_restores_previous",
        actions=(
            Push(),                   # foo: digest 0 as :release
            SetImage("production"),   # A runs foo
            Push(),                   # bar: digest 1 as :release
            SetImage("staging"),      # B runs bar
            Validate(),
            Swap(),                   # B to production; A, now staging, restarts and pulls bar
            Swap(),                   # the rollback: A back in production, running bar
        ),
        note=(
            "'A (now staging) unexpectedly picks up the latest image. I'm not sure why': step 6 "
            "of a swap restarts the former production instances, which pull :release again. "
            "The deliveries queued by both pushes are left pending."
        ),
    ),
    Scenario(
        name="scenario-2-production-already-down",
        title="cobalt #316 scenario 2: production is already down",
        property="production_runs_only_released_images",
        actions=(
            Push(healthy=False),      # a build whose process dies on startup
            SetImage("production"),   # A fails to start, and is retried
            Push(),                   # a new build as :release
            SetImage("staging"),      # B picks up the new image
            CrashRetry("production", 0),  # A's retry pulls :release: the unreviewed image
        ),
        note=(
            "As coded the queued deliveries would also restart production (A carries "
            "DOCKER_ENABLE_CI and the webhook posts to production's CD URL); the trace follows "
            "the issue, where A's own retry pulls the new image."
        ),
    ),
    Scenario(
        name="scenario-3-delayed-impact",
        title="cobalt #316 scenario 3: possibly a very delayed impact",
        property="production_runs_only_released_images",
        actions=(
            Push(),                   # foo
            SetImage("production"),   # A runs foo
            Push(),                   # bar
            SetImage("staging"),      # B runs bar
            ScaleOut(),               # the plan scales out: A's new instance pulls :release
        ),
        note=(
            "The issue names a portal restart, a backend server dying and a scale-out; the "
            "scale-out also mixes versions (ACR 'Image tag best practices': a new node pulls "
            "the newer image): production serves foo and bar at once."
        ),
    ),
    Scenario(
        name="scenario-4-first-deployment",
        title="cobalt #316 scenario 4: the first deployment",
        property="production_runs_only_released_images",
        actions=(
            SetImage("staging"),      # B on :release too (pipeline or portal), nothing to pull yet
            Push(),                   # the first build
            CrashRetry("staging", 0),     # B picks it up
            CrashRetry("production", 0),  # on a retry A picks it up: unreviewed, in production
        ),
        note=(
            "Terraform left A on :release before anything was built, failing to start. As "
            "coded the webhook fires for production, not B: delivering it would restart A "
            "into the new image directly. The trace follows the issue's retries."
        ),
    ),
)


def build(scenario: Scenario, variant: str = RECORDED_ON) -> dict:
    """Run the scenario on ``variant`` with the default configuration; the trace file."""
    from deployspec.models import get_model
    from deployspec.scenario import record

    model = get_model("slots")
    try:
        trace = record(model, variant, model.default_config(model.variant(variant)),
                       model.property(scenario.property), scenario.actions,
                       title=scenario.title, note=scenario.note, settle=False)
    except ValueError:
        raise AssertionError(f"{scenario.name} does not break {scenario.property} on {variant}") from None
    if len(trace["steps"]) != len(scenario.actions):
        raise AssertionError(f"{scenario.name} breaks {scenario.property} before its last step")
    return trace


def write(directory: str | os.PathLike) -> list[Path]:
    """Write each scenario's trace as ``<name>.json`` (atomically, replacing an older one)."""
    from deployspec import traces

    directory = Path(directory)
    directory.mkdir(parents=True, exist_ok=True)
    out = []
    for scenario in SCENARIOS:
        with tempfile.TemporaryDirectory(dir=directory, prefix=".tmp-") as tmp:
            saved = traces.save(build(scenario), tmp)
            final = directory / f"{scenario.name}.json"
            os.replace(saved, final)
        out.append(final)
    return out


if __name__ == "__main__":  # pragma: no cover
    for path in write(sys.argv[1] if len(sys.argv) > 1 else "counterexamples/slots"):
        print(path)
