"""Rabin fingerprints: residues of byte strings modulo a random irreducible polynomial.

A byte string is read as a polynomial ``A(t)`` over GF(2) (first byte highest); its fingerprint
is ``A(t) mod P(t)`` for an irreducible ``P`` of degree 64 (Rabin 1981; seed 003 §2). For two
different strings of at most ``n`` bits, the chance over a random ``P`` that they collide is
about ``n / 2^64``. Fingerprints extend: ``f(A . B) = f(f(A) . B)``, so a fingerprint is built
byte by byte (one table lookup, one shift and one xor per byte), and a sliding window drops its
oldest byte with a second lookup.

Polynomials are written as hexadecimal strings of all 65 coefficients, e.g. ``"0x1" + 16 hex
digits``, the leading ``1`` being the ``t^64`` term; that string is what specs store.
"""

from __future__ import annotations

from functools import lru_cache, partial

import numpy as np

from neardup._kernels import rabin as kernels
from neardup._parallel import in_blocks
from neardup._types import U8Array, U64Array
from neardup.errors import ParameterError
from neardup.params import DEFAULT_RABIN_POLYNOMIAL

__all__ = [
    "DEFAULT_POLYNOMIAL",
    "RabinFingerprinter",
    "is_irreducible",
    "parse_polynomial",
    "poly_mod",
    "poly_mulmod",
    "random_irreducible",
]

DEFAULT_POLYNOMIAL = DEFAULT_RABIN_POLYNOMIAL
"""``random_irreducible(seed=0)``: the polynomial used when a spec names none."""

DEGREE = 64


def poly_mod(a: int, p: int) -> int:
    """``a(t) mod p(t)`` over GF(2), polynomials as Python ints (bit i = coefficient of t^i)."""
    degree = p.bit_length() - 1
    while a.bit_length() - 1 >= degree:
        a ^= p << (a.bit_length() - 1 - degree)
    return a


def poly_mulmod(a: int, b: int, p: int) -> int:
    """``a(t) * b(t) mod p(t)`` over GF(2)."""
    out = 0
    a = poly_mod(a, p)
    while b:
        if b & 1:
            out ^= a
        b >>= 1
        a = poly_mod(a << 1, p)
    return out


def _poly_gcd(a: int, b: int) -> int:
    while b:
        a, b = b, poly_mod(a, b)
    return a


def _prime_factors(n: int) -> list[int]:
    factors, q = [], 2
    while q * q <= n:
        if n % q == 0:
            factors.append(q)
            while n % q == 0:
                n //= q
        q += 1
    return factors + ([n] if n > 1 else [])


