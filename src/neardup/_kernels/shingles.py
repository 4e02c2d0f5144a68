"""Numba kernels from UTF-8 text bytes to shingle fingerprints and MinHash-family signatures.

A batch is one flat ``uint8`` buffer of normalised UTF-8 text plus ``int64`` offsets: document
``d`` is ``buf[offsets[d]:offsets[d + 1]]``. Every kernel here works on that shape, in parallel
over documents; it calls ``mix.fmix64``, the Rabin steps of ``rabin`` and ``utf8`` decoding
from other files (safe with the cache: its directory is named for a hash of every kernel's
source, see :mod:`neardup._kernels`).

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

Every kernel takes ``rabin``, a ``uint64[9, 256]`` table set from :mod:`neardup.hashing.rabin`
selecting the Rabin scheme (``"rabin-v1"``: tokens and shingles are Rabin fingerprints, see
:func:`_tokens` and :func:`_shingles`), or None for ``nd64``: numba compiles each kernel once
per scheme, and the ``rabin is not None`` branches are decided at compile time.

Code-point classes (an ``uint8`` table over all of Unicode, built in ``neardup.text``):
``WORD`` joins a word, ``SPACE`` separates, ``PUNCT`` separates only when punctuation is
stripped, ``ALONE`` (scripts written without spaces) is a word by itself.
"""

from __future__ import annotations

import numpy as np
from numba import njit, prange, uint64

from neardup._kernels.groups import insertion_sort
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
EMPTY = uint64(0xFFFFFFFFFFFFFFFF)


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
def _tokens(buf, start, end, classes, byte_words, strip_punct, fold_ascii, is_char, rabin, out):  # type: ignore[no-untyped-def]
    """Write the token hashes of ``buf[start:end]`` into ``out``; return how many.

    ASCII letters are lower-cased here when ``fold_ascii`` (the normalisation left ASCII-only
    texts untouched, see ``neardup.text.normalize_batch``). Words are maximal runs of WORD code
    points (and PUNCT ones unless ``strip_punct``); each ALONE code point is a word of its own.
    In character mode every code point is a token, with each run of separators collapsed to one
    space and leading and trailing ones dropped. A token's hash is FNV-1a + fmix64 of its UTF-8
    bytes, or with ``rabin`` tables its Rabin fingerprint (a code point's in character mode too).
    ``byte_words`` resolves each byte in one lookup: the byte an ASCII word byte hashes as
    (folded), :data:`SEPARATOR_BYTE`, or :data:`MULTI_BYTE` (see ``neardup.text.KernelText``).
    Cost: O(bytes).
    """
    if is_char:
        return _char_tokens(buf, start, end, classes, strip_punct, fold_ascii, rabin, out)
    n = 0
    i = start
    while i < end:
        t = byte_words[buf[i]]
        if t == SEPARATOR_BYTE:
            i += 1
            continue
        if t == MULTI_BYTE:
            cp, size = decode_code_point(buf, i)
            cls = token_class(classes, cp, strip_punct)
            if cls == SPACE:
                i += size
                continue
            if cls == ALONE:
                h = _token_start(rabin)
                for j in range(i, i + size):
                    h = _token_byte(h, buf[j], rabin)
                out[n] = _token_end(h, rabin)
                n += 1
                i += size
                continue
        h = _token_start(rabin)  # a word starts at buf[i]: hash it to its end
        while i < end:
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
        out[n] = _token_end(h, rabin)
        n += 1
    return n


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
def _char_tokens(buf, start, end, classes, strip_punct, fold_ascii, rabin, out):  # type: ignore[no-untyped-def]
    """:func:`_tokens` in character mode: every code point a token, separators one space."""
    n = 0
    i = start
    pending_space = False
    use_rabin = rabin is not None
    while i < end:
        cp, size = read_char(buf, i, fold_ascii)
        if token_class(classes, cp, strip_punct) == SPACE:
            pending_space = n > 0
        else:
            if pending_space:
                out[n] = uint64(32) if use_rabin else fmix64(uint64(32) + CHAR_SALT)
                n += 1
                pending_space = False
            if not use_rabin:
                out[n] = fmix64(uint64(cp) + CHAR_SALT)
            elif size == 1:
                out[n] = uint64(cp)
            else:
                h = uint64(0)
                for j in range(i, i + size):
                    h = _token_byte(h, buf[j], rabin)
                out[n] = h
            n += 1
        i += size
    return n


