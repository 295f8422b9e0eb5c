"""Behaviours of the counterexample pictures and text (render_svg, render_html,
render_text, engines/explore_text) that a hand-made mutation pass found unpinned: the
SVG's refused initial column, its lane height at thousands of instances, the lanes
pushed down by a longer message, a lane of exactly MAX_CELLS instances, an instance
cell's note and its ink, a band's first-column name, the slots registry row escaped,
its height and a gap column in it; the HTML page's title, cause and divergence
escaped, its settle row and step count; the text table's "-" for an empty column,
its column widths within reason, the lanes' heading key, a newline in a cell, and the
divergence of a conformance trace whose reference raised; explore's words for the
address-space stop and a search with statistics but no states. Each test's docstring
names its mutant (mut/mutants.py in the probe's clone)."""

from __future__ import annotations

import html
import json
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from deployspec import render_html, render_svg, traces
from deployspec.cli import main
from deployspec.engines.explore_text import proof_text, summary
from deployspec.engines.result import Result
from deployspec.models import get_model
from deployspec.render_svg import BAND_H, MAX_CELLS
from deployspec.render_text import capi_state, divergence, render_steps

NS = "{http://www.w3.org/2000/svg}"
ROOT = Path(__file__).parent.parent / "counterexamples"
SEED = ROOT / "capi" / "capi-2022--cancel_restores_last_good--401cd5ce87.json"
WEBHOOK = ROOT / "slots" / "slots-webhook-tag--push_does_not_touch_production--fd9d9af5d7.json"
SETTLED = ROOT / "capi" / "capi-2022--deployment_converges--2cffbe2128.json"
HOSTILE = 'a<b&c"d'


def proc(pid, *instances, droplet=0):
    return {"id": pid, "droplet": droplet, "instances": list(instances)}


def dep(did, state, reason=None):
    return {"id": did, "state": state, "status_reason": reason or state}


def trace(observations, *, bad=0, settle_from=None, rejected=(), message="m", initial=None):
    """A trace of one step per observation (actions ``a0``, ``a1``, ...), breaking at ``bad``."""
    steps = [{"action": {"type": f"a{i}"}, "rejected": "refused" if i in rejected else None, "observation": o}
             for i, o in enumerate(observations)]
    return {"model": "capi", "variant": "v", "property": "p", "engine": "explore", "seed": 0,
            "violation": {"step": bad, "message": message},
            "initial": initial if initial is not None else {"processes": [], "deployments": []},
            "steps": steps, "settle_from": settle_from}


def svg(t, **kw) -> ET.Element:
    return ET.fromstring(render_svg.render(t, lane_name="process", **kw))


def said(element) -> str:
    return "".join(element.itertext())


def titled(root, prefix: str) -> list[ET.Element]:
    return [r for r in root.iter(f"{NS}rect")
            if r.find(f"{NS}title") is not None and r.find(f"{NS}title").text.startswith(prefix)]


def one_process(*instances):
    return {"processes": [proc(0, *instances)], "deployments": []}


# --- the SVG timeline -------------------------------------------------------------------


def test_the_initial_column_is_never_drawn_as_refused():
    """S08 (``None if i is None`` for ``None if not i``): the initial column took the last
    step's refusal (``steps[-1]``), drawn struck through and grey as 'initial (rejected)'."""
    root = svg(trace([one_process("RUNNING")] * 3, rejected=(2,)))
    labels = {said(t): t for t in root.iter(f"{NS}text") if t.get("transform")}
    assert "initial" in labels and labels["initial"].get("text-decoration") is None
    assert labels["initial"].get("fill") == "#212529"
    assert "rejected: refused2: a2() (rejected)" in labels  # the refused step itself still says it


def test_a_lane_of_thousands_of_instances_is_no_taller_than_one_of_max_cells():
    """S12 (the lane's depth not capped at MAX_CELLS): the extra instances are one cell, so
    the lane keeps MAX_CELLS rows (10,000 instances made a picture some 130,000 px tall)."""
    capped = svg(trace([one_process(*["RUNNING"] * MAX_CELLS)]))
    many = svg(trace([one_process(*["RUNNING"] * 10_000)]))
    assert int(many.get("height")) == int(capped.get("height"))


