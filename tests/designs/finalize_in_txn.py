"""A design of one's own for tests/test_variant_plugins.py: capi-current with only capi-safe's
change (8), Finalize and the PAUSED write inside the scale transaction (docs/variants.md)."""

import attrs
from deployspec.reference.capi.variants import CAPI_CURRENT

FINALIZE_IN_TXN = attrs.evolve(
    CAPI_CURRENT,
    name="capi-current-finalize-in-txn",
    summary="capi-current, but a finished step finalizes or pauses inside its scale transaction",
    upstream="proposal on top of cloud_controller_ng 3bbba90",
    finish_after_commit=False,
    # capi-current's cancel rolls back past a canary that served (docs/properties.md, session 49):
    # not the window this change closes, so found within the exploration bounds now
    declares=CAPI_CURRENT.declares | {"cancel_restores_last_good"},
    violates_beyond={},
)

VARIANTS = [FINALIZE_IN_TXN]
