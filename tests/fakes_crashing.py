"""In-process (--python) fakes that raise, exit or hang where they should answer."""

from __future__ import annotations

import os
import signal
import sys
import time

from deployspec.contract.examples import ReferenceImplementation


class Raising(ReferenceImplementation):
    def perform(self, action):
        if action["type"] == "deploy":
            raise KeyError("deploying_web_process")
        return super().perform(action)


def raising():
    return Raising("capi", "capi-safe")


class Exits(ReferenceImplementation):
    """Exits at a deploy, as a CLI library might: its exit is not the harness's."""

    def perform(self, action):
        if action["type"] == "deploy":
            sys.exit(0)
        return super().perform(action)


def exits():
    return Exits("capi", "capi-safe")


class EndsTheProcess(ReferenceImplementation):
    """Ends its process at a deploy, as a crashing C extension would: no exception, no cleanup."""

    def perform(self, action):
        if action["type"] == "deploy":
            os._exit(7)
        return super().perform(action)


def ends_the_process():
    return EndsTheProcess("capi", "capi-safe")


class ClosesItsStreams(ReferenceImplementation):
    """Closes ``sys.stdout`` and ``sys.stderr`` at a deploy, as a library tidying up might,
    and answers on: deployspec's own output must still go out."""

    def perform(self, action):
        if action["type"] == "deploy":
            sys.stdout.close()
            sys.stderr.close()
        return super().perform(action)


def closes_its_streams():
    return ClosesItsStreams("capi", "capi-safe")


class GeneratorExits(ReferenceImplementation):
    def observe(self):
        if self.state is not None and self.model.observe(self.state)["deployments"]:
            raise GeneratorExit
        return super().observe()


def generator_exits():
    return GeneratorExits("capi", "capi-safe")


def factory_exits():
    sys.exit(4)


class Swallows(ReferenceImplementation):
    """Polls for ever at a deploy (or, with DEPLOYSPEC_FAKE_SWALLOW_AFTER=N, at its
    N+1-th action), swallowing every exception (a bare ``except:``): the
    timeout's interruption and Ctrl-C alike; with DEPLOYSPEC_FAKE_SILENCE set, it points
    stdout's and stderr's descriptors at /dev/null first."""

    performed = 0

    def perform(self, action):
        after = os.environ.get("DEPLOYSPEC_FAKE_SWALLOW_AFTER")
        Swallows.performed += 1
        if (Swallows.performed > int(after)) if after else action["type"] == "deploy":
            marker = os.environ.get("DEPLOYSPEC_FAKE_HANGING")
            if os.environ.get("DEPLOYSPEC_FAKE_SILENCE"):
                null = os.open(os.devnull, os.O_WRONLY)
                os.dup2(null, 1)
                os.dup2(null, 2)
            while True:
                try:  # the marker says it hangs only once it swallows (a signal sent on
                    # seeing it never lands between the two, however loaded the machine)
                    if marker:
                        open(marker, "w").close()
                        marker = None
                    time.sleep(0.05)
                except:  # noqa: E722, S110 - the point of this fake
                    pass
        return super().perform(action)


def swallows():
    return Swallows("capi", "capi-safe")


class BlocksTheAlarm(ReferenceImplementation):
    """At a deploy, blocks SIGALRM (the timeout's signal) and sleeps for ever, so no
    interruption ever reaches it. With DEPLOYSPEC_FAKE_HANGING set, creates that
    file when it starts."""

    def perform(self, action):
        if action["type"] == "deploy":
            signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGALRM})
            if os.environ.get("DEPLOYSPEC_FAKE_HANGING"):
                open(os.environ["DEPLOYSPEC_FAKE_HANGING"], "w").close()
            time.sleep(600)
        return super().perform(action)


def blocks_the_alarm():
    return BlocksTheAlarm("capi", "capi-safe")


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


def hangs():
    return Hangs("capi", "capi-safe")


class CrashesAtTheSecondCancel(ReferenceImplementation):
    """capi-safe until the second cancel of a deploying deployment since reset, which
    raises: a crash four steps into a run at least (push, deploy, cancel, deploy, then the
    cancel), the same every time the same steps come (so its saved trace replays it)."""

    def reset(self, config):
        self.cancels = 0
        super().reset(config)

    def perform(self, action):
        if action["type"] == "cancel" and any(d["state"] == "DEPLOYING" for d in self.observe()["deployments"]):
            self.cancels += 1
            if self.cancels == 2:
                raise RuntimeError("cancel of a superseded deployment")
        return super().perform(action)


def crashes_at_the_second_cancel():
    return CrashesAtTheSecondCancel("capi", "capi-safe")


class ResetDiesLater(ReferenceImplementation):
    """capi-safe whose 25th reset raises: a fault at a reset, which may come while the
    search brings the implementation back to a step it answered before (``recall``)."""

    resets = 0

    def reset(self, config):
        ResetDiesLater.resets += 1
        if ResetDiesLater.resets == 25:
            raise RuntimeError("database connection lost")
        super().reset(config)


def reset_dies_later():
    ResetDiesLater.resets = 0
    return ResetDiesLater("capi", "capi-safe")
