"""Misbehaving implementations for the harness-robustness tests.

Run as a program: ``python contract_fakes.py VARIANT MODE N [PIDFILE]`` serves
the reference VARIANT over the protocol until the N-th action request, then
misbehaves as MODE says. Every process it starts writes its pid to PIDFILE,
so a test can check that none outlives the run.

Imported: factories for ``--python`` whose objects misbehave the same ways, and
objects that work but do not conform to capi-safe (``python contract_fakes.py
--serve FACTORY`` serves one of them over the protocol).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time

import attrs
from deployspec.reference.capi import rules

from deployspec.contract.examples import ReferenceImplementation
from deployspec.contract.server import Server, serve

MODES = ("crash", "hang", "garbage", "wrong-id", "bad-schema", "bad-reply", "error", "spawn-and-crash", "deep",
         "big-number", "error-flood", "big-id", "closes-stdin")


def misbehave(mode: str, request: dict, out, pidfile: str | None, server=None) -> None:
    rid = request["id"]
    obs = {"app": None, "droplets": [], "processes": [], "deployments": []}
    if mode == "crash":
        print("fake: simulated crash (TypeError: cannot read 'instances' of undefined)", file=sys.stderr)
        sys.exit(1)
    if mode == "spawn-and-crash":
        # a child in our process group that would outlive us
        child = subprocess.Popen(["sleep", "600"])
        _note(pidfile, child.pid)
        sys.exit(1)
    if mode == "hang":
        child = subprocess.Popen(["sleep", "600"])
        _note(pidfile, child.pid)
        time.sleep(600)
    if mode == "closes-stdin":  # answers, then stops reading and goes on running
        out.write(json.dumps(server.reply_to(json.dumps(request).encode())).encode() + b"\n")
        out.flush()
        os.close(0)
        time.sleep(600)
    line = {
        "garbage": "DEBUG: deploying app now\n",
        "wrong-id": json.dumps({"id": rid + 100, "type": "performed", "observation": obs}) + "\n",
        "bad-schema": json.dumps({"id": rid, "type": "performed", "observation": {
            "app": {"droplet": 0, "started": True}, "droplets": [{"id": 0, "healthy": True}],
            "processes": [{"id": 0, "droplet": 0, "instances": ["UP"]}], "deployments": []}}) + "\n",
        "bad-reply": json.dumps({"id": rid, "type": "performed"}) + "\n",
        "error": json.dumps({"id": rid, "type": "error", "message": "database is locked"}) + "\n",
        # a whole traceback, and a terminal escape that would clear the screen
        "error-flood": json.dumps({"id": rid, "type": "error", "message": "\x1b[2JTraceback (most recent call "
                                   "last):\n" + "  File x\n" * 2000}) + "\n",
        # an id no action can name (at most 10,000): a schema violation, not a harness crash
        "big-id": json.dumps({"id": rid, "type": "performed", "observation": {
            "app": {"droplet": 0, "started": True}, "droplets": [{"id": 0, "healthy": True}],
            "processes": [{"id": 20000, "droplet": 0, "instances": ["RUNNING"]}], "deployments": []}}) + "\n",
        # JSON, but more than Python reads: nested past the recursion limit, a 5,000-digit number
        "deep": "[" * 100_000 + "]" * 100_000 + "\n",
        "big-number": f'{{"id": {rid}, "type": "performed", "observation": {{"app": {"9" * 5000}}}}}\n',
    }[mode]
    out.write(line.encode())
    out.flush()
    time.sleep(600)  # whatever happens next, the harness must end us


def _note(pidfile: str | None, pid: int) -> None:
    if pidfile:
        with open(pidfile, "a") as f:
            f.write(f"{pid}\n")


def main(argv: list[str]) -> int:
    if argv[0] == "--serve":  # a factory below, behind the protocol
        factory = getattr(sys.modules[__name__], argv[1])  # also the ones __getattr__ makes
        return serve(factory(), "slots" if argv[1].startswith("slots_") else "capi")
    variant, mode, n = argv[0], argv[1], int(argv[2])
    pidfile = argv[3] if len(argv) > 3 else None
    _note(pidfile, os.getpid())
    server = Server(ReferenceImplementation("capi", variant), "capi")
    out = sys.stdout.buffer
    actions = 0
    for line in sys.stdin.buffer:
        request = json.loads(line)
        if request.get("type") == "action":
            actions += 1
            if actions == n:
                misbehave(mode, request, out, pidfile, server)
        out.write(json.dumps(server.reply_to(line)).encode() + b"\n")
        out.flush()
    return 0


# --- in-process fakes for --python --------------------------------------------


class Raising(ReferenceImplementation):
    def perform(self, action):
        if action["type"] == "deploy":
            raise KeyError("deploying_web_process")
        return super().perform(action)


class BadOutcome(ReferenceImplementation):
    def perform(self, action):
        super().perform(action)
        return 422 if action["type"] == "scale" else None


class Unprintable(ReferenceImplementation):
    """Returns what not even repr can print (a 5,000-digit int)."""

    def perform(self, action):
        super().perform(action)
        return 10**5000 if action["type"] == "deploy" else None


class BadObservation(ReferenceImplementation):
    def observe(self):
        obs = super().observe()
        for p in obs["processes"]:
            p["instances"] = ["UP" if i == "RUNNING" else i for i in p["instances"]]
        return obs


class DeepObservation(ReferenceImplementation):
    def observe(self):
        obs = super().observe()
        if obs["deployments"]:
            for _ in range(100_000):
                obs = {"app": obs}
        return obs


class Inconsistent(ReferenceImplementation):
    """Valid by the schema, but deployments are numbered from 1, not by position."""

    def observe(self):
        obs = super().observe()
        for d in obs["deployments"]:
            d["id"] += 1
        return obs


class Forgetful(ReferenceImplementation):
    """reset does not reset: the same steps give different results."""

    def reset(self, config):
        if self.state is None:
            super().reset(config)


class Moody(ReferenceImplementation):
    """capi-2022 on odd resets, capi-safe on even ones: the same steps, different results."""

    resets = 0

    def reset(self, config):
        Moody.resets += 1
        self.variant = self.model.variant("capi-2022" if Moody.resets % 2 else "capi-safe")
        super().reset(config)


class Exits(ReferenceImplementation):
    """Exits at a deploy, as a CLI library might: its exit is not the harness's."""

    def perform(self, action):
        if action["type"] == "deploy":
            sys.exit(0)
        return super().perform(action)


