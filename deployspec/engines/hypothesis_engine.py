"""The Hypothesis engine: random interleavings, shrunk to a small trace.

One search per property, so each violated property gets its own minimal
counterexample and a holding property gets the whole budget.
"""

from __future__ import annotations

import contextlib
import time
from collections.abc import Callable
from typing import Any

import hypothesis.core
from hypothesis import HealthCheck, Phase, Verbosity, settings
from hypothesis.errors import Flaky, Unsatisfiable
from hypothesis.stateful import run_state_machine_as_test

from deployspec import interruption, reached, traces
from deployspec.adapter import ReferenceAdapter
from deployspec.coverage import Coverage
from deployspec.engines.result import Result
from deployspec.engines.seeding import fixed_constants
from deployspec.minimize import minimize
from deployspec.render_text import action_label
from deployspec.rule_results import RuleHungError
from deployspec.stateful_tests.machine import PropertyViolated, build_machine
from deployspec.user_code import exit_refused

#: Steps per example. Long enough for deploy/cancel/redeploy with ticks between.
STEPS = 40
#: Examples per round; a search runs rounds with successive seeds until its budget is spent.
ROUND = 100


def search(model, variant_name: str, prop, *, budget: float, seed: int, out_dir: str | None,
           skip_causes: frozenset[str] = frozenset(), **kwargs) -> Result:
    """Rounds of ``ROUND`` examples (seed, seed+1, …) until a violation or the budget ends.

    The first round always runs in full, so a given seed gives the same verdict
    on any machine, and in any process (``seeding.fixed_constants``), for bugs
    the first round finds. ``skip_causes``: causes of
    ``prop`` already found, not to be reported again.
    """
    started = time.perf_counter()
    totals = {"examples": 0, "steps": 0, "rounds": 0}
    round_seed = seed
    while True:
        try:
            r = check_property(model, variant_name, prop, max_examples=ROUND, seed=round_seed,
                               out_dir=out_dir, skip_causes=skip_causes, **kwargs)
        except BaseException as exc:  # an implementation's fault may carry the violation it saw
            _counted_over_rounds(getattr(getattr(exc, "found", None), "stats", {}), totals["examples"])
            raise
        _counted_over_rounds(r.stats, totals["examples"])
        totals["rounds"] += 1
        totals["examples"] += r.stats.get("examples", 0)
        totals["steps"] += r.stats.get("steps", 0)
        elapsed = time.perf_counter() - started
        if r.verdict != "holds" or elapsed >= budget:
            r.stats.update(totals, seconds=round(elapsed, 3), seed=seed,
                           steps_per_second=round(totals["steps"] / elapsed) if elapsed else None)
            if r.verdict == "violated":  # --seed with it finds it in the first round, on any machine
                r.stats["found_seed"] = round_seed
            return r
        round_seed += 1


def _counted_over_rounds(stats: dict, earlier: int) -> None:
    """``found_in_example`` counted from the search's first round, as its examples are."""
    if "found_in_example" in stats:
        stats["found_in_example"] += earlier


class _Abandoned(BaseException):
    """Carries a :class:`RuleHungError` out of Hypothesis, which lets a BaseException
    pass at once instead of shrinking: each example it tried again would hang as long."""

    def __init__(self, error: RuleHungError):
        super().__init__(error)
        self.error = error


@contextlib.contextmanager
def _remembered(seen: dict, example: int):
    """Remember the shortest violation raised within (``seen["violation"]``), and in
    which ``example`` the first was (``seen["found_in_example"]``)."""
    try:
        yield
    except PropertyViolated as exc:
        seen.setdefault("found_in_example", example)
        best = seen.get("violation")
        if best is None or len(exc.session.steps) < len(best.session.steps):
            seen["violation"] = exc
        raise
    except RuleHungError as exc:
        raise _Abandoned(exc) from None


def where_raised(done: list[dict], settling: bool) -> str:
    """``, at step 2 (cancel()) after push(instances=1), deploy()``, or ``, while the
    platform settled after …``: what a report adds to a rule's error."""
    if settling:
        return ", while the platform settled" + reached.after([action_label(a) for a in done])
    return f", at step {len(done) - 1} ({action_label(done[-1])})" + reached.after([action_label(a) for a in done[:-1]])


def _shortened(model, variant, config, prop, exc: BaseException, done: list[dict], settling: bool) -> None:
    """Say the fewest steps a replay finds that raise ``exc`` again (:mod:`deployspec.shortened`)."""
    from deployspec import shortened

    actions = [model.action(a) for a in done]
    wanted = shortened.signature(exc, settling)

    def kept(candidate: list) -> list | None:
        raised = shortened.raised_by(model, variant, config, (prop,), candidate)
        return candidate[:raised[1]] if raised is not None and raised[0] == wanted else None

    try:
        if kept(actions) is None:  # (a rule that raises by chance: the steps as the search saw them)
            return
        fewest = shortened.shortest(actions, kept)
    except RuleHungError:
        return
    if len(fewest) < len(actions):
        reached.note(exc, where_raised([a.to_json() for a in fewest], settling))


