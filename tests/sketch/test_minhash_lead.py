"""Lead-byte MinHash (``minhash-lead``) against its documented definition, in plain Python.

docs/sketches.md: slot ``i`` ranks the shingles by the pair ``(lead byte, a_i x + b_i)``, the
lead bytes of eight slots coming from one random GF(2)-linear map of ``x``, and keeps the full
value of the winner. It is not classic MinHash slot for slot (a lead byte outranks the full
value); with every lead byte equal it is exactly classic MinHash. Its estimates are MinHash's:
``tests/stats/test_estimators.py`` checks their bias and spread against exact Jaccard.
"""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from neardup import ShingleSpec, SketchSpec
from neardup.sketch.minhash import LeadByteMinHasher
from tests import reference
from tests.strategies import texts, words_texts

SHINGLE = ShingleSpec(k=2)


def _sketcher(num_perm: int, seed: int = 3) -> LeadByteMinHasher:
    return LeadByteMinHasher(
        SketchSpec(kind="minhash-lead", num_perm=num_perm, seed=seed, shingle=SHINGLE)
    )


def _columns(sketcher: LeadByteMinHasher) -> list[list[int]]:
    """The 64 columns of each group's linear map: the image of each single bit of ``x``."""
    tables = sketcher.lead_tables
    return [
        [int(tables[g, bit // 8, 1 << (bit % 8)]) for bit in range(64)]
        for g in range(tables.shape[0])
    ]


@pytest.mark.parametrize("num_perm", [1, 8, 13, 24])
def test_lead_tables_are_a_random_linear_map_per_group_of_eight_slots(num_perm: int) -> None:
    sketcher = _sketcher(num_perm)
    tables = sketcher.lead_tables
    assert tables.shape == (-(-num_perm // 8), 8, 256)
    columns = _columns(sketcher)
    for g in range(tables.shape[0]):
        for j in range(8):
            # Linear over GF(2): a byte value maps to the xor of the columns of its set bits.
            expected = []
            for value in range(256):
                image = 0
                for bit in range(8):
                    if value >> bit & 1:
                        image ^= columns[g][8 * j + bit]
                expected.append(image)
            assert tables[g, j].tolist() == expected
        # Random: 64 distinct non-zero columns (equal ones would have chance 2^-58).
        assert len(set(columns[g]) - {0}) == 64
    assert sketcher.lead_tables.tolist() != _sketcher(num_perm, seed=4).lead_tables.tolist()


@pytest.mark.parametrize("num_perm", [1, 8, 13])
@settings(max_examples=25, deadline=None)
@given(batch=st.lists(texts | words_texts, min_size=1, max_size=4))
def test_signatures_equal_the_reference(num_perm: int, batch: list[str]) -> None:
    sketcher = _sketcher(num_perm)
    sigs = sketcher.sketch(batch)
    columns = _columns(sketcher)
    for doc, text in enumerate(batch):
        hashes = reference.shingle_fingerprints(text, SHINGLE)
        expected = reference.lead_byte_minhash_signature(
            hashes, sketcher.perm_a.tolist(), sketcher.perm_b.tolist(), columns
        )
        assert sigs.values[doc].tolist() == expected
        assert sigs.num_shingles[doc] == len(hashes)


def test_signatures_of_real_text_equal_the_reference(licenses: list[dict[str, object]]) -> None:
    batch = [str(r["text"]) for r in licenses[:400] if 50 <= len(str(r["text"]).split()) <= 300]
    batch = batch[:12]
    sketcher = _sketcher(16)
    sigs = sketcher.sketch(batch)
    columns = _columns(sketcher)
    for doc, text in enumerate(batch):
        expected = reference.lead_byte_minhash_signature(
            reference.shingle_fingerprints(text, SHINGLE),
            sketcher.perm_a.tolist(),
            sketcher.perm_b.tolist(),
            columns,
        )
        assert sigs.values[doc].tolist() == expected
    # The lead byte decides: most slots differ from classic MinHash under the same a_i, b_i.
    classic = [
        reference.minhash_signature(
            reference.shingle_fingerprints(text, SHINGLE),
            sketcher.perm_a.tolist(),
            sketcher.perm_b.tolist(),
        )
        for text in batch
    ]
    assert np.mean(np.array(classic, dtype=np.uint64) == sigs.values) < 0.5


@given(batch=st.lists(words_texts, min_size=1, max_size=4))
def test_with_every_lead_byte_equal_it_is_classic_minhash(batch: list[str]) -> None:
    sketcher = _sketcher(13)
    sketcher.lead_tables[:] = 0  # every lead byte 0: the full values decide alone
    sigs = sketcher.sketch(batch)
    for doc, text in enumerate(batch):
        expected = reference.minhash_signature(
            reference.shingle_fingerprints(text, SHINGLE),
            sketcher.perm_a.tolist(),
            sketcher.perm_b.tolist(),
        )
        assert sigs.values[doc].tolist() == expected
