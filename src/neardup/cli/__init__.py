"""The ``neardup`` command line: thin commands over the library."""
