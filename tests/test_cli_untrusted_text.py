"""What a trace file says is not trusted: huge files, escape sequences and control characters stay out of the terminal, the pictures and the error lines."""

import json

import pytest

from .cli_runs import SEED, run


def test_a_huge_file_is_not_read_as_a_trace(capsys, tmp_path):
    from deployspec.traces import MAX_TRACE_BYTES

    huge = tmp_path / "huge.json"
    with open(huge, "wb") as f:
        f.truncate(MAX_TRACE_BYTES + 1)  # sparse: no disk used
    status, _, err = run(capsys, "show", str(huge))
    assert status == 2 and err == f"deployspec: error: {huge}: over 64 MiB: not a trace file\n"


def test_an_error_quoting_megabytes_is_one_short_printable_line(capsys, tmp_path):
    trace = json.loads(SEED.read_text())
    trace["model"] = "\x1b[2J" + "m" * 200_000
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps(trace))
    status, _, err = run(capsys, "show", str(bad))
    assert status == 2 and err.count("\n") == 1 and "\x1b" not in err and len(err) < 600


def test_an_error_about_a_very_long_path_keeps_its_reason(capsys, tmp_path):
    """The line is cut in the middle: the reason follows the path (it was cut off with it)."""
    folder = tmp_path.joinpath(*["longdirectoryname"] * 40)
    folder.mkdir(parents=True)
    (folder / "bad.json").write_text('{"format": 1}')
    status, _, err = run(capsys, "replay", str(folder / "bad.json"))
    assert status == 2 and err.count("\n") == 1 and len(err) < 600
    assert err.startswith(f"deployspec: error: {tmp_path}") and "…" in err and "bad.json: " in err


def _crafted(tmp_path, field: str, text: str) -> str:
    """The seed with ``violation[field]`` set to ``text``, as a file."""
    trace = json.loads(SEED.read_text())
    trace["violation"][field] = text
    crafted = tmp_path / "crafted.json"
    crafted.write_text(json.dumps(trace))
    return str(crafted)


def test_show_escapes_what_a_trace_would_send_to_the_terminal(capsys, tmp_path):
    status, out, _ = run(capsys, "show", _crafted(tmp_path, "message", "\x1b[2Jcleared"))
    assert status == 0 and "\x1b" not in out and "\\x1b[2Jcleared" in out


@pytest.mark.parametrize("where", ["title", "message", "cause", "rejected"])
def test_a_newline_in_a_trace_starts_no_line_of_show(capsys, tmp_path, where):
    """A line the file makes up ("holds", a fake step) would read as the tool's own."""
    trace = json.loads(SEED.read_text())
    plain = run(capsys, "show", str(SEED))[1].splitlines()
    fake = "\nINJECTED: every property holds\r\n"
    if where == "title":
        trace["title"] = "T" + fake
    elif where == "rejected":
        trace["steps"][0]["rejected"] = "no" + fake
    else:
        trace["violation"][where] = "m" + fake
    crafted = tmp_path / "crafted.json"
    crafted.write_text(json.dumps(trace))
    status, out, _ = run(capsys, "show", str(crafted))
    lines = out.splitlines()
    assert status == 0 and not any(line.startswith("INJECTED") for line in lines)
    assert "\\nINJECTED: every property holds\\r\\n" in out
    # as many lines as the seed's table (it has a title and a cause), and the rejection's own
    assert len(lines) == len(plain) + (where == "rejected")


def test_a_newline_in_a_conformance_trace_s_message_starts_no_line_of_show(capsys, tmp_path):
    """Where both views agree at the step, the divergence report under the table lists the
    violation's message: escaped there too."""
    trace = json.loads(SEED.read_text())
    trace.update(property="conforms_to_capi-2022", variant="implementation")
    trace["violation"] = {"step": 0, "message": "m\nINJECTED: every property holds"}
    crafted = tmp_path / "conformance.json"
    crafted.write_text(json.dumps(trace))
    status, out, _ = run(capsys, "show", str(crafted))
    assert status == 0 and "first divergence from capi-2022 at step 0" in out
    assert not any(line.startswith("INJECTED") for line in out.splitlines())
    assert out.count("m\\nINJECTED: every property holds") == 2  # under the title, and in the report


