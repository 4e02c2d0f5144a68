"""The package version, recorded in every summary and artefact."""

__version__ = "0.1.0"
