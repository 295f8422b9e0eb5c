"""The user's code may not close or move the descriptors deployspec writes to (1, 2 and
``--json``'s document) while it runs (``deployspec.user_code.descriptors_kept``): put back,
and said."""

from __future__ import annotations

import os
import sys

import pytest

from deployspec.user_code import DescriptorsMoved, descriptors_kept

from .helpers import in_a_child


@pytest.mark.parametrize("doing, said", [
    (lambda: (os.close(1), os.close(2)), "closed file descriptors 1 (stdout) and 2 (stderr)"),
    (lambda: os.close(2), "closed file descriptor 2 (stderr)"),
    (lambda: os.dup2(os.open(os.devnull, os.O_WRONLY), 1), "pointed file descriptor 1 (stdout) elsewhere"),
    (lambda: (os.dup2(os.open(os.devnull, os.O_WRONLY), 2), os.close(1)),
     "closed file descriptor 1 (stdout) and pointed file descriptor 2 (stderr) elsewhere"),
])
def test_descriptors_the_code_closes_or_moves_are_put_back_and_said(doing, said):
    """``os.close(1)`` in a --python object ended the run silently with status 2; a
    ``dup2`` of /dev/null onto it ended it with status 0 and no report at all."""
    def body(report):
        before = [os.fstat(fd) for fd in (1, 2)]
        try:
            with descriptors_kept():
                doing()
        except DescriptorsMoved as exc:
            os.write(report, str(exc).encode())
        after = [os.fstat(fd) for fd in (1, 2)]
        same = all((a.st_dev, a.st_ino) == (b.st_dev, b.st_ino) for a, b in zip(before, after))
        return 0 if same else 1

    status, text = in_a_child(body)
    assert status == 0 and text == f"{said} (deployspec writes there; put back)"



@pytest.mark.parametrize("raised, expected", [(KeyboardInterrupt, KeyboardInterrupt),
                                              (ValueError, DescriptorsMoved)])
def test_a_moved_descriptor_is_put_back_whatever_the_code_raised(raised, expected):
    """Put back in any case; said in place of what the code raised, except a Ctrl-C, which goes on."""
    def body(report):
        before = os.fstat(1)
        try:
            with descriptors_kept():
                os.close(1)
                raise raised()
        except BaseException as exc:  # noqa: BLE001 - which one is the test
            os.write(report, type(exc).__name__.encode())
        return 0 if (os.fstat(1).st_ino, os.fstat(1).st_dev) == (before.st_ino, before.st_dev) else 1

    assert in_a_child(body) == (0, expected.__name__)



def test_a_copy_the_code_closed_too_puts_nothing_back():
    """Code that closes every descriptor and opens files may leave another file under the
    copy's number: putting that one onto stdout would send the report into it."""
    from deployspec import user_code

    def body(report):
        first = second = None
        try:
            with descriptors_kept():
                copy = user_code._COPIES[1][1]
                os.close(1)
                os.close(copy)
                first = os.open(os.devnull, os.O_RDONLY)  # takes 1, the lowest free number
                second = os.open("/dev/zero", os.O_RDONLY)  # takes the copy's
        except DescriptorsMoved as exc:
            os.write(report, str(exc).encode())
        zero = os.stat("/dev/zero")
        now = os.fstat(1)
        return 0 if (first, second) == (1, copy) and (now.st_ino, now.st_dev) != (zero.st_ino, zero.st_dev) else 1

    assert in_a_child(body) == (0, ("pointed file descriptor 1 (stdout) elsewhere (deployspec writes there; "
                                    "file descriptor 1 (stdout) could not be put back)"))



def test_descriptors_left_alone_or_closed_before_are_no_fault():
    """A descriptor closed before the block is none of the code's doing: a file it opens may
    take its number."""
    def body(report):
        with descriptors_kept():
            os.write(1, b"written, not moved")
        os.close(2)
        with descriptors_kept():
            fd = os.open(os.devnull, os.O_WRONLY)
        return 0 if fd == 2 else 1

    assert in_a_child(body) == (0, "")



CLOSING = """
import os
from deployspec.contract.examples import capi_safe


class Closing:
    def __init__(self, how):
        self.inner, self.how, self.calls = capi_safe(), how, 0

    def reset(self, config):
        return self.inner.reset(config)

    def perform(self, action):
        self.calls += 1
        if self.calls == 3:
            self.how()
        return self.inner.perform(action)

    def observe(self):
        return self.inner.observe()


def closing():
    return Closing(lambda: (os.close(1), os.close(2)))


def to_null():
    return Closing(lambda: [os.dup2(os.open(os.devnull, os.O_WRONLY), fd) for fd in (1, 2)])
"""



CLOSING_DESIGN = """
import os
import attrs
from deployspec.reference.slots import VARIANTS as SHIPPED

os.close(1)
VARIANTS = [attrs.evolve(SHIPPED["slots-pipeline-immutable"], name="closing")]
"""



