"""The Cloud Foundry model as the engines see it: bounds, actions to try, settling."""

from __future__ import annotations

import functools
from collections.abc import Mapping
from typing import Any, ClassVar

import attrs
from deployspec.reference.core import MAX_STEPS, check_bound, config_fields, shown

from .actions import Cancel, Continue, Deploy, Push, Runtime, Scale, Stage, Tick
from .state import (
    ACTIVE_STATES,
    CANCELING,
    DEPLOYING,
    PAUSED,
    PREPAUSED,
    PROGRESSING_STATES,
    CapiState,
)


@attrs.frozen
class CapiConfig:
    """Bounds of the explored behaviour (every engine reads the same ones)."""

    #: largest instance count a push or scale asks for
    max_instances: int = 3
    #: deployments created at most (each ``deploy`` is one)
    max_deployments: int = 3
    #: droplets at most (the pushed one plus stagings: at least 1, the push)
    max_droplets: int = 3
    #: the max_in_flight values a deploy tries
    max_in_flight: tuple[int, ...] = (1,)
    #: the ``web_instances`` counts a deploy tries besides naming none (empty: a deploy
    #: names no count; the designs before 2024 refuse one)
    web_instances: tuple[int, ...] = ()
    #: canary step plans a deploy tries (empty: no canary deployments)
    canary_plans: tuple[tuple[int, ...], ...] = ()
    #: offer ``tick(finish_later=…)``: user actions between a finished scale step's
    #: commit and its finish (for designs that finish after the commit)
    finish_window: bool = False
    #: offer ``tick(late=…)``: user actions between the dispatcher's snapshot and a
    #: scale step it sent (the race PR #3072 closed by checking the state under the lock)
    snapshot_window: bool = False
    #: offer ``deploy(new_droplet=…)`` too: ``cf push --strategy rolling``, a deployment of
    #: a droplet staged for it (healthy or not), which a cancel takes back
    push_rolling: bool = False
    #: offer ``deploy(revision=…)`` too: ``cf rollback``, a deployment of a droplet a
    #: deployment or the push shipped before, which a cancel takes back
    rollback: bool = False
    #: platform steps allowed for the settle phase
    settle_steps: int = 80
    #: BFS depth bound of the exhaustive explorer (None: until no new state is found)
    max_depth: int | None = None

    #: the bounds ``--engine explore`` uses unless a variant sets them: every state
    #: reachable within them is visited in seconds (50,963 states for capi-safe)
    EXPLORE: ClassVar[dict[str, Any]] = {"max_instances": 2, "max_droplets": 2, "max_deployments": 2}
    #: what a replay of recorded actions uses (``replay --bound``); the rest bound a search
    REPLAYED: ClassVar[tuple[str, ...]] = ("settle_steps",)
    #: the switches that open behaviour when on (a proof names those it left off)
    OPENING: ClassVar[tuple[str, ...]] = ("finish_window", "snapshot_window", "push_rolling", "rollback")
    #: of those, the ones that only open users' calls (``cf push --strategy rolling``, ``cf
    #: rollback``): an incident's calls are given, whatever they say
    CALLS: ClassVar[tuple[str, ...]] = ("push_rolling", "rollback")
    #: of those, the ones that open nothing on a design without a feature, by the variant's
    #: field that must be true: a step's finish left for later needs a finish after the commit
    #: (a proof of capi-safe named finish_window "off here", which changes none of its states)
    OPENS_ONLY_WITH: ClassVar[dict[str, str]] = {"finish_window": "finish_after_commit"}

    #: settle steps per instance a search may create, unless ``settle_steps`` is given: each
    #: instance starts in a step of its own, so 80 cut capi-safe's settle phase at
    #: ``max_instances=64`` (a false VIOLATED of deployment_converges); from any state
    #: within ``max_depth=4``, 4n+4 sufficed at n = 4, 8 and 16, 3n did not
    SETTLE_PER_INSTANCE: ClassVar[int] = 10

    @classmethod
    def sized(cls, data: dict[str, Any], given: Mapping[str, Any]) -> dict[str, Any]:
        """``data`` with ``settle_steps`` raised for a ``max_instances`` given without it."""
        n = data.get("max_instances")
        if "settle_steps" in given or "max_instances" not in given or not _is_int(n) or not _is_int(
                data.get("settle_steps")):
            return data
        return data | {"settle_steps": max(data["settle_steps"], cls.SETTLE_PER_INSTANCE * n)}

    def to_json(self) -> dict[str, Any]:
        out = attrs.asdict(self)
        out["max_in_flight"] = list(self.max_in_flight)
        out["canary_plans"] = [list(p) for p in self.canary_plans]
        out["web_instances"] = list(self.web_instances)
        for name in _LEFT_OUT_WHEN_OFF:
            if not out[name]:  # (off or empty, as in every trace saved before it existed)
                del out[name]
        return out

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> CapiConfig:
        return cls(**config_fields(cls, data, least={"max_instances": 1, "max_droplets": 1}, special={
            "max_in_flight": _counts, "canary_plans": _canary_plans, "max_depth": _depth,
            "web_instances": functools.partial(_counts, empty=True)}))


