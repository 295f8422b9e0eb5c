"""The benchmark scripts, run as ``python benchmarks/NAME.py`` or, from the repository's
root, ``python -m benchmarks.NAME``. Each imports its shared helpers as ``_args`` (a
script's own folder is on the path when it runs as a file); run as a module, this puts
the folder there too."""

import os
import sys

_HERE = os.path.dirname(os.path.abspath(__file__))
if _HERE not in sys.path:
    sys.path.insert(0, _HERE)
