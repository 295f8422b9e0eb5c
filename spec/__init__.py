"""The properties deployment controllers must satisfy, written over observations.

A property never reads a model's internals: it reads the JSON-like observation
after each step (and what it remembers of earlier ones), so the same property
judges the reference variants and any other implementation.
"""