#: the configuration's switches (true or false): the windows that open an interleaving,
#: and the deploys of another droplet than the current one; each left out of a trace's
#: config when off
_SWITCHES = CapiConfig.OPENING
#: what a trace's config leaves out when off or empty: the switches, and the counts a
#: deploy asks for (none, as before the bound existed)
_LEFT_OUT_WHEN_OFF = (*_SWITCHES, "web_instances")


def _counts(name: str, m: Any, empty: bool = False) -> tuple[int, ...]:
    """A list of counts >= 1 (max_in_flight: at least one; web_instances: maybe none, and
    no 0, which the model's vocabulary reads as "not given")."""
    if not isinstance(m, (list, tuple)) or not (m or empty) or not all(_is_int(x) and x >= 1 for x in m):
        some = "a" if empty else "a non-empty"
        raise ValueError(f"{name} must be {some} list of integers >= 1, got {shown(m)}")
    check_bound(f"{name} values", max(m, default=0))
    check_bound(f"{name}'s length", len(m))
    return tuple(m)


def _canary_plans(name: str, plans: Any) -> tuple[tuple[int, ...], ...]:
    if not isinstance(plans, (list, tuple)) or not all(
        isinstance(p, (list, tuple)) and all(_is_int(w) and 1 <= w <= 100 for w in p) and list(p) == sorted(p)
        for p in plans
    ):
        # sorted, as DeploymentCreateMessage checks: equal neighbours ([50, 50]) pass
        raise ValueError(f"{name} must be lists of non-decreasing weights 1..100, as "
                         f"DeploymentCreateMessage requires, got {shown(plans)}")
    check_bound(f"{name}' length", len(plans))
    check_bound("a canary plan's length", max(map(len, plans), default=0))
    return tuple(tuple(p) for p in plans)


def _depth(name: str, value: Any) -> int | None:
    if value is None:  # no depth bound
        return None
    if not _is_int(value) or value < 0:
        raise ValueError(f"{name} must be a non-negative integer or null, got {shown(value)}")
    check_bound(name, value, MAX_STEPS)
    return value


