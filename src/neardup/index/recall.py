"""What an index's LSH bands find below the threshold they were chosen for.

An index's bands and rows are fixed when it is made, for its threshold: a query (or ``dedup
--against``) at a lower threshold still finds only the pairs that share a band, a pair of
similarity ``s`` with probability ``1 - (1 - s^r)^b`` (the S-curve of MMDS §3.4.2, seed 001).
These functions read ``b``, ``r`` and the threshold from the index's header and say so. A
SimHash index finds fingerprints within ``h`` bits whatever the threshold: a pair at cosine
``c`` is that close with probability ``P(Binomial(bits, acos(c) / π) <= h)`` (Charikar).
"""

from __future__ import annotations

from collections.abc import Mapping
from math import acos, comb, cos, pi
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
    if header["sketch"].get("kind") == "simhash":
        return _hamming_warning(header, threshold)
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
        spec = LSHSpec(threshold=threshold)
    except ParameterError:  # threshold 0: no index is built for it
        return text
    own = float(s_curve(threshold, *bands_rows(spec, int(header["sketch"]["num_perm"]))))
    return (
        f"{text}; an index built for {threshold:g} finds one with probability {own:.2f} "
        f"(neardup index create --threshold {threshold:g}, then add the documents again)"
    )


def _hamming_warning(header: Mapping[str, Any], threshold: float) -> str | None:
    """:func:`threshold_warning` for a SimHash index: below the cosine its ``h`` bits reach.

    Examples
    --------
    >>> header = {"lsh": {"hamming": 3}, "sketch": {"kind": "simhash", "simhash_bits": 64}}
    >>> print(_hamming_warning(header, 0.9))
    the index finds fingerprints within 3 of 64 bits (an estimated cosine of 0.989 or more): a \
pair at cosine 0.9 is that close with probability 0.01 only, so most such pairs are missed (an \
index with a larger --hamming finds more)
    >>> _hamming_warning(header, 0.99) is None
    True
    """
    h, bits = int(header["lsh"]["hamming"]), int(header["sketch"].get("simhash_bits", 64))
    reached = cos(pi * h / bits)
    if threshold >= reached:
        return None
    flip = acos(threshold) / pi
    found = sum(comb(bits, d) * flip**d * (1 - flip) ** (bits - d) for d in range(h + 1))
    missed = "most" if found < 0.5 else "some"
    return (
        f"the index finds fingerprints within {h} of {bits} bits (an estimated cosine of "
        f"{reached:.3f} or more): a pair at cosine {threshold:g} is that close with probability "
        f"{found:.2f} only, so {missed} such pairs are missed (an index with a larger --hamming "
        "finds more)"
    )