def _unrepeated(exc: BaseException, variant: str | None) -> str:
    """The line for Hypothesis's ``Flaky``: what the first run raised (a design's rule: where,
    as for any rule that raises, and after which steps), and what the same steps did when
    run again (nothing, or another error); Hypothesis's own words (its test function,
    "sub-exception") only when it holds no exception."""
    from deployspec.text import printable_line

    raised = [_unwrapped(e) for e in getattr(exc, "exceptions", ())]  # FlakyFailure: first run, replay
    if not raised:  # FlakyStrategyDefinition: the draws themselves went otherwise (its first line says so)
        return f"non-deterministic behaviour: {printable_line(str(exc).strip().partition(chr(10))[0])}"
    then = (f"; the same steps run again raised {printable_line(_said(raised[-1], variant, short=True), 300)}"
            if len(raised) > 1 else "; the same steps run again did not fail")
    return f"non-deterministic behaviour: {printable_line(_said(raised[0], variant), 600)}{then}"


def _unwrapped(exc: BaseException) -> BaseException:
    """Hypothesis wraps a BaseException (SystemExit, GeneratorExit) it holds in a group in an
    exception of its own, with the real one as its cause."""
    return exc.__cause__ if type(exc).__name__ == "_WrappedBaseException" and exc.__cause__ else exc


def _said(exc: BaseException, variant: str | None, short: bool = False) -> str:
    """What a run raised: a violation, or an error (a design's rule: where, and after which
    steps; ``short``: where in the code only, for the replay of steps already said)."""
    from deployspec import variant_plugins
    from deployspec.user_code import at_user_line, describe

    if isinstance(exc, PropertyViolated):
        return f"{exc.violation.property}: {exc.violation.message}"
    if short:
        return f"{describe(exc)}{at_user_line(exc)}"
    return (variant_plugins.fault(variant, exc) if variant else None) or f"{describe(exc)}{reached.said(exc)}"


