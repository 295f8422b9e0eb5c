"""The checkout's own pytest configuration, for both test folders (``tests/``,
``stateful_tests/``); not installed with the package."""

import os
from pathlib import Path

import pytest

# every tick a shipped design's memo keeps is checked to read only what it is keyed by, here
# and in the programs the tests start (reference/capi/tick_memo.py)
os.environ["DEPLOYSPEC_CHECK_MEMO"] = "1"


def pytest_configure(config) -> None:
    """Stop at once where the package's parts come from another checkout than these tests:
    an editable install maps deployspec.spec, .reference and .stateful_tests to the folders
    of the checkout it was made in, so the tests of a second clone would quietly judge the
    first one's spec and models (a mutation-testing review was misled so). Here, beside
    both test folders, it guards ``pytest tests`` and ``pytest stateful_tests`` alike."""
    import deployspec.reference
    import deployspec.spec
    import deployspec.stateful_tests
    from deployspec.reference.capi import tick_memo

    tick_memo.CHECKED = True  # (imported before this file by a plugin: the variable came too late)

    here = Path(__file__).resolve().parent
    for module in (deployspec.spec, deployspec.reference, deployspec.stateful_tests):
        where = Path(module.__file__).resolve().parent
        if here not in where.parents:
            raise pytest.UsageError(f"{module.__name__} is imported from {where}, not from this checkout "
                                    f"({here}): pip install -e . here, or run the tests of that checkout")
