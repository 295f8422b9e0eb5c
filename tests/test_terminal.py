"""A table wider than the reader's screen is split into blocks of columns that fit;
where the width is not known (a pipe, a file, a CI log) a row stays one line."""

from __future__ import annotations

import io
import os

import pytest

from deployspec import terminal
from deployspec.engines.result import Result
from deployspec.models import get_model
from deployspec.report import matrix

CAPI = [p.name for p in get_model("capi").properties]
VARIANTS = ["capi-2022", "capi-pr3072", "capi-current", "capi-safe"]


def every_cell(verdict_of=lambda v, p: "holds"):
    return [Result("capi", v, p, "explore", verdict_of(v, p)) for v in VARIANTS for p in CAPI]


def tables(text: str) -> list[list[str]]:
    """The blocks of a matrix's table: each a head, a rule and a row per variant."""
    lines = text.splitlines()
    lines = lines[lines.index("model capi") + 1:]
    blocks, i = [], 0
    while i < len(lines) and lines[i].startswith("variant "):
        blocks.append(lines[i:i + 2 + len(VARIANTS)])
        i += 2 + len(VARIANTS) + 1  # and the blank line between blocks
    return blocks


@pytest.mark.parametrize("room, widths, groups", [
    (None, [30, 30, 30], [[0, 1, 2]]),
    (64, [30, 30, 30], [[0, 1], [2]]),       # 2+30+2+30 = 64 fits exactly
    (63, [30, 30, 30], [[0], [1], [2]]),
    (10, [30, 5, 5], [[0], [1], [2]]),        # a column wider than the room stands alone
    (20, [5, 5, 5, 30, 5], [[0, 1], [2], [3], [4]]),
])
def test_columns_are_grouped_in_order_as_many_as_fit(room, widths, groups):
    assert terminal.column_groups(widths, room) == groups


@pytest.mark.parametrize("width", [80, 120, 150])
def test_a_matrix_fits_the_width_every_property_once_each_cell_under_its_head(width):
    verdict = lambda v, p: "violated" if (len(v) + len(p)) % 3 == 0 else "holds"
    rs = every_cell(verdict)
    whole, fitted = matrix(rs, declared=False), matrix(rs, declared=False, width=width)
    assert max(map(len, whole.splitlines())) > 150  # (else the test shows nothing)
    blocks = tables(fitted)
    assert len(blocks) > 1
    heads = [name for block in blocks for name in block[0].split()[1:]]
    assert heads == CAPI
    for block in blocks:
        assert all(len(line) <= width for line in block)
        for line in block[2:]:
            v = line.split()[0]
            for p in block[0].split()[1:]:
                at = block[0].index(p)
                word = line[at:].split()[0]
                assert word == ("VIOLATED" if verdict(v, p) == "violated" else "holds"), (v, p)
    assert matrix(rs, declared=False, width=10_000) == whole  # the same table when every column fits


def test_the_key_says_a_declared_verdict_passes_and_explains_the_marks_that_stand():
    rs = [Result("capi", "capi-2022", "single_active_deployment", "explore", "violated"),
          Result("capi", "capi-safe", "single_active_deployment", "explore", "violated"),  # declared to hold: !
          Result("capi", "capi-pr3072", "deployment_converges", "explore", "holds")]    # beyond: +
    key = [line for line in matrix(rs, declared=True).splitlines() if line.startswith("key: ")]
    assert key == [("key: VIOLATED is expected where the variant declares it (deployspec variants); "
                   "+ a violation the default search is not sure to reach (its committed trace below): VIOLATED or "
                   "holds, either passes; "
                   "! NOT what the variant declares (below)")]
    plain = matrix(rs[:1], declared=True).splitlines()
    assert [line for line in plain if line.startswith("key: ")] == [
        "key: VIOLATED is expected where the variant declares it (deployspec variants)"]
    assert not any(line.startswith("key: ") for line in matrix(rs[:1], declared=False).splitlines())


class Stdout(io.StringIO):
    def __init__(self, tty: bool):
        super().__init__()
        self.tty = tty

    def isatty(self):
        return self.tty

    def fileno(self):
        raise io.UnsupportedOperation("no file")


def test_the_width_is_columns_when_set_else_the_terminal_s_else_none(monkeypatch):
    monkeypatch.setenv("COLUMNS", "100")
    assert terminal.columns() == 100
    monkeypatch.setattr("sys.stdout", Stdout(tty=False))
    for unset in ("", "0", "wide", "-3"):
        monkeypatch.setenv("COLUMNS", unset)
        assert terminal.columns() is None  # a pipe: no limit
    monkeypatch.setattr("sys.stdout", Stdout(tty=True))  # a terminal whose size cannot be read
    assert terminal.columns() is None
    monkeypatch.setattr("os.get_terminal_size", lambda fd: os.terminal_size((91, 30)))
    monkeypatch.setattr(Stdout, "fileno", lambda self: 1)
    assert terminal.columns() == 91


