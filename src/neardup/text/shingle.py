"""Shingling: from a :class:`Batch` of normalised text to sets of 64-bit shingle fingerprints.

The fingerprint schemes are described in :mod:`neardup._kernels.tokens`; a scheme's versioned
name (:func:`fingerprint_scheme`) is stored with every signature, so that a change is caught.
"""

from __future__ import annotations

import itertools
from collections.abc import Sequence
from dataclasses import dataclass, replace
from functools import partial

import numpy as np
from numpy.typing import NDArray

from neardup._kernels import sets as set_kernels
from neardup._kernels import tokens as token_kernels
from neardup._kernels.compiling import read_only
from neardup._parallel import SCRATCH_BLOCK, in_blocks
from neardup._types import Batch, I64Array, Offsets, U8Array, U64Array
from neardup.errors import ParameterError
from neardup.hashing.rabin import RabinFingerprinter
from neardup.params import NormalizeSpec, ShingleSpec, check_shingling
from neardup.text.lexicon import stopword_list
from neardup.text.normalize import byte_word_table, codepoint_classes, normalize_batch
from neardup.text.spans import byte_pieces
from neardup.text.tokenizers import load as load_tokenizer

__all__ = ["KernelText", "ShingleSets", "Shingler", "as_batch", "fingerprint_scheme"]

_SCHEME_VERSIONS = {"nd64": "nd64-v1", "rabin": "rabin-v1"}

PIECE_BYTES = 8 << 20
"""Text shingled into sets at a time: the room its shingles need before they are deduplicated
(up to four bytes per byte of text) stays a few tens of megabytes."""


def fingerprint_scheme(shingle: ShingleSpec) -> str:
    """The versioned name of the shingle fingerprint scheme, e.g. ``"nd64-v1"``."""
    return _SCHEME_VERSIONS[shingle.fingerprint]


@dataclass(frozen=True, slots=True)
class KernelText:
    """The tokenising arguments every text kernel takes, derived once from the specs."""

    classes: U8Array
    byte_words: NDArray[np.uint16]
    """For each byte value: the byte an ASCII word byte hashes as (lower-cased when folding),
    ``SEPARATOR_BYTE`` for an ASCII separator, ``MULTI_BYTE`` for any byte of a multi-byte
    character: the ASCII part of ``classes`` resolved once, a byte in one lookup."""
    strip_punctuation: bool
    fold_ascii: bool
    is_char: bool
    k: int
    rabin: U64Array | None
    """Rabin tables for windows of ``k`` 8-byte token fingerprints, or None for ``nd64`` (the
    kernels are then compiled without the Rabin steps, not merely told to skip them)."""
    stop_keys: U64Array
    """For stop-word shingles: the sorted token hashes (in the fingerprint scheme's own) of the
    stop words; empty for every other unit (every shingle is kept)."""

    @classmethod
    def of(cls, shingle: ShingleSpec, normalize: NormalizeSpec) -> KernelText:
        """Derive the kernel arguments from a shingle and a normalisation spec.

        Stop-word shingles of a spec that drops stop words (``normalize.stopwords``) are a
        :class:`~neardup.errors.ParameterError`: no shingle would be left; so are shingles
        other than words of a spec with a tokenizer (:func:`~neardup.params.check_shingling`).
        The tokenizer is loaded here (:func:`~neardup.text.tokenizers.load`): one that cannot
        be fails before any text is read.
        """
        check_shingling(shingle, normalize)
        if normalize.tokenizer is not None:
            load_tokenizer(normalize.tokenizer)
        if shingle.unit == "stopword" and normalize.stopwords is not None:
            raise ParameterError(
                f"stop-word shingles (unit 'stopword', {shingle.stopwords} stop words) start at "
                f"stop words, and NormalizeSpec.stopwords={normalize.stopwords!r} drops them: "
                "give one of the two (on the command line, --stopwords LANG with --shingle "
                "stopword:K picks the shingles' stop words)."
            )
        classes = codepoint_classes()
        rabin = (
            RabinFingerprinter(shingle.polynomial).tables(8 * shingle.k)
            if shingle.fingerprint == "rabin" and shingle.polynomial is not None
            else None
        )
        text = cls(
            classes=classes,
            byte_words=byte_word_table(classes, normalize),
            strip_punctuation=normalize.strip_punctuation,
            fold_ascii=normalize.casefold,
            is_char=shingle.unit == "char",
            k=shingle.k,
            rabin=rabin,
            stop_keys=np.empty(0, dtype=np.uint64),
        )
        if shingle.unit != "stopword" or shingle.stopwords is None:
            return text
        listed = normalize_batch(list(stopword_list(shingle.stopwords)), normalize)
        counts = np.empty(listed.num_docs, dtype=np.int64)
        firsts = np.empty(listed.num_docs, dtype=np.uint64)
        run = partial(
            token_kernels.first_tokens, read_only(listed.data), listed.offsets, *text.tokenizer,
            counts, firsts,
        )  # fmt: skip
        in_blocks(run, listed.num_docs, max_block=SCRATCH_BLOCK)
        return replace(text, stop_keys=np.unique(firsts[counts == 1]))

    @property
    def tokenizer(
        self,
    ) -> tuple[U8Array, NDArray[np.uint16], bool, bool, bool, U64Array | None, U64Array]:
        """The tokenising arguments in kernel order.

        Classes, byte words, strip punctuation, fold ASCII, character mode, Rabin tables, stop
        keys.
        """
        return (
            self.classes,
            self.byte_words,
            self.strip_punctuation,
            self.fold_ascii,
            self.is_char,
            self.rabin,
            self.stop_keys,
        )


