"""How a program's reply lines are framed over --exec: the 8 MiB bound, a reply with no newline,
a reply written just before the program ended."""

from __future__ import annotations

import json
import select
import shlex

import pytest

from deployspec.adapter import ImplementationError
from deployspec.contract import protocol, subprocess_adapter
from deployspec.contract.subprocess_adapter import Program
from deployspec.models import get_model


def _program(shell: str, **kw) -> Program:
    return Program(shell, model=get_model("capi"), timeout=kw.pop("timeout", 0.5), **kw)


def _reset_ok(length: int) -> str:
    """A reset_ok reply to request 1 whose line, newline left out, is ``length`` bytes."""
    base = json.dumps({"id": 1, "type": "reset_ok", "protocol": 1, "implementation": ""}, separators=(",", ":"))
    return base[:-2] + "x" * (length - len(base)) + '"}'


@pytest.mark.parametrize("length, fault", [(100, False), (101, True), (150, True)])
def test_a_reply_line_over_the_bound_is_a_fault_however_it_arrives(monkeypatch, length, fault):
    """serve's bound: the line without its newline; not the bound plus what one read brought."""
    monkeypatch.setattr(subprocess_adapter, "MAX_LINE", 100)
    line = _reset_ok(length)
    assert len(line) == length
    with _program(f"printf '%s\\n' {shlex.quote(line)}; exec sleep 5", startup_timeout=5) as p:
        if fault:
            with pytest.raises(ImplementationError, match="reset is a line of over 100 bytes"):
                p.ask(protocol.reset(1, "capi", {}))
        else:
            assert p.ask(protocol.reset(1, "capi", {}))[0]["type"] == "reset_ok"


@pytest.mark.parametrize("then, said", [
    ("exec sleep 5", "no reply to reset within"),
    # a background child keeps stdout open after the program exited: no end of output came
    ("sleep 3 & exit 0", "exited with status 0 before replying to reset"),
], ids=["still running", "ended"])
def test_a_reply_without_its_newline_is_said_to_lack_it_not_to_hang(then, said):
    line = _reset_ok(60)
    with _program(f"printf '%s' {shlex.quote(line)}; {then}", startup_timeout=0.5) as p, \
            pytest.raises(ImplementationError) as e:
        p.ask(protocol.reset(1, "capi", {}))
    assert said in str(e.value)
    assert "60 bytes it wrote since its last reply end without a newline: '{\"id\":1," in str(e.value)
    assert "every reply ends with \\n" in str(e.value)


def test_a_reply_written_as_the_program_ends_is_read(monkeypatch):
    """The program answers and exits between a wait that saw nothing and the look at whether it
    still runs: its reply is in the pipe, and is the reply (the exit is seen at the next request)."""
    real = select.select
    fooled = []
    p = _program(f"read -r _; printf '%s\\n' {shlex.quote(_reset_ok(60))}", startup_timeout=5)

    def late(r, w, x, timeout=None):
        proc = p.proc
        if not fooled and proc is not None and r == [proc.stdout.fileno()] and timeout:
            fooled.append(True)
            proc.wait()  # it has written and ended, yet this wait says nothing came
            return [], [], []
        return real(r, w, x, timeout)

    with p:
        p.start()
        monkeypatch.setattr(subprocess_adapter.select, "select", late)
        assert p.ask(protocol.reset(1, "capi", {}))[0]["type"] == "reset_ok"
    assert fooled


def test_a_program_a_signal_ended_under_the_shell_is_said_so():
    """--exec runs through sh, which exits 128+N when the program it waits for is killed by
    signal N: "exited with status 139" said nothing of a segmentation fault."""
    with _program("sh -c 'kill -SEGV $$'; exit $?", startup_timeout=5) as p, \
            pytest.raises(ImplementationError, match=r"exited with status 139 \(128\+11: SIGSEGV\?\) before"):
        p.ask(protocol.reset(1, "capi", {}))
    with _program("exit 3", startup_timeout=5) as p, \
            pytest.raises(ImplementationError, match=r"exited with status 3 before"):
        p.ask(protocol.reset(1, "capi", {}))


def test_an_unended_reply_is_named_when_the_program_ended_before_the_request_was_written():
    """A program quicker than the harness: it wrote its reply without a newline and ended
    before the request reached it, so the write failed and nothing it wrote was read."""
    with _program(f"printf '%s' {shlex.quote(_reset_ok(60))}; sleep 3 & exit 0", startup_timeout=5) as p:
        p.start()
        p.proc.wait()
        with pytest.raises(ImplementationError) as e:
            p.ask(protocol.reset(1, "capi", {}))
    assert "exited with status 0 before replying to reset" in str(e.value)
    assert "the 60 bytes it wrote since its last reply end without a newline" in str(e.value)
