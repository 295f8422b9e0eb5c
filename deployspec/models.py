"""The registry of models: everything an engine needs to know about one.

A model bundles its action vocabulary, its variants, its properties, its
configuration (the bounds) and functions over observations: which actions
to try next, which ones to probe in a contract run besides, and what the
platform does when left alone (settling).
"""

from __future__ import annotations

from collections.abc import Callable
from importlib import resources
from typing import Any

import attrs

from deployspec.reference.core import Action, ActionError, action_from_json
from deployspec.spec.core import Property
from deployspec.text import quoted


class UsageError(Exception):
    """Bad input from the user: reported as one line, exit status 2."""


#: how a variant not shipped comes to be known (``deployspec.variant_plugins``), for the
#: errors that name one unknown
HANDED_IN = ("a design of your own is handed in with DEPLOYSPEC_VARIANTS=MODULE or an entry point: "
             "docs/variants.md")


def _always(variant: Any) -> bool:
    return True


@attrs.frozen
class Widening:
    """Bounds under which action kinds the default configuration leaves nothing to do take
    effect on the reference designs: what a contract run's note on what never took effect
    suggests (``--bound canary_plans=…`` for ``continue_``)."""

    #: the ``--bound NAME=VALUE`` to suggest, quoted for a shell where it needs it
    bound: str
    #: the action kinds it lets act
    kinds: tuple[str, ...]
    #: a configuration (``to_json``) -> whether it already gives them something to do
    given_in: Callable[[dict], bool]
    #: a variant -> whether any bounds give them something to do on it (capi designs
    #: before canaries refuse every ``continue_``); a run whose ``--reference`` has not
    #: is told so instead of the bound
    offered_by: Callable[[Any], bool] = _always
    #: why a design that ``offered_by`` says no to never has them act
    absent: str = ""

    @property
    def name(self) -> str:
        """The bound it sets (``canary_plans``)."""
        return self.bound.strip("'").split("=", 1)[0]


def nothing_to_do(variant: str, kinds: str, widening: Widening) -> str:
    """That a design has ``kinds`` take effect under no bounds, and why (its ``absent``):
    said alike by ``check``'s table, its JUnit cases and a contract run's notes."""
    why = f" ({widening.absent})" if widening.absent else ""
    return f"{variant} gives {kinds} nothing to do under any bounds{why}"