def as_batch(texts: Sequence[str] | Batch, normalize: NormalizeSpec) -> Batch:
    """Pass a :class:`Batch` through; normalise and pack a sequence of strings."""
    return texts if isinstance(texts, Batch) else normalize_batch(texts, normalize)


@dataclass(frozen=True, slots=True)
class ShingleSets:
    """The distinct shingle fingerprints of each document, sorted, in one flat array.

    Document ``d`` owns ``hashes[offsets[d]:offsets[d + 1]]``.
    """

    hashes: U64Array
    offsets: Offsets

    def __len__(self) -> int:
        return int(self.offsets.shape[0]) - 1

    def sizes(self) -> I64Array:
        """The number of distinct shingles of each document."""
        return np.diff(self.offsets)

    def set_of(self, doc: int) -> U64Array:
        """The sorted distinct shingle fingerprints of document ``doc``."""
        return self.hashes[self.offsets[doc] : self.offsets[doc + 1]]


class Shingler:
    """Turns texts into shingle sets, as a :class:`~neardup.params.ShingleSpec` says.

    Examples
    --------
    >>> shingler = Shingler(ShingleSpec(unit="word", k=2))
    >>> sets = shingler.shingle_sets(["a rose is a rose", "a rose"])
    >>> sets.sizes().tolist()
    [3, 1]
    """

    def __init__(
        self, shingle: ShingleSpec | None = None, normalize: NormalizeSpec | None = None
    ) -> None:
        self.shingle = shingle if shingle is not None else ShingleSpec()
        self.normalize = normalize if normalize is not None else NormalizeSpec()
        self._kernel_text = KernelText.of(self.shingle, self.normalize)

    def count_tokens(self, texts: Sequence[str] | Batch) -> I64Array:
        """The number of tokens (words, or code points for char shingles) of each document."""
        batch = as_batch(texts, self.normalize)
        kt = self._kernel_text
        out = np.empty(batch.num_docs, dtype=np.int64)
        run = partial(
            token_kernels.count_tokens, read_only(batch.data), batch.offsets, *kt.tokenizer, out
        )
        in_blocks(run, batch.num_docs, max_block=SCRATCH_BLOCK)
        return out

    def shingle_sets(self, texts: Sequence[str] | Batch) -> ShingleSets:
        """The sorted distinct shingle fingerprints of every document."""
        return self._sets(as_batch(texts, self.normalize), with_counts=False)[0]

    def shingle_counts(self, texts: Sequence[str] | Batch) -> tuple[ShingleSets, I64Array]:
        """The shingle sets, and how many times each shingle occurs in its document (a bag).

        Examples
        --------
        >>> sets, counts = Shingler(ShingleSpec(k=1)).shingle_counts(["a rose is a rose"])
        >>> sorted(counts.tolist())
        [1, 2, 2]
        """
        return self._sets(as_batch(texts, self.normalize), with_counts=True)

    def _sets(self, batch: Batch, *, with_counts: bool) -> tuple[ShingleSets, I64Array]:
        """The sets, and the counts (or an empty array when not ``with_counts``).

        Each document gets room for its most shingles (:func:`shingle_rooms`); taking
        :data:`PIECE_BYTES` of text at a time keeps that room small.
        """
        bounds = byte_pieces(np.diff(batch.offsets), PIECE_BYTES)
        parts = [
            self._piece_sets(Batch(batch.data, batch.offsets[a : b + 1]), with_counts)
            for a, b in itertools.pairwise(bounds)
        ]
        if len(parts) == 1:
            return parts[0]
        offsets = np.zeros(batch.num_docs + 1, dtype=np.int64)
        np.cumsum(np.concatenate([sets.sizes() for sets, _ in parts]), out=offsets[1:])
        hashes = np.concatenate([sets.hashes for sets, _ in parts])
        counts = np.concatenate([counts for _, counts in parts])
        return ShingleSets(hashes=hashes, offsets=offsets), counts

    def _piece_sets(self, batch: Batch, with_counts: bool) -> tuple[ShingleSets, I64Array]:
        kt = self._kernel_text
        room_offsets = shingle_rooms(np.diff(batch.offsets), kt)
        counted = int(room_offsets[-1]) if with_counts else 0
        scratch = np.empty(int(room_offsets[-1]), dtype=np.uint64)
        scratch_counts = np.empty(counted, dtype=np.int64)
        sizes = np.empty(batch.num_docs, dtype=np.int64)
        run = partial(
            set_kernels.shingle_sets, read_only(batch.data), batch.offsets, *kt.tokenizer, kt.k,
            room_offsets, scratch, scratch_counts, sizes,
        )  # fmt: skip
        in_blocks(run, batch.num_docs, max_block=SCRATCH_BLOCK)
        return packed_sets(scratch, room_offsets, sizes, scratch_counts)


