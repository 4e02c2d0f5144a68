"""Numba kernels from UTF-8 text bytes to token hashes, shingle fingerprints and exact fingerprints.

A batch is one flat ``uint8`` buffer of normalised UTF-8 text plus ``int64`` offsets: document
``d`` is ``buf[offsets[d]:offsets[d + 1]]``. Every kernel here works on that shape, on a block of
documents ``lo .. hi - 1`` (its last two arguments; blocks run in threads at once, see
``neardup._parallel.in_blocks``), and so do the sketching kernels that shingle text through
:func:`doc_shingles_into` with scratch room for the longest document of their block
(:func:`longest`; ``minhash``, ``oph``, ``bottomk``, ``simhash``, ``sets``). This
module calls ``mix.fmix64``, the Rabin steps of ``rabin`` and ``utf8`` decoding from other files
(safe with the cache: its directory is named for a hash of every kernel's source, see
:mod:`neardup._kernels`).

The default fingerprint scheme (version 1, recorded as ``"nd64-v1"`` with every signature):

* a *token* is a word (word shingling) or a code point (character shingling), see
  :func:`_tokens`; a word's hash is 64-bit FNV-1a over its UTF-8 bytes, finalised with
  MurmurHash3's ``fmix64``; a code point's hash is ``fmix64(cp + CHAR_SALT)``;
* a *shingle* of ``k`` consecutive tokens ``t_i .. t_{i+k-1}`` has the fingerprint
  ``fmix64(sum_j t_{i+j} * P^(k-1-j) mod 2^64)``, computed with a rolling polynomial in O(1)
  per shingle (the sliding-window idea of Rabin fingerprints, seed 003 §2);
* with stop-word shingles (``stop_keys``: the sorted token hashes of a stop-word list) only
  the shingles whose first token is a stop word are kept (MMDS §3.8.6);
* the *exact fingerprint* of a document is a 128-bit fold of its token hashes, so documents
  whose normalised texts are identical (up to whitespace) share it.

Every kernel that tokenises takes ``rabin``, a ``uint64[9, 256]`` table set from
:mod:`neardup.hashing.rabin` selecting the Rabin scheme (``"rabin-v1"``: tokens and shingles
are Rabin fingerprints, see :func:`_tokens` and :func:`_shingles`), or None for ``nd64``: numba
compiles each kernel once per scheme, and the ``rabin is not None`` branches are decided at
compile time.

Code-point classes (an ``uint8`` table over all of Unicode, built in ``neardup.text``):
``WORD`` joins a word, ``SPACE`` separates, ``PUNCT`` separates only when punctuation is
stripped, ``ALONE`` (scripts written without spaces) is a word by itself. Text is read by
these rules in one place, :func:`words` and :func:`chars`, which the lexicon and
passage kernels call too (``lexicon``, ``passages``).
"""

from __future__ import annotations

import numpy as np
from numba import njit, uint64

from neardup._kernels.groups import lower_bound
from neardup._kernels.mix import fmix64
from neardup._kernels.rabin import outgoing, push_byte, push_word
from neardup._kernels.utf8 import decode_code_point

WORD = 0
SPACE = 1
PUNCT = 2
ALONE = 3

FNV_OFFSET = uint64(0xCBF29CE484222325)
FNV_PRIME = uint64(0x100000001B3)
POLY_BASE = uint64(0x9E3779B97F4A7C15)
CHAR_SALT = uint64(0x51ED270B27A3D5B1)
FOLD_A = uint64(0xFF51AFD7ED558CCD)
FOLD_B = uint64(0xC4CEB9FE1A85EC53)


@njit(cache=True, nogil=True, inline="always")
def _token_start(rabin):  # type: ignore[no-untyped-def]
    """The hash state before a token's first byte."""
    return uint64(0) if rabin is not None else FNV_OFFSET


@njit(cache=True, nogil=True, inline="always")
def _token_byte(h, byte, rabin):  # type: ignore[no-untyped-def]
    """Add one byte to a token's hash: a Rabin step, or an FNV-1a step."""
    if rabin is not None:
        return push_byte(h, uint64(byte), rabin[0])
    return (h ^ uint64(byte)) * FNV_PRIME


@njit(cache=True, nogil=True, inline="always")
def _token_end(h, rabin):  # type: ignore[no-untyped-def]
    """The token hash: the Rabin residue as it is, or the FNV-1a state finalised by fmix64."""
    return h if rabin is not None else fmix64(h)


