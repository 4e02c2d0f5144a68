"""The report's charts: matplotlib figures written as SVG, ready to inline in one HTML page.

Each function returns the ``<svg>`` element as text: no XML declaration, no metadata (no date,
no link to a vocabulary), text as
``<text>`` (no embedded glyphs), every id prefixed with the chart's name (several charts share
one page), and the ids matplotlib draws at random fixed by ``svg.hashsalt``, so the same data
gives the same bytes. matplotlib is imported on first use, without pyplot (no display, no
global figure state): the ``report`` extra.
"""

from __future__ import annotations

import io
import re
from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Any

import numpy as np

from neardup._types import I64Array
from neardup.errors import MissingExtraError
from neardup.lsh import s_curve

if TYPE_CHECKING:
    from matplotlib.axes import Axes
    from matplotlib.typing import RcKeyType

__all__ = ["cluster_sizes_chart", "histogram_chart", "s_curve_chart", "timings_chart"]

WIDTH, HEIGHT = 6.4, 3.0
"""Figure size in inches (SVG points are 72 per inch)."""

BLUE, LIGHT, RED = "#1f5f99", "#a9c6e0", "#c0392b"

_RC: dict[RcKeyType, Any] = {
    "svg.fonttype": "none",
    "font.size": 9.0,
    "axes.spines.top": False,
    "axes.spines.right": False,
}


def _draw(name: str, draw: Callable[[Axes], None]) -> str:
    """One pair of axes drawn by ``draw``, as an inline ``<svg>`` whose ids start with ``name``.

    matplotlib's object API (no pyplot, no backend state); the report's style holds while the
    artists are made and written.
    """
    try:
        import matplotlib
        from matplotlib.figure import Figure
    except ImportError as exc:
        raise MissingExtraError(
            "the report's charts need matplotlib: pip install 'neardup[report]'"
        ) from exc
    out = io.StringIO()
    with matplotlib.rc_context({**_RC, "svg.hashsalt": name}):
        figure = Figure(figsize=(WIDTH, HEIGHT), layout="constrained")
        axes = figure.add_subplot()
        axes.grid(axis="y", color="#e5e5e5", linewidth=0.6)
        axes.set_axisbelow(True)
        draw(axes)
        figure.savefig(out, format="svg", metadata={"Date": None, "Creator": None})
    text = out.getvalue()
    text = re.sub(r"\s*<metadata>.*?</metadata>", "", text[text.index("<svg") :], flags=re.S)
    text = re.sub(r'\bid="([^"]+)"', rf'id="{name}-\1"', text)
    text = re.sub(r'(url\(#|xlink:href="#)([^")]+)', rf"\1{name}-\2", text)
    return text.replace("<svg ", f'<svg class="chart" id="{name}-chart" ', 1)


def timings_chart(seconds: Mapping[str, float]) -> str:
    """Seconds per stage, one horizontal bar each, the first stage on top."""
    names = list(seconds)[::-1]
    values = [seconds[name] for name in names]

    def draw(axes: Axes) -> None:
        bars = axes.barh(names, values, color=BLUE)
        axes.bar_label(bars, labels=[f"{v:.3g} s" for v in values], padding=3, fontsize=8)
        axes.set_xlim(0.0, max(values, default=0.0) * 1.2 or 1.0)
        axes.set_xlabel("seconds")
        axes.grid(visible=False)

    return _draw("timings", draw)


def histogram_chart(
    edges: Sequence[float],
    candidates: Sequence[int],
    verified: Sequence[int],
    threshold: float,
    measure: str,
) -> str:
    """Candidate and verified pairs per similarity bin, with the threshold as a dashed line."""
    left = np.asarray(edges[:-1], dtype=np.float64)
    width = np.diff(np.asarray(edges, dtype=np.float64))

    def draw(axes: Axes) -> None:
        axes.bar(left, candidates, width=width, align="edge", color=LIGHT, label="candidates")
        axes.bar(left, verified, width=width, align="edge", color=BLUE, label="verified")
        _threshold_line(axes, threshold)
        axes.set_xlim(0.0, 1.0)
        axes.set_xlabel(measure)
        axes.set_ylabel("pairs")
        axes.legend(frameon=False, loc="upper left")

    return _draw("histogram", draw)


def s_curve_chart(num_bands: int, num_rows: int, threshold: float, probability: float) -> str:
    """The banding S-curve 1 - (1 - s^r)^b, and the chance of a candidate at the threshold."""
    s = np.linspace(0.0, 1.0, 401)

    def draw(axes: Axes) -> None:
        label = f"1 - (1 - s^{num_rows})^{num_bands}"
        axes.plot(s, s_curve(s, num_bands, num_rows), color=BLUE, linewidth=1.6, label=label)
        _threshold_line(axes, threshold)
        axes.plot([threshold], [probability], "o", color=RED)
        axes.annotate(
            f"P(candidate) = {probability:.4f}",
            (threshold, probability),
            textcoords="offset points",
            xytext=(-8, -14),
            ha="right",
            fontsize=8,
        )
        axes.set_xlim(0.0, 1.0)
        axes.set_ylim(0.0, 1.02)
        axes.set_xlabel("similarity s of a pair")
        axes.set_ylabel("P(pair becomes a candidate)")
        axes.legend(frameon=False, loc="upper left")

    return _draw("s-curve", draw)


def cluster_sizes_chart(sizes: I64Array, counts: I64Array) -> str:
    """How many clusters have each size, on log-log axes."""

    def draw(axes: Axes) -> None:
        from matplotlib.ticker import LogFormatter

        axes.plot(sizes, counts, "o", color=BLUE, markersize=4)
        axes.set_xscale("log")
        axes.set_yscale("log")
        for axis in (axes.xaxis, axes.yaxis):  # 20, not 2 x 10^1
            axis.set_major_formatter(LogFormatter())
            axis.set_minor_formatter(LogFormatter(minor_thresholds=(1.5, 0.5)))
        axes.set_xlim(1.5, max(float(sizes.max()) * 1.5, 3.0))
        axes.set_ylim(0.7, max(float(counts.max()) * 1.5, 2.0))
        axes.set_xlabel("cluster size (documents)")
        axes.set_ylabel("clusters")

    return _draw("cluster-sizes", draw)


def _threshold_line(axes: Axes, threshold: float) -> None:
    """The run's threshold as a dashed vertical line."""
    axes.axvline(
        threshold, color=RED, linestyle="--", linewidth=1.2, label=f"threshold {threshold:g}"
    )
