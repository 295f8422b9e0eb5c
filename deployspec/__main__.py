"""``python -m deployspec``: the command line, for when ``deployspec`` is not on PATH."""

import sys

from deployspec.cli import main

sys.exit(main())