class GeneratorExits(ReferenceImplementation):
    def observe(self):
        if self.state is not None and self.model.observe(self.state)["deployments"]:
            raise GeneratorExit
        return super().observe()


class Swallows(ReferenceImplementation):
    """Polls for ever at a deploy (or, with DEPLOYSPEC_FAKE_SWALLOW_AFTER=N, at its
    N+1-th action), swallowing every exception (a bare ``except:``): the
    timeout's interruption and Ctrl-C alike."""

    performed = 0

    def perform(self, action):
        after = os.environ.get("DEPLOYSPEC_FAKE_SWALLOW_AFTER")
        Swallows.performed += 1
        if (Swallows.performed > int(after)) if after else action["type"] == "deploy":
            if os.environ.get("DEPLOYSPEC_FAKE_HANGING"):
                open(os.environ["DEPLOYSPEC_FAKE_HANGING"], "w").close()
            while True:
                try:
                    time.sleep(0.05)
                except:  # noqa: E722, S110 - the point of this fake
                    pass
        return super().perform(action)


class _Reason(str):
    def __len__(self):
        raise RuntimeError("broken __len__")


class OddReason(ReferenceImplementation):
    """Refuses a cancel with a str subclass whose ``__len__`` raises (and with a
    terminal escape in it); otherwise capi-safe."""

    def perform(self, action):
        if action["type"] == "cancel":
            return _Reason("\x1b[31mno\x1b[0m cancel today")
        return super().perform(action)


class _Observation(dict):
    def items(self):
        raise RuntimeError("broken items()")


class OddObservation(ReferenceImplementation):
    def observe(self):
        return _Observation(super().observe())


class Proxy(ReferenceImplementation):
    """A proxy whose ``__getattr__`` raises KeyError for what it lacks (``close``)."""

    def __getattr__(self, name):
        return self.__dict__["extras"][name]


def proxy():
    p = Proxy("capi", "capi-safe")
    p.extras = {}
    return p


