"""The shingle-set store: each document's set made once, read back the same from the file."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from neardup._types import I64Array
from neardup.io import mapped
from neardup.io.setstore import ShingleSetStore
from neardup.params import ShingleSpec
from neardup.text.shingle import Shingler, ShingleSets

TEXTS = [
    "the quick brown fox jumps over the lazy dog",
    "",
    "the quick brown fox",
    "a rose is a rose is a rose",
    "jumps over the lazy dog and the quick brown fox",
    "x",
]


@pytest.mark.parametrize(
    ("in_directory", "window"), [(True, 1 << 26), (False, 1 << 26), (True, 20)]
)
def test_sets_are_made_once_and_read_back_unchanged(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, in_directory: bool, window: int
) -> None:
    monkeypatch.setattr(mapped, "WINDOW_BYTES", window)  # 20: sets read through many windows
    shingler = Shingler(ShingleSpec(unit="word", k=2))
    whole = shingler.shingle_sets(TEXTS)
    made: list[int] = []

    def make(docs: I64Array) -> ShingleSets:
        made.extend(docs.tolist())
        return shingler.shingle_sets([TEXTS[d] for d in docs])

    asks = [np.array([3, 0]), np.array([0, 1, 4]), np.array([5, 4, 3, 2, 1, 0]), np.array([2])]
    with ShingleSetStore(len(TEXTS), make, tmp_path if in_directory else None) as store:
        store.make(np.array([4, 1]))  # made ahead, read back later
        for docs in asks:
            got = store.sets(docs)
            assert len(got) == docs.shape[0]
            for position, doc in enumerate(docs.tolist()):
                assert got.set_of(position).tolist() == whole.set_of(doc).tolist()
        assert (tmp_path / "shingle-sets.u64").exists() == in_directory
    assert sorted(made) == list(range(len(TEXTS)))  # each once, whatever the asking
    assert list(tmp_path.iterdir()) == []  # the file leaves with the store


def test_nothing_but_empty_sets_reads_no_file() -> None:
    shingler = Shingler(ShingleSpec(unit="word", k=3))
    with ShingleSetStore(2, lambda docs: shingler.shingle_sets(["", "a b"])) as store:
        sets = store.sets(np.array([0, 1]))
    assert sets.sizes().tolist() == [0, 0]


def test_set_sizes_say_which_sets_are_made() -> None:
    shingler = Shingler(ShingleSpec(unit="word", k=2))
    with ShingleSetStore(
        len(TEXTS), lambda docs: shingler.shingle_sets([TEXTS[d] for d in docs])
    ) as store:
        assert store.set_sizes.tolist() == [-1] * len(TEXTS)
        store.make(np.array([1, 3]))
        assert store.set_sizes.tolist() == [-1, 0, -1, 3, -1, -1]  # "" has no shingle
