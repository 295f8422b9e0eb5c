"""An implementation for contract tests: a reference design behind the implementation
protocol, whose ``perform`` a test changes to break one promise."""

from __future__ import annotations


class WrappedReference:
    """Delegates to ``ReferenceImplementation(model, variant)``; a subclass overrides
    ``perform`` (``self.inner.state`` is the design's state)."""

    model, variant, name = "capi", "capi-safe", "a wrapped reference"

    def __init__(self):
        from deployspec.contract.examples import ReferenceImplementation

        self.inner = ReferenceImplementation(self.model, self.variant)

    def reset(self, config):
        self.inner.reset(config)

    def perform(self, action):
        return self.inner.perform(action)

    def observe(self):
        return self.inner.observe()