def check_property(
    model,
    variant_name: str,
    prop,
    *,
    config=None,
    adapter_factory: Callable[[], Any] | None = None,
    max_examples: int = 300,
    seed: int = 0,
    out_dir: str | None = None,
    engine_name: str = "hypothesis",
    skip_causes: frozenset[str] = frozenset(),
    probes: bool = False,
    shrink: Callable[[dict], dict] | None = None,
    coverage: Coverage | None = None,
) -> Result:
    """Search for a violation of ``prop`` with a cause not in ``skip_causes``;
    save the shrunk trace under ``out_dir``. ``probes``: also try the actions the
    model leaves out as refused or no-ops (a contract run, ``build_machine``).
    ``shrink(trace)``: what shortens a trace found on an implementation (on the
    reference, ``minimize`` by replay). ``coverage``: counts the search's steps by
    situation."""
    on_reference = adapter_factory is None
    candidates = None  # (an implementation's: the model's, and the probes with them)
    if on_reference:
        variant = model.variant(variant_name)
        config = config or model.default_config(variant)
        adapter_factory = lambda: ReferenceAdapter(model, variant)
        candidates = model.offered(variant)
    config = config or model.default_config()
    counter = {"steps": 0, "examples": 0}
    skip = frozenset((prop.name, c) for c in skip_causes)
    base = build_machine(model, adapter_factory, (prop,), config, name=f"{prop.name}_machine", skip=skip,
                         probes=probes, candidates=candidates)

    #: the shortest violation seen so far, for a search that cannot finish (below)
    seen: dict[str, PropertyViolated] = {}

    class Counted(base):  # type: ignore[misc, valid-type]
        def __init__(self) -> None:
            super().__init__()
            counter["examples"] += 1

        def do(self, action) -> None:
            interruption.raise_if_pending()  # one swallowed in Hypothesis's gc callback
            counter["steps"] += 1
            before, obs = len(self.session.steps), self.session.obs
            with _remembered(seen, counter["examples"]):
                try:
                    super().do(action)
                except (Exception, SystemExit) as exc:  # a design's rule raised: the steps that reached it
                    self.noted(exc, [s["action"] for s in self.session.steps[:before]] + [action.to_json()])
                    raise
                finally:
                    # (performed, and not the shrinking of a violation found, which repeats its steps)
                    if coverage is not None and len(self.session.steps) > before and "violation" not in seen:
                        step = self.session.steps[before]
                        coverage.note(obs, action.kind, step["rejected"] is None and step["observation"] != obs)

        def teardown(self) -> None:
            with _remembered(seen, counter["examples"]):
                try:
                    super().teardown()
                except (Exception, SystemExit) as exc:
                    self.noted(exc, [s["action"] for s in self.session.steps[:self.session.settle_from]],
                               settling=True)
                    raise

        def noted(self, exc: BaseException, done: list[dict], settling: bool = False) -> None:
            """Keep on ``exc`` where it was raised and the steps that reached it (the one that
            raised last, unless ``settling``; ``deployspec.reached``), and for a search of the
            reference the steps themselves (made fewest after the search)."""
            reached.note(exc, where_raised(done, settling))
            if on_reference and not isinstance(exc, RuleHungError):
                seen["raised"] = (exc, done, settling)

    def unshrunk() -> Result:
        """The shortest violation seen, as it was (for a search that could not finish)."""
        v = seen["violation"]
        trace = traces.build(model=model.name, variant=variant_name, config=config.to_json(),
                             property=prop.name, engine=engine_name, seed=seed, session=v.session)
        return Result(model.name, variant_name, prop.name, engine_name, "violated",
                      trace_length=len(trace["steps"]), message=trace["violation"]["message"],
                      stats={"examples": counter["examples"], "steps": counter["steps"], "seed": seed,
                             "found_in_example": seen["found_in_example"], "shrunk": False},
                      cause=v.violation.cause, trace=trace)

    started = time.perf_counter()
    the_settings = settings(
        max_examples=max_examples,
        stateful_step_count=STEPS,
        deadline=None,
        database=None,
        derandomize=False,
        report_multiple_bugs=False,
        suppress_health_check=list(HealthCheck),  # the search is the product, not a test
        phases=(Phase.generate, Phase.shrink),
        print_blob=False,
        # the search reports its findings itself: Hypothesis's own printing (the steps
        # of a flaky example) would land on stdout, in the middle of --json output
        verbosity=Verbosity.quiet,
    )
    previous_seed = hypothesis.core.global_force_seed
    hypothesis.core.global_force_seed = seed
    violation = None
    try:
        # the seed alone decides the draws (engines/seeding.py); and Hypothesis prints what a
        # rule of a design handed in raised, running its __str__, which must not end deployspec
        # (a bare except in traceback's printing then says the message failed)
        with fixed_constants(), exit_refused():
            run_state_machine_as_test(Counted, settings=the_settings)
    except PropertyViolated as exc:
        violation = exc
    except Flaky as exc:  # the implementation under test is not deterministic (or failed meanwhile)
        interruption.raise_if_pending()  # or a step was interrupted: a stop, not a verdict
        # the violation seen, if any, is real though it did not repeat: its trace as it
        # was and the search's counts go back with the error, for the caller to keep
        as_seen = unshrunk() if "violation" in seen else None
        return Result(model.name, variant_name, prop.name, engine_name, "error",
                      message=_unrepeated(exc, variant_name if on_reference else None),
                      stats={"examples": counter["examples"], "steps": counter["steps"], "seed": seed,
                             "seconds": round(time.perf_counter() - started, 3),
                             **{k: seen[k] for k in ("found_in_example",) if k in seen}},
                      trace=as_seen.trace if as_seen else None, cause=as_seen.cause if as_seen else None)
    except Unsatisfiable:  # every run broke in a way already found (skip_causes)
        pass
    except _Abandoned as abandoned:
        raise abandoned.error from None
    except BaseException as exc:
        if on_reference and seen.get("raised", (None,))[0] is exc:  # a design's rule raised
            _shortened(model, variant, config, prop, exc, *seen["raised"][1:])
        # an implementation under contract failed (ImplementationFault, which carries
        # ``found``), perhaps while Hypothesis was shrinking a violation: keep the
        # shortest violation seen, as it is (the implementation cannot shorten it now)
        if "violation" in seen and getattr(exc, "found", False) is None:
            exc.found = unshrunk()
        raise
    finally:
        hypothesis.core.global_force_seed = previous_seed
    elapsed = time.perf_counter() - started
    stats = {
        "examples": counter["examples"],
        "steps": counter["steps"],
        "seconds": round(elapsed, 3),
        "steps_per_second": round(counter["steps"] / elapsed) if elapsed else None,
        "seed": seed,
    }
    if violation is None:
        return Result(model.name, variant_name, prop.name, engine_name, "holds", stats=stats)
    # (the examples after it shrank it; those up to it are what this seed needs to find it)
    stats["found_in_example"] = seen["found_in_example"]
    trace = traces.build(
        model=model.name,
        variant=variant_name,
        config=config.to_json(),
        property=prop.name,
        engine=engine_name,
        seed=seed,
        session=violation.session,
    )
    # Hypothesis's shrinker can leave long runs of steps that do nothing
    # (41 steps for a 5-step user_scale_not_lost on capi-current, seed 0);
    # remove what replay shows is not needed
    if on_reference:
        trace = minimize(trace)
    elif shrink is not None:
        trace = shrink(trace)
    return Result(
        model.name,
        variant_name,
        prop.name,
        engine_name,
        "violated",
        trace_length=len(trace["steps"]),
        message=trace["violation"]["message"],
        stats=stats,
        cause=violation.violation.cause,
        trace=trace,
        **traces.keep(trace, out_dir),
    )