def test_exactly_max_cells_instances_are_each_drawn():
    """S23 (``>= MAX_CELLS`` for ``> MAX_CELLS``): a lane of exactly MAX_CELLS instances fits;
    folding its last one into a '+1' cell hid an instance's status for nothing."""
    root = svg(trace([one_process(*["RUNNING"] * (MAX_CELLS - 1), "CRASHED")]))
    assert len(titled(root, "P0 instance ")) == MAX_CELLS
    assert not titled(root, "P0 instances ") and "+1" not in [said(t) for t in root.iter(f"{NS}text")]


def test_a_longer_message_pushes_the_lanes_down_by_its_extra_lines():
    """S15 (the labels' top without the message's extra lines): the rotated action labels
    and the lanes stayed where a one-line message leaves them, under the message's lines."""
    def lane_name_y(message):
        root = svg(trace([one_process("RUNNING")], message=message))
        lines = [t for t in root.iter(f"{NS}text") if t.get("fill") == "#c92a2a" and t.get("x") == "10"]
        (name,) = [t for t in root.iter(f"{NS}text") if t.text == "P0"]
        return len(lines), int(name.get("y"))

    one, y_one = lane_name_y("m")
    lines, y_more = lane_name_y("word " * 40)
    assert one == 1 and lines == 3
    assert y_more - y_one == 14 * (lines - 1)


def test_an_instance_cell_writes_the_last_word_of_its_note_in_ink_that_reads_on_it():
    """S25 (the whole note written in the cell) and S26 (the note always white): a 40 px
    cell holds the digest as the messages write it ('d7', not 'digest 7'; a bare '7' was
    read as any number), dark on a light (starting) cell, white on a dark (running) one."""
    obs = {"slots": {"prod": {"site": "A", "instances": [{"status": "running", "digest": 7},
                                                          {"status": "starting", "digest": 8}]}}}
    root = svg(trace([obs]))
    written = {t.text: t.get("fill") for t in root.iter(f"{NS}text") if t.get("font-size") == "8"
               and t.get("text-anchor") == "middle"}
    assert written == {"d7": "white", "d8": "#212529"}


def test_a_band_in_one_state_from_the_first_column_to_the_last_is_named():
    """S29 (``c == 0 or`` left out): column 0 compared its state with the last column's
    (``states[-1]``), so a deployment in one state throughout was never named on its band."""
    d = {"processes": [proc(0, "RUNNING")], "deployments": [dep(0, "DEPLOYING")]}
    root = svg(trace([d, d], initial=d))
    band_words = [t.text for t in root.iter(f"{NS}text") if t.get("font-size") == "9" and t.text == "DEPLOYING"]
    assert len(band_words) == 1


def _slots_with_tag(tag: str) -> dict:
    t = traces.load(WEBHOOK)
    for obs in [t["initial"]] + [s["observation"] for s in t["steps"]]:
        obs["registry"]["tags"] = {tag: 0, **obs["registry"]["tags"]}
    return t


def test_every_text_of_the_registry_row_stays_text_in_the_picture():
    """S33 (the row's tooltip unescaped) and S34 (its lines unescaped): a tag name is any
    string a registry holds; unescaped, one ``<`` breaks the picture (and the HTML page)."""
    t = _slots_with_tag(HOSTILE)
    root = ET.fromstring(render_svg.render(t))  # well-formed
    tips = [e.text for e in root.iter(f"{NS}title") if e.text.startswith("registry: ")]
    assert tips and all(f"{HOSTILE}=0" in tip for tip in tips)
    (first,) = [t for t in root.iter(f"{NS}text") if t.get("fill") == "#495057" and t.get("font-size") == "8"]
    assert first.find(f"{NS}title").tail == f"{HOSTILE}=0"
    page = render_html.render(t)
    assert "a<b" not in page and f"{html.escape(HOSTILE)}=0" in page


