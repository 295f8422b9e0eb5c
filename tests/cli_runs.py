"""Running the command line in a test: in process (``run``) or as the program (``deployspec``)."""

import os
import subprocess
import sys
from pathlib import Path

from deployspec.cli import main

#: the environment of a child whose output is buffered as in a CI job's (under
#: PYTHONUNBUFFERED every write goes at once, so a failing flush never comes at the end)
BUFFERED = {k: v for k, v in os.environ.items() if k != "PYTHONUNBUFFERED"}
SEED = Path(__file__).parent.parent / "counterexamples" / "capi" / "capi-2022--app_stays_available--a940739cf1.json"


def run(capsys, *argv):
    status = main(list(argv))
    out = capsys.readouterr()
    return status, out.out, out.err


def deployspec(*argv: str, **kwargs) -> subprocess.Popen:
    return subprocess.Popen([sys.executable, "-m", "deployspec", *argv], text=True, **kwargs)


def finished(*argv: str, **kwargs) -> subprocess.CompletedProcess:
    """The program run to its end (a minute at most), its output and status captured."""
    return subprocess.run([sys.executable, "-m", "deployspec", *argv], capture_output=True, text=True,
                          timeout=60, check=False, **kwargs)


def valid_json_output(doc: dict) -> dict:
    """``doc`` (a command's ``--json``) checked against deployspec/output.schema.json."""
    import json
    from importlib import resources

    from deployspec import validation

    schema = json.loads(resources.files("deployspec").joinpath("output.schema.json").read_text())
    validation.validator(schema).validate(doc)
    return doc