@attrs.frozen
class Model:
    name: str
    description: str
    vocabulary: dict[str, type[Action]]
    variants: dict[str, Any]
    properties: tuple[Property, ...]
    config_type: type
    initial_state: Callable[[Any], Any]
    observe: Callable[[Any], dict]
    candidate_actions: Callable[[dict, Any], list[Action]]
    settle_action: Callable[[dict], Action | None]
    schema_file: str
    lanes: str  # what one lane of a picture is: "web process" or "slot"
    #: obs -> (lanes text, deployments text) for ``show --format text``; None = the capi one
    render_state: Callable[[dict], tuple[str, str]] | None = None
    #: column titles for those two texts; None = the capi ones
    render_titles: tuple[str, str] | None = None
    #: a lane's item (a web process, a slot) -> its label in a picture, a part per thing a
    #: step may change; None = a part per scalar field (``timeline.label_parts``)
    lane_parts: Callable[[dict], list[str]] | None = None
    #: a second heading line: how a line of the two columns reads
    render_key: tuple[str, str] = ("P<process>[dr<droplet>]:<instances>", "d<deployment>:<state>/<reason>")
    #: state -> the representative of its symmetry class, for the explorer
    #: (must keep every property's verdict); None = states are already canonical
    canonical: Callable[[Any], Any] | None = None
    #: state -> the part of it that decides which worker owns the state in a
    #: partitioned search (``--workers``): a part that few moves change keeps most
    #: moves inside one worker; None = the whole state (any choice is correct)
    partition: Callable[[Any], Any] | None = None
    #: variant -> its own ``candidate_actions`` (obs, config -> actions): where a design's
    #: own rules may accept what ``candidate_actions`` leaves out as every shipped
    #: design's refusal, the searches offer it there; None = one for every design
    candidates_for: Callable[[Any], Callable[[dict, Any], list[Action]]] | None = None
    #: obs, config -> the actions ``candidate_actions`` leaves out there because every
    #: design refuses them or they change nothing: stutters for exploring the
    #: reference, but a contract run tries them on the implementation too
    #: (``build_machine(probes=True)``); None = nothing is left out
    probe_actions: Callable[[dict, Any], list[Action]] | None = None
    #: the action kinds without which the model's properties say nothing: an
    #: exhaustive proof in which one of them never moved is vacuous (e.g. a
    #: deploy every variant of the time refused under these bounds), and says so; an
    #: entry may be a tuple of kinds any one of which will do (slots deploys by
    #: ``set_image`` or by a webhook's delivery: cobalt #212's pipeline does the latter)
    essential: tuple[str | tuple[str, ...], ...] = ()
    #: bounds under which action kinds that the default configuration leaves nothing to
    #: do take effect on the reference designs, in the order a contract run's note on
    #: what never took effect suggests them
    widening: tuple[Widening, ...] = ()
    #: obs -> its situation, a coarse reading a contract run counts its steps by
    #: (``spec/situations.py``); None = not counted
    situation: Callable[[dict], str] | None = None
    #: a configuration (``to_json``), a variant (the run's ``--reference``; None: any) ->
    #: the situations the reference designs (that one) reach under it, in report order
    situations: Callable[[dict, Any], tuple[str, ...]] = lambda config, variant: ()
    #: a user's action, the observation after it -> how the call, accepted, came to nothing
    #: (App Service: a swap whose moved slot fails to start aborts, production untouched), or
    #: None; an incident's proof names these beside the refusals, both being part of what
    #: happened. None = an accepted call always takes effect
    failed_call: Callable[[Action, dict], str | None] | None = None

    def offered(self, variant: Any) -> Callable[[dict, Any], list[Action]]:
        """The candidate actions the searches of ``variant`` try (``candidates_for``)."""
        return self.candidate_actions if self.candidates_for is None else self.candidates_for(variant)

    def vacuous(self, moved: Callable[[str], bool], prop: Property | None = None) -> list[str]:
        """The essential actions (``prop``'s own if it names them, else the model's) none of
        which ``moved`` (a kind -> whether it took effect), each as a proof's note names it
        (``set_image or deliver_webhook``)."""
        essential = prop.essential if prop is not None and prop.essential is not None else self.essential
        out = []
        for entry in essential:
            kinds = (entry,) if isinstance(entry, str) else entry
            if not any(moved(k) for k in kinds):
                out.append(" or ".join(kinds))
        return out

    def never_acts(self, kinds, variant) -> Widening | None:
        """The ``Widening`` of ``kinds`` that ``variant`` is not ``offered_by``: none of them
        takes effect on it under any bounds (see :func:`nothing_to_do`); else None."""
        return next((w for w in self.widening if set(kinds) <= set(w.kinds) and not w.offered_by(variant)), None)

    @property
    def lanes_plural(self) -> str:
        """``lanes`` in the plural, for column titles ("web processes", "slots")."""
        return self.lanes + ("es" if self.lanes.endswith("s") else "s")

    def variant(self, name: str):
        try:
            return self.variants[name]
        except KeyError:
            other = self._model_of(name)
            if other is not None:  # (names are unique across models)
                raise UsageError(f"{quoted(name)} is a variant of model {other}, not {self.name} "
                                 f"(known for {self.name}: {', '.join(self.variants)})") from None
            raise UsageError(
                f"unknown variant {quoted(name)} for model {self.name}{did_you_mean(name, self.variants)} "
                f"(known: {', '.join(self.variants)}; {HANDED_IN})"
            ) from None

    def _model_of(self, name: str) -> str | None:
        """The other model with a variant ``name``, if one loads (a design of one's own for
        another model, its bounds refused, must not stop this one: docs/variants.md)."""
        for m in model_names():
            if m == self.name:
                continue
            try:
                if name in get_model(m).variants:
                    return m
            except UsageError:
                continue
        return None

    def property(self, name: str, config: Any = None, subject: str = "implementation") -> Property:
        """The property ``name``; a ``conforms_to_<variant>`` one is built here, its
        messages naming ``subject`` as what differs from the reference."""
        for p in self.properties:
            if p.name == name:
                return p
        from deployspec.contract.conformance import PREFIX, conformance_property

        if name.startswith(PREFIX):  # conforms_to_<variant>: a trace property built on demand
            return conformance_property(self, name[len(PREFIX):],
                                        self.default_config() if config is None else config, subject)
        raise unknown_property(name, [p.name for p in self.properties], [self.name])

    def action(self, data: Any) -> Action:
        return action_from_json(self.vocabulary, data)

    def default_config(self, variant: Any = None) -> Any:
        base = self.config_type()
        extra = getattr(variant, "config", None)
        return attrs.evolve(base, **extra) if extra else base

    def replay_config(self, config: Any, recorded: str | None, target: str) -> Any:
        """The configuration a trace replays with on variant ``target``: ``target``'s own
        (for slots, where its Terraform leaves the app), with every bound the search
        was given on purpose, i.e. where the trace's ``config`` differs from the own
        configuration of ``recorded``, the variant its search started from (None: the
        model's default; ``replay.recorded_on``)."""
        if recorded == target:
            return config
        own = self.default_config(self.variants.get(recorded))
        chosen = {f.name: getattr(config, f.name) for f in attrs.fields(type(config))
                  if getattr(config, f.name) != getattr(own, f.name)}
        combined = attrs.evolve(self.default_config(self.variant(target)), **chosen)
        try:  # the bounds chosen for one design may not fit another's own (instances > max)
            return self.config_from_json(combined.to_json())
        except (ValueError, TypeError) as exc:
            given = ", ".join(f"{k}={quoted(v)}" for k, v in sorted(chosen.items())) or "none"
            raise UsageError(f"cannot replay on {target}: the trace's bounds ({given}) with "
                             f"{target}'s own configuration are invalid: {exc}") from None

    def with_bounds(self, config: Any, bounds: dict[str, Any], given: str = "--bound") -> Any:
        """``config`` with some bounds (JSON values) changed: each value of the type the
        bound has, the result a valid configuration, else a one-line UsageError starting
        with ``given``, what gave them. ``--bound NAME=VALUE`` of ``check`` and
        ``contract``, and the ``config`` and ``explore`` of a design handed in
        (``variant_plugins``): one check, so a design cannot run bounds --bound refuses."""
        import json

        current = config.to_json()
        for name, value in bounds.items():
            was = current.get(name)
            if was is not None and value is not None and type(value) is not type(was):
                raise UsageError(f"{given} {name}: expected {type(was).__name__} like {json.dumps(was)}, "
                                 f"got {json.dumps(value)}")
        merged = current | bounds
        sized = getattr(self.config_type, "sized", None)  # bounds that follow others unless given
        if sized is not None:
            merged = sized(merged, bounds)
        try:
            return self.config_from_json(merged)
        except (ValueError, TypeError) as exc:
            raise UsageError(f"{given}: {exc}") from None

    def config_from_json(self, data: Any) -> Any:
        if not isinstance(data, dict):
            raise TypeError("configuration must be a JSON object")
        return self.config_type.from_json(data)

    def schema(self) -> dict:
        import json

        text = resources.files("deployspec.spec").joinpath(self.schema_file).read_text()
        return json.loads(text)


