"""The shingle-set store: each document's set made once, read back the same from the file."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from neardup._types import I64Array
from neardup.io import mapped, setstore
from neardup.io.setstore import ShingleSetStore, SketchedSets
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


@pytest.mark.parametrize("in_directory", [True, False])
def test_a_store_carries_on_from_the_sets_kept_while_sketching(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, in_directory: bool
) -> None:
    monkeypatch.setattr(setstore, "KEPT_TEXT_BYTES", 30)  # the two long texts are left
    shingler = Shingler(ShingleSpec(unit="word", k=2))
    whole = shingler.shingle_sets(TEXTS)
    kept = SketchedSets(tmp_path if in_directory else None)
    for block in (TEXTS[:4], TEXTS[4:]):  # two blocks, kept one after the other
        chosen = kept.chosen(np.array([len(t.encode()) for t in block]))
        texts = [t if c else "" for t, c in zip(block, chosen, strict=True)]
        kept.append(shingler.shingle_sets(texts), chosen)
    assert kept.sizes().tolist() == [-1, 0, 3, 3, -1, 0]
    made: list[int] = []

    def make(docs: I64Array) -> ShingleSets:
        made.extend(docs.tolist())
        return shingler.shingle_sets([TEXTS[d] for d in docs])

    with ShingleSetStore(len(TEXTS), make, tmp_path, kept) as store:
        got = store.sets(np.array([5, 4, 3, 2, 1, 0]))
        assert [got.set_of(p).tolist() for p in range(6)] == [
            whole.set_of(d).tolist() for d in (5, 4, 3, 2, 1, 0)
        ]
    assert sorted(made) == [0, 4]  # only the sets not kept are made
    assert list(tmp_path.iterdir()) == []


def test_sets_stop_being_kept_past_the_budget(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(setstore, "KEPT_SETS_BYTES", 8 * 6)
    shingler = Shingler(ShingleSpec(unit="word", k=2))
    kept = SketchedSets()
    lengths = np.array([len(t) for t in TEXTS])
    first = kept.chosen(lengths)
    kept.append(shingler.shingle_sets(TEXTS), first)  # 16 shingles: the budget is spent
    assert first.all()
    assert not kept.chosen(lengths).any()
    kept.close()