@njit(cache=True, nogil=True, inline="always")
def token_class(classes, cp, strip_punct):  # type: ignore[no-untyped-def]
    """WORD, SPACE or ALONE: the class of ``cp``, punctuation resolved by ``strip_punct``."""
    cls = classes[cp]
    if cls == PUNCT:
        return SPACE if strip_punct else WORD
    return cls


SEPARATOR_BYTE = 256
"""``byte_words`` entry of an ASCII byte that separates words."""
MULTI_BYTE = 512
"""``byte_words`` entry of a byte that starts or continues a multi-byte UTF-8 sequence."""


@njit(cache=True, nogil=True)
def words(buf, start, end, classes, byte_words, strip_punct, rabin, hashes, starts, lengths):  # type: ignore[no-untyped-def]
    """Read the words of ``buf[start:end]``; return how many.

    The one word reader of every kernel. Words are maximal runs of WORD code points (and PUNCT
    ones unless ``strip_punct``); each ALONE code point is a word of its own. ``byte_words``
    resolves each byte in one lookup: the byte an ASCII word byte hashes as (folded),
    :data:`SEPARATOR_BYTE`, or :data:`MULTI_BYTE` (see ``neardup.text.KernelText``). Word
    ``n``'s hash goes to ``hashes[n]``: FNV-1a + fmix64 of its bytes so read, or with ``rabin``
    tables its Rabin fingerprint; its first byte and byte length to ``starts[n]`` and
    ``lengths[n]``. Each of the three may be None (not wanted: numba compiles the kernel
    without it). Cost: O(bytes).
    """
    n = 0
    i = start
    while i < end:
        t = byte_words[buf[i]]
        if t == SEPARATOR_BYTE:
            i += 1
            continue
        first = i
        h = _token_start(rabin)
        alone = False
        if t == MULTI_BYTE:
            cp, size = decode_code_point(buf, i)
            cls = token_class(classes, cp, strip_punct)
            if cls == SPACE:
                i += size
                continue
            alone = cls == ALONE
            if alone:
                for j in range(i, i + size):
                    h = _token_byte(h, buf[j], rabin)
                i += size
        while not alone and i < end:  # a word starts at buf[first]: hash it to its end
            t = byte_words[buf[i]]
            if t < SEPARATOR_BYTE:
                h = _token_byte(h, t, rabin)
                i += 1
                continue
            if t == SEPARATOR_BYTE:
                break
            cp, size = decode_code_point(buf, i)
            if token_class(classes, cp, strip_punct) != WORD:
                break
            for j in range(i, i + size):
                h = _token_byte(h, buf[j], rabin)
            i += size
        if hashes is not None:
            hashes[n] = _token_end(h, rabin)
        if starts is not None:
            starts[n] = first
        if lengths is not None:
            lengths[n] = i - first
        n += 1
    return n


@njit(cache=True, nogil=True)
def _tokens(buf, start, end, classes, byte_words, strip_punct, fold_ascii, is_char, rabin, out):  # type: ignore[no-untyped-def]
    """Write the token hashes of ``buf[start:end]`` into ``out``; return how many.

    Tokens are the words of :func:`words`, or in character mode the characters of
    :func:`chars`. ASCII letters are lower-cased here when ``fold_ascii`` (the normalisation
    left ASCII-only texts untouched, see ``neardup.text.normalize_batch``). Cost: O(bytes).
    """
    if is_char:
        return chars(buf, start, end, classes, strip_punct, fold_ascii, rabin, out, None, None)
    return words(buf, start, end, classes, byte_words, strip_punct, rabin, out, None, None)


@njit(cache=True, nogil=True, inline="always")
def read_char(buf, i, fold_ascii):  # type: ignore[no-untyped-def]
    """The code point at ``buf[i]`` and its size in bytes, ASCII letters folded if asked.

    ``fold_ascii`` lower-cases A-Z. How character mode reads a text, in the shingling and
    the passage kernels alike.
    """
    b0 = buf[i]
    if b0 >= 0x80:
        return decode_code_point(buf, i)
    cp = np.int64(b0)
    if fold_ascii and 65 <= cp <= 90:
        cp += 32
    return cp, 1


