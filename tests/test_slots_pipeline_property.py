"""pipeline_ships_latest_build: a set_image deploys the build just pushed, whatever reference a
design writes; hand-built steps for its branches, and a design of one's own that only it catches."""

import json
import os
import subprocess
import sys

from .slots_property_traces import run, slot, world

PUSH = {"type": "push", "healthy": True}

SET_STAGING = {"type": "set_image", "slot": "staging"}
PINNED = {"digest": 0}


def test_a_set_image_ships_the_build_release_names_by_tag_or_by_digest():
    """Whatever reference the design writes, the slot then runs the build just pushed."""
    start = world(slot("A", 0), slot("B", 0), tag=1)
    assert run("pipeline_ships_latest_build", start, (SET_STAGING, world(slot("A", 0), slot("B", 1), tag=1))) is None
    assert run("pipeline_ships_latest_build", start,
               (SET_STAGING, world(slot("A", 0), slot("B", 1, image={"digest": 1}), tag=1))) is None
    # a build that fails to start is shipped all the same: it is the one pushed
    failing = {"digest": 1, "status": "crash_loop"}
    assert run("pipeline_ships_latest_build", start, (SET_STAGING, world(slot("A", 0), slot("B", failing), tag=1))) \
        is None


def test_a_set_image_of_another_build_is_named_with_the_one_just_pushed():
    """A stale pipeline variable (the first build's digest) leaves the slot on one version,
    its reference's: only this property objects."""
    v = run("pipeline_ships_latest_build", world(slot("A", 0), slot("B", None), tag=1),
            (SET_STAGING, world(slot("A", 0), slot("B", 0, 0, image=PINNED), tag=1)))
    assert v is not None and v.step == 0
    assert v.message == ("set_image(staging) at step 0 left staging running d0: every instance should run the "
                         "build just pushed, d1")
    # a tag nothing pushed: the slot pulls nothing
    v = run("pipeline_ships_latest_build", world(slot("A", 0), slot("B", None), tag=1),
            (SET_STAGING, world(slot("A", 0), slot("B", None, image={"tag": "latest"}), tag=1)))
    assert v is not None and "left staging running nothing: every instance should run the build just pushed, d1" \
        in v.message
    v = run("pipeline_ships_latest_build", world(slot("A", 0), slot("B", None), tag=1),
            (SET_STAGING, world(slot("A", 0), slot("B", 1, None), tag=1)))
    assert v is not None and "left staging running d1 and nothing (an instance pulled no image): every" in v.message


def test_no_build_to_ship_before_the_first_push_and_a_refusal_ships_nothing():
    empty = world(slot("A", None), slot("B", None))
    assert run("pipeline_ships_latest_build", empty, (SET_STAGING, empty)) is None
    start = world(slot("A", 0), slot("B", 0), tag=1)
    assert run("pipeline_ships_latest_build", start, (SET_STAGING, start, "refused")) is None
    # only a set_image is judged: a push moves the tag under both slots
    assert run("pipeline_ships_latest_build", start, (PUSH, world(slot("A", 0), slot("B", 0), tag=2))) is None


#: a design of one's own whose pipeline writes the first build's digest on every deploy
STALE_PIPELINE = """import attrs
from deployspec.reference.core import Rejected
from deployspec.reference.slots.state import Image
from deployspec.reference.slots.variants import SLOTS_PIPELINE_IMMUTABLE
def first_build(state):
    return Image(digest=0) if state.registry.digests else Rejected("nothing built yet")
VARIANTS = [attrs.evolve(SLOTS_PIPELINE_IMMUTABLE, name="stale-pipeline", reference=first_build)]
"""


def test_a_pipeline_that_ships_a_stale_build_is_caught_by_this_property_alone(tmp_path):
    """Every other property held for it (a helper's probe of wrong designs): the slot runs one
    version, what its reference resolves to, and production only what was released."""
    (tmp_path / "stale.py").write_text(STALE_PIPELINE)
    done = subprocess.run([sys.executable, "-m", "deployspec", "check", "--model", "slots", "--variant",
                           "stale-pipeline", "--engine", "explore", "--json"], capture_output=True, text=True,
                          env={**os.environ, "PYTHONPATH": str(tmp_path), "DEPLOYSPEC_VARIANTS": "stale"},
                          cwd=tmp_path, timeout=300, check=False)
    assert done.returncode == 1, done.stderr
    violated = {(r["property"], r["trace_length"]) for r in json.loads(done.stdout)["results"]
                if r["verdict"] == "violated"}
    assert violated == {("pipeline_ships_latest_build", 3)}
