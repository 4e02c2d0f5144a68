"""Engines that run the batch job: on one machine (``local``)."""

from neardup.engine.local import dedup_files

__all__ = ["dedup_files"]
