"""Pictures of traces: the SVG is well-formed and shows lanes, bands and the
breaking step; HTML wraps it with the table; ITF is plain JSON without nulls."""

from __future__ import annotations

import json
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from deployspec import render_html, render_itf, render_svg, render_text, timeline, traces
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
    title, *lines = heading[:-1]  # the last is the engine's line
    assert len(title.text) * 9.2 + 10 <= width
    by_colour = {colour: " ".join(t.text for t in lines if t.get("fill") == colour)
                 for colour in ("#333", "#c92a2a", "#555")}
    assert by_colour["#c92a2a"] == " ".join(trace["violation"]["message"].split())
    # the file's own title and the cause, as the text and HTML views say them (a postmortem's picture)
    assert _whole_or_cut(by_colour["#333"], " ".join(trace.get("title", "").split()))
    cause = trace["violation"].get("cause")
    assert _whole_or_cut(by_colour["#555"], f"cause: {' '.join(render_text.cause_said(trace).split())}"
                         if cause else "")
    assert all(len(t.text) * 6.2 + 10 <= width for t in lines)


def _whole_or_cut(shown: str, text: str) -> bool:
    """``shown`` is ``text``, or its beginning cut at a word and marked `` …`` (a narrow
    picture's few lines; the text and HTML views say it whole)."""
    return shown == text or (shown.endswith(" …") and text.startswith(shown[:-2]) and len(shown) > 20)


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
    assert "<th>web processes (R routable, s starting, x crashed, 0 none)</th>" in page


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
    at = int(itf["#meta"]["settle-from-state"])
    assert at == trace["settle_from"] and 0 <= at < len(itf["states"])


def test_the_text_table_says_how_each_model_s_line_reads():
    """A second heading line for each model: slots' `A+ci`, `release:`, `-`, `x?` and the
    registry's `hooks=` were explained only in reference/slots/render.py."""
    from deployspec.models import get_model
    from deployspec.render_text import render

    root = Path(__file__).parent.parent / "counterexamples"
    for model, key in (("capi", "P<process>[dr<droplet>]:<instances>"),
                       ("slots", "<slot> <site>[+ci] <tag|@digest|->: <digest>...")):
        trace = traces.load(next((root / model).glob("*.json")))
        lines = render(trace).splitlines()
        heading = next(i for i, line in enumerate(lines) if line.lstrip().startswith("#  action"))
        assert lines[heading + 1].strip().startswith(key)
        assert lines[heading + 1].rstrip().endswith(get_model(model).render_key[1])


@pytest.mark.parametrize("picture", sorted((Path(__file__).parent.parent / "docs").glob("**/*.svg")),
                         ids=lambda p: p.name)
def test_every_picture_beside_its_trace_is_drawn_as_show_draws_it_now(picture):
    """Pictures are drawn by hand (`deployspec show TRACE -o docs/…`): a change of the
    drawing that does not draw them again leaves README (docs/seed-counterexample.svg,
    the seed's) and docs showing the old one, as docs/explore-findings' did (running
    green, no settle line) while only the README's was checked."""
    trace = picture.with_suffix(".json")
    if picture.name == "seed-counterexample.svg":
        trace = SEED
    assert trace.exists(), f"{picture} has no trace beside it to be drawn again from"
    assert picture.read_text() == render_svg.render(traces.load(trace))


def test_html_keys_its_table_as_the_text_report_does():
    """'P0[dr0]:ss' and 'd0:DEPLOYING/…' in one row: d is a droplet on the left and a deployment
    on the right, which only the text report's key line said."""
    from deployspec.models import get_model
    from deployspec.text import markup

    page = render_html.render(traces.load(SEED))
    key_lanes, key_other = map(markup, get_model("capi").render_key)
    assert key_lanes.startswith("P&lt;process&gt;")  # escaped: <process> is no tag
    assert f'<tr class="key"><td></td><td></td><td><code>{key_lanes}</code></td><td><code>{key_other}</code>' in page


