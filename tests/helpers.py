"""Small builders shared by the unit tests."""

from __future__ import annotations

import os
import re

from deployspec.reference.capi import VARIANTS, from_observation, observe
from deployspec.reference.capi.actions import Cancel, Deploy, Push, Runtime, Tick
from deployspec.reference.core import Rejected
from deployspec.reference.slots.model import SlotsConfig
from deployspec.reference.slots.model import initial_state as slots_initial_state
from deployspec.spec.core import Monitor, Step

from deployspec.adapter import ReferenceAdapter
from deployspec.explorer import Graph


def proc(pid, n=0, *, running=None, droplet=0, starting=0, crashed=0):
    """A process observation: ``running`` RUNNING instances (default all), then STARTING, CRASHED."""
    running = n if running is None else running
    inst = ["RUNNING"] * running + ["STARTING"] * starting + ["CRASHED"] * crashed
    inst += ["RUNNING"] * (n - len(inst))
    return {"id": pid, "droplet": droplet, "instances": inst[:max(n, len(inst))]}


def dep(did, state, reason, process, owic, value=None, droplet=0, **extra):
    """A deployment observation; ``extra``: the members a rolling deployment of max_in_flight 1
    has by default (max_in_flight, strategy, canary_steps, canary_step, web_instances) otherwise.
    Its ``previous_droplet`` is the pushed droplet 0, the app's current one in ``app``."""
    value = value or ("ACTIVE" if state in ("DEPLOYING", "CANCELING", "PAUSED", "PREPAUSED") else "FINALIZED")
    return {
        "id": did, "state": state, "status_value": value, "status_reason": reason,
        "deploying_process": process, "droplet": droplet, "previous_droplet": 0, "owic": owic,
        "max_in_flight": 1, "strategy": "rolling", "canary_steps": [], "canary_step": 0, "web_instances": None,
        **extra,
    }


def app(processes, deployments, droplets=(True,)):
    return {
        "app": {"droplet": 0, "started": True},
        "droplets": [{"id": i, "healthy": h} for i, h in enumerate(droplets)],
        "processes": processes,
        "deployments": deployments,
    }


def tick(variant: str, obs: dict, **kw) -> dict:
    """One updater dispatch on the state the observation describes."""
    state = from_observation(obs)
    return observe(VARIANTS[variant].step(state, Tick(**kw)))


def feed(prop, schema, before, steps, platform):
    """Feed one property steps ``(action, after)`` or ``(action, after, refusal)`` from
    the observation ``before``, each observation checked against ``schema``; actions
    whose type is in ``platform`` are the platform's. The first violation, or None."""
    m = Monitor((prop,))
    schema.validate(before)
    for i, (action, after, *refused) in enumerate(steps):
        schema.validate(after)
        actor = "platform" if action["type"] in platform else "user"
        v = m.advance(Step(i, action, actor, refused[0] if refused else None, before, after))
        if v:
            return v
        before = after
    return None


