"""Contract tests: the spec's machines against implementations that are not ours.

``python_adapter`` (a Python object; ``loading`` finds it, ``timed_call`` fences
each call into it), ``subprocess_adapter`` + ``protocol`` (any
program speaking JSON lines on stdin/stdout), ``server`` (a reference variant
behind that protocol), ``conformance`` (observations equal a reference's),
``harness`` (the ``contract`` command), ``plugin`` (pytest). See
``docs/contract.md`` and ``docs/protocol.md``.
"""
