"""The web: mirror hosts, URL aliases and the contracted link graph of a crawl (seed 002, 003).

Reading web archives is :mod:`neardup.io.warc`; HTML to text and URL handling are
:mod:`neardup.text.html` and :mod:`neardup.text.urls`. This package is the crawl-level analysis
built on them and on the dedup pipeline.
"""
