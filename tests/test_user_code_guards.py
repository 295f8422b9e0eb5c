"""What the user's code may not do to deployspec while it runs (``deployspec.user_code``):
close the streams deployspec writes its results and messages to (or their descriptors), or end
the process with ``os._exit``; and what it still may: exit a child it forked."""

from __future__ import annotations

import io
import os
import sys

import pytest

from deployspec.user_code import (
    DescriptorsMoved,
    ExitCalled,
    Lent,
    borrowed,
    descriptors_kept,
    exit_refused,
    lent_streams,
    path_kept,
)

from .helpers import in_a_child


def test_os_exit_is_refused_in_this_process_and_the_real_one_is_back_after():
    real = os._exit
    with pytest.raises(ExitCalled) as caught, exit_refused():
        os._exit(0)
    assert caught.value.status == 0 and os._exit is real


def test_a_child_the_code_forked_exits_as_ever():
    """multiprocessing ends its forked children with os._exit: refused there, the child
    would run on in deployspec's code."""
    with exit_refused():
        pid = os.fork()
        if pid == 0:
            os._exit(5)
        _, status = os.waitpid(pid, 0)
    assert os.waitstatus_to_exitcode(status) == 5


@pytest.mark.parametrize("raising, status", [(False, 0), (True, 1)])
def test_a_child_the_code_forked_ends_where_it_leaves_the_block(raising, status):
    """``os.fork()`` returns in both processes: a child that comes back out of the user's
    code (returning or raising) would run on as a second deployspec."""
    pid = os.fork()
    if pid == 0:  # a process of its own, so that this test's process runs on whatever happens
        try:
            with exit_refused():
                child = os.fork()
                if child == 0 and raising:
                    raise RuntimeError("out of the code")
            if child == 0:
                os.write(1, b"the forked child ran on past the block\n")
                os._exit(7)
            _, st = os.waitpid(child, 0)
            os._exit(40 + os.waitstatus_to_exitcode(st))
        finally:
            os._exit(9)
    _, st = os.waitpid(pid, 0)
    assert os.waitstatus_to_exitcode(st) == 40 + status


def test_another_thread_exits_as_ever():
    """deployspec's last resort ends a run whose call swallowed its timeout with os._exit from
    a timer thread: refused, the run hung for ever."""
    import threading

    real = os._exit
    pid = os.fork()
    if pid == 0:  # a process of its own: a second thread tries it while the main one is in the block
        try:
            with exit_refused():
                threading.Thread(target=os._exit, args=(6,)).start()
                threading.Event().wait(10)
        finally:
            real(1)
    _, status = os.waitpid(pid, 0)
    assert os.waitstatus_to_exitcode(status) == 6


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


def test_lent_streams_cannot_be_closed_and_the_real_ones_are_back_after():
    out, err = io.StringIO(), io.StringIO()
    real = sys.stdout, sys.stderr
    sys.stdout, sys.stderr = out, err
    try:
        with lent_streams(stdout=err):
            print("to stderr")
            sys.stdout.close()
            sys.stderr.close()
            print("still", file=sys.stderr)
        assert (sys.stdout, sys.stderr) == (out, err)
    finally:
        sys.stdout, sys.stderr = real
    assert not err.closed and err.getvalue() == "to stderr\nstill\n" and out.getvalue() == ""


def test_a_stream_has_one_lender_and_a_lender_is_not_lent_again():
    stream = io.StringIO()
    lender = borrowed(stream)
    assert isinstance(lender, Lent) and borrowed(stream) is lender and borrowed(lender) is lender


def test_the_binary_stream_under_a_lent_one_is_lent_too_and_neither_detaches():
    """``sys.stdout.buffer.close()`` in a design module silenced deployspec's stderr."""
    stream = io.TextIOWrapper(io.BytesIO(), encoding="utf-8")
    lender = borrowed(stream)
    lender.buffer.close()
    assert not stream.buffer.closed and isinstance(lender.buffer, Lent)
    with pytest.raises(io.UnsupportedOperation):
        lender.detach()
    lender.write("still")
    lender.flush()
    assert stream.buffer.getvalue() == b"still"


