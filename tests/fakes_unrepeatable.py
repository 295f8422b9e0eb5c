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