def bound_words(bounds) -> list[str]:
    """``(name, value)`` pairs (or a dict) as the ``--bound NAME=VALUE`` words a command
    printed for a shell takes back (VALUE as compact JSON)."""
    import json

    pairs = bounds.items() if isinstance(bounds, dict) else bounds
    return [w for name, value in pairs for w in ("--bound", f"{name}={json.dumps(value, separators=(',', ':'))}")]


def bounds_given(pairs: list[tuple[str, Any]] | None) -> dict[str, Any] | None:
    """``--bound NAME=VALUE`` options as a dict (None: none given); one name given twice
    with different values is a usage error, not the last one silently winning."""
    if not pairs:
        return None
    import json

    out: dict[str, Any] = {}
    for name, value in pairs:
        # (as JSON compares: true is not 1, nor 1.0 an int; the keys of an object in any order)
        if name in out and json.dumps(out[name], sort_keys=True) != json.dumps(value, sort_keys=True):
            raise UsageError(f"--bound {name}: given twice ({json.dumps(out[name])} and {json.dumps(value)})")
        out[name] = value
    return out


def _capi() -> Model:
    from deployspec.reference import capi
    from deployspec.reference.capi import model as capi_model
    from deployspec.spec import capi as capi_spec
    from deployspec.spec import situations

    return Model(
        name="capi",
        description="Cloud Foundry rolling deployments (cloud_controller_ng)",
        vocabulary=capi.VOCABULARY,
        variants=dict(capi.VARIANTS),
        properties=capi_spec.PROPERTIES,
        config_type=capi_model.CapiConfig,
        initial_state=capi_model.initial_state,
        observe=capi.observe,
        candidate_actions=capi_model.candidate_actions,
        candidates_for=capi_model.candidates_for,
        probe_actions=capi_model.probe_actions,
        settle_action=capi_model.settle_action,
        partition=capi_model.partition,
        essential=("deploy",),
        widening=(Widening("'canary_plans=[[],[50],[100],[50,100]]'", ("continue_",),
                           lambda config: bool(config["canary_plans"]), offered_by=capi_model.takes_canaries,
                           absent="it has no canary deployments"),),
        situation=situations.capi_situation,
        situations=lambda config, variant: situations.capi_situations(
            config, canaries=variant is None or capi_model.takes_canaries(variant)),
        schema_file="capi.observation.schema.json",
        lanes="web process",
    )


