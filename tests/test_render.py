"""Pictures of traces: the SVG is well-formed and shows lanes, bands and the
breaking step; HTML wraps it with the table; ITF is plain JSON without nulls."""

from __future__ import annotations

import json
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from deployspec import render_html, render_itf, render_svg, timeline, traces
from deployspec.cli import main

SEED = Path(__file__).parent.parent / "counterexamples" / "capi" / "capi-2022--cancel_restores_last_good--401cd5ce87.json"
NS = "{http://www.w3.org/2000/svg}"
SETTLED = SEED.parent / "capi-2022--deployment_converges--2cffbe2128.json"


def test_svg_has_a_lane_per_process_a_band_per_deployment_and_the_break():
    trace = traces.load(SEED)
    root = ET.fromstring(render_svg.render(trace))
    texts = [t.text for t in root.iter(f"{NS}text")]
    for lane in ("P0", "P1", "P2", "d0", "d1", "breaks here"):
        assert lane in texts
    cells = [r for r in root.iter(f"{NS}rect") if r.find(f"{NS}title") is not None]
    titles = " ".join(r.find(f"{NS}title").text for r in cells)
    assert "P0 instance 0: RUNNING" in titles and "P2 instance 0: CRASHED" in titles
    assert "d0: CANCELING" in titles and "d0: CANCELED" in titles
    outline = [r for r in root.iter(f"{NS}rect") if r.get("stroke") == "#c92a2a"]
    assert len(outline) == 1


@pytest.mark.parametrize("path", sorted((SEED.parent.parent).glob("*/*.json")), ids=lambda p: p.name)
def test_the_heading_fits_the_picture_the_message_wrapping_within_it(path):
    """12 of the 44 committed findings had a title or message running off the right edge
    (a 181-character message, about 1000 px, in a picture 525 px wide)."""
    trace = traces.load(path)
    root = ET.fromstring(render_svg.render(trace))
    width = int(root.get("width"))
    heading = [t for t in root.iter(f"{NS}text") if t.get("x") == "10" and int(t.get("y")) < 120]
    title, *message = heading[:-1]  # the last is the engine's line
    assert len(title.text) * 9.2 + 10 <= width
    assert " ".join(t.text for t in message) == " ".join(trace["violation"]["message"].split())
    assert all(len(t.text) * 6.2 + 10 <= width for t in message)


def test_lanes_are_generic_over_observations():
    obs = {"slots": {"production": {"site": "A", "instances": [{"digest": 1, "status": "running"}]},
                     "staging": {"site": "B", "instances": []}},
           "registry": {"tags": {}}}
    assert timeline.lanes(obs) == {
        "production": ("site A", ["running"], ["digest 1"]), "staging": ("site B", [], [])}
    assert timeline.bands(obs) == {}


def test_html_wraps_the_svg_and_marks_the_breaking_row():
    page = render_html.render(traces.load(SEED))
    assert "<svg" in page and page.count('class="bad"') == 1 and "users stop" in page
    assert "<th>web processes</th>" in page


def test_itf_has_one_state_per_observation_and_no_nulls():
    trace = traces.load(SEED)
    itf = render_itf.render(trace)
    assert itf["#meta"]["format"] == "ITF"
    assert len(itf["states"]) == len(trace["steps"]) + 1
    assert set(itf["vars"]) == set(itf["states"][0]) - {"#meta"}
    assert "null" not in json.dumps(itf).replace('"null"', "")


def test_show_writes_each_format(tmp_path, capsys):
    for fmt in ("svg", "html", "itf"):
        out = tmp_path / f"seed.{fmt}"
        assert main(["show", str(SEED), "--format", fmt, "-o", str(out)]) == 0
        assert out.stat().st_size > 500
    assert main(["show", str(SEED), "--format", "png"]) == 2


@pytest.mark.parametrize("settle_from", [0, "last", "end"])
def test_itf_settle_from_state_is_a_state_of_the_trace(settle_from):
    """It was the first settle step's state: past the end when settling had nothing to do."""
    trace = json.loads(json.dumps(traces.load(SETTLED)))
    n = len(trace["steps"])
    trace["settle_from"] = {0: 0, "last": n - 1, "end": n}[settle_from]
    itf = render_itf.render(trace)
    at = itf["#meta"]["deployspec"]["settle_from_state"]
    assert at == trace["settle_from"] and 0 <= at < len(itf["states"])


def test_the_text_table_says_how_each_model_s_line_reads():
    """A second heading line for each model: slots' `A+ci`, `release:`, `-`, `x?` and the
    registry's `hooks=` were explained only in reference/slots/render.py."""
    from deployspec.models import get_model
    from deployspec.render_text import render

    root = Path(__file__).parent.parent / "counterexamples"
    for model, key in (("capi", "P<process>[d<droplet>]:<instances>"),
                       ("slots", "<slot> <site>[+ci] <tag|@digest|->: <digest>...")):
        trace = traces.load(next((root / model).glob("*.json")))
        lines = render(trace).splitlines()
        heading = next(i for i, line in enumerate(lines) if line.lstrip().startswith("#  action"))
        assert lines[heading + 1].strip().startswith(key)
        assert lines[heading + 1].rstrip().endswith(get_model(model).render_key[1])


def test_the_picture_in_the_readme_is_the_seed_as_show_draws_it_now():
    """docs/seed-counterexample.svg is drawn by hand (`deployspec show SEED -o docs/…`): a
    change of the drawing that does not draw it again leaves README showing the old one."""
    checked_in = Path(__file__).parent.parent / "docs" / "seed-counterexample.svg"
    assert checked_in.read_text() == render_svg.render(traces.load(SEED))


def test_html_keys_its_table_as_the_text_report_does():
    """'P0[d0]:ss' and 'd0:DEPLOYING/…' in one row: d is a droplet on the left and a deployment
    on the right, which only the text report's key line said."""
    from deployspec.models import get_model
    from deployspec.text import markup

    page = render_html.render(traces.load(SEED))
    key_lanes, key_other = map(markup, get_model("capi").render_key)
    assert key_lanes.startswith("P&lt;process&gt;")  # escaped: <process> is no tag
    assert f'<tr class="key"><td></td><td></td><td><code>{key_lanes}</code></td><td><code>{key_other}</code>' in page


def test_a_slots_picture_shows_what_the_registry_does():
    """A webhook delivery changed production with no cause in the picture: the registry
    (tags, webhooks due, the validated digest) is the text report's other column, and is a
    row of the picture, written where a step changes it; capi's other column is its bands."""
    webhook = SEED.parent.parent / "slots" / "slots-webhook-tag--push_does_not_touch_production--fd9d9af5d7.json"
    trace = traces.load(webhook)
    root = ET.fromstring(render_svg.render(trace))
    row = [t for t in root.iter(f"{NS}text") if t.get("font-size") == "8" and t.find(f"{NS}title") is not None
           and t.find(f"{NS}title").text.startswith("registry: ")]
    written = [(int(t.get("x")), "".join(t.itertext()).split("\n")[-1][len(t.find(f"{NS}title").text):])
               for t in row]
    col, left = render_svg.COL, render_svg.LEFT
    assert written == [(left + 3, "no tags"), (left + col + 3, "release=0"), (left + col + 3, "hooks=1"),
                       (left + 2 * col + 3, "no hooks")]
    assert "registry" in [t.text for t in root.iter(f"{NS}text")]
    assert "registry" in render_html.render(trace)
    capi = ET.fromstring(render_svg.render(traces.load(SEED)))
    assert not [t for t in capi.iter(f"{NS}title") if t.text.startswith("deployments: ")]