LOUD_DESIGN = """
import os
import attrs
from deployspec.reference.slots import VARIANTS as SHIPPED

os.write(1, b"loading: fd 1\\n")


def loud(state):
    os.write(1, b"rule: fd 1\\n")
    return SHIPPED["slots-pipeline-immutable"].reference(state)


VARIANTS = [attrs.evolve(SHIPPED["slots-pipeline-immutable"], name="loud", reference=loud)]
"""

LOUD_OBJECT = """
import os
from deployspec.contract.examples import capi_safe


class Loud:
    def __init__(self):
        self.inner = capi_safe()

    def __getattr__(self, name):
        os.write(1, b"object: fd 1\\n")
        return getattr(self.inner, name)


def factory():
    return Loud()
"""


@pytest.mark.parametrize("argv, module, source", [
    (["check", "--model", "slots", "--variant", "loud", "--property", "no_latent_drift", "--budget", "0.3"],
     "louddesign", LOUD_DESIGN),
    (["check", "--model", "slots", "--variant", "loud", "--property", "no_latent_drift", "--budget", "0.3",
      "--jobs", "2", "--engine", "all"], "louddesign", LOUD_DESIGN),
    (["contract", "--python", "loudobject:factory", "--model", "capi", "--examples", "3",
      "--property", "single_active_deployment"], "loudobject", LOUD_OBJECT),
])
def test_what_user_code_writes_to_file_descriptor_1_stays_out_of_the_json_document(tmp_path, argv, module, source):
    """Not only ``print``: ``os.write(1, …)`` (or a C library) in a design handed in or a
    ``--python`` object went into the document on stdout; it goes to stderr now."""
    import json
    import subprocess

    (tmp_path / f"{module}.py").write_text(source)
    env = {**os.environ, "PYTHONPATH": str(tmp_path)}
    if module == "louddesign":
        env["DEPLOYSPEC_VARIANTS"] = module
    run = subprocess.run([sys.executable, "-m", "deployspec", *argv, "--json"], capture_output=True,
                         text=True, cwd=tmp_path, env=env, timeout=120, check=False)
    assert run.returncode == 0, run.stderr
    assert json.loads(run.stdout)["exit_status"] == 0
    assert ": fd 1" in run.stderr and ": fd 1" not in run.stdout


FORKING = """
import os
from deployspec.contract.examples import capi_safe


def factory():
    os.fork()  # both processes come back with an object
    return capi_safe()
"""

FORKING_DESIGN = """
import os
import attrs
from deployspec.reference.slots import VARIANTS as SHIPPED

os.fork()  # at import: both processes come back into deployspec
VARIANTS = [attrs.evolve(SHIPPED["slots-pipeline-immutable"], name="forking")]
"""


@pytest.mark.parametrize("argv, module, source, status, header", [
    (["contract", "--python", "os:fork", "--model", "capi"], None, None, 3, "contract capi"),
    (["contract", "--python", "forking:factory", "--model", "capi", "--examples", "3",
      "--property", "single_active_deployment"], "forking", FORKING, 0, "contract capi"),
    (["check", "--model", "slots", "--variant", "forking", "--property", "no_latent_drift", "--budget", "0.3"],
     "forkingdesign", FORKING_DESIGN, 0, "variant  no_latent_drift"),
])
def test_a_process_the_user_code_forked_does_not_run_on_as_deployspec(tmp_path, argv, module, source, status,
                                                                      header):
    """The child of a fork in the user's code came back into deployspec and ran the whole
    command again: two reports (the pipe's end waits for both), two runs. One now."""
    import subprocess

    env = {**os.environ, "PYTHONPATH": str(tmp_path)}
    if source is not None:
        (tmp_path / f"{module}.py").write_text(source)
    if module == "forkingdesign":
        env["DEPLOYSPEC_VARIANTS"] = module
    run = subprocess.run([sys.executable, "-m", "deployspec", *argv], capture_output=True, text=True,
                         cwd=tmp_path, env=env, timeout=120, check=False)
    assert run.returncode == status, run.stderr
    out = run.stdout + run.stderr
    assert out.count(header) == 1, out


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


