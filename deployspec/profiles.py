"""Hypothesis settings profiles for the test suite.

``ci`` (the default) keeps the whole suite within minutes on 2 cores;
``thorough`` is for a deliberate hunt: ``DEPLOYSPEC_PROFILE=thorough pytest``
(or ``pytest --hypothesis-profile thorough``).
"""

from __future__ import annotations

import os

from hypothesis import HealthCheck, settings

_COMMON = {"deadline": None, "database": None, "suppress_health_check": [HealthCheck.too_slow]}


def register() -> None:
    settings.register_profile("ci", max_examples=60, stateful_step_count=30, **_COMMON)
    settings.register_profile("thorough", max_examples=2000, stateful_step_count=60, **_COMMON)
    settings.load_profile(os.environ.get("DEPLOYSPEC_PROFILE", "ci"))
