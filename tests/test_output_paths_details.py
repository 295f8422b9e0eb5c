"""Where outputs go, in detail (deployspec.outputs): what a name that cannot take
the output is told, and that an open log named by its descriptor keeps what it holds."""

from __future__ import annotations

import io
import os
import sys
from pathlib import Path

import pytest

from deployspec.models import UsageError
from deployspec.outputs import output_path, writable_dir, write_output


def test_an_out_that_is_a_file_is_named_so(tmp_path):
    """Not "cannot create: File exists": the user gave a file where a folder goes."""
    (tmp_path / "f").write_text("x")
    with pytest.raises(UsageError, match=r"^--out .*/f: exists and is not a directory$"):
        writable_dir(str(tmp_path / "f"))


def test_output_named_by_an_open_descriptor_is_added_to_not_replaced(tmp_path):
    """``--junit /dev/fd/3`` with 3 a CI job's log: what the log held stays, the report follows it."""
    log = tmp_path / "log"
    log.write_text("earlier lines\n")
    fd = os.open(log, os.O_WRONLY | os.O_APPEND)
    try:
        named = f"/dev/fd/{fd}"
        path = output_path(named, "--junit")
        write_output(path, "<report/>\n", "--junit", named)
    finally:
        os.close(fd)
    assert log.read_text() == "earlier lines\n<report/>\n"


@pytest.mark.parametrize("prefix", ["/dev/fd/", "/proc/self/fd/"])
def test_a_descriptor_not_open_is_refused_before_the_work(tmp_path, prefix):
    """``--junit /dev/fd/7`` without ``7>report.xml``: said before an hour's search, not after it."""
    fd = os.open(tmp_path / "any", os.O_WRONLY | os.O_CREAT)
    os.close(fd)  # a number no file of this process holds now
    if not os.path.isdir(prefix):
        pytest.skip(f"this system has no {prefix} (descriptors are named there on Linux)")
    with pytest.raises(UsageError, match=rf"^--junit {prefix}{fd}: no such open file descriptor in this process$"):
        output_path(f"{prefix}{fd}", "--junit")


def refusing(monkeypatch):
    """Folders refuse new files (as a read-only one does; the tests may run as root)."""
    from deployspec import files

    def refuse(path):
        raise PermissionError(13, "Permission denied")

    monkeypatch.setattr(files, "check_writable_dir", refuse)


def test_a_file_in_a_folder_that_takes_no_files_is_refused_before_the_work(tmp_path, monkeypatch):
    """The report is written atomically (a new file, renamed): its folder must take
    files, known before the search, not after an hour of it."""
    refusing(monkeypatch)
    with pytest.raises(UsageError, match=r"^-o .*/r\.svg: cannot create a file in .*: Permission denied$"):
        output_path(str(tmp_path / "r.svg"), "-o")


def test_a_folder_that_refuses_new_files_is_named_as_what_refused():
    """``--junit /proc/version`` said "cannot write: No such file or directory" of a file
    that is there: /proc refuses the new file the atomic write makes beside it, with ENOENT.
    The message names the folder and that a new file is what it refused."""
    with pytest.raises(UsageError, match=r"^--junit /proc/version: cannot create a file in /proc: "):
        output_path("/proc/version", "--junit")


def test_a_device_is_written_into_whatever_its_folder_takes(monkeypatch):
    """``-o /dev/null`` opens the device: /dev itself need not take files."""
    refusing(monkeypatch)
    assert output_path("/dev/null", "-o") == Path("/dev/null")


def test_a_dash_for_a_closed_standard_output_is_refused(monkeypatch):
    from deployspec import streams

    monkeypatch.setattr(streams, "CLOSED_AT_START", ("stdout",))
    with pytest.raises(UsageError, match="^--junit -: standard output is closed$"):
        output_path("-", "--junit")


def test_a_name_that_is_not_utf8_reaches_a_descriptor_escaped(tmp_path):
    """A trace file's name with a byte that is not UTF-8 (a lone surrogate in Python)
    is written as its escape (the byte, as on stdout), not a crash after the work is done."""
    log = tmp_path / "log"
    fd = os.open(log, os.O_WRONLY | os.O_CREAT | os.O_APPEND)
    try:
        write_output(output_path(f"/dev/fd/{fd}", "-o"), "seed-\udcff.json\n", "-o", f"/dev/fd/{fd}")
    finally:
        os.close(fd)
    assert log.read_text() == "seed-\\xff.json\n"


def test_an_out_folder_is_made_with_its_parents(tmp_path):
    """``--out findings/2024/run-1`` in a fresh CI checkout: no folder of it exists yet."""
    writable_dir(str(tmp_path / "a" / "b" / "c"))
    assert (tmp_path / "a" / "b" / "c").is_dir()


def test_an_out_folder_whose_name_merely_begins_with_the_reports_is_not_under_it(tmp_path):
    """O2: ``--junit r.xml --out r.xml.d``: the folder shares the report's name as a
    prefix, but is not under it (no separator after it): accepted, and made."""
    report = tmp_path / "r.xml"
    writable_dir(str(tmp_path / "r.xml.d"), report=report)
    assert (tmp_path / "r.xml.d").is_dir()


def test_a_report_in_the_out_folder_still_to_be_made_is_named_absolute(tmp_path, monkeypatch):
    """O5: ``--out results --junit results/junit.xml`` in a fresh checkout: the path is
    absolute, as any other output path is (a --python object may change folders)."""
    monkeypatch.chdir(tmp_path)
    path = output_path("results/junit.xml", "--junit", made="results")
    assert path.is_absolute()
    assert path == tmp_path / "results" / "junit.xml"


def test_a_report_on_standard_output_is_flushed_at_once(monkeypatch):
    """O10: ``--junit -``: the report is flushed when written (in order with what was said,
    and not lost should the process end by os._exit, as a hung --python object's does)."""
    class Recording(io.StringIO):
        flushed_with = None

        def flush(self):
            Recording.flushed_with = self.getvalue()
            super().flush()

    out = Recording()
    monkeypatch.setattr(sys, "stdout", out)
    write_output(Path("/dev/stdout"), "<report/>\n", "--junit", "-")
    assert Recording.flushed_with == "<report/>\n"