class Tree(Graph):
    """Integers as a graph whose answers are known by arithmetic: from n the moves
    are to 2n and 2n + 1 below ``limit`` (node n at depth floor(log2 n)) and, to
    make revisits, back to n // 2."""

    def __init__(self, limit: int):
        self.limit = limit

    def root(self):
        return 1

    def key(self, node):
        return node

    def expand(self, n):
        for e, child in enumerate((2 * n, 2 * n + 1, n // 2)):
            if 1 <= child < self.limit:
                yield e, child, None, hash(child)

    def child_by_edge(self, n, e):
        return (2 * n, 2 * n + 1, n // 2)[e], None


def two_active(_state, obs) -> bool:
    """A goal for ``explorer.bfs``: two deployments active at once."""
    return sum(d["state"] in ("DEPLOYING", "CANCELING") for d in obs["deployments"]) > 1


def run_slots(variant, actions, config=None):
    """The slots state after ``actions``, each of which the variant must accept."""
    state = slots_initial_state(config or SlotsConfig())
    for a in actions:
        result = variant.step(state, a)
        assert not isinstance(result, Rejected), (a, result)
        state = result
    return state


def run_capi(variant: str, actions, state=None):
    """The capi state after ``actions`` (each accepted) by the named variant, from ``state``
    or the empty one."""
    from deployspec.reference.capi.state import CapiState

    v, state = VARIANTS[variant], CapiState() if state is None else state
    for a in actions:
        state = v.step(state, a)
        assert state.__class__ is CapiState, (a, state)
    return state


def shape(obs) -> dict[int, int]:
    """Each web process's instance count, by id."""
    return {p["id"]: len(p["instances"]) for p in obs["processes"]}


def in_a_child(body) -> tuple[int, str]:
    """``body()`` run in a forked child, whose descriptors 1 and 2 are pipes of their own
    (the test's are pytest's capture, which a body that breaks them would break): its exit
    status and what it wrote to a third pipe."""
    report_r, report_w = os.pipe()
    pid = os.fork()
    if pid == 0:
        try:
            os.close(report_r)
            for fd in (1, 2):
                _, w = os.pipe()
                os.dup2(w, fd)
            os._exit(body(report_w))
        finally:
            os._exit(99)
    os.close(report_w)
    with os.fdopen(report_r) as f:
        said = f.read()
    _, status = os.waitpid(pid, 0)
    return os.waitstatus_to_exitcode(status), said


def capi_state(variant, *actions, **bounds):
    """The capi state after ``actions`` under the variant's configuration with ``bounds``
    changed; the variant must accept each action."""
    import attrs

    from deployspec.models import get_model

    capi = get_model("capi")
    state = capi.initial_state(attrs.evolve(capi.default_config(variant), **bounds))
    for action in actions:
        state = variant.step(state, action)
        assert not isinstance(state, Rejected), (action, state)
    return state


class Grid(Graph):
    """The points of a ``size`` x ``size`` grid, moving right or up from (0, 0). A node
    is ``(x, y, route)``: it carries the route that reached it, which its key leaves
    out, so the many routes to a point must make one node. ``moves`` is the number
    of moves between points."""

    def __init__(self, size: int):
        self.size = size
        self.moves = 2 * size * (size - 1)

    def root(self):
        return (0, 0, "")

    def key(self, node):
        return node[:2]

    def expand(self, node):
        x, y, route = node
        for e, (nx, ny, step) in enumerate(((x + 1, y, "R"), (x, y + 1, "U"))):
            if nx < self.size and ny < self.size:
                yield e, (nx, ny, route + step), None, hash((nx, ny))


#: the seed bug's user actions (cloud_controller_ng #3019): push, start, deploy, cancel, deploy, tick
SEED_STORY = [Push(1), Runtime(0), Deploy(), Cancel(), Deploy(), Tick()]


def action_labels(trace: dict) -> list[str]:
    """Each step's action as a toy model labels it, or its type."""
    return [s["action"].get("label", s["action"]["type"]) for s in trace["steps"]]


class Recorded(ReferenceAdapter):
    """A reference variant that records what it is asked, refuses ``fail_on`` by raising,
    and says when it is closed."""

    def __init__(self, variant="capi-safe", fail_on=None):
        from deployspec.models import get_model

        capi = get_model("capi")
        super().__init__(capi, capi.variant(variant))
        self.performed, self.closed, self.fail_on = [], False, fail_on

    def perform(self, action):
        self.performed.append(action)
        if action.kind == self.fail_on:
            raise RuntimeError(f"{action.kind} failed")
        return super().perform(action)

    def close(self):
        self.closed = True


#: what a failing rule's report says of the steps that reached it (``deployspec.reached``)
REACHED = re.compile(r", (at step \d+ \(.*?\)( after .*)?|in a move from the (initial state|state after .*)"
                     r"|while the platform settled( after .*)?)$")


def without_steps(message: str) -> str:
    """A failing rule's report less the steps that reached it, which it must end with."""
    found = REACHED.search(message)
    assert found is not None, f"no steps in: {message}"
    return message[:found.start()]