def test_html_heads_its_columns_as_the_text_report_does():
    """The page's table had neither the text's 'R routable, s starting, x crashed, 0 none' nor
    its 'deployments' (it said 'other state'): a user could not read 'ss' or 'x0'."""
    from deployspec.models import get_model
    from deployspec.text import markup

    for trace in (traces.load(SEED), traces.load(SEED.parent.parent / "slots" / "scenario-1-rollback-by-swap.json")):
        titles = next(line for line in render_text.render(trace).splitlines() if line.strip().startswith("#"))
        page = render_html.render(trace)
        lanes, other = render_text.column_titles(get_model(trace["model"]))
        assert lanes in titles and other in titles
        assert f"<th>{markup(lanes)}</th><th>{markup(other)}</th>" in page


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


def test_the_html_page_says_what_the_text_report_says_of_a_trace():
    """The page left out the trace's title (the scenario it reproduces), the cause replay
    must find again, and, for a conformance trace, where the implementation parted from
    the reference: all in the text report."""
    from deployspec.render_text import divergence

    root = SEED.parent.parent
    scenario = traces.load(root / "slots" / "scenario-1-rollback-by-swap.json")
    assert f"<p>{scenario['title']}</p>" in render_html.render(scenario)
    caused = traces.load(root / "capi" / "capi-current--app_stays_available--310652b449.json")
    # the cause with what it means, as the property says (app_stays_available's)
    assert (f"cause: <code>{caused['violation']['cause']}: the cancel keeps a process the deployment had "
            "scaled to 0") in render_html.render(caused)
    caused.update(variant="implementation", property="conforms_to_capi-current")
    parted = divergence(caused)
    assert parted and f"<pre>{parted.splitlines()[0]}" in render_html.render(caused)


def test_a_slots_picture_shows_where_continuous_deployment_is_on():
    """The text report's ``A+ci`` (DOCKER_ENABLE_CI, the webhook's way into a slot) was
    missing from the picture: scenario 1's swap moving it from production to staging
    was invisible. The lane's label says it, and a swap writes it where it moves."""
    scenario = traces.load(SEED.parent.parent / "slots" / "scenario-1-rollback-by-swap.json")
    root = ET.fromstring(render_svg.render(scenario))
    written = [t.find(f"{NS}title").tail if t.find(f"{NS}title") is not None else t.text
               for t in root.iter(f"{NS}text")]
    said = [w for w in written if w and w.startswith("site ")]
    assert said[0] == "site A+ci image"  # production's label, beside its name, in two lines
    assert written[written.index(said[0]) + 1] == "tag=release"  # (cut, it read "tag=relea…")
    assert said.count("site A+ci") == 2 and said.count("site B") == 3  # written at each swap
    assert "site A+ci" in render_html.render(scenario)


def test_the_pages_replay_line_names_the_file_shown_and_an_implementations_option(capsys, tmp_path):
    """The page said ``deployspec replay FILE`` whatever it showed: now the path given to
    ``show`` (quoted for a shell), and for an implementation's trace the option naming the
    implementation its contract run recorded (a placeholder where it recorded none)."""
    shown = tmp_path / "my trace.json"
    shown.write_bytes(SEED.read_bytes())
    assert main(["show", str(shown), "--format", "html"]) == 0
    assert f"Replay: <code>deployspec replay &#x27;{shown}&#x27;</code>" in capsys.readouterr().out
    found = dict(traces.load(SEED), engine="contract", variant="implementation")
    assert "deployspec replay FILE --exec PROGRAM (or --python MODULE:FACTORY" in render_html.render(found)
    assert "--exec" not in render_html.render(traces.load(SEED), source="x.json")
    # a contract run records the implementation: the page (a CI's artifact) names it, as the run's output did
    found["extra"] = {"implementation": {"exec": "python3 ctl.py --port 0", "name": None, "reference": None}}
    assert "deployspec replay x.json --exec &#x27;python3 ctl.py --port 0&#x27;</code>" in \
        render_html.render(found, source="x.json")
    found["extra"] = {"implementation": {"python": "pkg.impl:make", "name": None, "reference": None}}
    assert "deployspec replay x.json --python pkg.impl:make</code>" in render_html.render(found, source="x.json")
    found["extra"]["implementation"]["timeout"] = 2.5  # (a run's --timeout other than the default)
    assert "deployspec replay x.json --python pkg.impl:make --timeout 2.5</code>" in \
        render_html.render(found, source="x.json")
