"""Designs of the user's own, as the tests hand them in: the folder of the tests' own
designs, and the design most tests use (the worked example of docs/variants.md). The
fixtures that hand them in (``outside``, ``hand_in``) are in conftest.py."""

from pathlib import Path

DESIGNS = Path(__file__).parent / "designs"
FINDINGS = Path(__file__).parent.parent / "counterexamples" / "capi"
MINE = "capi-current-finalize-in-txn"
