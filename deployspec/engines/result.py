"""What every engine reports for one (variant, property)."""

from __future__ import annotations

from typing import Any

import attrs


@attrs.define
class Result:
    model: str
    variant: str
    property: str
    engine: str
    verdict: str  # "holds" | "violated" | "error" | "n/a" | "unconfirmed" (declarations.PRECEDENCE)
    counterexample: str | None = None
    trace_length: int | None = None
    message: str | None = None
    stats: dict[str, Any] = attrs.field(factory=dict)
    #: how the property broke, when it names a mechanism (one result per cause found)
    cause: str | None = None
    #: the counterexample itself (also when it was not saved), not part of the JSON report
    trace: dict | None = attrs.field(default=None, repr=False)
    #: why the counterexample could not be saved under ``--out`` (the verdict stands)
    unsaved: str | None = None
    #: how the file already under ``--out`` that was kept was found ("engine E, seed S"), or
    #: None: this search wrote it (``traces.keep``); not part of the JSON report
    kept: str | None = attrs.field(default=None, repr=False)
    #: what had the counterexample's name and was replaced ("a dangling link of that name"),
    #: or None (``traces.keep``); not part of the JSON report
    replaced: str | None = attrs.field(default=None, repr=False)

    def to_json(self) -> dict[str, Any]:
        return attrs.asdict(self, filter=lambda a, _v: a.name not in ("trace", "kept", "replaced"))
