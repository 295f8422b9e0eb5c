"""Details of handing in designs of one's own (deployspec.variant_plugins) that the mutation
pass found unpinned: what loads once, and what is read as plain objects (what is refused:
test_variant_plugins_refused.py)."""

import json
from importlib.metadata import EntryPoint

import pytest

from deployspec import models, variant_plugins

from .cli_runs import run
from .designs_handed_in import EVOLVED, EVOLVED_SLOTS, MINE


def test_a_module_named_twice_in_the_variable_is_loaded_once(capsys, outside):
    """``DEPLOYSPEC_VARIANTS=a,a`` (a script adding its module to what is set): one load, not
    a refusal of the design as taken by itself."""
    outside("finalize_in_txn, finalize_in_txn")
    status, out, err = run(capsys, "variants")
    assert (status, err) == (0, "") and out.count(f"  {MINE} ") == 1


def test_an_entry_point_naming_its_list_and_the_variable_its_module_load_once(capsys, outside, monkeypatch):
    """The entry point ``mod:VARIANTS`` and ``DEPLOYSPEC_VARIANTS=mod`` are the same module."""
    point = EntryPoint("mine", "finalize_in_txn:VARIANTS", variant_plugins.GROUP)
    monkeypatch.setattr(variant_plugins, "entry_points", lambda group: [point])
    outside("finalize_in_txn")
    status, out, err = run(capsys, "variants")
    assert (status, err) == (0, "") and out.count(f"  {MINE} ") == 1


def test_a_file_name_whose_module_lacks_a_dependency_names_the_dependency(capsys, hand_in, outside):
    """``DEPLOYSPEC_VARIANTS=mine.py`` imports ``mine`` before it fails; when that fails for a
    missing dependency, the dependency is what to install, not the name to change."""
    hand_in("needsdep", "import no_such_dependency_here\n")
    outside("needsdep.py")
    status, _, err = run(capsys, "variants")
    assert status == 2 and err.count("\n") == 1
    assert "No module named 'no_such_dependency_here'" in err and "is not a module name" not in err


def test_variants_given_as_a_dict_by_name_are_its_values(capsys, hand_in):
    """``VARIANTS = {"name": variant}`` (a registry, as capi.VARIANTS is) hands in the designs,
    not their names (which were each refused as "str ... is not a variant")."""
    hand_in("registry", "import attrs\nfrom deployspec.reference.capi.variants import CAPI_CURRENT\n"
                        "VARIANTS = {'mine-by-name': attrs.evolve(CAPI_CURRENT, name='mine-by-name')}\n")
    status, out, err = run(capsys, "variants")
    assert (status, err) == (0, "") and "mine-by-name" in out
    assert models.find_variant("mine-by-name")[0].name == "capi"


def test_a_design_s_name_and_bounds_of_subclassed_types_are_read_as_plain_ones(capsys, hand_in):
    """A name of a str subclass (a ``(str, Enum)`` member; here one whose ``__hash__``
    raised through deployspec variants) is read as plain text, and an empty ``explore``
    of another mapping type as ``{}`` (a MappingProxyType ended variants --json in a traceback)."""
    hand_in("subclassed", "import enum, types\n"
            "class Name(str, enum.Enum):\n    MINE = 'my-enum'\n"
            "    def __hash__(self):\n        raise RuntimeError('hash')\n"
            + EVOLVED.format("name=Name.MINE, explore=types.MappingProxyType({})"))
    status, out, err = run(capsys, "variants", "--json")
    assert status == 0, err
    (mine,) = [v for v in json.loads(out)["capi"]["variants"] if v["name"] == "my-enum"]
    assert mine["explore"] == {}
    capi = models.get_model("capi").variant("my-enum")
    assert type(capi.name) is str and type(capi.explore) is dict


