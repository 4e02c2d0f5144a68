"""Band keys: one 64-bit key per group of consecutive signature slots.

The key of LSH banding (MMDS §3.4: a band of ``r`` rows) and of Broder's supershingles (a group
of ``s`` samples, seed 003) alike: a hash of the group's slots with the group's index mixed in.
"""

from __future__ import annotations

from functools import partial

import numpy as np

from neardup._kernels import lsh as kernels
from neardup._parallel import in_blocks
from neardup._types import U64Array
from neardup.errors import ParameterError

__all__ = ["band_keys"]


def band_keys(values: U64Array, num_bands: int, num_rows: int) -> U64Array:
    """``uint64[num_docs, num_bands]``: one hash per band of each signature row."""
    if num_bands * num_rows > values.shape[1]:
        raise ParameterError(
            f"band_keys needs num_bands * num_rows <= {values.shape[1]} signature slots; "
            f"got {num_bands} * {num_rows}."
        )
    values = np.ascontiguousarray(values, dtype=np.uint64)
    out = np.empty((values.shape[0], num_bands), dtype=np.uint64)
    in_blocks(partial(kernels.band_keys, values, num_bands, num_rows, out), values.shape[0])
    return out
