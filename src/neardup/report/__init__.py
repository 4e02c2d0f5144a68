"""The report's parts: data, charts, and the pages they make.

A run's files read back (``data``), its charts (``charts``), the page of a dedup run (``page``)
and of a run that cut parts out of documents (``removals``). ``neardup report`` itself, which
reads a run and writes its page, is :func:`neardup.jobs.report.write_report`.
"""