def shingle_rooms(lengths: I64Array, kt: KernelText) -> I64Array:
    """Room for every shingle of texts of ``lengths`` bytes, one text after another.

    Text ``d`` has ``rooms[d]:rooms[d + 1]``. A text has at most one token a byte in character
    mode, one per two bytes for words (a word and the separator after it take two bytes at
    least; an unspaced-script character, three): sizing by bytes spares a tokenising pass.
    """
    most_tokens = lengths if kt.is_char else (lengths + 1) // 2
    rooms = np.zeros(lengths.shape[0] + 1, dtype=np.int64)
    np.cumsum(np.maximum(most_tokens - kt.k + 1, 0), out=rooms[1:])
    return rooms


def packed_sets(
    scratch: U64Array, rooms: I64Array, sizes: I64Array, scratch_counts: I64Array | None = None
) -> tuple[ShingleSets, I64Array]:
    """The sets written into their ``rooms`` of ``scratch`` (``sizes[d]`` each), end to end.

    With their shingles' counts where ``scratch_counts`` holds them (else an empty array).
    """
    offsets = np.zeros(sizes.shape[0] + 1, dtype=np.int64)
    np.cumsum(sizes, out=offsets[1:])
    hashes = np.empty(int(offsets[-1]), dtype=np.uint64)
    if scratch_counts is None:
        scratch_counts = np.empty(0, dtype=np.int64)
    counts = np.empty(int(offsets[-1]) if scratch_counts.shape[0] else 0, dtype=np.int64)
    set_kernels.compact_sets(scratch, scratch_counts, rooms, offsets, hashes, counts)
    return ShingleSets(hashes=hashes, offsets=offsets), counts
