"""The SVG timeline in detail: which column breaks, where the settle phase starts,
how lanes stack and are named, which colour says what, and that every text a trace
file carries (anyone's) stays text in the picture. Built from small made-up traces,
rendered without a model (``lane_name`` given)."""

from __future__ import annotations

import xml.etree.ElementTree as ET

from deployspec import render_svg, timeline
from deployspec.render_svg import CELL_H, COL, LEFT
from deployspec.svg_palette import REJECTED_INK, SETTLE_FILL, STATE_COLOURS, STATUS_COLOURS

NS = "{http://www.w3.org/2000/svg}"
#: a name that breaks the document unless escaped (and no space: some texts keep a last word)
HOSTILE = 'a<b&c"d'


def proc(pid, *instances, droplet=0):
    return {"id": pid, "droplet": droplet, "instances": list(instances)}


def dep(did, state, reason=None):
    return {"id": did, "state": state, "status_reason": reason or state}


def trace(observations, *, bad=1, settle_from=None, rejected=(), **fields):
    """A trace of one step per observation (actions ``a0``, ``a1``, ...), breaking at ``bad``."""
    steps = [{"action": {"type": f"a{i}"}, "rejected": "refused" if i in rejected else None, "observation": o}
             for i, o in enumerate(observations)]
    return {"model": "capi", "variant": "v", "property": "p", "engine": "explore", "seed": 0,
            "violation": {"step": bad, "message": "m"}, "initial": {"processes": [], "deployments": []},
            "steps": steps, "settle_from": settle_from, **fields}


def svg(t) -> ET.Element:
    return ET.fromstring(render_svg.render(t, lane_name="process"))


def titled(root, prefix: str) -> list[ET.Element]:
    """The rects whose tooltip starts with ``prefix``."""
    return [r for r in root.iter(f"{NS}rect")
            if r.find(f"{NS}title") is not None and r.find(f"{NS}title").text.startswith(prefix)]


def texts(root) -> list[str]:
    return ["".join(t.itertext()) for t in root.iter(f"{NS}text")]


THREE = [{"processes": [proc(0, "RUNNING")], "deployments": []}] * 3


def test_the_breaking_step_s_column_is_outlined_and_its_label_red():
    """Step k is column k + 1 (the initial state is column 0); a settled violation
    (step -1) is the last column. An outline one column off points at the wrong action."""
    for bad, column in ((0, 1), (1, 2), (-1, 3)):
        root = svg(trace(THREE, bad=bad))
        outline = [r for r in root.iter(f"{NS}rect") if r.get("stroke") == "#c92a2a"]
        assert [int(r.get("x")) for r in outline] == [LEFT + column * COL + 1]
        red = [t.text for t in root.iter(f"{NS}text") if t.get("fill") == "#c92a2a" and t.get("transform")]
        assert red == [f"{column - 1}: a{column - 1}()"]


def test_the_settle_phase_is_shaded_from_the_first_settle_step_on():
    """``settle_from`` is the first platform-only step; with nothing to settle
    (``settle_from`` = the number of steps) nothing is shaded or said."""
    fill = SETTLE_FILL
    root = svg(trace(THREE, settle_from=1))
    shade = [r for r in root.iter(f"{NS}rect") if r.get("fill") == fill]
    assert [(int(r.get("x")), int(r.get("width"))) for r in shade] == [(LEFT + 2 * COL, 2 * COL)]
    (edge,) = [ln for ln in root.iter(f"{NS}line") if ln.get("stroke-dasharray")]  # where the users stop
    assert int(edge.get("x1")) == LEFT + 2 * COL
    root = svg(trace(THREE, settle_from=3))
    assert not [r for r in root.iter(f"{NS}rect") if r.get("fill") == fill]
    assert not any("settles" in t for t in texts(root))


def test_a_rejected_step_is_greyed_and_says_so():
    """A refused action changed nothing: drawn as one, it reads as a cause. Struck through,
    its reason in the tooltip (the picture did not say it anywhere)."""
    root = svg(trace(THREE, rejected=(0,), bad=2))
    labels = {"".join(t.itertext()): t for t in root.iter(f"{NS}text") if t.get("transform")}
    refused = labels["rejected: refused0: a0() (rejected)"]
    assert refused.get("fill") == REJECTED_INK and refused.get("text-decoration") == "line-through"
    assert labels["1: a1()"].get("fill") == "#212529" and labels["1: a1()"].get("text-decoration") is None


