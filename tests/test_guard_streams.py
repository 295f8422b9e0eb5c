"""The streams lent to the user's code (``deployspec.user_code.lent_streams``): it may
write to and flush them, not close, detach or reconfigure them; and what it writes below
Python stays out of ``--json``'s document."""

from __future__ import annotations

import io
import os
import sys

import pytest

from deployspec.user_code import Lent, borrowed, lent_streams


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

