"""Which web process survives a cancel: the selection rule, symbolically (Z3).

When the deployment updater cancels a deployment it keeps one web process (the
*prior* process), scales it to the original instance count and destroys every
other web process. The seed (cloud_controller_ng #3019) is a wrong choice here,
and every later design changed the choice. This module states the choice over
*all* app states up to a bound, not only the interleavings a search reaches:

* :class:`SelectionView`: what a rule reads at a cancel step (process order,
  who created each process, instance counts (RUNNING, CRASHED), deployment states, which one is
  being canceled, whether instance reports were available), built from a
  concrete :class:`~deployspec.reference.capi.state.CapiState` or from a model
  (with the process the canceled deployment recorded, where a design records one);
* :class:`Symbolic`: the same view as Z3 variables, N process slots and M
  deployment slots;
* :data:`WELLFORMED`: the states the controller can actually be in when it
  runs a cancel step, one documented constraint each (a soundness test checks
  every state the concrete model reaches against them);
* :data:`RULES`: each Python rule of ``reference/capi/rules.py`` as a Z3 term
  (a test checks they agree on Hypothesis-generated views);
* :data:`PROPERTIES`: what a good choice satisfies.

Upstream: cloud_controller_ng ``lib/cloud_controller/deployment_updater/updater.rb``
at 4528366a1b (before PR #3072), 545fb70000 (PR #3072), 53f45944b7 (PR #3084), and
``actions/cancel.rb`` at 3bbba90698 (today, same rule as PR #3084); summarised in
docs/upstream/cloud-controller.md sections 1.5, 2, 3 and 4.6.
"""

from .encodings import (  # noqa: F401
    RULES,
    VARIANTS,
    RuleEncoding,
    VariantEncoding,
    _is_interim,
    _newest,
    _oldest_or_retry,
    cannot_serve,
    encode_interim_or_oldest,
    encode_newest_other_process,
    encode_running_interim_or_oldest,
    encode_running_interim_or_oldest_strict,
    encode_running_interim_or_oldest_that_can_serve,
    encode_running_interim_or_recorded_that_can_serve,
)
from .properties import (  # noqa: F401
    PROPERTIES,
    SYMPTOMS,
    SelectionProperty,
    _nothing_can_serve,
    _survivor_exists,
    _survivor_idle,
    _survivor_not_newer,
    _survivor_runs,
    _takes_app_down,
    candidate,
    selection_property,
)
from .symbolic import (  # noqa: F401
    Symbolic,
)
from .view import (  # noqa: F401
    DESTROYING_AT_END,
    DESTROYS_AT_END,
    FINALIZE_WHOLE,
    NOT_RECORDED,
    ONE_ACTIVE,
    PUSHED,
    REASON_CODE,
    RECORDS_SERVING,
    RETRY,
    SNAPSHOT_CLOSED,
    STATE_CODE,
    TWO_ACTIVE,
    SelectionView,
)
from .wellformed import (  # noqa: F401
    ALWAYS,
    FINAL_PAIRS,
    WELLFORMED,
    Constraint,
    _all,
    _pair_allowed,
    _wipe,
    traits,
    wellformed,
)