def test_each_status_and_state_has_its_own_colour():
    """A crashed instance drawn in the running colour hides the bug the picture is for."""
    for table in (STATUS_COLOURS, STATE_COLOURS):
        upper = {k: v for k, v in table.items() if k.isupper()}
        assert len(set(upper.values())) == len(upper)
    root = svg(trace([{"processes": [proc(0, "RUNNING", "CRASHED", "STARTING")],
                       "deployments": [dep(0, "CANCELED", "SUPERSEDED")]}], bad=0))
    hatched = {(r.get("x"), r.get("y")) for r in root.iter(f"{NS}rect") if r.get("fill") == "url(#failing)"}
    for status in ("RUNNING", "CRASHED", "STARTING"):
        (cell,) = [r for r in titled(root, "P0 instance") if f": {status} " in r.find(f"{NS}title").text]
        assert cell.get("fill") == STATUS_COLOURS[status]
        # a crashed cell is hatched too: a reader who cannot tell its colour still tells it fails
        assert ((cell.get("x"), cell.get("y")) in hatched) is (status == "CRASHED")
    assert len(hatched) == 2  # the cell and its legend's swatch
    (band,) = titled(root, "d0: ")
    assert band.find(f"{NS}title").text == "d0: CANCELED/SUPERSEDED"
    assert band.get("fill") == STATE_COLOURS["CANCELED"]  # coloured by the state, not state/reason
    assert "CANCELED" in texts(root) and "CANCELED…" in texts(root)  # legend, band (one column wide)


def test_lanes_are_named_by_id_and_a_reason_shown_only_when_it_differs():
    """After a process is gone, the others keep their names (P3 is not renamed P0)."""
    obs = {"processes": [proc(3, "RUNNING", droplet=1)], "deployments": [dep(2, "DEPLOYED"), dep(5, "CANCELED")]}
    assert timeline.lanes(obs) == {"P3": ("droplet 1", ["RUNNING"], [""])}
    assert timeline.bands(obs) == {"d2": "DEPLOYED", "d5": "CANCELED"}
    assert timeline.bands({"deployments": [dep(5, "CANCELED", "SUPERSEDED")]}) == {"d5": "CANCELED/SUPERSEDED"}


def test_an_instance_note_leaves_out_empty_fields_and_is_its_tooltip():
    """What an instance runs (a digest) is its tooltip; a field with no value is not noise in it."""
    obs = {"slots": {"prod": {"instances": [{"status": "running", "digest": 7, "tag": None}]}}}
    assert timeline.lanes(obs)["prod"][2] == ["digest 7"]
    t = trace([{"slots": {"prod": {"site": "A", "instances": [{"status": "running", "digest": 7}]}}}], bad=0)
    (cell,) = titled(svg(t), "prod instance 0")
    assert cell.find(f"{NS}title").text == "prod instance 0: running (digest 7)"


def test_a_lane_is_labelled_by_its_first_state_and_its_changes_under_their_steps():
    """The label beside a lane sits beside its first columns: it says what the lane was
    there (it said what the lane ended as: staging's 'image tag=release' beside the
    columns before the step that wrote it, which the picture showed under that step)."""
    t = trace([{"processes": [proc(0, "RUNNING", droplet=0)]}, {"processes": [proc(0, "RUNNING", droplet=1)]}])
    said = texts(svg(t))
    assert "P0: droplet 0droplet 0" in said and "P0: droplet 1droplet 1" in said  # beside it; under step 1


def test_a_lane_s_label_lies_within_the_lane():
    """A lane one instance high had its label below its floor line, beside the next lane's
    name: 'droplet 0' read as P1's."""
    t = trace([{"processes": [proc(0, "RUNNING"), proc(1, "RUNNING")]}], bad=0)
    root = svg(t)
    floors = sorted(int(ln.get("y1")) for ln in root.iter(f"{NS}line"))
    labels = sorted(int(x.get("y")) for x in root.iter(f"{NS}text") if "".join(x.itertext()).endswith("droplet 0"))
    names = sorted(int(x.get("y")) for x in root.iter(f"{NS}text") if x.text in ("P0", "P1"))
    assert names[0] < labels[0] < floors[0] < names[1] < labels[1] < floors[1]