@njit(cache=True, nogil=True)
def _shingles(tokens, num_tokens, k, rabin, out):  # type: ignore[no-untyped-def]
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
def _stop_word_shingles(tokens, shingles, num, stop_keys):  # type: ignore[no-untyped-def]
    """Keep the shingles ``shingles[i]`` whose first token ``tokens[i]`` is in ``stop_keys``.

    MMDS §3.8.6: a stop-word shingle is a stop word and the words after it. ``stop_keys`` is
    sorted; the kept shingles move to the front, in order. Returns how many. Cost: O(num *
    log |stop_keys|).
    """
    last = stop_keys.shape[0]
    kept = 0
    for i in range(num):
        at = np.searchsorted(stop_keys, tokens[i])
        if at < last and stop_keys[at] == tokens[i]:
            shingles[kept] = shingles[i]
            kept += 1
    return kept


@njit(cache=True, nogil=True)
def _doc_shingles_into(  # type: ignore[no-untyped-def]
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
    num = _shingles(tokens, num_tokens, k, rabin, out)
    if stop_keys.shape[0]:
        num = _stop_word_shingles(tokens, out, num, stop_keys)
    fp_hi, fp_lo = _fingerprint(tokens, num_tokens)
    return num, fp_hi, fp_lo


@njit(cache=True, nogil=True)
def _doc_shingles(  # type: ignore[no-untyped-def]
    buf, start, end, classes, byte_words, strip_punct, fold_ascii, is_char, rabin, stop_keys, k
):
    """Tokenise one document; return (shingle fingerprints, count, fingerprint halves)."""
    tokens = np.empty(end - start + 1, dtype=np.uint64)
    shingles = np.empty(end - start + 1, dtype=np.uint64)
    num, fp_hi, fp_lo = _doc_shingles_into(
        buf, start, end, classes, byte_words, strip_punct, fold_ascii, is_char, rabin, stop_keys, k,
        tokens, shingles,
    )  # fmt: skip
    return shingles, num, fp_hi, fp_lo


@njit(cache=True, nogil=True)
def _block_size(num_docs):  # type: ignore[no-untyped-def]
    """Documents per parallel task: up to 256, at least 64 tasks when there are enough."""
    return max(1, min(256, num_docs // 64))


@njit(cache=True, nogil=True)
def _longest(offsets, lo, hi):  # type: ignore[no-untyped-def]
    longest = 0
    for d in range(lo, hi):
        longest = max(longest, offsets[d + 1] - offsets[d])
    return longest


@njit(cache=True, nogil=True, parallel=True)
def minhash_signatures(  # type: ignore[no-untyped-def]
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
    perm_a,
    perm_b,
    sig,
    num_shingles,
    fingerprint,
):
    """Classic MinHash: ``sig[d, i] = min over shingles x of (a_i * x + b_i) mod 2^64``.

    ``perm_a`` (odd) and ``perm_b`` define ``num_perm`` linear permutations of the 64-bit
    shingle fingerprints (MMDS §3.3.5; seed 000 "discharging the supposition"). Also writes each
    document's shingle count and its 128-bit exact fingerprint. A document without a shingle
    keeps the EMPTY sentinel in every slot. Cost: O(shingles * num_perm) per document.
    """
    num_perm = perm_a.shape[0]
    for d in prange(offsets.shape[0] - 1):
        shingles, num, fp_hi, fp_lo = _doc_shingles(
            buf,
            offsets[d],
            offsets[d + 1],
            classes,
            byte_words,
            strip_punct,
            fold_ascii,
            is_char,
            rabin,
            stop_keys,
            k,
        )
        row = sig[d]
        for i in range(num_perm):
            row[i] = EMPTY
        for s in range(num):
            x = shingles[s]
            for i in range(num_perm):
                v = perm_a[i] * x + perm_b[i]
                row[i] = min(row[i], v)
        num_shingles[d] = num
        fingerprint[d, 0] = fp_hi
        fingerprint[d, 1] = fp_lo


@njit(cache=True, nogil=True, inline="always")
def _bin_of(h, num_bins):  # type: ignore[no-untyped-def]
    """The bin of a 64-bit hash: its top 32 bits scaled to [0, num_bins)."""
    return np.int64(((h >> uint64(32)) * uint64(num_bins)) >> uint64(32))


@njit(cache=True, nogil=True)
def _probe(densify_key, i, attempt, num_bins):  # type: ignore[no-untyped-def]
    """Bin ``i``'s ``attempt``-th probe in optimal densification."""
    return _bin_of(fmix64(densify_key + (uint64(i) << uint64(32)) + uint64(attempt)), num_bins)


UNRANKED = 255
"""The rank of a bin not among another bin's first 255 densification probes."""


@njit(cache=True, nogil=True)
def oph_rank_table(densify_key, num_bins, index_bits, out):  # type: ignore[no-untyped-def]
    """``out[b, i] = (rank << index_bits) | b``: how early bin ``b`` comes in bin ``i``'s probes.

    ``rank`` is the first attempt (below 255) whose probe is ``b``, or :data:`UNRANKED`. The
    first filled bin of ``i``'s probe sequence is then the one of least ``out[b, i]`` among
    the filled ``b``: an elementwise minimum over the filled bins' rows, with no branch per
    probe (:func:`_densify`). The table is the same for every document.
    """
    rank = np.empty(num_bins, dtype=np.int64)
    for i in range(num_bins):
        rank[:] = UNRANKED
        for attempt in range(UNRANKED):
            j = _probe(densify_key, i, attempt, num_bins)
            if rank[j] == UNRANKED:
                rank[j] = attempt
        for b in range(num_bins):
            out[b, i] = (rank[b] << index_bits) | b


@njit(cache=True, nogil=True)
def _densify(row, ranks, index_bits, densify_key, best, filled, is_filled):  # type: ignore[no-untyped-def]
    """Optimal densification of ``row`` in place (it holds at least one filled bin).

    Through the rank table when there is one; without (``ranks`` empty: too many bins for a
    table) by following each empty bin's probes. ``best``, ``filled`` and ``is_filled`` are
    scratch of one entry per bin.
    """
    num_bins = row.shape[0]
    m = 0
    for b in range(num_bins):
        full = row[b] != EMPTY
        is_filled[b] = full
        filled[m] = b
        m += full
    if ranks.shape[0] == 0:
        for i in range(num_bins):
            if not is_filled[i]:
                attempt = np.int64(0)
                j = _probe(densify_key, i, attempt, num_bins)
                while not is_filled[j]:
                    attempt += 1
                    j = _probe(densify_key, i, attempt, num_bins)
                row[i] = row[j]
        return
    first = ranks[filled[0]]
    for i in range(num_bins):  # a loop: a slice copy compiles seconds longer
        best[i] = first[i]
    for t in range(1, m):
        candidate = ranks[filled[t]]
        for i in range(num_bins):
            best[i] = min(best[i], candidate[i])
    mask = (1 << index_bits) - 1
    unresolved = 0
    for i in range(num_bins):
        empty = not is_filled[i]
        ranked = (best[i] >> index_bits) != UNRANKED
        source = (best[i] & mask) if empty and ranked else i
        unresolved += empty and not ranked
        row[i] = row[source]  # a source is a filled bin: never written here
    if unresolved:  # no filled bin among the first 255 probes: keep probing
        for i in range(num_bins):
            if is_filled[i] or (best[i] >> index_bits) != UNRANKED:
                continue
            attempt = np.int64(UNRANKED)
            j = _probe(densify_key, i, attempt, num_bins)
            while not is_filled[j]:
                attempt += 1
                j = _probe(densify_key, i, attempt, num_bins)
            row[i] = row[j]


@njit(cache=True, nogil=True)
def _oph_row(hashes, start, stop, key, densify_key, ranks, index_bits, row, scratch):  # type: ignore[no-untyped-def]
    """The OPH signature of the shingle fingerprints ``hashes[start:stop]`` into ``row``.

    See :func:`oph_signatures`; ``scratch`` is :func:`_densify`'s ``(best, filled,
    is_filled)``.
    """
    num_bins = row.shape[0]
    for i in range(num_bins):
        row[i] = EMPTY
    for s in range(start, stop):
        h = fmix64((hashes[s] ^ key[0]) * key[1])
        j = _bin_of(h, num_bins)
        row[j] = min(row[j], h)
    if stop > start:
        best, filled, is_filled = scratch
        _densify(row, ranks, index_bits, densify_key, best, filled, is_filled)


@njit(cache=True, nogil=True)
def _densify_scratch(ranks, num_bins):  # type: ignore[no-untyped-def]
    best = np.empty(num_bins, dtype=ranks.dtype)
    return best, np.empty(num_bins, dtype=np.int64), np.empty(num_bins, dtype=np.bool_)


@njit(cache=True, nogil=True, parallel=True)
def oph_agreement_of_sets(  # type: ignore[no-untyped-def]
    hashes, offsets, first, second, key, densify_key, ranks, index_bits, num_bins, out
):
    """``out[p]``: the equal slots of the OPH rows of sets ``first[p]`` and ``second[p]``.

    Set ``d`` is ``hashes[offsets[d]:offsets[d + 1]]``; its row equals :func:`oph_signatures`
    of the text it comes from (a bin keeps a minimum, which repeated shingles do not change).
    Rows are made pair by pair and never kept: no row matrix of the documents (a kilobyte
    each at 128 bins) competes with the texts for verification's memory.
    """
    num_pairs = first.shape[0]
    block = _block_size(num_pairs)
    for b in prange((num_pairs + block - 1) // block):
        scratch = _densify_scratch(ranks, num_bins)
        row_a = np.empty(num_bins, dtype=np.uint64)
        row_b = np.empty(num_bins, dtype=np.uint64)
        for p in range(b * block, min(num_pairs, (b + 1) * block)):
            x, y = first[p], second[p]
            _oph_row(
                hashes, offsets[x], offsets[x + 1], key, densify_key, ranks, index_bits, row_a,
                scratch,
            )  # fmt: skip
            _oph_row(
                hashes, offsets[y], offsets[y + 1], key, densify_key, ranks, index_bits, row_b,
                scratch,
            )  # fmt: skip
            count = 0
            for i in range(num_bins):
                count += row_a[i] == row_b[i]
            out[p] = count


@njit(cache=True, nogil=True, parallel=True)
def oph_signatures(  # type: ignore[no-untyped-def]
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
    key,
    densify_key,
    ranks,
    index_bits,
    sig,
    num_shingles,
    fingerprint,
):
    """One-permutation hashing with optimal densification.

    Each shingle fingerprint ``x`` is hashed once, ``h = fmix64((x ^ key[0]) * key[1])``; its
    top bits choose one of ``num_bins`` bins and the bin keeps its smallest ``h`` (Li, Owen and
    Zhang 2012; seed 000, "Ping Li's fast uniform sampling"). An empty bin ``i`` then copies
    the first non-empty bin of the probe sequence ``bin_of(fmix64(densify_key + i * 2^32 +
    attempt))``, attempt = 0, 1, ... (Shrivastava 2017, optimal densification), found through
    ``ranks`` (:func:`oph_rank_table`). The sequence is the same for every document, so
    ``P[sig1[i] == sig2[i]]`` equals the Jaccard similarity. Cost: O(shingles + filled bins *
    num_bins) per document, the second term vectorised.
    """
    num_docs = offsets.shape[0] - 1
    block = _block_size(num_docs)
    for b in prange((num_docs + block - 1) // block):
        lo = b * block
        hi = min(num_docs, lo + block)
        room = _longest(offsets, lo, hi) + 1
        tokens = np.empty(room, dtype=np.uint64)
        shingles = np.empty(room, dtype=np.uint64)
        scratch = _densify_scratch(ranks, sig.shape[1])
        for d in range(lo, hi):
            num, fp_hi, fp_lo = _doc_shingles_into(
                buf, offsets[d], offsets[d + 1], classes, byte_words, strip_punct, fold_ascii,
                is_char, rabin, stop_keys, k, tokens, shingles,
            )  # fmt: skip
            _oph_row(
                shingles, np.int64(0), num, key, densify_key, ranks, index_bits, sig[d], scratch
            )
            num_shingles[d] = num
            fingerprint[d, 0] = fp_hi
            fingerprint[d, 1] = fp_lo


@njit(cache=True, nogil=True, parallel=True)
def count_tokens(  # type: ignore[no-untyped-def]
    buf, offsets, classes, byte_words, strip_punct, fold_ascii, is_char, rabin, stop_keys, out
):
    """Write each document's token count to ``out``. Cost: O(bytes)."""
    for d in prange(offsets.shape[0] - 1):
        start, end = offsets[d], offsets[d + 1]
        scratch = np.empty(end - start + 1, dtype=np.uint64)
        out[d] = _tokens(
            buf, start, end, classes, byte_words, strip_punct, fold_ascii, is_char, rabin, scratch
        )


@njit(cache=True, nogil=True, parallel=True)
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
):
    """Each document's token count, and its first token's hash (0 when it has none).

    How a word list (one word a document) is hashed exactly as the shingling kernels hash
    tokens: the stop-word keys of stop-word shingles. Cost: O(bytes).
    """
    for d in prange(offsets.shape[0] - 1):
        start, end = offsets[d], offsets[d + 1]
        scratch = np.empty(end - start + 1, dtype=np.uint64)
        counts[d] = _tokens(
            buf, start, end, classes, byte_words, strip_punct, fold_ascii, is_char, rabin, scratch
        )
        firsts[d] = scratch[0] if counts[d] > 0 else uint64(0)


@njit(cache=True, nogil=True)
def _sort_hashes(values, n, scratch, counts):  # type: ignore[no-untyped-def]
    """Sort ``values[:n]`` (uniform 64-bit hashes) in place.

    A radix pass on the top bits, then insertion sort of each small bucket. ``scratch`` holds
    ``n`` values, ``counts`` 4,097 entries. Cost: O(n) expected.
    """
    if n <= 64:
        insertion_sort(values, np.int64(0), n)
        return
    bits = 4
    while bits < 12 and (n >> (bits + 3)) > 0:
        bits += 1
    shift = uint64(64 - bits)
    num_buckets = 1 << bits
    counts[: num_buckets + 1] = 0
    for i in range(n):
        counts[np.int64(values[i] >> shift) + 1] += 1
    for b in range(num_buckets):
        counts[b + 1] += counts[b]
    for i in range(n):
        bucket = np.int64(values[i] >> shift)
        scratch[counts[bucket]] = values[i]
        counts[bucket] += 1
    start = 0
    for b in range(num_buckets):  # counts[b] is now the end of bucket b
        insertion_sort(scratch, start, counts[b])
        start = counts[b]
    values[:n] = scratch[:n]


@njit(cache=True, nogil=True, parallel=True)
def shingle_sets(  # type: ignore[no-untyped-def]
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
    out_offsets,
    out,
    out_counts,
    out_sizes,
):
    """Write each document's sorted, distinct shingle fingerprints to ``out``, with counts.

    Document ``d`` owns ``out[out_offsets[d]:out_offsets[d + 1]]`` (room for every shingle)
    and fills its first ``out_sizes[d]`` entries; ``out_counts`` (unless empty: counts not
    wanted) holds how many times each occurs in the document. Cost: O(s log s) for s
    shingles.
    """
    counting = out_counts.shape[0] > 0
    num_docs = offsets.shape[0] - 1
    block = _block_size(num_docs)
    for b in prange((num_docs + block - 1) // block):
        lo = b * block
        hi = min(num_docs, lo + block)
        room = _longest(offsets, lo, hi) + 1
        tokens = np.empty(room, dtype=np.uint64)
        shingles = np.empty(room, dtype=np.uint64)
        counts = np.empty(4097, dtype=np.int64)
        for d in range(lo, hi):
            num, _, _ = _doc_shingles_into(
                buf, offsets[d], offsets[d + 1], classes, byte_words, strip_punct, fold_ascii,
                is_char, rabin, stop_keys, k, tokens, shingles,
            )  # fmt: skip
            size = 0
            if num > 0:
                _sort_hashes(shingles, num, tokens, counts)
                ordered = shingles
                base = out_offsets[d]
                out[base] = ordered[0]
                if counting:
                    out_counts[base] = 1
                size = 1
                for s in range(1, num):
                    if ordered[s] != ordered[s - 1]:
                        out[base + size] = ordered[s]
                        if counting:
                            out_counts[base + size] = 1
                        size += 1
                    elif counting:
                        out_counts[base + size - 1] += 1
            out_sizes[d] = size


@njit(cache=True, nogil=True)
def compact_sets(scratch, scratch_counts, room_offsets, offsets, out, out_counts):  # type: ignore[no-untyped-def]
    """Pack each document's shingles (and counts, unless empty) from its room to ``offsets``."""
    counting = out_counts.shape[0] > 0
    for d in range(offsets.shape[0] - 1):
        src = room_offsets[d]
        dst = offsets[d]
        n = offsets[d + 1] - dst
        out[dst : dst + n] = scratch[src : src + n]
        if counting:
            out_counts[dst : dst + n] = scratch_counts[src : src + n]


@njit(cache=True, nogil=True, parallel=True)
def minhash_of_sets(hashes, offsets, perm_a, perm_b, modulus, sig):  # type: ignore[no-untyped-def]
    """MinHash of integer sets: ``sig[d, i] = min over x in set d of (a_i * x + b_i) mod m``.

    Set ``d`` is ``hashes[offsets[d]:offsets[d + 1]]``; ``modulus`` 0 means 2^64 (wrap-around),
    otherwise ``m = modulus`` with every value below 2^32. This is MMDS §3.3.5 (Example 3.8).
    An empty set keeps EMPTY. Cost: O(|set| * num_perm).
    """
    num_perm = perm_a.shape[0]
    m = uint64(modulus)
    for d in prange(offsets.shape[0] - 1):
        row = sig[d]
        for i in range(num_perm):
            row[i] = EMPTY
        for s in range(offsets[d], offsets[d + 1]):
            x = hashes[s]
            for i in range(num_perm):
                v = perm_a[i] * x + perm_b[i]
                if m != 0:
                    v = v % m
                row[i] = min(row[i], v)


@njit(cache=True, nogil=True, parallel=True)
def bottom_k_sketches(  # type: ignore[no-untyped-def]
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
    key,
    sketch,
    num_shingles,
    fingerprint,
):
    """Bottom-k sketches: the smallest distinct ``h(x) = fmix64((x ^ key[0]) * key[1])``.

    Row ``d`` of ``sketch`` holds its ``sketch.shape[1]`` smallest ascending, padded with
    EMPTY. Broder 2000 §4 (seed 003). Also writes shingle counts and exact fingerprints.
    Cost: O(s log s) for s shingles.
    """
    width = sketch.shape[1]
    for d in prange(offsets.shape[0] - 1):
        shingles, num, fp_hi, fp_lo = _doc_shingles(
            buf,
            offsets[d],
            offsets[d + 1],
            classes,
            byte_words,
            strip_punct,
            fold_ascii,
            is_char,
            rabin,
            stop_keys,
            k,
        )
        hashed = np.empty(num, dtype=np.uint64)
        for s in range(num):
            hashed[s] = fmix64((shingles[s] ^ key[0]) * key[1])
        ordered = np.sort(hashed)
        row = sketch[d]
        for i in range(width):
            row[i] = EMPTY
        count = 0
        for s in range(num):
            if count == width:
                break
            if s > 0 and ordered[s] == ordered[s - 1]:
                continue
            row[count] = ordered[s]
            count += 1
        num_shingles[d] = num
        fingerprint[d, 0] = fp_hi
        fingerprint[d, 1] = fp_lo


@njit(cache=True, nogil=True, parallel=True)
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
):
    """Each document's shingle count and 128-bit exact fingerprint.

    For sketchers that draw their samples from shingle sets rather than the text. Cost: O(bytes).
    """
    for d in prange(offsets.shape[0] - 1):
        _, num, fp_hi, fp_lo = _doc_shingles(
            buf,
            offsets[d],
            offsets[d + 1],
            classes,
            byte_words,
            strip_punct,
            fold_ascii,
            is_char,
            rabin,
            stop_keys,
            k,
        )
        num_shingles[d] = num
        fingerprint[d, 0] = fp_hi
        fingerprint[d, 1] = fp_lo


@njit(cache=True, nogil=True, parallel=True)
def minhash_lead_byte_signatures(  # type: ignore[no-untyped-def]
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
    lead_tables,
    perm_a,
    perm_b,
    sig,
    num_shingles,
    fingerprint,
):
    """MinHash by left-to-right minima: a lead byte per permutation first, the full value if needed.

    Slot ``i`` ranks shingles by the injection ``(lead_i(x), a_i * x + b_i)``: the lead bytes of
    eight permutations come at once from a random GF(2)-linear map of ``x`` (``lead_tables[g]``:
    eight byte-indexed tables per group of eight slots), and the 64-bit value is computed only
    for a shingle whose lead byte ties or beats the slot's current one (seed 003, "one trick
    based on left-to-right minima"; seed 000, "improving sampling"). Slot values are the full
    values of the winners, so two documents agree in a slot exactly when their winners agree.
    Cost: O(shingles * num_perm) compares, O(shingles * (num_perm / 8) * 8) lookups, and about
    ``H_256 + shingles / 256`` full values per slot.
    """
    num_perm = perm_a.shape[0]
    num_groups = lead_tables.shape[0]
    for d in prange(offsets.shape[0] - 1):
        shingles, num, fp_hi, fp_lo = _doc_shingles(
            buf,
            offsets[d],
            offsets[d + 1],
            classes,
            byte_words,
            strip_punct,
            fold_ascii,
            is_char,
            rabin,
            stop_keys,
            k,
        )
        row = sig[d]
        lead = np.full(num_perm, 256, dtype=np.int64)
        words = np.empty(num_groups, dtype=np.uint64)
        lead_bytes = words.view(np.uint8)  # little-endian: byte 8g + b is slot 8g + b's lead
        for i in range(num_perm):
            row[i] = EMPTY
        for s in range(num):
            x = shingles[s]
            for g in range(num_groups):
                leads = uint64(0)
                for j in range(8):
                    leads ^= lead_tables[g, j, (x >> uint64(8 * j)) & uint64(0xFF)]
                words[g] = leads
            for i in range(num_perm):
                byte = np.int64(lead_bytes[i])
                if byte < lead[i]:
                    lead[i] = byte
                    row[i] = perm_a[i] * x + perm_b[i]
                elif byte == lead[i]:
                    row[i] = min(row[i], perm_a[i] * x + perm_b[i])
        num_shingles[d] = num
        fingerprint[d, 0] = fp_hi
        fingerprint[d, 1] = fp_lo


_GOLDEN = uint64(0x9E3779B97F4A7C15)


@njit(cache=True, nogil=True, parallel=True)
def simhash_signatures(  # type: ignore[no-untyped-def]
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
    keys,
    gaussians,
    idf_keys,
    idf_values,
    missing_idf,
    fingerprint_out,
    bit_weights,
    num_shingles,
    fingerprint,
):
    """Weighted SimHash (Charikar 2002): 64-bit words of fingerprints that preserve cosine.

    ``fingerprint_out`` has one column per 64 bits. Each shingle occurrence has a weight (1,
    times its IDF when ``idf_keys`` is not empty: sorted shingle fingerprints with
    ``idf_values``; ``missing_idf`` for others). For word ``w`` let
    ``h = fmix64((x ^ keys[2w]) * keys[2w + 1])``. Sign projection (``gaussians`` empty): the
    weight is added to ``W_j`` where bit ``j`` of ``h`` is set and subtracted where it is
    clear. Gaussian projection: ``gaussians`` holds the 65,536 quantiles of the standard
    normal; bit ``j = 4m + t`` adds the weight times ``gaussians[16 bits t of
    fmix64(h ^ (m + 1) * golden)]``. Bit ``j`` is ``W_j >= 0`` (seed 004, Algorithm 1: "bits of
    simhash with non-negative W_j are set to 1"), so a document without a shingle is all ones;
    ``bit_weights[d]`` keeps the ``W_j`` (seed 004: they predict which bits flip) when it has a
    column per bit.
    Cost: O(bits) per shingle occurrence (16 more hashes per 64 bits when Gaussian).
    """
    words = fingerprint_out.shape[1]
    bits = 64 * words
    keep_weights = bit_weights.shape[1] == bits
    for d in prange(offsets.shape[0] - 1):
        shingles, num, fp_hi, fp_lo = _doc_shingles(
            buf,
            offsets[d],
            offsets[d + 1],
            classes,
            byte_words,
            strip_punct,
            fold_ascii,
            is_char,
            rabin,
            stop_keys,
            k,
        )
        weights = np.zeros(bits, dtype=np.float64)
        for s in range(num):
            x = shingles[s]
            w = 1.0
            if idf_keys.shape[0]:
                at = np.searchsorted(idf_keys, x)
                seen = at < idf_keys.shape[0] and idf_keys[at] == x
                w = idf_values[at] if seen else missing_idf
            for word in range(words):
                h = fmix64((x ^ keys[2 * word]) * keys[2 * word + 1])
                base = 64 * word
                if gaussians.shape[0]:
                    for m in range(16):
                        r = fmix64(h ^ (uint64(m + 1) * _GOLDEN))
                        for t in range(4):
                            quantile = gaussians[(r >> uint64(16 * t)) & uint64(0xFFFF)]
                            weights[base + 4 * m + t] += w * quantile
                else:
                    for j in range(64):
                        if (h >> uint64(j)) & uint64(1):
                            weights[base + j] += w
                        else:
                            weights[base + j] -= w
        for word in range(words):
            out = uint64(0)
            for j in range(64):
                if weights[64 * word + j] >= 0:
                    out |= uint64(1) << uint64(j)
            fingerprint_out[d, word] = out
        if keep_weights:
            bit_weights[d, :] = weights
        num_shingles[d] = num
        fingerprint[d, 0] = fp_hi
        fingerprint[d, 1] = fp_lo
