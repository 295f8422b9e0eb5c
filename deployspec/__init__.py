"""deployspec: model-checked specifications of deployment controllers."""

__version__ = "0.1.0"