def test_a_band_names_a_state_in_as_much_as_its_run_of_columns_holds():
    """A state that lasts one column wrote its whole name over the next column's
    ('CANCELED/SUPERSEDED' over 'PAUSED', the state the message named)."""
    d = lambda state, reason=None: {"processes": [], "deployments": [dep(0, state, reason)]}
    t = trace([d("CANCELED", "SUPERSEDED"), d("PAUSED"), d("PAUSED"), d("PAUSED")], bad=3)
    said = texts(svg(t))
    assert "CANCELED…" in said and "PAUSED" in said and "CANCELED/SUPERSEDED" not in said
    assert render_svg._fitted("DEPLOYING", 3 * COL) == "DEPLOYING"


def test_instances_stack_upwards_inside_their_own_lane():
    """Eight instances in one lane, none in the next: no bar leaves its lane (the
    lanes' floors are their lines), instance 0 at the bottom."""
    t = trace([{"processes": [proc(0, *["RUNNING"] * 8), proc(1)]}], bad=0)
    root = svg(t)
    floors = sorted(int(ln.get("y1")) for ln in root.iter(f"{NS}line"))
    tops = {t.text: int(t.get("y")) - 10 for t in root.iter(f"{NS}text") if t.text in ("P0", "P1")}
    cells = titled(root, "P0 instance")
    ys = [int(r.get("y")) for r in cells]
    assert ys == sorted(ys, reverse=True) and len(set(ys)) == 8
    assert tops["P0"] <= min(ys) and max(ys) + CELL_H <= floors[0] < tops["P1"]
    (empty,) = titled(root, "P1: 0 instances")
    assert tops["P1"] <= int(empty.get("y")) <= floors[1]


def test_a_lane_draws_at_most_max_cells_the_rest_counted_in_one():
    """A trace may hold 10,000 instances a process: drawn one by one, a 44 MB trace became a
    527 MB picture. The first MAX_CELLS - 1 are drawn, the rest are one cell, inside the lane."""
    many = ["RUNNING"] * 60 + ["CRASHED"] * 40 + ["STARTING"]
    t = trace([{"processes": [proc(0, *many), proc(1, "RUNNING")]}], bad=0)
    root = svg(t)
    cells = titled(root, "P0 instance ")
    (rest,) = titled(root, "P0 instances ")
    last = render_svg.MAX_CELLS - 1
    assert len(cells) == last and f"+{len(many) - last}" in texts(root)
    assert rest.find(f"{NS}title").text == f"P0 instances {last}-100: 21 RUNNING, 40 CRASHED, 1 STARTING"
    floors = sorted(int(ln.get("y1")) for ln in root.iter(f"{NS}line"))
    tops = {x.text: int(x.get("y")) - 10 for x in root.iter(f"{NS}text") if x.text in ("P0", "P1")}
    assert tops["P0"] <= int(rest.get("y")) < min(int(c.get("y")) for c in cells)  # on top, in its lane
    assert max(int(c.get("y")) for c in cells) + CELL_H <= floors[0] < tops["P1"]


def test_a_band_names_its_state_once_per_run():
    """The state's word where it changes, and again after the deployment was away."""
    d = lambda *ds: {"processes": [proc(0, "RUNNING")], "deployments": list(ds)}
    t = trace([d(dep(0, "DEPLOYING")), d(dep(0, "DEPLOYING")), d(), d(dep(0, "DEPLOYING"))], bad=3)
    assert texts(svg(t)).count("DEPLOYING") == 2 + 1  # the band's two runs, the legend


