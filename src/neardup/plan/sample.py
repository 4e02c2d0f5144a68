"""The sample a plan measures: documents drawn uniformly in one streaming pass over the inputs.

Each document gets a uniform random key from the seed's generator, in input order. Taken in key
order (a random order), documents join the sample while there are fewer than ``sample_docs``
and their bytes fit in ``sample_bytes``; the first that does not fit ends it. Without the byte
budget that is the ``sample_docs`` smallest keys (a reservoir kept by priority: a uniform sample
without replacement, whatever the batch sizes); the budget keeps the planner's memory and time
bounded on long documents, at the cost of a bias of the order of one document. A document
whose key is above that of one already left out can never join, so per batch only the documents
below that bound are copied: after the first batches, most are only counted.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from neardup._kernels.compiling import Stopwatch
from neardup._types import Batch, F64Array
from neardup.errors import InputError
from neardup.io.readers import all_batches, open_sources
from neardup.params import ReadSpec
from neardup.text.spans import concat, take

__all__ = ["Sample", "sample_inputs"]


@dataclass(frozen=True, slots=True)
class Sample:
    """Documents drawn uniformly from the inputs, and what the pass counted of the whole.

    Attributes
    ----------
    texts
        The raw (not normalised) texts of the sampled documents, in input order.
    num_docs
        Documents in the whole input.
    num_bytes
        UTF-8 bytes of text in the whole input.
    read_seconds
        Seconds the pass took (reading and decoding every record, and sampling), less the
        seconds numba spent compiling kernels in it (a one-off cost of a first run,
        :class:`~neardup._kernels.compiling.Stopwatch`).
    """

    texts: Batch
    num_docs: int
    num_bytes: int
    read_seconds: float

    @property
    def size(self) -> int:
        """Documents in the sample."""
        return self.texts.num_docs

    def strings(self) -> list[str]:
        """The sampled texts as Python strings."""
        data, offsets = self.texts.data, self.texts.offsets.tolist()
        return [
            bytes(data[a:b]).decode("utf-8", "surrogatepass")
            for a, b in itertools.pairwise(offsets)
        ]


def sample_inputs(
    inputs: Sequence[Path | str],
    read: ReadSpec,
    sample_docs: int,
    seed: int,
    sample_bytes: int | None = None,
    progress: Callable[[int, int], object] | None = None,
) -> Sample:
    """Draw up to ``sample_docs`` documents, ``sample_bytes`` of text, uniformly from ``inputs``.

    All of them when they are fewer and fit; at least one. The inputs are read as
    ``neardup dedup`` reads them with ``read`` (fields, format, encoding, bad records), batch
    by batch; the same inputs and seed give the same sample. ``progress`` is told the bytes
    of input read so far and the inputs' size.

    Raises
    ------
    InputError
        An unreadable input or a bad record, as ``dedup`` would raise; or no records at all.
    """
    sources = open_sources(inputs, read)
    rng = np.random.default_rng(seed)
    budget = sample_bytes if sample_bytes is not None else np.iinfo(np.int64).max
    kept = Batch(data=np.empty(0, dtype=np.uint8), offsets=np.zeros(1, dtype=np.int64))
    keys: F64Array = np.empty(0)
    bound = np.inf  # the smallest key left out so far: no larger key can join
    num_docs = num_bytes = 0
    total_bytes = sum(source.size for source in sources)
    watch = Stopwatch()
    with watch.running():
        for batch in all_batches(sources, read.batch_bytes):
            drawn = rng.random(batch.num_docs)
            entering = np.flatnonzero(drawn < bound)
            if entering.shape[0]:
                texts = concat([kept, take(batch.texts, entering)])
                keys = np.concatenate([keys, drawn[entering]])
                by_key = np.argsort(keys, kind="stable")
                total = np.cumsum(np.diff(texts.offsets)[by_key])
                fit = int(np.searchsorted(total, budget, side="right"))
                size = max(1, min(sample_docs, fit))
                if size < keys.shape[0]:
                    bound = float(keys[by_key[size]])
                    chosen = np.sort(by_key[:size])  # back in input order
                    texts, keys = take(texts, chosen), keys[chosen]
                kept = texts
            num_docs += batch.num_docs
            num_bytes += batch.texts.num_bytes
            if progress is not None:
                progress(batch.position, total_bytes)
    if num_docs == 0:
        raise InputError("no usable records in the input; nothing to plan for")
    return Sample(texts=kept, num_docs=num_docs, num_bytes=num_bytes, read_seconds=watch.seconds)