class Chatty(ReferenceImplementation):
    """Prints what it does on stdout, as debugging code does."""

    def perform(self, action):
        print("DEBUG perform", action)
        return super().perform(action)


def swallows():
    return Swallows("capi", "capi-safe")


def odd_reason():
    return OddReason("capi", "capi-safe")


def odd_observation():
    return OddObservation("capi", "capi-safe")


def chatty():
    return Chatty("capi", "capi-safe")


class Hangs(ReferenceImplementation):
    """Hangs at a deploy, and in every perform after (a stuck implementation stays
    stuck); counts the calls it gets after the first hang (there must be none).

    With DEPLOYSPEC_FAKE_HANGING set, creates that file when it starts hanging."""

    calls_after_hang = 0
    hung = False

    def reset(self, config):
        Hangs.calls_after_hang += Hangs.hung
        super().reset(config)

    def perform(self, action):
        Hangs.calls_after_hang += Hangs.hung
        if action["type"] == "deploy" or Hangs.hung:
            Hangs.hung = True
            if os.environ.get("DEPLOYSPEC_FAKE_HANGING"):
                open(os.environ["DEPLOYSPEC_FAKE_HANGING"], "w").close()
            time.sleep(600)
        return super().perform(action)

    def observe(self):
        Hangs.calls_after_hang += Hangs.hung
        return super().observe()

    def close(self):
        Hangs.calls_after_hang += Hangs.hung


# --- implementations that accept, refuse or observe otherwise than capi-safe ------
# For the conformance check (--reference capi-safe, tests/test_contract_conformance.py).
# Each differs from capi-safe in one way only; `python contract_fakes.py --serve NAME`
# puts the factory NAME behind the protocol.


class RefusesIdleTicks(ReferenceImplementation):
    """Refuses a tick that has nothing to do, which capi-safe accepts (as a no-op).
    Its observations are capi-safe's throughout: only the refusal differs."""

    def perform(self, action):
        if action["type"] == "tick" and self.variant.step(self.state, self.model.action(action)) == self.state:
            return "nothing to do"
        return super().perform(action)


class RefusesNothing(ReferenceImplementation):
    """Answers "accepted" where capi-safe refuses (a scale while a deployment is
    CANCELING), and then does nothing: its observations are capi-safe's throughout."""

    def perform(self, action):
        super().perform(action)  # the refusal's reason is dropped: None, accepted


class StartsWithOneInstance(ReferenceImplementation):
    """capi-safe, except that a new deployment's process starts with one instance
    whatever is already there or in flight (as every design did before PR #3907): it
    accepts and refuses what capi-safe does, but its observations differ after some deploys."""

    def __init__(self, model, variant):
        super().__init__(model, variant)
        self.variant = attrs.evolve(self.variant, starting_instances=rules.one_starting_instance)


class RefusesButScales(ReferenceImplementation):
    """Refuses a scale while a deployment is CANCELING, as capi-safe does, but scales
    the newest web process all the same: a refusal that changes the state. (Other
    refused scales, while a deployment progresses or before the push, change nothing.)"""

    def perform(self, action):
        canceling = any(d["state"] == "CANCELING" for d in self.observe()["deployments"])
        reason = super().perform(action)
        if reason is not None and action["type"] == "scale" and canceling:
            unblocked = attrs.evolve(self.variant, scale_blocked_in=frozenset())
            self.state = unblocked.step(self.state, self.model.action(action))
        return reason


class ScalesWhileDeploying(ReferenceImplementation):
    """Accepts a scale while a deployment is DEPLOYING, PREPAUSED or PAUSED, and scales
    the newest web process, the deploying one; every reference variant refuses that
    scale (process_scale.rb). While CANCELING it refuses, as capi-safe does."""

    def __init__(self, model, variant):
        super().__init__(model, variant)
        self.variant = attrs.evolve(self.variant, scale_blocked_in=frozenset({"CANCELING"}))


class Reworded(ReferenceImplementation):
    """Conforms to capi-safe in its own words: other refusal reasons, and every
    object of the observation with its keys in another order (neither is part of
    the contract)."""

    def perform(self, action):
        reason = super().perform(action)
        return None if reason is None else f"422 Unprocessable Entity: {reason.upper()}"

    def observe(self):
        return _keys_reversed(super().observe())