def is_irreducible(p: int) -> bool:
    """Whether ``p`` is irreducible over GF(2), by Rabin's test.

    ``p`` of degree ``n`` is irreducible iff ``t^(2^n) = t mod p`` and
    ``gcd(t^(2^(n/q)) - t, p) = 1`` for every prime ``q`` dividing ``n``.

    Examples
    --------
    >>> is_irreducible(0b111), is_irreducible(0b101)  # t^2+t+1 yes; t^2+1 = (t+1)^2 no
    (True, False)
    """
    n = p.bit_length() - 1
    if n < 1:
        return False

    def frobenius(times: int) -> int:  # t^(2^times) mod p
        x = 0b10
        for _ in range(times):
            x = poly_mulmod(x, x, p)
        return x

    if frobenius(n) != poly_mod(0b10, p):
        return False
    return all(_poly_gcd(frobenius(n // q) ^ 0b10, p) == 1 for q in _prime_factors(n))


def random_irreducible(seed: int, degree: int = DEGREE) -> str:
    """A random irreducible polynomial of ``degree`` drawn from ``seed``, as a hex string.

    About one polynomial in ``degree`` is irreducible, so a few dozen draws suffice.
    """
    rng = np.random.default_rng([seed, 0x4AB1])
    while True:
        low = int(rng.integers(0, 2**degree, dtype=np.uint64 if degree == 64 else np.int64))
        candidate = (1 << degree) | low | 1
        if is_irreducible(candidate):
            return hex(candidate)


def parse_polynomial(text: str) -> int:
    """The polynomial of a hex string; a :class:`ParameterError` unless irreducible of degree 64."""
    try:
        p = int(text, 16)
    except (TypeError, ValueError):
        raise ParameterError(
            f"a Rabin polynomial must be a hex string like {DEFAULT_POLYNOMIAL!r}; got {text!r}."
        ) from None
    if p.bit_length() - 1 != DEGREE:
        raise ParameterError(
            "a Rabin polynomial must have degree 64 (17 hex digits, the first one 1); "
            f"{text!r} has degree {p.bit_length() - 1}."
        )
    if not _irreducible_cached(p):
        raise ParameterError(
            f"the Rabin polynomial {text} is not irreducible over GF(2); draw one with "
            "neardup.hashing.random_irreducible(seed)."
        )
    return p


@lru_cache(maxsize=64)
def _irreducible_cached(p: int) -> bool:
    return is_irreducible(p)


@lru_cache(maxsize=64)
def _tables(p: int, window_bytes: int) -> U64Array:
    """``uint64[9, 256]``: the byte-shift table and the eight drop tables of a window."""
    out = np.empty((9, 256), dtype=np.uint64)
    for v in range(256):
        out[0, v] = poly_mod(v << DEGREE, p)
    outgoing = poly_mod(1 << (8 * window_bytes), p)
    for j in range(8):
        for v in range(256):
            out[1 + j, v] = poly_mulmod(v << (8 * j), outgoing, p)
    out.flags.writeable = False
    return out


class RabinFingerprinter:
    """Fingerprints of byte strings and of sliding windows under one polynomial.

    Examples
    --------
    >>> rabin = RabinFingerprinter()
    >>> f = rabin.fingerprints([b"shingle", b"shingle", b"shinglE"])
    >>> bool(f[0] == f[1]), bool(f[0] == f[2])
    (True, False)
    >>> windows = rabin.window_fingerprints(b"abcabc", 3)
    >>> bool(windows[0] == windows[3]), len(windows)
    (True, 4)
    """

    def __init__(self, polynomial: str = DEFAULT_POLYNOMIAL) -> None:
        self.polynomial = polynomial
        self._p = parse_polynomial(polynomial)

    def tables(self, window_bytes: int) -> U64Array:
        """The kernel tables for windows of ``window_bytes`` bytes (see ``_kernels.rabin``)."""
        return _tables(self._p, window_bytes)

    def fingerprints(self, strings: list[bytes]) -> U64Array:
        """The fingerprint of each byte string."""
        lengths = np.fromiter(map(len, strings), dtype=np.int64, count=len(strings))
        offsets = np.zeros(len(strings) + 1, dtype=np.int64)
        np.cumsum(lengths, out=offsets[1:])
        buf = np.frombuffer(b"".join(strings), dtype=np.uint8)
        out = np.empty(len(strings), dtype=np.uint64)
        in_blocks(partial(kernels.fingerprints, buf, offsets, self.tables(8)[0], out), len(strings))
        return out

    def window_fingerprints(self, data: bytes | U8Array, width: int) -> U64Array:
        """The fingerprint of every ``width``-byte window of ``data``, in one pass."""
        if width < 1:
            raise ParameterError(f"window width must be a positive int; got {width!r}.")
        buf = np.frombuffer(bytes(data), dtype=np.uint8)
        out = np.empty(max(buf.shape[0] - width + 1, 0), dtype=np.uint64)
        drop = np.array([poly_mod(v << (8 * width), self._p) for v in range(256)], np.uint64)
        kernels.window_fingerprints(buf, width, self.tables(8)[0], drop, out)
        return out