def _slots() -> Model:
    from deployspec.reference import slots
    from deployspec.reference.slots import model as slots_model
    from deployspec.reference.slots.render import KEY, TITLES, lane_parts, render_state
    from deployspec.spec import situations
    from deployspec.spec import slots as slots_spec

    return Model(
        name="slots",
        description="Azure App Service deployment slots fed by a container registry (cobalt #316)",
        vocabulary=slots.VOCABULARY,
        variants=dict(slots.VARIANTS),
        properties=slots_spec.PROPERTIES,
        config_type=slots_model.SlotsConfig,
        initial_state=slots_model.initial_state,
        observe=slots.observe,
        candidate_actions=slots_model.candidate_actions,
        probe_actions=slots_model.probe_actions,
        settle_action=slots_model.settle_action,
        failed_call=slots_model.failed_call,
        partition=slots_model.partition,
        essential=("push", "swap", ("set_image", "deliver_webhook")),
        # slots on a tag pull anew on a restart, a recycle, a retry; a webhook delivers
        widening=(Widening("start=release", ("restart", "recycle", "crash_retry"),
                           lambda config: config.get("start", "empty") != "empty"),
                  Widening("start=webhook", ("deliver_webhook", "restart", "recycle", "crash_retry"),
                           lambda config: config.get("start") in ("webhook", "webhook-staging"))),
        situation=situations.slots_situation,
        situations=lambda config, variant: situations.slots_situations(config),
        schema_file="slots.observation.schema.json",
        lanes="slot",
        render_state=render_state,
        render_titles=TITLES,
        render_key=KEY,
        lane_parts=lane_parts,
    )


