"""How far a running exhaustive search got, as users see it: on a terminal, in lines, in the engine."""

import os
import subprocess
import sys

import pytest

from deployspec import partitioned
from deployspec.engines.explore import search
from deployspec.models import get_model
from deployspec.progress import Progress

CAPI = get_model("capi")


@pytest.mark.parametrize("workers", [1, 2])
def test_the_search_reports_each_layer_it_completes(workers):
    if workers > 1 and not partitioned.available():
        pytest.skip("a partitioned search forks its workers: Linux only")
    heard: list[str] = []
    r = search(CAPI, "capi-safe", CAPI.property("single_active_deployment"), budget=None, seed=0,
               out_dir=None, workers=workers, on_progress=heard.append)
    depths = [int(text.split()[1]) for text in heard]
    states = [int(text.split(" · ")[1].split()[0].replace(",", "")) for text in heard]
    assert r.verdict == "holds" and r.stats["complete"]
    # one report after every layer that still had a frontier, the last one complete
    assert depths == list(range(r.stats["depth"] + 1))
    assert states == sorted(states) and states[-1] == r.stats["states"]


def test_without_a_terminal_a_line_at_most_every_so_often(capsys):
    with Progress(total=2, every=0.0) as p:
        p.start("capi-safe · p · explore")
        p.searching("depth 3 · 120 states")
        p.searching("depth 4 · 300 states")
    quiet = Progress(total=1, every=3600.0)
    quiet.start("capi-safe · q · explore")
    quiet.searching("depth 1 · 2 states")
    err = capsys.readouterr().err.splitlines()
    assert err == ["  capi-safe · p · explore: depth 3 · 120 states",
                   "  capi-safe · p · explore: depth 4 · 300 states"]


def test_without_a_terminal_a_long_run_says_every_result_the_first_ones_too(capsys, monkeypatch):
    """Lines start after the first second; the results of that second are said
    then, so a long run's log starts at [1/N]. A short run says only its last."""
    from types import SimpleNamespace

    clock = [0.0]
    monkeypatch.setattr("deployspec.progress.time.perf_counter", lambda: clock[0])
    result = SimpleNamespace(variant="v", property="p", engine="e", verdict="holds", stats={"seconds": 0.1})
    with Progress(total=3) as p:
        p.done(result)
        clock[0] = 2.0
        p.done(result)
        p.done(result)
    with Progress(total=2) as short:
        short.done(result)
        short.done(result)
    err = [line.split()[0] for line in capsys.readouterr().err.splitlines()]
    assert err == ["[1/3]", "[2/3]", "[3/3]", "[2/2]"]


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="opens a pseudo-terminal (os.openpty, Linux)")
def test_on_a_terminal_the_bar_goes_to_stderr_even_when_stdout_is_a_file(tmp_path):
    """``deployspec check > results.txt`` on a terminal: the bar, with the search's
    depth and states, is drawn on stderr; the file gets the results, no escape codes."""
    primary, secondary = os.openpty()
    out = tmp_path / "results.txt"
    with open(out, "w") as stdout:
        proc = subprocess.Popen(
            [sys.executable, "-m", "deployspec", "check", "--model", "capi", "--variant", "capi-safe",
             "--engine", "explore", "--property", "single_active_deployment"],
            stdout=stdout, stderr=secondary, stdin=subprocess.DEVNULL,
            env={**os.environ, "COLUMNS": "160", "TERM": "xterm"})
    os.close(secondary)
    drawn = b""
    while True:
        try:
            chunk = os.read(primary, 65536)
        except OSError:  # the other end closed
            break
        if not chunk:
            break
        drawn += chunk
    os.close(primary)
    assert proc.wait(60) == 0
    assert b"states" in drawn and b"depth" in drawn
    assert "holds for all" in out.read_text() and "\x1b" not in out.read_text()


def test_a_search_s_line_says_how_long_all_of_it_took(capsys, monkeypatch):
    """A close look's exhaustive search goes on for further causes after its first; the
    line showed the first cause's seconds ("violated (0.0s)" of a 3.5 s search)."""
    import time

    from deployspec import check
    from deployspec.engines.result import Result

    from .cli_runs import run

    def judge(model, variant, engine, prop, **options):
        time.sleep(0.4)  # the search for a further cause, which found none
        return [Result(model, variant, prop, engine, "holds", stats={"seconds": 0.0, "complete": True})]

    monkeypatch.setattr(check, "judge", judge)
    _, _, err = run(capsys, "check", "--model", "capi", "--variant", "capi-safe", "--engine", "explore",
                    "--property", "single_active_deployment")
    (line,) = [x for x in err.splitlines() if x.startswith("[1/1]")]
    assert line.startswith("[1/1] capi-safe · single_active_deployment · explore: holds (")
    assert float(line.rsplit("(", 1)[1].rstrip("s)")) >= 0.4


def test_a_close_look_s_line_names_both_searches_and_gives_the_table_s_cell(capsys):
    """A close look runs the random search, then the explorer: its line said
    "hypothesis: holds" over both searches' time while the table said "holds*" (the
    explorer unfinished; a user's report). It now names both and says the cell."""
    from deployspec.cli import main

    status = main(["check", "--model", "capi", "--variant", "capi-safe", "--budget", "0.5",
                   "--property", "deployment_converges"])
    out, err = capsys.readouterr()
    (line,) = [x for x in err.splitlines() if x.startswith("[1/1]")]
    assert status == 0 and "capi-safe  holds*" in out
    assert line.startswith("[1/1] capi-safe · deployment_converges · hypothesis + explore: holds* (")
