"""Executable reference models of deployment controllers.

Each model is a set of frozen attrs states, a vocabulary of actions, and
*variants*: pure ``step(state, action) -> state | Rejected`` functions that
differ only where the real designs differ.
"""
