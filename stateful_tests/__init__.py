"""Hypothesis state machines over the action vocabulary of each model.

The machines drive an adapter, so the same machine explores a reference variant,
a Python object under test, or a program speaking the JSON-lines protocol.
"""
