"""How the command line reads what it is given: an option of one value given once, one
trace for ``show`` (``-``: standard input), and no output written over standard input."""

import os
import socket
import subprocess

import pytest

from .cli_runs import SEED, finished, run


@pytest.mark.parametrize("argv, said", [
    (["check", "--model", "capi", "--model", "slots", "--property", "single_active_deployment"],
     "argument --model: given twice (capi and slots)"),
    (["check", "--seed", "1", "--seed", "2"], "argument --seed: given twice (1 and 2)"),
    (["replay", str(SEED), "--variant", "capi-safe", "--variant", "capi-2022"],
     "argument --variant: given twice (capi-safe and capi-2022)"),
    (["show", str(SEED), "-o", "a.svg", "-o", "b.svg"], "argument -o: given twice (a.svg and b.svg)"),
    (["contract", "--python", "deployspec.contract.examples:capi_2022", "--model", "capi", "--examples", "3",
      "--examples", "4"], "argument --examples: given twice (3 and 4)"),
    # as typed, not as read (the floats said 2.0 and 3.0; a value the same once read is no conflict)
    (["check", "--budget", "2", "--budget", "3"], "argument --budget: given twice (2 and 3)"),
    (["replay", str(SEED), "--timeout", "1e1", "--timeout", "5"], "argument --timeout: given twice (1e1 and 5)"),
    # quoted where the text needs it to be read as given
    (["contract", "--exec", "node a.js", "--exec", "", "--model", "capi"],
     "argument --exec: given twice ('node a.js' and '')"),
])
def test_an_option_of_one_value_given_twice_with_two_is_refused(capsys, argv, said):
    """argparse kept the last: ``--model capi --model slots --property single_active_deployment``
    said slots has no such property, and a CI line of defaults and overrides searched what
    nobody read. Refused before any work, as ``--bound`` given twice is."""
    assert run(capsys, *argv) == (2, "", f"deployspec: error: {said}\n")


def test_an_option_given_twice_with_the_same_value_is_no_conflict(capsys):
    status, out, err = run(capsys, "check", "--model", "capi", "--model", "capi", "--variant", "capi-safe",
                           "--engine", "explore", "--property", "single_active_deployment", "--seed", "0",
                           "--seed", "0", "--budget", "2", "--budget", "2.0")
    assert status == 0 and "given twice" not in err and "holds" in out, (out, err)


def test_show_given_several_traces_says_it_draws_one(capsys, tmp_path):
    """A glob (``found/x--*.json``) matching several said "unrecognized arguments: b.json"."""
    names = [str(SEED)] + [str(tmp_path / f"t{i}.json") for i in range(4)]
    said = (f"deployspec: error: show draws one trace, got 5 ({names[0]}, {names[1]}, {names[2]} and 2 more); "
            "draw each in turn, or replay them all: deployspec replay FILE...\n")
    assert run(capsys, "show", *names) == (2, "", said)
    assert run(capsys, "show", names[0], "-o", str(tmp_path / "x.svg"), *names[1:]) == (2, "", said)  # -o amid
    assert run(capsys, "show", names[0], "--bogus") == (2, "", "deployspec: error: unrecognized arguments: --bogus\n")
    assert run(capsys, "show", str(SEED))[0] == 0


def test_show_reads_a_trace_from_standard_input_given_as_dash(tmp_path):
    """``show -`` said "-: no such file", though ``-o -`` writes to standard output."""
    with open(SEED, "rb") as f:
        r = finished("show", "-", stdin=f)
    assert (r.returncode, r.stderr) == (0, "") and "violated" in r.stdout.splitlines()[0], r
    with open(SEED, "rb") as f:
        r = finished("show", "-", "--format", "html", stdin=f)
    assert r.returncode == 0 and "Replay: <code>deployspec replay FILE</code>" in r.stdout, r.stderr
    r = finished("show", "-", input="{")
    assert (r.returncode, r.stdout) == (2, "") and r.stderr.startswith("deployspec: error: standard input: not JSON")
    ours, theirs = socket.socketpair()  # (read as it is: reopening /dev/stdin fails on a socket)
    with ours, theirs:
        ours.sendall(SEED.read_bytes())
        ours.shutdown(socket.SHUT_WR)
        r = finished("show", "-", stdin=theirs)
    assert (r.returncode, r.stderr) == (0, "") and "violated" in r.stdout.splitlines()[0], r
    r = finished("show", "-", stdin=subprocess.DEVNULL, preexec_fn=lambda: os.close(0))
    assert (r.returncode, r.stdout, r.stderr) == (
        2, "", "deployspec: error: show -: standard input is closed; name a trace file\n")


def test_no_output_is_written_over_standard_input(tmp_path):
    """``show - -o t.json < t.json`` wrote the table over the trace it read (the "is the
    trace being shown" guard compared -o with "-"), and ``-o /dev/fd/0``, a descriptor,
    appended to whatever standard input was: refused, the file left as it was."""
    trace = tmp_path / "t"
    trace.write_bytes(SEED.read_bytes())
    for argv in (["show", "-", "-o", str(trace)], ["show", "-", "-o", "/dev/stdin"],
                 ["show", str(SEED), "-o", "/dev/fd/0", "--format", "svg"],
                 ["replay", str(SEED), "--junit", str(trace)]):
        with open(trace, "rb") as f:
            r = finished(*argv, stdin=f)
        assert (r.returncode, r.stdout) == (2, ""), r
        assert r.stderr.endswith(": is standard input (a file read, not one to write); name another\n"), r.stderr
        assert trace.read_bytes() == SEED.read_bytes()
