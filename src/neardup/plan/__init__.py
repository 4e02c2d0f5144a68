"""The planner's parts: sample, measure, design, and the plan they make.

The sample (``sample``), its measurements (``measure``), the choice of a banding (``design``)
and the plan they make (``result``), written as TOML (``toml``). ``neardup plan`` itself, which
runs them in order, is :func:`neardup.jobs.plan.plan`.
"""

from neardup.plan.result import Measurements, Plan, Predictions

__all__ = ["Measurements", "Plan", "Predictions"]
