"""Where outputs go, in detail (deployspec.outputs): what a name that cannot take
the output is told, and that an open log named by its descriptor keeps what it holds."""

from __future__ import annotations

import os

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