def test_every_text_of_a_trace_stays_text_in_the_picture():
    """Names, messages, actions, states and statuses come from a file anyone may
    hand over: unescaped, one ``<`` breaks the document or writes markup into it."""
    obs = {"slots": {HOSTILE: {"site": HOSTILE, "instances": [{"status": HOSTILE, "digest": HOSTILE}]}},
           "deployments": [dep(0, HOSTILE)]}
    t = trace([obs], bad=0, model=HOSTILE, variant=HOSTILE, property=HOSTILE, engine=HOSTILE)
    t["steps"][0]["action"]["arg"] = HOSTILE
    t["violation"]["message"] = HOSTILE
    root = svg(t)  # well-formed
    said = texts(root) + ["".join(e.itertext()) for e in root.iter(f"{NS}title")]
    assert sum(HOSTILE in s for s in said) >= 12
    assert f"{HOSTILE}: {HOSTILE} violated" in said  # the document's title
    assert f"{HOSTILE} / {HOSTILE}: {HOSTILE} violated" in said
    assert f"engine {HOSTILE}, 1 step; one row per process" in said
    assert f'0: a0(arg={HOSTILE})' in said
    assert HOSTILE in said and f"{HOSTILE}: site {HOSTILE}site {HOSTILE}" in said  # the lane's name, its label
    assert f"{HOSTILE} instance 0: {HOSTILE} (digest {HOSTILE})" in said
    assert f"d0: {HOSTILE}" in said


def test_the_action_column_is_as_wide_as_its_widest_action():
    """slots' crash_retry(slot=production, instance=0) is 40 characters: the other rows
    line up with it rather than its row being pushed right (the column was 34 wide)."""
    from pathlib import Path

    from deployspec import traces
    from deployspec.render_text import render

    trace = traces.load(Path(__file__).parent.parent / "counterexamples" / "slots"
                        / "scenario-2-production-already-down.json")
    rows = [line for line in render(trace).splitlines() if line[2:5].strip().isdigit()]
    assert len({row.index(" prod ") for row in rows}) == 1, rows


def test_what_a_step_changes_of_a_lane_is_written_under_its_cells():
    """A swap is the event of the slots model, and a lane's colours alone did not show it:
    the new site (and an image reference written) shows under the column where it changed,
    cut to fit with the whole in its tooltip; an unchanged lane shows nothing there."""
    def slots(prod_site, stage_image):
        return {"slots": {"production": {"site": prod_site, "instances": [{"status": "running", "digest": 0}]},
                          "staging": {"site": "B" if prod_site == "A" else "A", "image": stage_image,
                                      "instances": []}}}

    t = trace([slots("A", None), slots("A", {"tag": "release"}), slots("B", {"tag": "release"})], bad=2)
    t["initial"] = slots("A", None)
    root = svg(t)
    changes = [(t.get("x"), "".join(t.itertext())) for t in root.iter(f"{NS}text") if t.get("fill") == "#1c7ed6"]
    col = render_svg.COL
    assert changes == [(str(render_svg.LEFT + 3 * col + 3), "production: site Bsite B"),
                       (str(render_svg.LEFT + 2 * col + 3), "staging: image tag=releaseimage tag=rel…"),
                       (str(render_svg.LEFT + 3 * col + 3), "staging: site Asite A")]


def test_a_field_a_step_drops_from_a_lane_is_said_as_gone_and_a_reordering_as_nothing():
    def lane(**fields):
        return {"slots": {"production": {**fields, "instances": [{"status": "running", "digest": 0}]}}}

    t = trace([lane(site="A"), lane(image="x", site="A"), lane(site="A", image="x")], bad=2)
    t["initial"] = lane(site="A", image="x")
    changes = ["".join(t.itertext()) for t in svg(t).iter(f"{NS}text") if t.get("fill") == "#1c7ed6"]
    assert changes == ["production: no imageno image", "production: image ximage x"]


def test_a_long_trace_is_drawn_as_its_first_steps_a_gap_and_the_steps_up_to_the_break():
    """3,000 steps were a picture 193,108 px wide, its lanes named only at its far left."""
    obs = {"processes": [proc(0, "RUNNING")], "deployments": []}
    t = trace([obs] * 500, bad=499, settle_from=450)
    root = svg(t)
    labels = [t.text or "".join(t.itertext()) for t in root.iter(f"{NS}text") if t.get("transform")]
    cap, first = timeline.MAX_COLUMNS, timeline.FIRST_COLUMNS
    assert len(labels) == cap and labels[0] == "initial" and labels[first - 1] == f"{first - 2}: a{first - 2}()"
    tail = cap - first - 1  # the columns after the gap: the last observations, the break the last of them
    assert labels[first] == f"… {501 - first - tail} steps not drawn …"
    assert labels[first + 1] == f"{500 - tail}: a{500 - tail}()" and labels[-1] == "499: a499()"
    assert int(root.get("width")) < LEFT + (cap + 8) * COL
    (outline,) = [r for r in root.iter(f"{NS}rect") if r.get("stroke") == "#c92a2a"]
    assert int(outline.get("x")) == LEFT + (cap - 1) * COL + 1
    shade = [r for r in root.iter(f"{NS}rect") if r.get("fill") == SETTLE_FILL]
    assert [int(r.get("x")) for r in shade] == [LEFT + labels.index("450: a450()") * COL]  # the first settle step


