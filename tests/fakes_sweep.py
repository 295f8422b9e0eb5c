"""Fakes that show what a contract run sends around its search: the sweep of the initial state, the shortening by replay."""

from __future__ import annotations

from deployspec.contract.examples import ReferenceImplementation


class StrictAboutIds(ReferenceImplementation):
    """capi-2022, except that an action naming a web process or deployment that does not
    exist is a bad request (it raises, which ends a contract run as a fault). No search
    sends one; a trace shortened carelessly would (``runtime(P1)`` without its deploy)."""

    def perform(self, action):
        obs = self.observe()
        processes = {p["id"] for p in obs["processes"]}
        deployments = {d["id"] for d in obs["deployments"]}
        named = [*action.get("failed", []), *action.get("reports_unavailable", [])]
        if (action["type"] == "runtime" and action["process"] not in processes) or not deployments.issuperset(named):
            raise LookupError(f"no such process or deployment in {action}")
        return super().perform(action)


def strict_about_ids():
    return StrictAboutIds("capi", "capi-2022")


class StuckFromTheStart(ReferenceImplementation):
    """Starts with a deployment DEPLOYING on a healthy droplet that its updater never moves
    (a tick changes nothing): ``deployment_converges`` breaks with no step at all."""

    def reset(self, config):
        from deployspec.reference.capi.observe import from_observation

        super().reset(config)
        start = {"app": {"droplet": 0, "started": True}, "droplets": [{"id": 0, "healthy": True}],
                 "processes": [{"id": 0, "droplet": 0, "instances": ["RUNNING"]},
                               {"id": 1, "droplet": 0, "instances": []}],
                 "deployments": [{"id": 0, "state": "DEPLOYING", "status_value": "ACTIVE",
                                  "status_reason": "DEPLOYING", "deploying_process": 1, "droplet": 0,
                                  "previous_droplet": 0, "owic": 1}]}
        self.state = from_observation(start)

    def perform(self, action):
        return None if action["type"] == "tick" else super().perform(action)


def stuck_from_the_start():
    return StuckFromTheStart("capi", "capi-safe")


#: one entry per reset of a ``counting`` implementation
RESETS: list[int] = []


class Counting(ReferenceImplementation):
    """capi-safe, counting its resets in ``RESETS``."""

    def reset(self, config):
        RESETS.append(1)
        super().reset(config)


def counting():
    return Counting("capi", "capi-safe")
