"""Hypothesis settings profiles for the test suite.

``ci`` (the default) keeps the whole suite within minutes on 2 cores;
``thorough`` is for a deliberate hunt: ``DEPLOYSPEC_PROFILE=thorough pytest``.

Only deployspec's own suite (``tests/conftest.py``) loads a profile for every test.
The state-machine tests shipped in ``deployspec.stateful_tests`` take theirs
explicitly (:func:`chosen`): a user who collects them, or the contract tests beside
them, beside tests of their own must not have their own tests' settings changed.
"""

from __future__ import annotations

import os

from deployspec.text import quoted

#: the profiles ``DEPLOYSPEC_PROFILE`` may name
PROFILES = ("ci", "thorough")


def unknown_profile() -> str | None:
    """Why ``DEPLOYSPEC_PROFILE`` names no profile, or None (unset or empty: ``ci``). The
    pytest plugin says it in one line before collection (a conftest that raised while
    pytest imports it would be a traceback)."""
    name = _name()
    return None if name in PROFILES else f"DEPLOYSPEC_PROFILE={quoted(name)}: unknown profile (known: {', '.join(PROFILES)})"


def register() -> None:
    """Register the profiles; load none."""
    from hypothesis import HealthCheck, settings  # (here: the plugin's check needs none of it)

    # No deadline and no too_slow health check: every example ends with a settle phase
    # (up to settle_steps platform steps), so examples are slow by design, not by accident.
    # No database: a CI checkout is fresh, and replays live in counterexamples/ instead.
    common = {"deadline": None, "database": None, "suppress_health_check": [HealthCheck.too_slow]}
    settings.register_profile("ci", max_examples=60, stateful_step_count=30, **common)
    settings.register_profile("thorough", max_examples=2000, stateful_step_count=60, **common)


def _name() -> str:
    return os.environ.get("DEPLOYSPEC_PROFILE") or "ci"


def load() -> None:
    """Register the profiles and load ``DEPLOYSPEC_PROFILE``'s for every test of the run:
    deployspec's own suite only (an unknown one is left to the plugin to refuse:
    :func:`unknown_profile`)."""
    register()
    if unknown_profile() is None:
        from hypothesis import settings

        settings.load_profile(_name())


def chosen():
    """The settings of ``DEPLOYSPEC_PROFILE``'s profile (``ci`` when unknown: the plugin
    refuses an unknown one before collection), for one test to take explicitly."""
    from hypothesis import settings

    register()
    return settings.get_profile(_name() if unknown_profile() is None else "ci")
