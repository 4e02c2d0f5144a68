"""Band keys equal the plain-Python chain of fmix64 over each band's slots."""

from __future__ import annotations

import numpy as np
from hypothesis import given
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

from neardup import OPHSketcher, SketchSpec
from neardup.hashing.bands import band_keys
from tests import reference


@st.composite
def _signatures(draw: st.DrawFn) -> tuple[np.ndarray, int, int]:
    """A signature matrix (small values, so that bands repeat) and a band shape that fits it."""
    num_bands = draw(st.integers(1, 8))
    num_rows = draw(st.integers(1, 6))
    spare = draw(st.integers(0, 3))
    shape = st.tuples(st.integers(0, 12), st.just(num_bands * num_rows + spare))
    elements = st.integers(0, 3) | st.integers(0, 2**64 - 1)
    return draw(hnp.arrays(np.uint64, shape, elements=elements)), num_bands, num_rows


@given(case=_signatures())
def test_band_keys_equal_the_reference(case: tuple[np.ndarray, int, int]) -> None:
    values, num_bands, num_rows = case
    got = band_keys(values, num_bands, num_rows)
    assert got.shape == (values.shape[0], num_bands)
    assert got.dtype == np.uint64
    expected = [reference.band_keys(row, num_bands, num_rows) for row in values.tolist()]
    assert got.tolist() == expected


def test_band_keys_of_real_signatures_equal_the_reference(
    licenses: list[dict[str, object]],
) -> None:
    texts = [str(r["text"]) for r in licenses[:200]]
    values = OPHSketcher(SketchSpec(num_perm=128)).sketch(texts).values
    for num_bands, num_rows in [(16, 8), (9, 13), (128, 1), (1, 128)]:
        # A view of every other column: not contiguous, as a caller may pass it.
        for matrix in (values, values[:, ::2]):
            if num_bands * num_rows > matrix.shape[1]:
                continue
            got = band_keys(matrix, num_bands, num_rows).tolist()
            assert got == [reference.band_keys(r, num_bands, num_rows) for r in matrix.tolist()]


def test_a_band_key_depends_on_its_band_and_on_every_slot_of_it() -> None:
    zeros = np.zeros((1, 12), dtype=np.uint64)
    keys = band_keys(zeros, 4, 3)[0].tolist()
    assert len(set(keys)) == 4  # equal slots, four bands: four keys
    for slot in range(12):
        changed = zeros.copy()
        changed[0, slot] = 1
        differ = [a != b for a, b in zip(band_keys(changed, 4, 3)[0].tolist(), keys, strict=True)]
        assert differ == [band == slot // 3 for band in range(4)]
