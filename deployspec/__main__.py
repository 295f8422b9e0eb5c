"""``python -m deployspec``: the command line, for when ``deployspec`` is not on PATH."""

from deployspec.program import run

run()