@njit(cache=True, nogil=True)
def chars(buf, start, end, classes, strip_punct, fold_ascii, rabin, hashes, starts, ends):  # type: ignore[no-untyped-def]
    """Read the character tokens of ``buf[start:end]``; return how many.

    The one character reader of every kernel. Every code point that is not a separator is a
    token (ASCII letters folded when ``fold_ascii``); the run of separators between two tokens
    is one token, a space, spanning the run; leading and trailing separators are dropped.
    Token ``n``'s hash goes to ``hashes[n]``: ``fmix64(cp + CHAR_SALT)``, or with ``rabin``
    tables the Rabin fingerprint of its bytes (of a space for a run of separators); its byte
    span to ``starts[n]:ends[n]``, unless they are None. Cost: O(bytes).
    """
    n = 0
    i = start
    run = -1  # where the separators pending since the last token began
    while i < end:
        cp, size = read_char(buf, i, fold_ascii)
        if token_class(classes, cp, strip_punct) == SPACE:
            if n > 0 and run < 0:
                run = i
            i += size
            continue
        if run >= 0:
            if starts is not None:
                starts[n] = run
            if ends is not None:
                ends[n] = i
            hashes[n] = uint64(32) if rabin is not None else fmix64(uint64(32) + CHAR_SALT)
            n += 1
            run = -1
        if rabin is None:
            hashes[n] = fmix64(uint64(cp) + CHAR_SALT)
        elif size == 1:
            hashes[n] = uint64(cp)
        else:
            h = uint64(0)
            for j in range(i, i + size):
                h = _token_byte(h, buf[j], rabin)
            hashes[n] = h
        if starts is not None:
            starts[n] = i
        if ends is not None:
            ends[n] = i + size
        n += 1
        i += size
    return n


@njit(cache=True, nogil=True)
def shingles(tokens, num_tokens, k, rabin, out):  # type: ignore[no-untyped-def]
    """Write the fingerprints of the ``num_tokens - k + 1`` k-shingles of ``tokens`` to ``out``.

    Default: a rolling polynomial over the token hashes, then ``fmix64``. With ``rabin`` tables:
    the Rabin fingerprint of the shingle's token fingerprints as consecutive 8-byte symbols,
    ``f(f(w_1) . f(w_2) ... f(w_k))`` (the extension property lets a fingerprint stand for its
    word), slid one token at a time by appending the new symbol and dropping the oldest.
    O(1) per shingle either way.
    """
    num = num_tokens - k + 1
    if num <= 0:
        return 0
    if rabin is not None:
        acc = uint64(0)
        for j in range(k):
            acc = push_word(acc, tokens[j], rabin[0])
        out[0] = acc
        for i in range(1, num):
            acc = push_word(acc, tokens[i + k - 1], rabin[0]) ^ outgoing(tokens[i - 1], rabin)
            out[i] = acc
        return num
    top = uint64(1)  # P^(k-1)
    for _ in range(k - 1):
        top *= POLY_BASE
    acc = uint64(0)
    for j in range(k):
        acc = acc * POLY_BASE + tokens[j]
    out[0] = fmix64(acc)
    for i in range(1, num):
        acc = (acc - tokens[i - 1] * top) * POLY_BASE + tokens[i + k - 1]
        out[i] = fmix64(acc)
    return num


@njit(cache=True, nogil=True)
def _fingerprint(tokens, num_tokens):  # type: ignore[no-untyped-def]
    """The 128-bit exact fingerprint (two uint64 halves) of a token sequence."""
    a = FNV_OFFSET
    b = CHAR_SALT
    for i in range(num_tokens):
        t = tokens[i]
        a = (a ^ t) * FOLD_A
        b = (b ^ ((t << uint64(31)) | (t >> uint64(33)))) * FOLD_B
    n = uint64(num_tokens)
    return fmix64(a ^ n), fmix64(b + n * POLY_BASE)


@njit(cache=True, nogil=True)
def stop_word_shingles(tokens, shingles, num, stop_keys, firsts):  # type: ignore[no-untyped-def]
    """Keep the shingles ``shingles[i]`` whose first token ``tokens[i]`` is in ``stop_keys``.

    MMDS §3.8.6: a stop-word shingle is a stop word and the words after it. ``stop_keys`` is
    sorted; the kept shingles move to the front, in order, and each one's first token index
    to ``firsts`` (unless it is None). Returns how many. Cost: O(num * log |stop_keys|).
    """
    last = stop_keys.shape[0]
    kept = 0
    for i in range(num):
        at = lower_bound(stop_keys, tokens[i])
        if at < last and stop_keys[at] == tokens[i]:
            shingles[kept] = shingles[i]
            if firsts is not None:
                firsts[kept] = i
            kept += 1
    return kept


