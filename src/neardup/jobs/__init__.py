"""Each command's job: read its inputs, run the work, write its outputs and run record.

One module a command (``dedup``, ``dedup_units`` for ``dedup --unit``, ``join``, ``mirrors``,
``plan``, ``report``, ``contamination``, ``substrings``), above the pipeline, the engines and
the parts they call; the command line parses options and calls them. The Spark engine's jobs
are in :mod:`neardup.engine.spark` and :mod:`neardup.engine.spark_join`.
"""
