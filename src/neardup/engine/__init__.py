"""Engines beside the in-memory pipeline: Spark (``spark*``) and Arrow tables (``frames``).

The jobs (:mod:`neardup.jobs`) call them; ``ahead`` compiles a run's later kernels while its
first stages run.
"""
