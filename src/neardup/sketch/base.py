"""What every text sketcher shares: normalise a batch, allocate outputs, run one fused kernel."""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Sequence
from typing import Any

import numpy as np

from neardup._types import Batch, I64Array, U64Array
from neardup.errors import ParameterError
from neardup.kinds import SKETCH_KINDS
from neardup.params import SketchSpec
from neardup.sketch.signatures import Signatures
from neardup.text.shingle import KernelText, as_batch

__all__ = ["TextSketcher"]


class TextSketcher(ABC):
    """A maker from texts to :class:`Signatures`; draws its random parameters once, from the seed.

    Subclasses implement :meth:`_fill`, one call of their fused kernel.
    """

    kind: str

    def __init__(self, spec: SketchSpec | None = None) -> None:
        """The sketcher of ``spec``; a spec whose kind was left at the default takes the class's."""
        spec = SketchSpec() if spec is None else spec
        if spec.kind == SketchSpec().kind:
            spec = spec.with_kind(self.kind)
        if spec.kind != self.kind:
            raise ParameterError(
                f"{type(self).__name__} sketches kind {self.kind!r}; got SketchSpec.kind "
                f"{spec.kind!r}: leave the kind out, or use that kind's sketcher "
                "(neardup.make_sketcher)."
            )
        self.spec = spec
        self._kernel_text = KernelText.of(self.spec.shingle, self.spec.normalize)
        self._rng = np.random.default_rng([self.spec.seed, SKETCH_KINDS[self.kind].tag])
        self._no_token: U64Array | None = None

    def sketch(self, texts: Sequence[str] | Batch) -> Signatures:
        """Sketch a batch of texts (or a normalised :class:`Batch`) into signatures.

        Runs in parallel over documents; the result does not depend on the number of threads.
        """
        return self._sketched(as_batch(texts, self.spec.normalize))

    def _sketched(self, batch: Batch, *fill_args: Any) -> Signatures:
        """The signatures of a normalised batch; ``fill_args`` go on to :meth:`_fill`."""
        values = np.empty((batch.num_docs, self.width), dtype=np.uint64)
        num_shingles = np.empty(batch.num_docs, dtype=np.int64)
        fingerprints = np.empty((batch.num_docs, 2), dtype=np.uint64)
        if batch.num_docs:
            self._fill(batch, values, num_shingles, fingerprints, *fill_args)
        return Signatures(
            values=values, num_shingles=num_shingles, fingerprints=fingerprints, spec=self.spec
        )

    @property
    def no_token_fingerprint(self) -> U64Array:
        """The 128-bit fingerprint of a text without a token (empty, or only separators).

        Such texts are not duplicates of each other: the pipeline matches them with nothing.
        """
        if self._no_token is None:
            self._no_token = self.sketch([""]).fingerprints[0].copy()
        return self._no_token

    @property
    def width(self) -> int:
        """``uint64`` words per signature row (``num_perm`` unless the sketch packs its slots)."""
        return self.spec.num_perm

    def sketch_one(self, text: str) -> Signatures:
        """Sketch one text: a batch of one."""
        return self.sketch([text])

    @classmethod
    def band_slots(cls, values: U64Array, spec: SketchSpec) -> U64Array:
        """The slots LSH banding cuts into bands: by default the signature rows themselves."""
        return values

    @classmethod
    def slot_agreement(cls, similarity: float, spec: SketchSpec) -> float:
        """The chance that one slot of two documents at ``similarity`` agrees.

        Banding's S-curve is drawn over it; by default the similarity itself, as for MinHash.
        """
        return similarity

    def _random_uint64(self, size: int) -> U64Array:
        return self._rng.integers(0, 2**64, size=size, dtype=np.uint64, endpoint=False)

    @abstractmethod
    def _fill(
        self, batch: Batch, values: U64Array, num_shingles: I64Array, fingerprints: U64Array
    ) -> None:
        """Run the kernel, filling the three output arrays."""
