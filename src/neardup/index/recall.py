"""What an index's LSH bands find below the threshold they were chosen for.

An index's bands and rows are fixed when it is made, for its threshold: a query (or ``dedup
--against``) at a lower threshold still finds only the pairs that share a band, a pair of
similarity ``s`` with probability ``1 - (1 - s^r)^b`` (the S-curve of MMDS §3.4.2, seed 001).
These functions read ``b``, ``r`` and the threshold from the index's header and say so.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from neardup.errors import ParameterError
from neardup.lsh.banding import bands_rows, s_curve
from neardup.params import LSHSpec

__all__ = ["recall_at", "threshold_warning"]


def recall_at(header: Mapping[str, Any], similarity: float) -> float:
    """Probability that the index's bands make a pair of this Jaccard similarity a candidate.

    Parameters
    ----------
    header
        The index's header (``LSHIndex.header``): ``num_bands`` and ``num_rows`` are read.
    similarity
        Jaccard similarity of the pair, in [0, 1].

    Returns
    -------
    float
        ``1 - (1 - similarity^r)^b``.

    Examples
    --------
    >>> round(recall_at({"num_bands": 16, "num_rows": 8}, 0.6), 3)
    0.237
    """
    return float(s_curve(similarity, int(header["num_bands"]), int(header["num_rows"])))


def threshold_warning(header: Mapping[str, Any], threshold: float) -> str | None:
    """The warning for searching an index at ``threshold``, or None at or above its own.

    Parameters
    ----------
    header
        The index's header (``LSHIndex.header``).
    threshold
        The similarity asked for.

    Returns
    -------
    str or None
        One sentence: the threshold the index was built for, the probability its bands find a
        pair at ``threshold``, what an index built for ``threshold`` would find, and how to
        build one. None when ``threshold`` is not below the index's threshold.

    Examples
    --------
    >>> header = {"lsh": {"threshold": 0.8}, "sketch": {"num_perm": 128},
    ...           "num_bands": 16, "num_rows": 8}
    >>> print(threshold_warning(header, 0.6))
    the index was built for similarity 0.8 (16 bands of 8 rows): its bands find a pair at \
similarity 0.6 with probability 0.24 only, so most such pairs are missed; an index built for \
0.6 finds one with probability 0.96 (neardup index create --threshold 0.6, then add the \
documents again)
    >>> threshold_warning(header, 0.9) is None
    True
    """
    built = float(header["lsh"]["threshold"])
    if threshold >= built:
        return None
    num_bands, num_rows = int(header["num_bands"]), int(header["num_rows"])
    found = recall_at(header, threshold)
    missed = "most" if found < 0.5 else "some"
    text = (
        f"the index was built for similarity {built:g} ({num_bands} bands of {num_rows} rows): "
        f"its bands find a pair at similarity {threshold:g} with probability {found:.2f} only, "
        f"so {missed} such pairs are missed"
    )
    try:
        spec = LSHSpec(threshold=threshold, num_perm=int(header["sketch"]["num_perm"]))
    except ParameterError:  # threshold 0: no index is built for it
        return text
    own = float(s_curve(threshold, *bands_rows(spec)))
    return (
        f"{text}; an index built for {threshold:g} finds one with probability {own:.2f} "
        f"(neardup index create --threshold {threshold:g}, then add the documents again)"
    )