@pytest.mark.parametrize("doing", [
    lambda: sys.path.clear(),
    lambda: setattr(sys, "path", []),
    lambda: setattr(sys, "path", ["/mine"]),
    lambda: sys.path.insert(0, "/mine"),
    lambda: sys.path.remove(sys.path[-1]),
    lambda: sys.path.append(b"/bytes"),  # (not a folder an import can take: dropped only if anything is put back)
])
def test_what_the_code_takes_off_sys_path_comes_back_after_what_it_added(monkeypatch, doing):
    """A ``--python`` object that emptied ``sys.path`` ended the run with a traceback
    (``No module named 'hypothesis'``, imported later by deployspec)."""
    listed = ["/a", "/b", "/c"]
    monkeypatch.setattr(sys, "path", listed)
    with path_kept():
        doing()
        changed = list(sys.path)
    assert sys.path is listed
    assert all(p in listed for p in ("/a", "/b", "/c"))  # what deployspec imports from is back
    assert all(p in listed for p in changed if isinstance(p, str))  # and what the code added stays


def test_sys_path_left_as_it_was_is_not_touched(monkeypatch):
    listed = ["/a", "/b"]
    monkeypatch.setattr(sys, "path", listed)
    with path_kept():
        pass
    assert sys.path is listed and listed == ["/a", "/b"]


def test_an_object_that_empties_sys_path_leaves_the_run_whole(tmp_path):
    import subprocess

    (tmp_path / "pathclearing.py").write_text(
        "import sys\nfrom deployspec.contract.examples import ReferenceImplementation\n"
        "def make():\n    sys.path.clear()\n    return ReferenceImplementation('capi', 'capi-safe')\n")
    run = subprocess.run([sys.executable, "-m", "deployspec", "contract", "--python", "pathclearing:make", "--model",
                          "capi", "--examples", "3", "--property", "single_active_deployment"], capture_output=True,
                         text=True, cwd=tmp_path, env={**os.environ, "PYTHONPATH": str(tmp_path)}, timeout=120,
                         check=False)
    assert run.returncode == 0, run.stderr
    assert "no check found a violation" in run.stdout


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


def test_the_streams_the_process_started_with_and_the_raw_stream_are_lent_too(monkeypatch):
    """``sys.__stdout__.close()``, ``sys.stdout.buffer.raw.close()`` or a ``reconfigure`` by a
    ``--python`` object ended a run with a traceback, or lost its last lines."""
    first_out, first_err = io.TextIOWrapper(io.BytesIO()), io.TextIOWrapper(io.BytesIO())
    monkeypatch.setattr(sys, "__stdout__", first_out)
    monkeypatch.setattr(sys, "__stderr__", first_err)
    real = io.TextIOWrapper(io.BufferedWriter(io.BytesIO()))
    monkeypatch.setattr(sys, "stdout", real)
    with lent_streams():
        sys.__stdout__.close()
        sys.__stderr__.close()
        sys.stdout.buffer.raw.close()
        with pytest.raises(io.UnsupportedOperation, match="cannot be reconfigured"):
            sys.stdout.reconfigure(encoding="ascii")
        with pytest.raises(io.UnsupportedOperation, match="cannot be reconfigured"):
            sys.__stdout__.reconfigure(encoding="ascii")
    assert sys.__stdout__ is first_out and sys.__stderr__ is first_err and sys.stdout is real
    assert not first_out.closed and not first_err.closed and not real.buffer.raw.closed
    assert real.encoding != "ascii"


class _RaisingEntry:
    def __eq__(self, other):
        raise RuntimeError("an entry of the code's own compared")

    __hash__ = object.__hash__


@pytest.mark.parametrize("doing", [
    lambda: sys.path.insert(0, _RaisingEntry()),
    lambda: delattr(sys, "path"),
])
def test_sys_path_is_put_back_without_running_the_code_s_own_entries(monkeypatch, doing):
    """Comparing an entry of the code's own ran its __eq__ after the call's timer (a hang, or
    a raw exception out of the call); a deleted sys.path was no list."""
    listed = ["/a", "/b"]
    monkeypatch.setattr(sys, "path", listed)
    with path_kept():
        doing()
    assert sys.path is listed and listed == ["/a", "/b"]


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
