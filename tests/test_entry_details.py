"""Details of saving files atomically and of making untrusted text printable that a
mutation pass over deployspec.files and deployspec.text found unpinned."""

from __future__ import annotations

import os

import pytest

from deployspec.files import check_writable_dir, write_atomically
from deployspec.text import ESCAPE, escaped, markup, printable_line

# --- files ---------------------------------------------------------------------------


def test_the_whole_text_is_on_disk_when_it_is_synced(tmp_path, monkeypatch):
    """The text is flushed before fsync: a crash after the rename cannot leave an empty file."""
    sizes = []
    real_fsync = os.fsync

    def fsync(fd):
        sizes.append(os.fstat(fd).st_size)
        real_fsync(fd)

    monkeypatch.setattr(os, "fsync", fsync)
    write_atomically(tmp_path / "a.json", "x" * 100)
    assert sizes == [100]


def test_no_replace_leaves_a_file_already_there_and_says_so(tmp_path):
    """replace=False never overwrites what is saved, and reports that the name was taken."""
    target = tmp_path / "trace.json"
    target.write_text("old")
    assert write_atomically(target, "new", replace=False) is False
    assert target.read_text() == "old"
    assert [p.name for p in tmp_path.iterdir()] == ["trace.json"]  # no temporary left


def test_no_replace_writes_a_new_name_and_leaves_no_temporary(tmp_path):
    """replace=False on a free name saves the file and leaves no hard-linked temporary beside it."""
    target = tmp_path / "trace.json"
    assert write_atomically(target, "new", replace=False) is True
    assert target.read_text() == "new"
    assert [p.name for p in tmp_path.iterdir()] == ["trace.json"]


def test_the_temporary_is_made_in_the_target_s_folder(tmp_path, monkeypatch):
    """The temporary is beside the target, so the rename is atomic (never a copy across file systems)."""
    moved = []
    real_replace = os.replace

    def replace(src, dst):
        moved.append(os.path.dirname(src))
        real_replace(src, dst)

    monkeypatch.setattr(os, "replace", replace)
    (tmp_path / "out").mkdir()
    write_atomically(tmp_path / "out" / "a.svg", "<svg/>")
    assert moved == [str(tmp_path / "out")]


def test_saving_a_new_file_leaves_the_process_umask_as_it_was(tmp_path):
    """Reading the umask must put it back: files made later keep the user's permissions."""
    old = os.umask(0o027)
    try:
        write_atomically(tmp_path / "new.json", "{}")
        assert os.umask(0o027) == 0o027
    finally:
        os.umask(old)
    assert (tmp_path / "new.json").stat().st_mode & 0o777 == 0o640


def test_checking_a_folder_is_writable_leaves_nothing_in_it(tmp_path):
    """The probe file is removed: --out's folder is not littered by a check."""
    check_writable_dir(tmp_path)
    assert list(tmp_path.iterdir()) == []


def test_checking_a_folder_keeps_no_descriptor_open(tmp_path):
    """The probe is closed: a check per --out or -o never uses up the process's open-file limit."""
    before = len(os.listdir("/proc/self/fd"))
    for _ in range(5):
        check_writable_dir(tmp_path)
    assert len(os.listdir("/proc/self/fd")) == before


# --- text ----------------------------------------------------------------------------


@pytest.mark.parametrize("char, shown", [
    ("\udc80", "\\x80"), ("\udcff", "\\xff"),  # a byte of a name that was not UTF-8: as the byte
    ("\udc7f", "\\udc7f"), ("\udd00", "\\udd00"),  # lone surrogates that stand for no byte
    ("\x80", "\\u0080"), ("\x7f", "\\x7f"), ("\x1b", "\\x1b"),  # past ASCII never as \xNN
    ("\uffff", "\\uffff"), ("\U000e0001", "\\U000e0001"),
])
def test_each_unprintable_character_has_one_unambiguous_escape(char, shown):
    """The byte 0x80 and the character U+0080 read differently; every edge of each range is right."""
    assert escaped(char) == shown


def test_a_stream_that_cannot_take_a_character_writes_its_escape_and_goes_on():
    """The stream error handler escapes only the bad characters and keeps the rest of the line."""
    assert "a\udcffb\x80c".encode("ascii", errors=ESCAPE) == b"a\\xffb\\u0080c"


def test_kept_characters_stay_as_they_are():
    """A multi-line text (a JUnit message, show's text) keeps its newlines and tabs."""
    assert escaped("a\nb\tc\x1b", keep="\n\t") == "a\nb\tc\\x1b"
    assert escaped("a\nb") == "a\\nb"


@pytest.mark.parametrize("text, n, line", [
    ("ab", 2, "ab"), ("abc", 2, "ab…"), ("", 2, ""),
    ("a\n", 3, "a\\n"), ("a\n", 2, "a…"), ("\x1b" * 3, 5, "\\x1b…"), ("a\x1b" * 200, 4, "a…"),
])
def test_a_printable_line_is_clipped_at_n_characters_keeping_escapes_whole(text, n, line):
    """A text of exactly n characters is whole; longer (or escaped longer) is cut to at most n and
    an ellipsis, an escape whole or not at all (``a\\…`` read as a backslash)."""
    assert printable_line(text, n) == line


@pytest.mark.parametrize("text, n, line", [
    ("abcdef", 6, "abcdef"), ("abcdefg", 6, "abc…efg"), ("abcdefgh", 5, "ab…fgh"),
    ("a\nbcdef", 6, "a\\n…def"), ("ab\x1b", 4, "ab…"), ("\x1b" * 300, 10, "\\x1b…\\x1b"),
    ("/" + "a" * 600 + "\udcff" + "/b" * 117 + ": no such file", 500, "/" + "a" * 249 + "…" + "/b" * 117 + ": no such file"),
    ("x" * 10_000 + ": the reason", 30, "x" * 15 + "…xxx: the reason"), ("abc", 0, "…"),
    ("a\x1bbcd", 6, "a…bcd"),  # shorter than n, longer escaped: the tail is read from its start
])
def test_a_line_cut_in_the_middle_keeps_both_ends(text, n, line):
    """An error line about a very long name keeps the reason that follows it; n characters
    and the ellipsis, as at the end; an escape whole or not at all (``…ff/b`` would read
    as a folder named ``ff``, where the name held the byte 0xff)."""
    assert printable_line(text, n, both_ends=True) == line and len(line) <= n + 1


def test_a_list_of_names_cut_in_the_middle_shows_no_half_name():
    """A refused field's hint lists a design's fields; cut in the middle of a name, the piece
    read as a field of its own (``previous_deployment,…_states``). The cut moves to the
    nearest space, when one is near; a name that ends at the cut is kept."""
    names = ", ".join(f"field_number_{i}" for i in range(60))
    line = printable_line(f"unknown 'x' (fields: {names}; docs)", 300, both_ends=True)
    head, tail = line.split("…")
    assert head.endswith(", ") and tail.startswith(" field_number_"), line
    assert all(w.strip(",").startswith("field_number_") or w in ("unknown", "'x'", "(fields:")
               for w in line.replace("…", " ").replace("; docs)", "").split()), line
    whole = "a" * 140 + " " + "b" * 9 + " " + "c" * 300  # a word ends at the cut: kept
    assert printable_line(whole, 300, both_ends=True).startswith("a" * 140 + " " + "b" * 9 + "…")


def test_markup_escapes_both_markup_and_control_characters():
    """An SVG or HTML picture of a trace cannot be broken by its messages (XML forbids \\x1b)."""
    assert markup("<b>\x1b&") == "&lt;b&gt;\\x1b&amp;"
