"""The sample a plan measures: documents drawn uniformly in one streaming pass over the inputs.

Each document gets a uniform random key from the seed's generator, in input order; the sample is
the ``sample_docs`` documents with the smallest keys (a reservoir kept by priority: a uniform
sample without replacement, whatever the batch sizes). Per batch only the documents whose key
beats the reservoir's largest are copied, so after the first batches most are only counted.
"""

from __future__ import annotations

import itertools
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from neardup._types import Batch, F64Array, I64Array
from neardup.errors import InputError
from neardup.io.readers import ReadOptions, open_sources
from neardup.params import DedupConfig
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
        Seconds the pass took (reading and decoding every record, and sampling).
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
    inputs: Sequence[Path | str], config: DedupConfig, sample_docs: int, seed: int
) -> Sample:
    """Draw ``sample_docs`` documents uniformly from ``inputs`` (all of them if fewer).

    The inputs are read as ``neardup dedup`` reads them with ``config`` (fields, format,
    encoding, bad records), batch by batch; the same inputs and seed give the same sample.

    Raises
    ------
    InputError
        An unreadable input or a bad record, as ``dedup`` would raise; or no records at all.
    """
    sources = open_sources(inputs, ReadOptions.of(config), config.input_format)
    rng = np.random.default_rng(seed)
    kept = Batch(data=np.empty(0, dtype=np.uint8), offsets=np.zeros(1, dtype=np.int64))
    keys: F64Array = np.empty(0)
    positions: I64Array = np.empty(0, dtype=np.int64)
    num_docs = num_bytes = 0
    start = time.perf_counter()
    for source in sources:
        for batch in source.batches(config.batch_bytes):
            drawn = rng.random(batch.num_docs)
            entering = (
                np.flatnonzero(drawn < keys.max())
                if keys.shape[0] == sample_docs
                else np.arange(batch.num_docs)
            )
            if entering.shape[0]:
                texts = concat([kept, take(batch.texts, entering)])
                keys = np.concatenate([keys, drawn[entering]])
                positions = np.concatenate([positions, num_docs + entering])
                if keys.shape[0] > sample_docs:
                    chosen = np.argpartition(keys, sample_docs - 1)[:sample_docs]
                    chosen = chosen[np.argsort(positions[chosen], kind="stable")]
                    texts, keys, positions = take(texts, chosen), keys[chosen], positions[chosen]
                kept = texts
            num_docs += batch.num_docs
            num_bytes += batch.texts.num_bytes
    if num_docs == 0:
        raise InputError("no usable records in the input; nothing to plan for")
    return Sample(
        texts=kept,
        num_docs=num_docs,
        num_bytes=num_bytes,
        read_seconds=time.perf_counter() - start,
    )