def test_replay_escapes_what_a_trace_would_send_to_the_terminal(capsys, tmp_path):
    status, out, _ = run(capsys, "replay", _crafted(tmp_path, "cause", "\x1b[2J\r\u2028"))
    assert status == 1 and out.count("\n") == 1 and "not the recorded cause \\x1b[2J\\r\\u2028" in out


@pytest.mark.parametrize("fmt", ["svg", "html"])
def test_control_characters_of_a_trace_leave_the_picture_well_formed(capsys, tmp_path, fmt):
    """XML forbids them, even as character references: an SVG holding one does not open."""
    import xml.dom.minidom

    status, out, _ = run(capsys, "show", _crafted(tmp_path, "message", "bell \x07 and <b>"), "--format", fmt)
    assert status == 0 and "\x07" not in out and "bell \\x07 and &lt;b&gt;" in out
    if fmt == "svg":
        xml.dom.minidom.parseString(out)  # raises on a character XML forbids


def test_show_into_a_symlink_loop_is_one_line(capsys, tmp_path):
    (tmp_path / "a").symlink_to(tmp_path / "b")
    (tmp_path / "b").symlink_to(tmp_path / "a")
    status, _, err = run(capsys, "show", str(SEED), "-o", str(tmp_path / "a"))
    assert status == 2 and err.startswith(f"deployspec: error: -o {tmp_path / 'a'}: cannot write:")


def _not_utf8_copy_of_the_seed(tmp_path, name: bytes = b"seed-\xff.json") -> str:
    """The seed under a name that is not UTF-8 (PEP 383 reads its bad byte as U+DC80-U+DCFF)."""
    import os
    import shutil

    path = os.fsdecode(os.fsencode(str(tmp_path)) + b"/" + name)
    try:
        shutil.copyfile(SEED, path)
    except (OSError, UnicodeEncodeError):  # macOS and Windows file systems refuse such names
        pytest.skip("this file system keeps only UTF-8 names, so no name can hold a byte that is not UTF-8")
    return path


def test_a_file_name_that_is_not_utf8_is_shown_by_its_bytes(capsys, tmp_path):
    """Its bad byte reads as Python shows bytes (\\xff), on stdout and in an error line alike,
    not as the surrogate Python decoded it to (\\udcff)."""
    name = _not_utf8_copy_of_the_seed(tmp_path)
    status, out, _ = run(capsys, "replay", name)
    assert status == 1 and out.startswith(f"{tmp_path}/seed-\\xff.json: reproduces on capi-2022")
    status, _, err = run(capsys, "show", name + "-gone")
    assert status == 2 and err == f"deployspec: error: {tmp_path}/seed-\\xff.json-gone: no such file\n"


