"""Designs of the user's own, as the tests hand them in: the folder of the tests' own
designs, the design most tests use (the worked example of docs/variants.md), and the
module texts that hand in a shipped design changed (EVOLVED, EVOLVED_SLOTS). The
fixtures that hand them in (``outside``, ``hand_in``) are in conftest.py."""

from pathlib import Path

DESIGNS = Path(__file__).parent / "designs"
FINDINGS = Path(__file__).parent.parent / "counterexamples" / "capi"
MINE = "capi-current-finalize-in-txn"

#: a module handing in capi-current changed by ``{}`` (keyword arguments of attrs.evolve)
EVOLVED = ("import attrs\nfrom deployspec.reference.capi.variants import CAPI_CURRENT\n"
           "VARIANTS = [attrs.evolve(CAPI_CURRENT, {})]\n")
#: the same of slots-pipeline-immutable
EVOLVED_SLOTS = ("import attrs\nfrom deployspec.reference.slots.variants import SLOTS_PIPELINE_IMMUTABLE\n"
                 "VARIANTS = [attrs.evolve(SLOTS_PIPELINE_IMMUTABLE, {})]\n")