def _is_int(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def initial_state(config: CapiConfig) -> CapiState:
    return CapiState()


def partition(state: CapiState) -> tuple:
    """What decides the worker that owns a state in a partitioned search: the app,
    the droplets and the deployments. Instances starting and scaling (most moves)
    change none of them, so those moves stay inside one worker: on capi-safe at
    the default exploration bounds, 15 % of moves cross between 2 workers (53 %
    when the whole state decides), 31 % between 8 (89 %), with each worker's
    share of states within 4 % of the mean."""
    return (state.app, state.droplets, state.deployments)


@functools.lru_cache(maxsize=64)
def _fixed_actions(config: CapiConfig) -> dict[str, tuple]:
    """The actions whose arguments come from the bounds alone, built once per configuration."""
    return {
        "push": tuple(Push(n) for n in range(1, config.max_instances + 1)),
        "stage": (Stage(True), Stage(False)),
        "deploy": tuple(Deploy(max_in_flight=m, web_instances=w)
                        for w in (0, *config.web_instances) for m in config.max_in_flight)
        + tuple(
            Deploy(max_in_flight=m, strategy="canary", canary_steps=plan, web_instances=w)
            for w in (0, *config.web_instances)
            for plan in config.canary_plans
            for m in config.max_in_flight
        ),
        "scale": tuple(Scale(n) for n in range(config.max_instances + 1)),
        # the scales to another count than n, by n (a scale to the count the newest web
        # process has already changes nothing in any design: ``api.scale`` is shared)
        "scale_from": tuple(tuple(Scale(m) for m in range(config.max_instances + 1) if m != n)
                            for n in range(config.max_instances + 1)),
        "push_rolling": tuple(Deploy(max_in_flight=m, new_droplet=h) for h in (True, False)
                              for m in config.max_in_flight) if config.push_rolling else (),
    }


#: the last configuration asked for and its fixed actions (held, so the same object
#: as long as it is here)
_LAST_FIXED: list = [None, None]


def _fixed_for(config: CapiConfig) -> dict[str, tuple]:
    """``_fixed_actions(config)``, the last configuration's found by identity: a search
    asks with one configuration for every state, and the lru_cache would hash it (a
    dozen fields, in Python) each time."""
    if _LAST_FIXED[0] is not config:
        _LAST_FIXED[:] = config, _fixed_actions(config)
    return _LAST_FIXED[1]


_TICK = Tick()
_CANCEL = Cancel()
_CONTINUE = Continue()


# Actions are frozen values: the explorer asks for them once per state, so the
# ones with arguments from the observation are built once per argument.
@functools.lru_cache(maxsize=1024, typed=True)
def _runtime(process: int) -> Runtime:
    return Runtime(process)


@functools.lru_cache(maxsize=1024, typed=True)
def _rollbacks(max_in_flight: tuple[int, ...], droplet: int) -> tuple[Deploy, ...]:
    """``deploy(revision=droplet)`` with each max_in_flight, built once per argument."""
    return tuple(Deploy(max_in_flight=m, revision=droplet) for m in max_in_flight)


@functools.lru_cache(maxsize=4096, typed=True)
def _tick_on(field: str, deployment: int) -> Tick:
    """``tick`` with one deployment in ``field`` (``failed``, ``reports_unavailable``,
    ``finish_later``, ``late``), built once per argument."""
    return Tick(**{field: (deployment,)})


#: the deployment states in which the shipped designs may leave a step's finish for later
SHIPPED_FINISH_IN = frozenset({DEPLOYING, PREPAUSED})


@attrs.frozen
class Refusals:
    """What ``candidate_actions`` counts on a design to refuse (or to leave as it is) and
    so leaves out. Each rests on a rule a design of one's own may change
    (``CapiVariant.refusals``): there the candidates offer the action. A soundness review
    found a design that accepted a scale while DEPLOYING, and one that skipped a canary's
    pause by accepting ``continue`` while PREPAUSED, passing every search, which never
    offered either."""

    #: a deployment in one of these states refuses a scale of the web process (the
    #: design's ``scale_blocked_in``, of the states in which the shipped designs refuse it)
    scale_in: frozenset[str] = PROGRESSING_STATES
    #: ``continue`` is refused unless the newest active deployment is PAUSED (the
    #: shipped ``continue_`` rules)
    continue_when_paused_only: bool = True
    #: a failed step of the only active deployment leaves what a plain tick's dispatch
    #: does first (the shipped ``before_dispatch`` rules, and scale steps only for
    #: active deployments: ``_platform_ticks``)
    lone_failure_stutters: bool = True
    #: the deployment states in which a step's finish may be left for later
    #: (``tick(finish_later=…)``, where ``finish_window`` is on): the design's
    #: ``scaled_states`` with the shipped ones
    finish_in: frozenset[str] = SHIPPED_FINISH_IN


#: what every shipped design refuses: ``candidate_actions``'s assumption
SHIPPED_REFUSALS = Refusals()
#: what a design that does not say (a stand-in with a ``step`` alone) is taken to refuse:
#: nothing, so each of those actions is offered (sound, and slower)
NOTHING_KNOWN = Refusals(scale_in=frozenset(), continue_when_paused_only=False, lone_failure_stutters=False,
                         finish_in=frozenset({DEPLOYING, PREPAUSED, PAUSED, CANCELING}))


def candidate_actions(obs: dict, config: CapiConfig, refusals: Refusals = SHIPPED_REFUSALS) -> list:
    """Every action worth trying from an observation, simplest first (for shrinking).

    Leaves out what every shipped design refuses or ignores here: for exploring the
    reference those are stutters (``probe_actions`` lists them). ``refusals``: what
    the design explored refuses (:func:`candidates_for`)."""
    return _actions(obs, config, None, refusals)


def candidates_for(variant: Any) -> Any:
    """``candidate_actions`` for one design: the function itself where the design refuses
    what every shipped one does, else one that offers what its own rules may accept."""
    refusals = variant.refusals() if hasattr(variant, "refusals") else NOTHING_KNOWN
    if refusals == SHIPPED_REFUSALS:
        return candidate_actions
    return functools.partial(candidate_actions, refusals=refusals)


def probe_actions(obs: dict, config: CapiConfig) -> list:
    """The actions ``candidate_actions`` leaves out of this observation because
    every design refuses them here or they change nothing, simplest first.

    A contract run tries them too: an implementation that accepts what the
    reference refuses (or refuses, or acts on, what it ignores) does not conform.
    Before the push: everything but a push; after it: a push, ``runtime`` of a
    process with no STARTING instance, ``tick(failed=…)`` of the only active
    deployment (nothing happens but what the dispatcher does before the steps,
    which a plain ``tick`` does too), ``cancel`` with nothing to cancel or while
    CANCELING with no newer droplet (the deployment the cf CLI acts on:
    ``api.newest_active``), ``continue`` unless that deployment is PAUSED,
    ``scale`` while a deployment progresses or to the count the newest web process
    has, a rollback to the latest revision.
    So a probe reaches no state the candidates do not. What the bounds leave out (a stage past ``max_droplets``,
    a deploy past ``max_deployments``) is no probe: the reference accepts it."""
    probes: list = []
    _actions(obs, config, probes, SHIPPED_REFUSALS)
    return probes


def _actions(obs: dict, config: CapiConfig, probes: list | None, refusals: Refusals) -> list:
    """The candidate actions; with ``probes`` a list, the probes are appended to it,
    each where the candidates leave it out (one decision for both)."""
    fixed = _fixed_for(config)
    if obs["app"] is None:
        if probes is not None:
            _refused_before_push(config, fixed, probes)
        if not refusals.continue_when_paused_only:  # a continue of one's own may take it before the push
            return [*fixed["push"], _CONTINUE]
        return list(fixed["push"])
    out: list = []
    deployments = obs["deployments"]
    active = []  # ids of active deployments, oldest first
    newest = None  # what cancel and continue act on (``api.newest_active``)
    scale_refused = False
    scale_in = refusals.scale_in
    for d in deployments:
        state = d["state"]
        if state in ACTIVE_STATES:
            active.append(d["id"])
            scale_refused = scale_refused or state in scale_in
        if d["status_value"] == "ACTIVE":
            newest = d
    paused = (newest is not None and newest["state"] == PAUSED) or not refusals.continue_when_paused_only
    for p in obs["processes"]:
        if "STARTING" in p["instances"]:
            out.append(_runtime(p["id"]))
        elif probes is not None:  # no STARTING instance to settle: refused
            probes.append(_runtime(p["id"]))
    _platform_ticks(out, probes, config, deployments, active, refusals)
    _revisions(out, probes, config, fixed, deployments, len(obs["droplets"]))
    if newest is not None and not (
        newest["state"] == "CANCELING" and obs["app"]["droplet"] == newest["previous_droplet"]
    ):  # canceling again changes nothing unless a droplet was staged since
        out.append(_CANCEL)
    elif probes is not None:  # nothing to cancel (refused), or canceling again
        probes.append(_CANCEL)
    if paused:
        out.append(_CONTINUE)
    elif probes is not None:  # no PAUSED deployment: refused
        probes.append(_CONTINUE)
    if not scale_refused:
        _scales(out, probes, fixed, obs["processes"])
    elif probes is not None:
        # every shipped design refuses a web scale while a deployment progresses: a stutter
        probes += fixed["scale"]
    if probes is not None:  # the app exists: a push is refused
        probes += fixed["push"]
    return out


def _refused_before_push(config: CapiConfig, fixed: dict, probes: list) -> None:
    """Every action but a push: every design refuses them all before the push."""
    probes.append(_TICK)
    probes += fixed["stage"]
    probes += fixed["deploy"]
    probes += fixed["push_rolling"]  # (empty unless the bound is on)
    if config.rollback:
        probes += _rollbacks(config.max_in_flight, 0)
    probes += (_CANCEL, _CONTINUE)
    probes += fixed["scale"]


def _scales(out: list, probes: list | None, fixed: dict, processes: list) -> None:
    """``scale`` to each count but the one the newest web process has (a probe): that
    one leaves every design's state as it is (``api.scale``, the model's and not a rule,
    scales the newest web process). It is accepted, though, and a trace property may
    remember it (the count a user asked for): the spec's properties reach the same verdicts without
    it (a review compared every trace property on five designs at two bounds, with and
    without it, in session 29); a contract run asks it as a probe."""
    have = len(processes[-1]["instances"]) if processes else -1
    scales = fixed["scale"]
    if not 0 <= have < len(scales):  # no web process (every design refuses), or past the bounds
        out += scales
        return
    out += fixed["scale_from"][have]
    if probes is not None:
        probes.append(scales[have])


def _platform_ticks(out: list, probes: list | None, config: CapiConfig, deployments: list,
                    active: list, refusals: Refusals = SHIPPED_REFUSALS) -> None:
    """The updater's tick, and its variants on each active deployment (a failed step,
    instance reports unavailable; the finish and snapshot windows when they are on).

    A tick is offered in every state, also with no deployment in flight: there the
    shipped designs' dispatchers find nothing to do, but a tick runs the design's own
    rules (``before_dispatch``, ``scaled_states``), which a design of one's own may
    choose to act there."""
    out.append(_TICK)
    # with one active deployment a failed step is a stutter: skip it, unless a window
    # is open (the tick first does what the last dispatch left, which a failure keeps)
    if len(active) > 1 or config.finish_window or config.snapshot_window or not refusals.lone_failure_stutters:
        for d in active:
            out.append(_tick_on("failed", d))
    elif probes is not None:
        probes += [_tick_on("failed", d) for d in active]
    for d in active:
        out.append(_tick_on("reports_unavailable", d))
    if config.finish_window:  # a step that finishes now may leave its finish for later
        finish_in = refusals.finish_in
        out += [_tick_on("finish_later", d["id"]) for d in deployments if d["state"] in finish_in]
    if config.snapshot_window:  # a scale step the snapshot sends may start after user actions
        out += [_tick_on("late", d["id"]) for d in deployments if d["state"] == "DEPLOYING"]


def _revisions(out: list, probes: list | None, config: CapiConfig, fixed: dict, deployments: list,
               droplets: int) -> None:
    """Staging a droplet and deploying one, within the bounds: the fixed deploys, a push
    that deploys (when on), and the rollbacks to each revision but the latest."""
    if droplets < config.max_droplets:
        out += fixed["stage"]
    if len(deployments) < config.max_deployments:
        out += fixed["deploy"]
        if droplets < config.max_droplets:
            out += fixed["push_rolling"]
        if config.rollback:  # to each revision but the latest (refused: a probe), as
            # api.revisions reads them from the state: the push's and each deployment's
            latest = deployments[-1]["droplet"] if deployments else 0
            for droplet in sorted({0, *(d["droplet"] for d in deployments)} - {latest}):
                out += _rollbacks(config.max_in_flight, droplet)
            if probes is not None:
                probes += _rollbacks(config.max_in_flight, latest)


def settle_action(obs: dict) -> Any:
    """The next thing the platform does when users stay away, or None if nothing."""
    if obs["app"] is None:
        return None
    for p in obs["processes"]:
        if "STARTING" in p["instances"]:
            return Runtime(p["id"])
    if any(d["state"] in ("DEPLOYING", "PREPAUSED", "CANCELING") for d in obs["deployments"]):
        return Tick()
    return None


def takes_canaries(variant: Any) -> bool:
    """Whether a design accepts a canary deployment (none did before PR #3892, 2024): the
    situations a contract run names as reachable on its ``--reference``."""
    return not variant.refuse_deploy(Deploy(strategy="canary", canary_steps=(100,)))
