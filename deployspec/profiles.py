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


#: what each profile sets beyond what they share (:func:`made`)
_OWN = {"ci": {"max_examples": 60, "stateful_step_count": 30},
        "thorough": {"max_examples": 2000, "stateful_step_count": 60}}


def made(name: str, **overrides):
    """Profile ``name``'s settings, on Hypothesis's defaults (never on the profile a run
    loaded, which may be a user's)."""
    from hypothesis import HealthCheck, settings  # (here: the plugin's check needs none of it)

    # No deadline and no too_slow health check: every example ends with a settle phase
    # (up to settle_steps platform steps), so examples are slow by design, not by accident.
    # No database: a CI checkout is fresh, and replays live in counterexamples/ instead.
    common = {"deadline": None, "database": None, "suppress_health_check": [HealthCheck.too_slow]}
    return settings(settings.get_profile("default"), **{**common, **_OWN[name], **overrides})


def _name() -> str:
    return os.environ.get("DEPLOYSPEC_PROFILE") or "ci"


def load() -> None:
    """For every test of deployspec's own suite: register the profiles as
    ``deployspec-ci`` and ``deployspec-thorough`` and load ``DEPLOYSPEC_PROFILE``'s (an
    unknown one is left to the plugin to refuse: :func:`unknown_profile`). Not as ``ci``:
    that is Hypothesis's own profile, loaded when ``CI`` is set, which a user may have
    changed; registering the active profile again reloads it."""
    from hypothesis import settings

    for name in PROFILES:
        settings.register_profile(f"deployspec-{name}", made(name))
    if unknown_profile() is None:
        settings.load_profile(f"deployspec-{_name()}")


def chosen(**overrides):
    """``DEPLOYSPEC_PROFILE``'s settings (``ci``'s when unknown: the plugin refuses an
    unknown one before collection) for one test to take explicitly; nothing registered."""
    return made(_name() if unknown_profile() is None else "ci", **overrides)