def test_where_a_design_breaks_beyond_the_search_is_compared_as_a_trace_s_bounds(hand_in):
    """``Beyond(config=...)`` written with tuples, as the configuration holds them: a complete
    proof within bounds that include them must disagree with the declaration (the search
    would have met the trace), not pass as if those bounds were never reached."""
    from deployspec.declarations import matches

    hand_in("beyondtuples", "import attrs\nfrom deployspec.reference.core import Beyond\n"
            "from deployspec.reference.capi.variants import CAPI_SAFE\n"
            "VARIANTS = [attrs.evolve(CAPI_SAFE, name='tupled', declares=frozenset(), violates_beyond={\n"
            "    'single_active_deployment': Beyond(config={'max_in_flight': (1, 2), 'max_deployments': 3},\n"
            "                                       trace=None, why='w')})]\n")
    capi = models.get_model("capi")
    assert capi.variant("tupled").violates_beyond["single_active_deployment"].config == {
        "max_in_flight": [1, 2], "max_deployments": 3}
    proof = {"complete": True, "bounds": {**capi.default_config().to_json(), "max_in_flight": [1, 2, 3]}}
    assert not matches(capi, "tupled", "single_active_deployment", "holds", proof)
    short = {**proof, "bounds": {**proof["bounds"], "max_deployments": 2}}
    assert matches(capi, "tupled", "single_active_deployment", "holds", short)


def test_a_rule_that_calls_deployspec_s_code_wrongly_is_named_by_that_place(hand_in):
    """A rule of one's own raising inside a shipped rule it calls: the place in deployspec's
    code and the question to ask of the rule (its arguments, what it returns), not only the
    user's line, which reads as if that line were wrong by itself."""
    hand_in("callsshipped", "import attrs\nfrom deployspec.reference.capi.variants import CAPI_CURRENT\n"
            "def mine(state):\n    return CAPI_CURRENT.previous_deployment(None)\n"
            "VARIANTS = [attrs.evolve(CAPI_CURRENT, name='calls', previous_deployment=mine)]\n")
    rule = models.get_model("capi").variant("calls").previous_deployment
    with pytest.raises(AttributeError) as caught:
        rule(None)
    said = variant_plugins.fault("calls", caught.value)
    assert said.startswith("variant calls (DEPLOYSPEC_VARIANTS module callsshipped) raised AttributeError: ")
    assert "(in deployspec's " in said and "callsshipped.py" not in said


def test_an_interrupt_while_a_design_loads_is_an_interrupt(outside):
    """Ctrl-C during a slow import stops the run as an interrupt (exit 130), not as a
    usage error blaming the design."""

    def load():
        raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        variant_plugins._load("somewhere", load, {})


def test_a_shipped_design_s_fault_is_deployspec_s_own(outside):
    """An exception from a shipped design's rules is a bug of deployspec: its traceback is
    wanted, not the one line said of a design handed in."""
    models.get_model("capi")
    assert variant_plugins.fault("capi-safe", RuntimeError("boom")) is None


# --- the registry of models (deployspec.models) ---------------------------------------


def test_a_conformance_property_starts_from_the_configuration_it_is_given():
    """``contract --bound start=release`` compares the implementation with the reference
    started as asked, not from the model's default start."""
    import attrs

    slots = models.get_model("slots")
    released = attrs.evolve(slots.default_config(), start="release")
    prop = slots.property("conforms_to_slots-pipeline-immutable", released)
    assert prop.initial == slots.initial_state(released) != slots.initial_state(slots.default_config())


def test_each_model_splits_partitioned_searches_by_its_own_partition():
    """``--workers`` keeps most moves inside one worker by owning states by the part few
    moves change; without it the whole state decides and most moves cross workers."""
    from deployspec.reference.capi import model as capi_model
    from deployspec.reference.slots import model as slots_model

    assert models.get_model("capi").partition is capi_model.partition
    assert models.get_model("slots").partition is slots_model.partition


def test_a_model_is_built_once_per_process(outside):
    """Not rebuilt, with every design handed in checked again, at each look-up (find_variant
    asks every model; a command looks a model up many times). Only the cost is at stake."""
    assert models.get_model("capi") is models.get_model("capi")


def test_a_configuration_that_is_not_an_object_is_refused():
    """An empty list read field by field is a configuration with no field changed: taken
    for the default one instead of refused (a trace's is checked by its schema first; the
    Python API's callers are not)."""
    with pytest.raises(TypeError, match="configuration must be a JSON object"):
        models.get_model("capi").config_from_json([])


