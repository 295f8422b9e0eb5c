"""An implementation for tests/test_contract_known.py, importable by ``--python`` (no package)."""

from deployspec.contract.examples import ReferenceImplementation


class FailsAfter(ReferenceImplementation):
    """capi-safe that raises on every step after its ``LIMIT``-th reset."""

    LIMIT = 10**9
    resets = 0

    def reset(self, config):
        type(self).resets += 1
        super().reset(config)

    def perform(self, action):
        if type(self).resets > self.LIMIT:
            raise RuntimeError("out of order")
        return super().perform(action)


def fails_after():
    return FailsAfter("capi", "capi-safe")


class PickyDeploy(ReferenceImplementation):
    """capi-safe that refuses a deploy while any instance is STARTING (the search's first
    example never has one accepted; some committed traces do)."""

    def perform(self, action):
        starting = any("STARTING" in p.get("instances", []) for p in self.observe().get("processes", []))
        if action.get("type") == "deploy" and starting:
            return "busy"
        return super().perform(action)


def picky_deploy():
    return PickyDeploy("capi", "capi-safe")
