"""``swap_keeps_production_serving``, App Service's swap judged by what it promotes: a
completed swap puts in production only containers that started, one that does not
complete leaves production as it was (docs/properties.md)."""

from deployspec.reference.slots.actions import Push, SetImage, Swap

from deployspec.models import get_model

from .slots_property_traces import DEPLOY_FOO, run, slot, verdict, world

SLOTS = get_model("slots")
SWAP = {"type": "swap"}
FAILING = {"digest": 1, "status": "crash_loop"}


def test_a_completed_swap_that_promotes_a_failing_container_breaks_production_s_service():
    v = run("swap_keeps_production_serving", world(slot("A", 0), slot("B", FAILING), tag=1),
            (SWAP, world(slot("B", FAILING), slot("A", 0), tag=1, last_swap="completed")))
    assert v.message == ("swap at step 0 promoted containers that fail to start: production (site B) runs "
                         "[d1 crash_loop]; App Service stops a swap whose staging instances do not start")


def test_a_swap_is_judged_by_what_it_promotes_not_by_what_it_leaves_in_staging():
    # the former production, now staging, restarts and may fail there: App Service allows it
    assert run("swap_keeps_production_serving", world(slot("A", 0), slot("B", 1), tag=1),
               (SWAP, world(slot("B", 1), slot("A", FAILING), tag=1, last_swap="completed"))) is None
    # a placeholder (no image) counts as started, as in the model's step 2
    assert run("swap_keeps_production_serving", world(slot("A", 0), slot("B", None, image=None)),
               (SWAP, world(slot("B", None, image=None), slot("A", 0), last_swap="completed"))) is None


def test_an_aborted_swap_leaves_production_as_it_was_even_when_it_was_failing():
    down = slot("A", FAILING)
    assert run("swap_keeps_production_serving", world(down, slot("B", 0), tag=1),
               (SWAP, world(down, slot("B", 0), tag=1, last_swap="aborted"))) is None
    v = run("swap_keeps_production_serving", world(slot("A", 0), slot("B", FAILING), tag=1),
            (SWAP, world(slot("A", FAILING), slot("B", FAILING), tag=1, last_swap="aborted")))
    assert v.message == ("swap at step 0 left production on site A but changed its instances from "
                         "[d0 running] to [d1 crash_loop]")
    # production's image reference changed, its containers not (yet): as it was means all of it
    v = run("swap_keeps_production_serving", world(slot("A", 0), slot("B", 1), tag=1),
            (SWAP, world(slot("A", 0, image={"digest": 1}), slot("B", 1), tag=1, last_swap="aborted")))
    assert v.message == "swap at step 0 left production on site A but changed its image reference or settings"
    # one that says it completed and trades nothing: a swap back that rolls nothing back
    v = run("swap_keeps_production_serving", world(slot("A", 0), slot("B", 1), tag=1),
            (SWAP, world(slot("A", 0), slot("B", 1), tag=1, last_swap="completed")))
    assert v.message == ("swap at step 0 reports completed but production still routes to site A: a completed "
                         "swap trades the sites, an aborted one does not")


def test_a_refused_swap_that_moved_production_is_judged_as_a_swap():
    v = run("swap_keeps_production_serving", world(slot("A", 0), slot("B", FAILING), tag=1),
            (SWAP, world(slot("B", FAILING), slot("A", 0), tag=1), "busy"))
    assert v is not None and v.message.startswith("swap at step 0 promoted containers that fail to start")


def test_only_a_swap_is_judged_by_the_swap_s_property():
    # a restart that pulls a failing build into production is a release question, not a swap's
    assert run("swap_keeps_production_serving", world(slot("A", 0), slot("B", 0), tag=1),
               ({"type": "restart", "slot": "production"}, world(slot("A", FAILING), slot("B", 0), tag=1))) is None


def test_every_shipped_design_keeps_production_serving_through_a_swap_of_a_failing_build():
    steps = DEPLOY_FOO + [Push(healthy=False), SetImage("staging"), Swap(), Swap()]
    for variant in SLOTS.variants:
        assert verdict(variant, "swap_keeps_production_serving", steps) is None, variant


def test_an_aborted_swap_that_changes_only_production_s_settings_breaks_it():
    """docs/properties.md: an aborted swap leaves production's instances, image reference
    *and settings* as they were (a swap applying its phase-one settings to the wrong slot,
    then aborting); no test changed the settings alone."""
    import copy

    before = world(slot("A", 0), slot("B", 1), tag=1)
    before["slots"]["production"]["settings"] = [{"name": "FEATURE", "value": False, "sticky": False}]
    after = copy.deepcopy(before)
    after["last_swap"] = "aborted"
    after["slots"]["production"]["settings"][0]["value"] = True
    v = run("swap_keeps_production_serving", before, (SWAP, after))
    assert v is not None and v.message == ("swap at step 0 left production on site A but changed its "
                                           "image reference or settings")


def test_a_completed_swap_is_judged_by_every_container_it_promotes_not_the_first():
    failing = {"digest": 1, "status": "crash_loop"}
    v = run("swap_keeps_production_serving", world(slot("A", 0, 0), slot("B", 1, failing), tag=1),
            (SWAP, world(slot("B", 1, failing), slot("A", 0, 0), tag=1, last_swap="completed")))
    assert v is not None and v.message.startswith("swap at step 0 promoted containers that fail to start")
