"""In-process (--python) fakes whose same steps give different results from one reset to the next."""

from __future__ import annotations

from deployspec.contract.examples import ReferenceImplementation


class Forgetful(ReferenceImplementation):
    """reset does not reset: the same steps give different results."""

    def reset(self, config):
        if self.state is None:
            super().reset(config)


def forgetful():
    return Forgetful("capi", "capi-safe")


class Moody(ReferenceImplementation):
    """capi-2022 on odd resets, capi-safe on even ones: the same steps, different results."""

    resets = 0

    def reset(self, config):
        Moody.resets += 1
        self.variant = self.model.variant("capi-2022" if Moody.resets % 2 else "capi-safe")
        super().reset(config)


def moody():
    return Moody("capi", "capi-2022")


class Drifting(ReferenceImplementation):
    """capi-2022 for its first ``DRIFT`` resets, capi-safe after (a cache warming up, say):
    deterministic long enough to show a violation, then not."""

    DRIFT = 40
    resets = 0

    def reset(self, config):
        Drifting.resets += 1
        self.variant = self.model.variant("capi-2022" if Drifting.resets <= self.DRIFT else "capi-safe")
        super().reset(config)


def drifting():
    return Drifting("capi", "capi-2022")


class Fickle(ReferenceImplementation):
    """capi-safe that refuses every other deploy() it is asked for, counted over its whole
    life, not since reset: the same steps are refused one time and accepted the next."""

    deploys = 0

    def perform(self, action):
        if action["type"] == "deploy":
            Fickle.deploys += 1
            if Fickle.deploys % 2 == 0:
                return "try again later"
        return super().perform(action)


def fickle():
    return Fickle("capi", "capi-safe")
