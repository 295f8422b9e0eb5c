"""A design of one's own whose dispatcher acts with no deployment in flight: it holds the
finished deployment's web process at its original count, undoing a user's scale. The
shipped dispatchers find nothing to do then; the explorer must still try that idle tick
(tests/test_probe_actions.py)."""

import attrs
from deployspec.reference.capi.state import DEPLOYED
from deployspec.reference.capi.variants import CAPI_SAFE


def hold(state):
    done = [d for d in state.deployments if d.state == DEPLOYED]
    if done and state.deployments[-1] is done[-1]:
        p = state.process(done[-1].deploying_process)
        if p is not None and p.desired != done[-1].owic:
            state = state.with_process(p.scaled_to(done[-1].owic))
    return state


VARIANTS = [attrs.evolve(CAPI_SAFE, name="holds-count", before_dispatch=hold, declares=frozenset())]