@pytest.mark.parametrize("factory, said", [
    ("closing", "perform() closed file descriptors 1 (stdout) and 2 (stderr) (deployspec writes there; put back)"),
    ("to_null", "perform() pointed file descriptors 1 (stdout) and 2 (stderr) elsewhere"),
])
@pytest.mark.parametrize("json_out", [False, True])
def test_an_object_that_closes_or_moves_stdout_is_a_fault_and_the_report_still_comes_out(tmp_path, factory, said,
                                                                                       json_out):
    """Before, a silent exit 2 (closed) or a silent exit 0 with the report in /dev/null."""
    import json
    import subprocess

    (tmp_path / "closingobject.py").write_text(CLOSING)
    argv = ["contract", "--python", f"closingobject:{factory}", "--model", "capi", "--examples", "3",
            "--property", "single_active_deployment"] + (["--json"] if json_out else [])
    run = subprocess.run([sys.executable, "-m", "deployspec", *argv], capture_output=True, text=True,
                         cwd=tmp_path, env={**os.environ, "PYTHONPATH": str(tmp_path)}, timeout=120, check=False)
    assert run.returncode == 3, run.stderr
    assert said in run.stderr.splitlines()[-1]
    if json_out:
        assert json.loads(run.stdout)["exit_status"] == 3
    else:
        assert "FAULT: the implementation failed" in run.stdout



def test_a_design_module_that_closes_stdout_is_refused_in_one_line(tmp_path):
    import subprocess

    (tmp_path / "closingdesign.py").write_text(CLOSING_DESIGN)
    run = subprocess.run([sys.executable, "-m", "deployspec", "variants"], capture_output=True, text=True,
                         cwd=tmp_path, env={**os.environ, "PYTHONPATH": str(tmp_path),
                                            "DEPLOYSPEC_VARIANTS": "closingdesign"}, timeout=120, check=False)
    assert run.returncode == 2 and run.stdout == ""
    assert run.stderr == ("deployspec: error: variants from DEPLOYSPEC_VARIANTS module closingdesign: cannot load: "
                          "it closed file descriptor 1 (stdout) (deployspec writes there; put back)\n")



DOCUMENT_MOVING = """
import os
from deployspec import streams
from deployspec.contract.examples import ReferenceImplementation

class Moving(ReferenceImplementation):
    done = False

    def perform(self, action):
        if not Moving.done and streams.DOCUMENT_FD is not None:
            Moving.done = True
            os.dup2(os.open(os.devnull, os.O_WRONLY), streams.DOCUMENT_FD)
        return super().perform(action)

def make():
    return Moving("capi", "capi-safe")
"""



def test_the_descriptor_of_the_json_document_is_kept_too(tmp_path):
    """While --json's document is written to a copy of stdout's descriptor (fd 1 is stderr's
    then), that copy is guarded as 1 and 2 are: a daemon-like closerange(3, …) followed by an
    open() sent the whole document into the object's own log file, with exit 0."""
    import json
    import subprocess

    (tmp_path / "documentmoving.py").write_text(DOCUMENT_MOVING)
    run = subprocess.run([sys.executable, "-m", "deployspec", "contract", "--python", "documentmoving:make",
                          "--model", "capi", "--examples", "3", "--property", "single_active_deployment", "--json"],
                         capture_output=True, text=True, cwd=tmp_path, timeout=120, check=False,
                         env={**os.environ, "PYTHONPATH": str(tmp_path)})
    assert run.returncode == 3, run.stderr
    assert json.loads(run.stdout)["exit_status"] == 3  # put back: the document still comes out
    assert "(the --json document's) elsewhere (deployspec writes there; put back)" in run.stderr.splitlines()[-1]



def test_a_copy_whose_number_the_code_reused_is_neither_closed_nor_a_fault(tmp_path):
    """After a call that closed deployspec's copies and opened a file of its own at their
    number, and with fd 1 changed between calls, the next block closed the code's file (or
    raised EBADF, leaving its record of running blocks behind)."""
    def child(report):
        from deployspec import user_code

        with descriptors_kept():
            pass
        with descriptors_kept():
            for _, copy in list(user_code._COPIES.values()):
                os.close(copy)
        log = os.open(tmp_path / "own.log", os.O_WRONLY | os.O_CREAT)
        null = os.open(os.devnull, os.O_WRONLY)
        os.dup2(null, 1)
        with descriptors_kept():
            pass
        os.write(log, b"still mine")  # EBADF if the block closed it
        return 0 if user_code._HELD == [] else 5

    assert in_a_child(child)[0] == 0
    assert (tmp_path / "own.log").read_bytes() == b"still mine"



def test_a_block_within_a_block_leaves_the_descriptors_to_the_outer_one():
    """The inner block refreshed the copies, closing the one the outer block needed: stdout,
    silenced by the code, could not be put back."""
    def child(report):
        from deployspec import user_code

        try:
            with descriptors_kept():
                null = os.open(os.devnull, os.O_WRONLY)
                os.dup2(null, 1)
                with descriptors_kept():
                    pass
        except DescriptorsMoved as exc:
            os.write(report, str(exc).encode())
            return 0 if user_code._HELD == [] else 5
        return 6  # not said

    status, said = in_a_child(child)
    assert (status, said) == (0, "pointed file descriptor 1 (stdout) elsewhere (deployspec writes there; put back)")