def test_check_splits_its_matrix_to_columns(capsys, monkeypatch):
    from deployspec import check
    from deployspec.cli import main

    monkeypatch.setattr(check, "run", lambda *a, **k: every_cell())
    monkeypatch.setenv("COLUMNS", "90")
    assert main(["check", "--model", "capi"]) == 1  # (capi-2022 declares violations: a mismatch)
    out = capsys.readouterr().out
    assert len(tables(out)) > 2 and all(len(line) <= 90 for block in tables(out) for line in block)
    monkeypatch.delenv("COLUMNS")
    main(["check", "--model", "capi"])
    assert len(tables(capsys.readouterr().out)) == 1


def test_the_key_wraps_to_the_width_where_one_is_known():
    rs = [Result("capi", "capi-safe", "single_active_deployment", "explore", "violated"),
          Result("capi", "capi-pr3072", "deployment_converges", "explore", "holds")]
    one = [line for line in matrix(rs, declared=True).splitlines() if line.startswith("key: ")]
    lines = matrix(rs, declared=True, width=60).splitlines()
    start = next(i for i, line in enumerate(lines) if line.startswith("key: "))
    wrapped = [lines[start]] + [line for line in lines[start + 1:] if line.startswith("  ")]
    assert len(wrapped) > 2 and all(len(line) < 60 for line in wrapped)
    assert " ".join(line.strip() for line in wrapped) == one[0]


def test_the_variants_table_wraps_each_line_under_its_own_column():
    from deployspec.report import variants_table

    whole, fitted = variants_table(), variants_table(width=90)
    assert max(map(len, whole.splitlines())) > 200
    over = [line for line in fitted.splitlines() if len(line) > 90]
    assert all(len(line.split()) == 1 for line in over)  # a path or name that no space splits
    assert fitted.split() == whole.split()  # the same words in the same order
    for line in fitted.splitlines():
        if line.startswith("  ") and line.strip():  # a variant's lines start under the names or their text
            assert line[2] != " " or line.index(line.strip()) in (29, 31), line


def test_a_close_look_at_one_variant_before_another_model_leaves_its_table_whole():
    """The one-variant table's column width was kept under the name of the screen's width:
    the next model's table came split into a column a block, piped, with no COLUMNS."""
    rs = [Result("capi", "capi-safe", p, "explore", "holds") for p in CAPI[:3]]
    slots = [p.name for p in get_model("slots").properties]
    rs += [Result("slots", v, p, "explore", "holds") for v in ("slots-webhook-tag", "slots-pipeline-tag")
           for p in slots]
    text = matrix(rs, declared=False)
    heads = [line for line in text.splitlines() if line.startswith("variant ")]
    assert len(heads) == 1 and heads[0].split()[1:] == slots


@pytest.mark.parametrize("width", [1, 2, 10])
def test_a_screen_narrower_than_any_column_still_gets_every_table_and_the_key(width):
    rs = every_cell(lambda v, p: "violated") + [Result("capi", "capi-safe", CAPI[0], "explore", "holds",
                                                       stats={"complete": False, "stopped": "time", "seconds": 1})]
    text = matrix(rs, declared=True, width=width)
    assert len(tables(text)) == len(CAPI)  # a column a block
    key = [line for line in text.splitlines() if line.startswith("key: ")]
    assert key and len(key[0]) <= 41  # at least forty columns a line


def test_a_one_variant_table_has_the_key_of_its_marks():
    stopped = Result("capi", "capi-safe", CAPI[0], "explore", "holds",
                     stats={"complete": False, "stopped": "time", "seconds": 1})
    text = matrix([stopped, Result("capi", "capi-safe", CAPI[1], "explore", "holds")], declared=False)
    assert "key: * a proof a bound or budget stopped before it finished (below)" in text.splitlines()


def test_the_variants_table_goes_on_four_columns_in_where_the_names_leave_no_room(monkeypatch):
    from deployspec import report

    long_name = "x" * 60
    monkeypatch.setattr(report, "source_of", lambda name: None)
    original = report.get_model

    class Wide:
        def __init__(self, model):
            self.model = model
            self.variants = {long_name: next(iter(model.variants.values())), **model.variants}

        def __getattr__(self, name):
            return getattr(self.model, name)

    monkeypatch.setattr(report, "get_model", lambda name: Wide(original(name)))
    whole, fitted = report.variants_table(), report.variants_table(width=80)
    # a 20-column strip beside 64 columns of names reads worse than lines that go on four columns in
    assert fitted.split() == whole.split()
    over = [line for line in fitted.splitlines() if len(line) > 80]
    assert all(len(line.split()) == 1 for line in over)
    assert any(line.startswith("    ") and not line.startswith("     ") for line in fitted.splitlines())


@pytest.mark.parametrize("width", [1, 2, 30, 58, 59])
def test_the_variants_table_reads_on_a_narrow_screen(width):
    """At 58 columns and under it stopped wrapping at all (426-column lines), and the
    model's heading was never wrapped; at 1 a width of 0 would make textwrap raise."""
    from deployspec.report import variants_table

    whole, fitted = variants_table(), variants_table(width=width)
    assert fitted.split() == whole.split()
    longest = max(len(line) for line in fitted.splitlines() if len(line.split()) > 1)
    assert longest <= max(width, 24 + 6)
