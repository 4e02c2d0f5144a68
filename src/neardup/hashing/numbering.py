"""Distinct 64-bit keys numbered 1, 2, ... in the order they are first seen, batch after batch.

The substring finder numbers its tokens so (a suffix array wants a small alphabet) and passage
dedup its units' texts (only a text's first copy goes through the dedup stages).
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
from numpy.typing import NDArray

from neardup._kernels import numbering as kernels
from neardup._types import U64Array
from neardup.errors import ParameterError

__all__ = ["MAX_NUMBER", "KeyNumbers"]

MAX_NUMBER = 2**32 - 1
"""The most distinct keys a :class:`KeyNumbers` takes (numbers are ``uint32``, 0 unused)."""


@dataclass
class KeyNumbers:
    """Keys to numbers 1, 2, ... in order of first sight.

    An open-addressing table kept at most half full: at most 24 bytes a distinct key.

    Examples
    --------
    >>> numbers = KeyNumbers()
    >>> numbers.number(np.array([7, 9, 7], dtype=np.uint64)).tolist()
    [1, 2, 1]
    >>> numbers.number(np.array([5, 9], dtype=np.uint64)).tolist(), numbers.num_keys
    ([3, 2], 3)
    """

    slots: U64Array = field(default_factory=lambda: np.zeros(1 << 16, dtype=np.uint64))
    numbers: NDArray[np.uint32] = field(default_factory=lambda: np.zeros(1 << 16, np.uint32))
    next_number: int = 1

    @property
    def num_keys(self) -> int:
        """Distinct keys numbered so far."""
        return self.next_number - 1

    def number(self, keys: U64Array) -> NDArray[np.uint32]:
        """The numbers of ``keys``, new keys numbered as they come."""
        wanted = 2 * (self.next_number + keys.shape[0])
        if wanted > self.slots.shape[0]:
            size = 1 << (wanted - 1).bit_length()
            slots, numbers = np.zeros(size, dtype=np.uint64), np.zeros(size, dtype=np.uint32)
            kernels.rehash(self.slots, self.numbers, slots, numbers)
            self.slots, self.numbers = slots, numbers
        out = np.empty(keys.shape[0], dtype=np.uint32)
        first_new = self.next_number
        self.next_number = kernels.number_keys(keys, self.slots, self.numbers, first_new, out)
        if self.next_number > MAX_NUMBER:
            raise ParameterError(f"more than {MAX_NUMBER - 1:,} distinct keys to number")
        return out