class StartsWithADroplet(ReferenceImplementation):
    """Reports a droplet before any push (capi-safe has none until the push stages
    one); from the push on its observations are capi-safe's."""

    def observe(self):
        obs = super().observe()
        if obs["app"] is None:
            obs["droplets"] = [{"id": 0, "healthy": True}]
        return obs


# --- implementations that differ from a reference only where the search's candidates
# leave an action out (the reference refuses it there, or it changes nothing): a contract
# run probes those actions (model.probe_actions; tests/test_contract_probes.py). Factories
# by name: accepts_refused_KIND and refuses_no_op_KIND on capi-safe, slots_… on
# slots-pipeline-immutable (KIND as in the vocabulary: continue_, deliver_webhook).


class AcceptsRefused(ReferenceImplementation):
    """The reference, except that it answers "accepted" to a refused action of one kind
    (and does nothing): its observations are the reference's throughout."""

    def __init__(self, model, variant, kind):
        super().__init__(model, variant)
        self.kind = kind

    def perform(self, action):
        reason = super().perform(action)
        return None if action["type"] == self.kind else reason


class RefusesNoOp(ReferenceImplementation):
    """The reference, except that it refuses an action of one kind where the reference
    accepts it and nothing changes (a second cancel while CANCELING, a restart that
    would pull what every instance runs): its observations are the reference's throughout."""

    def __init__(self, model, variant, kind):
        super().__init__(model, variant)
        self.kind = kind

    def perform(self, action):
        if action["type"] == self.kind and self.variant.step(self.state, self.model.action(action)) == self.state:
            return "nothing to do"
        return super().perform(action)


class IgnoresFailedSteps(ReferenceImplementation):
    """capi-safe, except that its updater's steps never fail: ``tick(failed=[d])`` runs
    d's step all the same (capi-safe keeps one deployment active, so the search's
    candidates never fail a step: only a probe asks)."""

    def perform(self, action):
        if action["type"] == "tick":
            action = {**action, "failed": []}
        return super().perform(action)


def ignores_failed_steps():
    return IgnoresFailedSteps("capi", "capi-safe")


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


_BY_NAME = {"accepts_refused_": AcceptsRefused, "refuses_no_op_": RefusesNoOp}


def __getattr__(name: str):
    """``accepts_refused_push`` → a factory of AcceptsRefused("capi", "capi-safe", "push"), and so on."""
    model, variant, rest = "capi", "capi-safe", name
    if name.startswith("slots_"):
        model, variant, rest = "slots", "slots-pipeline-immutable", name[len("slots_"):]
    for prefix, cls in _BY_NAME.items():
        if rest.startswith(prefix) and rest[len(prefix):]:
            return lambda: cls(model, variant, rest[len(prefix):])
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def _keys_reversed(value):
    if isinstance(value, dict):
        return {k: _keys_reversed(value[k]) for k in reversed(list(value))}
    if isinstance(value, list):
        return [_keys_reversed(v) for v in value]
    return value


def refuses_idle_ticks():
    return RefusesIdleTicks("capi", "capi-safe")


def refuses_nothing():
    return RefusesNothing("capi", "capi-safe")


def starts_with_one_instance():
    return StartsWithOneInstance("capi", "capi-safe")


def refuses_but_scales():
    return RefusesButScales("capi", "capi-safe")


def reworded():
    return Reworded("capi", "capi-safe")


def scales_while_deploying():
    return ScalesWhileDeploying("capi", "capi-safe")


def starts_with_a_droplet():
    return StartsWithADroplet("capi", "capi-safe")


def moody():
    return Moody("capi", "capi-2022")


def exits():
    return Exits("capi", "capi-safe")


def generator_exits():
    return GeneratorExits("capi", "capi-safe")


def hangs():
    return Hangs("capi", "capi-safe")


def factory_exits():
    sys.exit(4)


def raising():
    return Raising("capi", "capi-safe")


def bad_outcome():
    return BadOutcome("capi", "capi-safe")


def unprintable():
    return Unprintable("capi", "capi-safe")


def bad_observation():
    return BadObservation("capi", "capi-safe")


def deep_observation():
    return DeepObservation("capi", "capi-safe")


def inconsistent():
    return Inconsistent("capi", "capi-safe")


def forgetful():
    return Forgetful("capi", "capi-safe")


def not_an_implementation():
    return object()


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