def test_the_registry_row_is_as_tall_as_its_busiest_column():
    """S35 (its height one line too many): the busiest column of the webhook trace writes two
    lines ('release=0', 'hooks=1'): a band's height and one line of 10 px more."""
    root = ET.fromstring(render_svg.render(traces.load(WEBHOOK)))
    (row,) = [r for r in root.iter(f"{NS}rect") if r.get("fill") == "#f8f9fa"]
    assert int(row.get("height")) == BAND_H + 10


def test_a_gap_column_writes_nothing_in_the_other_row():
    """S38 (a gap column's other text empty): the column that leaves steps out wrote 'no …'
    and the one after it wrote the whole unchanged text again, as if it had changed."""
    obs = {"processes": [proc(0, "RUNNING")], "deployments": [], "r": "same text"}
    root = svg(trace([obs] * 500, bad=499, initial=obs), other=("registry", lambda o: o["r"]))
    written = [said(t) for t in root.iter(f"{NS}text") if t.get("font-size") == "8"
               and t.find(f"{NS}title") is not None and t.find(f"{NS}title").text.startswith("registry: ")]
    assert written == ["registry: same textsame text"]  # the first column only


def test_a_lane_s_change_in_the_steps_a_gap_leaves_out_is_written_after_it():
    """A lane whose text changes only within the steps a long trace leaves out (a swap in
    them: production reads "site B" after it) wrote nothing after the gap: a gap column had
    no lane parts to compare with, so the picture read "site A" throughout while the
    registry row, across the same gap, said its change (found reading the code during the
    mutation pass)."""
    def view(site, registry):
        return {"slots": {"production": {"site": site, "instances": [{"status": "running", "digest": 0}]}},
                "r": registry}
    obs = [view("A", "t=0")] * 100 + [view("B", "t=1")] * 100
    picture = render_svg.render(trace(obs, bad=199, initial=view("A", "t=0")), lane_name="slot",
                                other=("registry", lambda o: o["r"]))
    assert "registry: t=1" in picture
    assert "production: site B" in picture


# --- the HTML page ----------------------------------------------------------------------


def test_the_title_and_the_cause_of_a_trace_stay_text_in_the_html_page():
    """H03 (the trace's title unescaped) and H04 (the cause unescaped): both are the file's,
    anyone's; a ``<script>`` there would run in the reader's browser."""
    t = traces.load(SEED)
    t["title"] = "<script>t</script>"
    t["violation"]["cause"] = "<script>c</script>"
    page = render_html.render(t)
    assert "<script>" not in page
    assert f"<p>{html.escape(t['title'])}</p>" in page
    assert f"cause: <code>{html.escape(t['violation']['cause'])}</code>" in page


def test_where_a_conformance_trace_parted_stays_text_in_the_html_page():
    """H05 (the divergence report not HTML-escaped): it quotes the violation's message
    and the implementation's views, anyone's text."""
    t = traces.load(SEED)
    t.update(property="conforms_to_capi-2022", variant="implementation")
    t["violation"] = {"step": 0, "message": "<script>m</script>"}
    page = render_html.render(t)
    assert "<script>" not in page
    pre = page.split("<pre>", 1)[1].split("</pre>", 1)[0]
    assert html.escape("<script>m</script>") in pre


def test_the_html_settle_row_comes_right_before_the_first_settle_step():
    """H07 (the row one step late): 'users stop' heads the row of step ``settle_from``, as
    in the text table, not the row after it."""
    t = traces.load(SETTLED)
    page = render_html.render(t)
    rows = page.split("<tbody>", 1)[1].split("</tbody>", 1)[0].strip().splitlines()
    at = next(i for i, row in enumerate(rows) if "users stop" in row)
    assert "(initial)" in rows[0]  # then a row per step
    assert at == 1 + t["settle_from"] and f"<td>{t['settle_from']}</td>" in rows[at + 1]


def test_the_html_page_counts_the_trace_s_steps():
    """H09 (the count one short): the meta line says how many steps the table has, and
    one step in the singular, as the SVG's line does (it said "1 steps.")."""
    t = traces.load(SEED)
    assert f"{len(t['steps'])} steps." in render_html.render(t)
    t["steps"], t["violation"]["step"], t["settle_from"] = t["steps"][:1], 0, None
    assert ", 1 step." in render_html.render(t)