@njit(cache=True, nogil=True)
def doc_shingles_into(  # type: ignore[no-untyped-def]
    buf,
    start,
    end,
    classes,
    byte_words,
    strip_punct,
    fold_ascii,
    is_char,
    rabin,
    stop_keys,
    k,
    tokens,
    out,
):
    """Tokenise one document into scratch arrays; return (count, fingerprint halves).

    ``tokens`` receives the token hashes and ``out`` the shingle fingerprints; both need at
    least ``end - start + 1`` entries. With ``stop_keys`` (sorted token hashes of stop words;
    empty: every shingle) only the shingles that start at a stop word are kept, in order.
    """
    num_tokens = _tokens(
        buf, start, end, classes, byte_words, strip_punct, fold_ascii, is_char, rabin, tokens
    )
    num = shingles(tokens, num_tokens, k, rabin, out)
    if stop_keys.shape[0]:
        num = stop_word_shingles(tokens, out, num, stop_keys, None)
    fp_hi, fp_lo = _fingerprint(tokens, num_tokens)
    return num, fp_hi, fp_lo


@njit(cache=True, nogil=True)
def longest(offsets, lo, hi):  # type: ignore[no-untyped-def]
    """The byte length of the longest of documents ``lo`` to ``hi - 1``: a block's scratch room."""
    longest = 0
    for d in range(lo, hi):
        longest = max(longest, offsets[d + 1] - offsets[d])
    return longest


@njit(cache=True, nogil=True)
def shingle_room(offsets, lo, hi):  # type: ignore[no-untyped-def]
    """Token and shingle scratch for :func:`doc_shingles_into` over documents ``lo .. hi - 1``.

    Sized for the longest of them (a document has at most one token a byte).
    """
    room = longest(offsets, lo, hi) + 1
    return np.empty(room, dtype=np.uint64), np.empty(room, dtype=np.uint64)


@njit(cache=True, nogil=True)
def count_tokens(  # type: ignore[no-untyped-def]
    buf,
    offsets,
    classes,
    byte_words,
    strip_punct,
    fold_ascii,
    is_char,
    rabin,
    stop_keys,
    out,
    lo,
    hi,
):
    """Write the token count of each of documents ``lo .. hi - 1`` to ``out``. Cost: O(bytes)."""
    scratch = np.empty(longest(offsets, lo, hi) + 1, dtype=np.uint64)
    for d in range(lo, hi):
        start, end = offsets[d], offsets[d + 1]
        out[d] = _tokens(
            buf, start, end, classes, byte_words, strip_punct, fold_ascii, is_char, rabin, scratch
        )


@njit(cache=True, nogil=True)
def first_tokens(  # type: ignore[no-untyped-def]
    buf,
    offsets,
    classes,
    byte_words,
    strip_punct,
    fold_ascii,
    is_char,
    rabin,
    stop_keys,
    counts,
    firsts,
    lo,
    hi,
):
    """Each document's token count, and its first token's hash (0 when it has none).

    For the documents ``lo .. hi - 1``. How a word list (one word a document) is hashed exactly
    as the shingling kernels hash tokens: the stop-word keys of stop-word shingles. Cost:
    O(bytes).
    """
    scratch = np.empty(longest(offsets, lo, hi) + 1, dtype=np.uint64)
    for d in range(lo, hi):
        start, end = offsets[d], offsets[d + 1]
        counts[d] = _tokens(
            buf, start, end, classes, byte_words, strip_punct, fold_ascii, is_char, rabin, scratch
        )
        firsts[d] = scratch[0] if counts[d] > 0 else uint64(0)


@njit(cache=True, nogil=True)
def document_fingerprints(  # type: ignore[no-untyped-def]
    buf,
    offsets,
    classes,
    byte_words,
    strip_punct,
    fold_ascii,
    is_char,
    rabin,
    stop_keys,
    k,
    num_shingles,
    fingerprint,
    lo,
    hi,
):
    """Each document's shingle count and 128-bit exact fingerprint, of documents ``lo .. hi - 1``.

    For sketchers that draw their samples from shingle sets rather than the text. Cost: O(bytes).
    """
    tokens, shingles = shingle_room(offsets, lo, hi)
    for d in range(lo, hi):
        num, fp_hi, fp_lo = doc_shingles_into(
            buf, offsets[d], offsets[d + 1], classes, byte_words, strip_punct, fold_ascii,
            is_char, rabin, stop_keys, k, tokens, shingles,
        )  # fmt: skip
        num_shingles[d] = num
        fingerprint[d, 0] = fp_hi
        fingerprint[d, 1] = fp_lo