def test_the_program_writes_such_a_name_escaped_to_its_real_stdout(tmp_path):
    import subprocess

    from .cli_runs import deployspec

    name = _not_utf8_copy_of_the_seed(tmp_path)
    proc = deployspec("replay", name, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    out, err = proc.communicate(timeout=60)
    assert proc.returncode == 1, err
    assert out.startswith(f"{tmp_path}/seed-\\xff.json: reproduces on capi-2022"), out


def test_a_fault_line_on_the_real_stderr_shows_such_a_name_by_its_bytes(tmp_path):
    import subprocess

    from .cli_runs import deployspec

    name = _not_utf8_copy_of_the_seed(tmp_path)
    proc = deployspec("replay", name, "--exec", "exit 0", stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    _, err = proc.communicate(timeout=60)
    assert proc.returncode == 3 and err.startswith(f"deployspec: {tmp_path}/seed-\\xff.json: implementation fault"), err


def test_on_an_ascii_stream_a_character_and_a_byte_read_differently(tmp_path):
    """é (U+00E9, a UTF-8 name) and the byte 0xe9 (not UTF-8) under PYTHONIOENCODING=ascii:
    backslashreplace would write both as \\xe9."""
    import os
    import subprocess

    from .cli_runs import deployspec

    name = _not_utf8_copy_of_the_seed(tmp_path, "é-".encode() + b"\xe9.json")
    proc = deployspec("replay", name, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                      env={**os.environ, "PYTHONIOENCODING": "ascii"})
    out, err = proc.communicate(timeout=60)
    assert proc.returncode == 1, err
    assert out.startswith(f"{tmp_path}/\\u00e9-\\xe9.json: reproduces on capi-2022"), out



# --- a byte that is not UTF-8, in every message alike ---------------------------------------
# one spelling, \xff, whether the name is quoted, said bare, written to a file or came from an
# implementation; it was \udcff in quotes (repr), U+FFFD from an implementation, ? at the last resort


@pytest.mark.parametrize("value, shown", [
    ("\udcff", "'\\xff'"), ("a\udc80b", "'a\\x80b'"), (["\udcfe", 1], "['\\xfe', 1]"),
    ("\\udcff", "'\\\\udcff'"),  # a backslash typed before "udcff" stays what it was
    ("\udc7f", "'\\udc7f'"), ("é\x1b", "'é\\x1b'"), ("it's", '"it\'s"'),  # otherwise as repr
    # a character U+0080-U+00FF that repr writes \xNN reads as itself, not as the byte
    ("capi\u00a0safe", "'capi\\u00a0safe'"), (["\xad", "\udca0"], "['\\u00ad', '\\xa0']"),
    (b"\xa0", "b'\\xa0'"),  # in bytes, \xa0 is the byte
])
def test_a_quoted_name_shows_a_byte_that_is_not_utf8_as_the_byte(value, shown):
    from deployspec.text import quoted

    assert quoted(value) == shown


@pytest.mark.parametrize("argv, says", [
    (["check", "--model", "m\udcff"], "unknown model 'm\\xff' (known: capi, slots)"),
    (["check", "--engine", "e\udcff"], "unknown engine 'e\\xff' (known: "),
    (["check", "--model", "capi", "--property", "p\udcff"], "unknown property 'p\\xff'"),
    (["check", "--variant", "v\udcff"], "unknown variant 'v\\xff'"),
    (["check", "--bound", "max_instances=\udcff"], "max_instances: not a JSON value: '\\xff'"),
    (["contract", "--model", "capi", "--python", "m\udcff:f"], "--python m\\xff:f: no module named 'm\\xff' ("),
    (["contract", "--model", "capi", "--python", "m\udcff"], "--python 'm\\xff': expected MODULE:FACTORY"),
])
def test_a_name_given_that_is_not_utf8_reads_the_same_quoted_or_not(capsys, argv, says):
    """An argument with the byte 0xff (as the shell passes ``$'\\xff'``): quoted, it read
    ``'\\udcff'`` beside the ``\\xff`` of the same name unquoted."""
    status, out, err = run(capsys, *argv)
    assert (status, out) == (2, "") and err.count("\n") == 1, ascii(err)  # (ascii: a failure's report
    assert says in err and "udc" not in err, ascii(err)  # holding a lone surrogate stops pytest-xdist)


def test_the_contract_header_shows_such_a_command_by_its_bytes():
    from deployspec.contract.harness import Target

    assert Target("exec", "/bin/\udcff").describe() == "--exec '/bin/\\xff'"


@pytest.mark.parametrize("program, says", [
    ("printf '\\377\\n'; cat >/dev/null", "reply to reset is not JSON: '\\xff'"),
    ("printf '{\"ok\": \"\\377\"}\\n'; cat >/dev/null", "reply to reset is not JSON: '{\"ok\": \"\\xff\"}'"),
    ("printf 'a\\377b\\n' >&2; exit 1", "; its stderr ends with: a\\xffb"),
])
def test_a_byte_an_implementation_wrote_that_is_not_utf8_is_shown_as_the_byte(capsys, program, says):
    """Was U+FFFD (decoded with "replace"): that a byte was there, not which."""
    status, _, err = run(capsys, "contract", "--model", "capi", "--exec", program, "--examples", "1",
                         "--property", "single_active_deployment")
    assert status == 3 and says in err.splitlines()[0], ascii(err)


def test_a_file_written_shows_such_a_name_by_its_bytes_as_the_streams_do(tmp_path):
    """write_atomically (traces, pictures, show -o) wrote ``\\udcff`` where stdout says ``\\xff``."""
    from deployspec.files import write_atomically

    write_atomically(tmp_path / "out.txt", "seed-\udcff.json \ud800\n")
    assert (tmp_path / "out.txt").read_text() == "seed-\\xff.json \\ud800\n"  # (U+D800 stands for no byte)