# --- the text table ---------------------------------------------------------------------


def test_an_empty_column_of_the_text_table_reads_as_a_dash():
    """T01 and T02 (the ``or "-"`` left out): no process or no deployment was an empty cell,
    the next column's text shifted under the wrong heading."""
    assert capi_state({"processes": [], "deployments": []}) == ("-", "-")
    assert capi_state({"processes": [proc(0)], "deployments": []}) == ("P0[dr0]:0", "-")


def test_one_overlong_cell_does_not_widen_every_row():
    """T03 and T04 (the columns' widths without their bounds): an implementation's
    thousand instances (or a 61-character action) pushed every row's later columns right;
    the overlong row overflows, the others keep the columns' usual widths."""
    model = get_model("capi")
    obs = {"processes": [proc(0, "RUNNING")], "deployments": [dep(0, "DEPLOYED")]}
    wide = {"processes": [proc(0, *["RUNNING"] * 1000)], "deployments": [dep(0, "DEPLOYED")]}
    steps = [{"action": {"type": "tick"}, "observation": obs},
             {"action": {"type": "x" * 70}, "observation": obs},
             {"action": {"type": "tick"}, "observation": wide}]
    first = render_steps(model, steps, 0, None)[2]
    assert first.index("P0[dr0]:R") == 2 + 3 + 2 + 34 + 1  # mark, number, gap, the action column
    assert first.index("d0:DEPLOYED") == first.index("P0[dr0]:R") + 48 + 1  # the lanes' column


def test_the_text_table_heading_says_how_the_lanes_read():
    """T11 (the key left out of the heading): R, s and x are explained only there."""
    heading = render_steps(get_model("capi"), [], None, None)[0]
    assert "web processes (R routable, s starting, x crashed, 0 none)" in heading


def test_a_newline_in_a_lane_or_deployment_cell_starts_no_line_of_show(capsys, tmp_path):
    """T08 (the table's cells unescaped): a tag name in the registry column held a newline,
    which started a line of ``show`` (the final escape of show keeps newlines)."""
    t = _slots_with_tag("x\nINJECTED: every property holds")
    crafted = tmp_path / "crafted.json"
    crafted.write_text(json.dumps(t))
    assert main(["show", str(crafted)]) == 0
    out = capsys.readouterr().out
    assert not any(line.startswith("INJECTED") for line in out.splitlines())
    assert "x\\nINJECTED" in out


def test_a_shipped_reference_that_raises_under_a_divergence_is_deployspec_s_own_bug(monkeypatch):
    """T07 (the ``raise`` for a shipped variant left out): the reference's crash was shown as
    'where it parted … is not shown: None' under the table instead of being raised."""
    from deployspec.contract import conformance

    def broken(trace):
        raise RuntimeError("a bug of deployspec's own")

    monkeypatch.setattr(conformance, "divergence_report", broken)
    t = traces.load(SEED)
    t.update(property="conforms_to_capi-2022", variant="implementation")
    with pytest.raises(RuntimeError, match="own"):
        divergence(t)


# --- the explorer's text ------------------------------------------------------------


def test_an_address_space_stop_is_said_in_words():
    """X01 (the words for ``address_space`` changed): the reason a search stopped, as
    ``ulimit -v`` users look for it."""
    stats = {"complete": False, "states": 5, "transitions": 4, "depth": 2, "seconds": 1.0,
             "bounds": {}, "stopped": "address_space"}
    assert "(incomplete: address-space limit (ulimit -v) nearly reached at depth 2" in proof_text(stats)


def test_an_error_with_statistics_but_no_states_is_one_line():
    """X03 (``if not s`` for ``"states" not in s``): a design's rule that raised, or out of
    memory, gives an error whose stats hold its seconds only; its summary raised KeyError."""
    r = Result("capi", "mine", "p", "explore", "error", message="rule raised", stats={"seconds": 0.5})
    assert summary(r) == "mine · p · explore: error: rule raised"