def _with_outside_variants(model: Model) -> Model:
    """``model`` (as its loader builds it, with its shipped variants) with the variants
    handed in from outside (``variant_plugins``) beside them; the model is passed
    whole, as their bounds are checked by it."""
    from deployspec.reference import capi, slots
    from deployspec.variant_plugins import with_outside_variants

    variants = with_outside_variants(model, {"capi": capi.CapiVariant, "slots": slots.SlotsVariant},
                                     taken=[*capi.VARIANTS, *slots.VARIANTS])
    return attrs.evolve(model, variants=variants)


_LOADERS: dict[str, Callable[[], Model]] = {"capi": _capi, "slots": _slots}
_CACHE: dict[str, Model] = {}


def model_names() -> list[str]:
    return list(_LOADERS)


def get_model(name: str) -> Model:
    if name not in _LOADERS:
        raise UsageError(f"unknown model {quoted(name)} (known: {', '.join(_LOADERS)})")
    if name not in _CACHE:
        _CACHE[name] = _with_outside_variants(_LOADERS[name]())
    return _CACHE[name]


def find_variant(name: str) -> tuple[Model, Any]:
    """The model a variant name belongs to (variant names are unique across models)."""
    for m in model_names():
        model = get_model(m)
        if name in model.variants:
            return model, model.variants[name]
    known = [v for m in model_names() for v in get_model(m).variants]
    raise UsageError(f"unknown variant {quoted(name)}{did_you_mean(name, known)} (known: {', '.join(known)}; "
                     f"{HANDED_IN})")


def unknown_property(name: Any, known: list[str], models: list[str], *, contract: bool = False,
                     reference: str | None = None) -> UsageError:
    """The error for a property no model of ``models`` has (a check, for a ``contract``
    run, whose ``--reference`` is ``reference``): what it may be instead (a conformance
    check, a property of another model, a misspelling), then the names known."""
    from deployspec.contract.conformance import PREFIX

    where = f" for model {models[0]}" if len(models) == 1 else ""
    if isinstance(name, str) and name.startswith(PREFIX):
        hint = _conformance_hint(name[len(PREFIX):], models[0], contract, reference, PREFIX)
    else:
        other = _model_with_property(name, models)
        hint = (f": a property of model {other}, not {' or '.join(models)}" if other is not None
                else did_you_mean(name, known))
    what = "check" if contract else "property"
    return UsageError(f"unknown {what} {quoted(name)}{where}{hint} (known: {', '.join(dict.fromkeys(known))})")


def _conformance_hint(variant: str, model: str, contract: bool, reference: str | None, prefix: str) -> str:
    """What a ``conforms_to_VARIANT`` name (``prefix`` + ``variant``) needs: a contract run,
    with that variant, of this model, as ``--reference``."""
    if not contract:
        return ": a conformance check is deployspec contract's, with --reference VARIANT"
    if reference is not None:
        return f": this run's conformance check is {prefix}{reference}, after its --reference"
    variants = get_model(model).variants
    if variant in variants:
        return f": a conformance check needs --reference {variant}"
    other = get_model(model)._model_of(variant) if variant else None
    if other is not None:
        return f": {variant} is a variant of model {other}, not {model}"
    close = closest(variant, variants)
    if close is not None:
        return f": did you mean {quoted(prefix + close)}, with --reference {close}?"
    return ": a conformance check needs --reference VARIANT, a variant of the model"


def _model_with_property(name: Any, models: list[str]) -> str | None:
    for m in model_names():
        if m not in models and any(p.name == name for p in get_model(m).properties):
            return m
    return None


def did_you_mean(name: Any, known) -> str:
    """``: did you mean 'capi-current'?`` for the known name closest to a mistyped one, or ""."""
    close = closest(name, known)
    return f": did you mean {quoted(close)}?" if close is not None else ""


def closest(name: Any, known) -> str | None:
    """The known name closest to ``name`` (a misspelling of it), or None."""
    import difflib

    if not isinstance(name, str):
        return None
    close = difflib.get_close_matches(name, list(known), n=1)
    return close[0] if close else None


__all__ = ["ActionError", "Model", "UsageError", "bounds_given", "find_variant", "get_model", "model_names"]
