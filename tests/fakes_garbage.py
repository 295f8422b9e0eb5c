"""In-process (--python) fakes whose answers the harness cannot use: bad outcomes and observations, odd objects, stray output."""

from __future__ import annotations

import threading
import time

from deployspec.contract.examples import ReferenceImplementation


class BadOutcome(ReferenceImplementation):
    def perform(self, action):
        super().perform(action)
        return 422 if action["type"] == "scale" else None


def bad_outcome():
    return BadOutcome("capi", "capi-safe")


class Unprintable(ReferenceImplementation):
    """Returns what not even repr can print (a 5,000-digit int)."""

    def perform(self, action):
        super().perform(action)
        return 10**5000 if action["type"] == "deploy" else None


def unprintable():
    return Unprintable("capi", "capi-safe")


class BadObservation(ReferenceImplementation):
    def observe(self):
        obs = super().observe()
        for p in obs["processes"]:
            p["instances"] = ["UP" if i == "RUNNING" else i for i in p["instances"]]
        return obs


def bad_observation():
    return BadObservation("capi", "capi-safe")


class DeepObservation(ReferenceImplementation):
    def observe(self):
        obs = super().observe()
        if obs["deployments"]:
            for _ in range(100_000):
                obs = {"app": obs}
        return obs


def deep_observation():
    return DeepObservation("capi", "capi-safe")


class NanObservation(ReferenceImplementation):
    """A float no JSON holds (Python's json writes and reads it as NaN)."""

    def observe(self):
        obs = super().observe()
        for d in obs["deployments"]:
            d["id"] = float("nan")
        return obs


def nan_observation():
    return NanObservation("capi", "capi-safe")


class Inconsistent(ReferenceImplementation):
    """Valid by the schema, but its web processes run a droplet never staged (one past the
    last: the properties that ask whether it is healthy read past the list of droplets)."""

    def observe(self):
        obs = super().observe()
        for p in obs["processes"]:
            p["droplet"] = len(obs["droplets"])
        return obs


def inconsistent():
    return Inconsistent("capi", "capi-safe")


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


def odd_reason():
    return OddReason("capi", "capi-safe")


class _Observation(dict):
    def items(self):
        raise RuntimeError("broken items()")


class OddObservation(ReferenceImplementation):
    def observe(self):
        return _Observation(super().observe())


def odd_observation():
    return OddObservation("capi", "capi-safe")


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


def chatty():
    return Chatty("capi", "capi-safe")


class LogsFromAThread(ReferenceImplementation):
    """Has a thread of its own that prints a burst of log lines from the 100th
    action, while the run goes on (and the main thread lends and takes back
    stdout), until the 200th at the latest."""

    def __init__(self, *args):
        super().__init__(*args)
        self.actions = 0
        self.go, self.done = threading.Event(), threading.Event()
        threading.Thread(target=self._log, daemon=True).start()

    def _log(self) -> None:
        self.go.wait()
        for i in range(300):
            print(f"background log line {i}")
        self.done.set()

    def perform(self, action):
        self.actions += 1
        if self.actions == 100:
            self.go.set()
        elif self.actions == 200:  # the burst ends within the run
            self.done.wait(10)
        return super().perform(action)


def logs_from_a_thread():
    return LogsFromAThread("capi", "capi-safe")


class LogsForEver(ReferenceImplementation):
    """Has a thread of its own that logs on stdout as fast as it can, to the end of the process."""

    def __init__(self, *args):
        super().__init__(*args)
        self.logging = threading.Event()
        threading.Thread(target=self._log, daemon=True).start()
        self.logging.wait(10)  # it has begun, whatever the load

    def _log(self) -> None:
        while True:
            print("background log line")
            self.logging.set()
            time.sleep(0)  # yields the GIL at once


def logs_for_ever():
    return LogsForEver("capi", "capi-safe")


class Async(ReferenceImplementation):
    """Written for an event loop: perform is a coroutine function."""

    async def perform(self, action):
        return super().perform(action)


def async_perform():
    return Async("capi", "capi-safe")


class ResetAnswers(ReferenceImplementation):
    """reset returns what it did, as if it were perform."""

    def reset(self, config):
        super().reset(config)
        return "reset done"


def reset_answers():
    return ResetAnswers("capi", "capi-safe")


def not_an_implementation():
    return object()


class Wanders(ReferenceImplementation):
    """capi-2022, which moves this process into a folder of its own (``away``, beside
    where it was made) at each reset: a --python object shares deployspec's process,
    and its current folder."""

    def __init__(self, *args):
        import os

        super().__init__(*args)
        self.away = os.path.abspath("away")
        os.makedirs(self.away, exist_ok=True)

    def reset(self, config):
        import os

        os.chdir(self.away)
        super().reset(config)


def wanders():
    return Wanders("capi", "capi-2022")