def test_a_break_before_the_end_of_a_long_trace_stays_in_the_picture():
    cols = timeline.columns(1000, 300)
    assert len(cols) == timeline.MAX_COLUMNS and 300 in cols and cols[-1] is None
    assert cols[:timeline.FIRST_COLUMNS] == list(range(timeline.FIRST_COLUMNS))
    assert timeline.columns(50, 49) == list(range(50))


def test_the_other_row_writes_what_a_step_changed_and_the_whole_where_parts_say_nothing():
    """Compared as sets of words, 'swap aborted' was two lines and its end unseen, and a
    text whose parts were only reordered or repeated wrote nothing though it changed."""
    lines = timeline.changed_parts
    assert lines(["no tags", "release=0 hooks=1", "release=0"]) == [["no tags"], ["release=0", "hooks=1"],
                                                                    ["no hooks"]]
    assert lines(["release=0", "release=0 swap aborted", "release=0"]) == [["release=0"], ["swap aborted"],
                                                                          ["release=0"]]
    assert lines(["a=1 a=1", "a=1", "a=1"]) == [["a=1 a=1"], ["a=1"], []]
    assert lines(["x=1 y=2", "y=2 x=1"]) == [["x=1 y=2"], ["y=2 x=1"]]


def test_a_gap_never_stands_for_a_single_step():
    """A break among the first steps left out observation 20 alone: a column saying
    '… 1 steps not drawn …' where drawing the step took the same room."""
    for n, bad in ((10_007, 4), (500, 70), (500, 71), (121, 0), (122, 60), (1000, 300)):
        cols = timeline.columns(n, bad)
        assert len(cols) <= timeline.MAX_COLUMNS and bad in cols
        drawn = [c for c in cols if c is not None]
        assert drawn == sorted(drawn) and drawn[0] == 0
        for c, i in enumerate(cols):
            if i is None:
                after = cols[c + 1] if c + 1 < len(cols) else n
                assert after - cols[c - 1] - 1 >= 2, (n, bad, cols)


def test_a_huge_title_or_message_does_not_make_a_huge_picture():
    """A trace's texts are anyone's: a 200,000-character variant name made a picture
    1,840,360 px wide, a 2 MB message one 224,539 px tall."""
    plain = svg(trace([{"processes": [proc(0, "RUNNING")], "deployments": []}], bad=0))
    for fields in ({"variant": "v" * 200_000}, {"violation": {"step": 0, "message": "word " * 400_000}}):
        root = svg(trace([{"processes": [proc(0, "RUNNING")], "deployments": []}], bad=0, **fields))
        assert int(root.get("width")) <= 2000 and int(root.get("height")) <= int(plain.get("height")) + 14 * 12
    cut = svg(trace([{"processes": [proc(0, "RUNNING")], "deployments": []}], bad=0,
                    violation={"step": 0, "message": "word " * 400_000}))
    lines = [t.text for t in cut.iter(f"{NS}text") if t.get("fill") == "#c92a2a" and t.get("x") == "10"]
    assert len(lines) == render_svg.MESSAGE_LINES and lines[-1].endswith("…")


def test_the_rotated_labels_sit_close_under_the_heading():
    """Room for " (rejected)" was left above every label: a band of 60 px stood empty over
    every picture. Now the longest label drawn (its suffix only where refused) sets it."""
    from deployspec.render_svg import HEAD, _heading

    trace = {"model": "capi", "variant": "v", "property": "p", "violation": {"message": "m"}, "steps": []}
    labels = ["initial", "0: push(instances=1)", "1: stage(healthy=False)"]
    _title, _width, message, top = _heading(trace, labels)
    drawn = len(labels[-1]) * 6.2 * 0.82  # its height, rotated by 55 degrees
    assert 0 < top - (HEAD + 14 * (len(message) - 1)) - drawn < 32
    _t, _w, _m, refused = _heading(trace, labels[:-1] + [labels[-1] + " (rejected)"])
    assert refused > top
