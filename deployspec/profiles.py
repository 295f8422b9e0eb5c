"""Hypothesis settings profiles for the test suite.

``ci`` (the default) keeps the whole suite within minutes on 2 cores;
``thorough`` is for a deliberate hunt: ``DEPLOYSPEC_PROFILE=thorough pytest``
(or ``pytest --hypothesis-profile thorough``).
"""

from __future__ import annotations

import os

from hypothesis import HealthCheck, settings

# No deadline and no too_slow health check: every example ends with a settle phase
# (up to settle_steps platform steps), so examples are slow by design, not by accident.
# No database: a CI checkout is fresh, and replays live in counterexamples/ instead.
_COMMON = {"deadline": None, "database": None, "suppress_health_check": [HealthCheck.too_slow]}


def register() -> None:
    settings.register_profile("ci", max_examples=60, stateful_step_count=30, **_COMMON)
    settings.register_profile("thorough", max_examples=2000, stateful_step_count=60, **_COMMON)
    settings.load_profile(os.environ.get("DEPLOYSPEC_PROFILE", "ci"))