def test_a_slots_design_is_found_in_the_slots_model():
    """``replay`` and ``serve`` look a design up by its name alone: a slots design run as a
    capi one would be stepped on the wrong model's states."""
    model, variant = models.find_variant("slots-pipeline-immutable")
    assert (model.name, variant.name) == ("slots", "slots-pipeline-immutable")


def test_a_slots_proof_without_a_swap_or_an_image_set_is_vacuous(capsys, hand_in):
    """Its properties are about what a release does: a proof in which no swap took effect
    (or no push) says nothing, and must say so; so does one where no image was ever set
    (a pipeline that never deploys swapped two empty slots and held everything, plainly)."""
    assert models.get_model("capi").essential == ("deploy",)
    hand_in("neverdeploys", "from deployspec.reference.core import Rejected\n"
            "def never(state):\n    return Rejected('this pipeline never deploys')\n"
            + EVOLVED_SLOTS.format("name='slots-never-deploys', reference=never"))
    status, out, _ = run(capsys, "check", "--model", "slots", "--variant", "slots-never-deploys", "--engine",
                         "explore", "--property", "rollback_restores_previous", "--json")
    (result,) = json.loads(out)["results"]
    assert (status, result["verdict"], result["stats"]["vacuous"]) == (0, "holds", ["set_image or deliver_webhook"])
    assert "vacuous: no set_image or deliver_webhook ever took effect" in result["message"]


def test_a_vacuous_proof_is_no_green_junit_case(capsys, hand_in, tmp_path):
    """The table marks it ``?``; its --junit case passed as "holds (explore), as declared",
    all green for a design that never deploys. Skipped with the reason, as contract's."""
    from .junit_reports import outcome_of, totals_agree

    hand_in("neverdeploys2", "from deployspec.reference.core import Rejected\n"
            "def never(state):\n    return Rejected('this pipeline never deploys')\n"
            + EVOLVED_SLOTS.format("name='slots-never-deploys', reference=never"))
    report = tmp_path / "r.xml"
    for declared in ((), ("--variant", "slots-never-deploys")):  # the matrix's cell, and a close look
        status, _, _ = run(capsys, "check", "--model", "slots", *declared, "--engine", "explore",
                           "--property", "rollback_restores_previous", "--junit", str(report))
        case = next(c for c in totals_agree(report).iter("testcase") if "never-deploys" in c.get("classname"))
        assert (status, outcome_of(case)) == (0, "skipped"), declared
        assert case.find("skipped").get("message") == (
            "holds ?: vacuous, no set_image or deliver_webhook took effect within the bounds")


def test_a_slots_pipeline_that_deploys_by_its_webhook_only_is_not_vacuous(capsys, hand_in):
    """cobalt's design proposal (#212) deploys to staging by the registry's webhook, never
    by set_image: its proofs judged what its deploys do, and were not to be called vacuous."""
    hand_in("webonly", "import attrs\nfrom deployspec.reference.core import Rejected\n"
            "from deployspec.reference.slots.variants import SLOTS_WEBHOOK_STAGING_TAG\n"
            "def never(state):\n    return Rejected('deploys through the webhook only')\n"
            "VARIANTS = [attrs.evolve(SLOTS_WEBHOOK_STAGING_TAG, name='webhook-only', reference=never)]\n")
    status, out, _ = run(capsys, "check", "--model", "slots", "--variant", "webhook-only", "--engine", "explore",
                         "--property", "push_does_not_touch_production", "--json")
    (result,) = json.loads(out)["results"]
    assert (status, result["verdict"]) == (0, "holds")  # its webhook targets staging: production untouched
    assert result["stats"]["vacuous"] == [] and result["stats"]["by_action"]["deliver_webhook"] > 0


def test_a_slots_trace_shown_as_html_calls_its_lanes_slots(capsys):
    """The picture's column is the model's lanes: slots, not web processes."""
    from .designs_handed_in import FINDINGS

    trace = FINDINGS.parent / "slots" / "scenario-1-rollback-by-swap.json"
    status, out, _ = run(capsys, "show", str(trace), "--format", "html")
    assert status == 0 and "<th>slots (digest each; x failing, ? none, . empty)</th>" in out
    assert "web process" not in out
