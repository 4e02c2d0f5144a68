"""Click options shared by several commands, and how their values become specs."""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any, TypeVar, get_args

import click
from click.core import ParameterSource

from neardup.errors import ParameterError
from neardup.kinds import FAMILIES, SKETCH_KINDS
from neardup.params import (
    COSINE_THRESHOLD,
    FEATURE_PRESETS,
    STEM_LANGUAGES,
    STOPWORD_LANGUAGES,
    STOPWORD_LIST_PREFIX,
    DedupConfig,
    HtmlExtract,
    OutputSpec,
    ReadSpec,
    ShingleSpec,
)
from neardup.params.rules import Spec

__all__ = [
    "PROFILES",
    "READ_OPTIONS",
    "SKETCH_OPTIONS",
    "apply_file_flags",
    "apply_flags",
    "embedding_options",
    "given_options",
    "html_extract_option",
    "input_kinds",
    "input_options",
    "option_name",
    "output_directory_options",
    "profile_option",
    "quiet_option",
    "record_options",
    "refuse_inapplicable",
    "sketch_options",
    "with_profile",
    "without_embedding",
]

F = TypeVar("F", bound=Callable[..., Any])


def _stack(*decorators: Callable[[F], F]) -> Callable[[F], F]:
    def apply(f: F) -> F:
        for decorator in reversed(decorators):
            f = decorator(f)
        return f

    return apply


def html_extract_option(help_text: str, *, default: str | None = "text") -> Callable[[F], F]:
    """The ``--html-extract`` option (its choices from :data:`~neardup.params.HtmlExtract`)."""
    return click.option(
        "--html-extract",
        type=click.Choice(get_args(HtmlExtract)),
        default=default,
        show_default=default is not None,
        help=help_text,
    )


quiet_option = click.option(
    "-q",
    "--quiet",
    is_flag=True,
    help="Print nothing on success: no progress, no summary (errors and warnings still).",
)
"""``-q/--quiet``, the same on every command that prints progress or a summary."""


def output_directory_options(files: str) -> Callable[[F], F]:
    """``-o/--output`` and ``--overwrite`` of a command that writes an output directory.

    ``files``: what the directory holds, for the help.
    """
    return _stack(
        click.option(
            "-o",
            "--output",
            required=True,
            type=click.Path(path_type=Path),
            help=f"Output directory: {files} (must not exist; written atomically).",
        ),
        click.option(
            "--overwrite", is_flag=True, help="Replace the output directory if it exists."
        ),
    )


record_options = _stack(
    click.option("--text-field", default="text", show_default=True, help="Field holding the text."),
    click.option(
        "--id-field",
        help="Field holding the id [default: the id field where a record has one, else FILE:LINE].",
    ),
    click.option(
        "--skip-bad-records",
        is_flag=True,
        help="Skip malformed records (counted) instead of stopping.",
    ),
)
"""``--text-field``, ``--id-field``, ``--skip-bad-records``: how the commands that read plain
records (no HTML, one format per file) read them."""


input_options = _stack(
    click.option(
        "--format",
        "input_format",
        type=click.Choice(["auto", "jsonl", "parquet", "arrow", "csv", "txt", "warc"]),
        help="Input format [default: from the extension; .warc/.arc (.gz) are web archives].",
    ),
    click.option("--text-field", help="Field or column holding the text [default: text]."),
    click.option(
        "--html-field",
        help="Field or column holding HTML, turned into text (instead of --text-field).",
    ),
    html_extract_option(
        "What is taken of HTML pages: text (all visible text), main (the main content, "
        "boilerplate removed) or altavista (seed 000's features: words plus HREF and IMG "
        "URLs) [default: text].",
        default=None,
    ),
    click.option(
        "--id-field",
        help="Field or column holding the id; every record must have it [default: the id "
        "field where a record has one, else FILE:LINE]. Pass '' to always use FILE:LINE.",
    ),
    click.option(
        "--encoding",
        help="Text encoding of CSV and .txt inputs, e.g. cp1252 [default: utf-8].",
    ),
    click.option(
        "--skip-bad-records",
        is_flag=True,
        default=None,
        help="Skip malformed records (counted) instead of stopping.",
    ),
)


embedding_options = _stack(
    click.option(
        "--model",
        type=click.Path(path_type=Path),
        help="--method embedding: the directory of a model saved on disk (a sentence-"
        "transformers BERT model such as all-MiniLM-L6-v2, or a model2vec static model); no "
        "network is used.",
    ),
    click.option(
        "--embeddings",
        "embeddings_file",
        type=click.Path(path_type=Path),
        help="--method embedding: the embeddings.npy an earlier run of the same inputs saved "
        "(--save-embeddings), or a .parquet table of vectors made elsewhere (columns id and "
        "embedding, a row per document), used instead of encoding.",
    ),
    click.option(
        "--device",
        type=click.Choice(["cpu", "cuda"]),
        help="--method embedding: cpu, neardup's own forward pass on every core (the same "
        "vectors at every run); cuda, the model run by sentence-transformers on the GPU "
        "(pip install sentence-transformers, with torch for it) [default: cpu].",
    ),
    click.option(
        "--save-embeddings",
        is_flag=True,
        default=None,
        help="--method embedding: write the documents' vectors to the output (embeddings.npy, "
        "with embeddings.json saying how they were made).",
    ),
    click.option(
        "--cosine-threshold",
        type=float,
        help="--method minhash+embedding: the cosine that makes a pair a near duplicate, "
        "beside --threshold's Jaccard [default: 0.9].",
    ),
)
"""The embedding method's options (``dedup``)."""


def _sketch_help(kinds: Iterable[str]) -> str:
    return (
        "; ".join(f"{kind}: {SKETCH_KINDS[kind].summary}" for kind in kinds)
        + " [default: oph]. See docs/sketches.md."
    )


_EMBEDDING_METHOD_HELP = (
    "; embedding: the cosine of the texts' embeddings by a model (--model), for "
    "paraphrases; minhash+embedding: a pair found by either, pairs.jsonl saying which "
    "(docs/semantic.md)"
)

EMBEDDING_METHODS = ("embedding", "minhash+embedding")
"""``--method`` values that embed the texts (``dedup`` only)."""

sketch_options = _stack(
    click.option(
        "--method",
        type=click.Choice(["minhash", "simhash", *EMBEDDING_METHODS]),
        help="minhash: a MinHash-family sketch (--sketch) with LSH; simhash: SimHash "
        "fingerprints within --hamming bits, found by block-permuted tables (the same as "
        f"--sketch simhash){_EMBEDDING_METHOD_HELP} [default: minhash]. See docs/simhash.md.",
    ),
    click.option(
        "--shingle",
        help="Shingles as UNIT:K, e.g. word:5, char:9, or stopword:3 (MMDS 3.8.6: a stop word "
        "and the next K-1 words, for news pages whose ads differ) [default: word:5].",
    ),
    click.option(
        "--stopwords",
        metavar="LANG|@FILE",
        callback=lambda _ctx, _param, value: stopwords_option(value),
        help="Stop words of this language (Snowball lists), or the words of FILE (whitespace-"
        "separated, recorded with the signatures): dropped from the text, or with --shingle "
        "stopword:K the words stop-word shingles start at [default: none; english for "
        f"stop-word shingles]. LANG is one of: {', '.join(STOPWORD_LANGUAGES)}.",
    ),
    click.option(
        "--stem",
        type=click.Choice(list(STEM_LANGUAGES)),
        metavar="LANG",
        help="Replace each word by its Snowball stem in this language (needs PyStemmer: "
        "pip install 'neardup[web]') [default: none]. E.g. english, french, german, spanish, "
        "italian, portuguese, dutch, russian.",
    ),
    click.option(
        "--tokenizer",
        metavar="NAME",
        help="Shingle tokens instead of words, --shingle word:K then being K tokens: "
        "tiktoken:ENCODING for a model's tokens (e.g. tiktoken:cl100k_base, o200k_base: "
        "training data measured as the model reads it) or jieba for Chinese word segmentation "
        "(needs pip install 'neardup[tokens]'; offline encodings: docs/dedup.md) [default: "
        "none, the text's own words].",
    ),
    click.option(
        "--fingerprint",
        type=click.Choice(["nd64", "rabin"]),
        help="Shingle fingerprints: nd64 (FNV-1a + fmix64, fastest) or rabin (Rabin "
        "fingerprints modulo an irreducible polynomial, recorded in the output) [default: nd64].",
    ),
    click.option(
        "--strip-punctuation/--keep-punctuation",
        default=None,
        help="Treat punctuation as whitespace [default: keep].",
    ),
    click.option(
        "--sketch",
        "sketch_kind",
        type=click.Choice(list(SKETCH_KINDS)),
        help=_sketch_help(SKETCH_KINDS),
    ),
    click.option(
        "--family",
        type=click.Choice(list(FAMILIES)),
        help="How candidates are found, among those the sketch can feed: "
        + "; ".join(f"{family.name}: {family.summary}" for family in FAMILIES.values())
        + " [default: the sketch's first].",
    ),
    click.option(
        "--bbits",
        type=click.Choice(["1", "2", "4", "8"]),
        help="Bits per slot of --sketch bbit [default: 2].",
    ),
    click.option(
        "--preset",
        type=click.Choice(list(FEATURE_PRESETS)),
        help="Feature-filter parameters of --sketch supershingle [default: altavista].",
    ),
    click.option(
        "--hamming",
        type=int,
        help="SimHash: the most bits two near-duplicate fingerprints differ in [default: 7].",
    ),
    click.option(
        "--hamming-blocks",
        type=int,
        help="SimHash: blocks G of the permuted tables [default: chosen from the corpus size].",
    ),
    click.option(
        "--search",
        type=click.Choice(["tables", "psm"]),
        help="SimHash: find fingerprints within --hamming bits by block-permuted tables (exact) "
        "or by PSM (seed 004: one sorted copy, header buckets in the order of likely bit flips; "
        "a quarter of the memory) [default: tables]. See docs/simhash.md.",
    ),
    click.option(
        "--psm-budget",
        type=int,
        help="SimHash with --search psm: header buckets visited per query (and 64-bit word), "
        "its own included [default: all within --hamming bits, an exact search].",
    ),
    click.option(
        "--simhash-bits",
        type=click.Choice(["64", "128"]),
        help="SimHash fingerprint bits [default: 64].",
    ),
    click.option(
        "--weighting",
        type=click.Choice(["tf", "tfidf"]),
        help="SimHash shingle weights: term frequency, or TF-IDF with the IDF learned from the "
        "inputs in a first pass [default: tf].",
    ),
    click.option(
        "--projection",
        type=click.Choice(["sign", "gaussian"]),
        help="SimHash hyperplanes: Gaussian (Charikar; distance tracks the angle) or hash "
        "signs (Manku et al.; faster, fooled by dominant features) [default: gaussian].",
    ),
    click.option(
        "--idf-low",
        type=float,
        help="Canonical form (I-Match): terms of normalised IDF log(N/df)/log(N) below this "
        "are too common to count [default: 0.1].",
    ),
    click.option(
        "--idf-high",
        type=float,
        help="Canonical form (I-Match): terms of normalised IDF above this are too rare to "
        "count (1: those of one document) [default: 0.2].",
    ),
    click.option("--num-perm", type=int, help="Signature slots [default: 128]."),
    click.option("--seed", type=int, help="Seed of every random choice [default: 42]."),
    click.option(
        "--threshold",
        type=float,
        help="Similarity of a near duplicate: Jaccard (cosine for SimHash and --method "
        "embedding; see --cosine-threshold) [default: 0.8; 0.9 for --method embedding].",
    ),
    click.option(
        "--bands", type=int, help="LSH bands (with --rows) instead of choosing from the threshold."
    ),
    click.option("--rows", type=int, help="LSH rows per band (with --bands)."),
    click.option(
        "--max-bucket-size",
        type=int,
        help="LSH buckets larger than this are paired linearly [default: 1000].",
    ),
)

SKETCH_OPTIONS = frozenset(
    {
        "profile",
        "sketch_kind",
        "shingle",
        "stopwords",
        "stem",
        "tokenizer",
        "fingerprint",
        "strip_punctuation",
        "bbits",
        "simhash_bits",
        "num_perm",
        "seed",
        "preset",
        "weighting",
        "projection",
        "idf_low",
        "idf_high",
    }
)
"""The parameters of :data:`sketch_options` (and ``--profile``) that :func:`apply_flags` writes
into the sketch spec: how texts become signatures. ``--method`` too, where it names a sketch
(``minhash``, ``simhash``)."""

_FLAG_PLACES = [
    ("family", ("lsh", "family")),
    ("num_perm", ("sketch", "num_perm")),
    ("seed", ("sketch", "seed")),
    ("preset", ("sketch", "preset")),
    ("weighting", ("sketch", "weighting")),
    ("projection", ("sketch", "projection")),
    ("idf_low", ("sketch", "idf_low")),
    ("idf_high", ("sketch", "idf_high")),
    ("hamming", ("lsh", "hamming")),
    ("hamming_blocks", ("lsh", "hamming_blocks")),
    ("search", ("lsh", "search")),
    ("psm_budget", ("lsh", "psm_budget")),
    ("threshold", ("lsh", "threshold")),
    ("bands", ("lsh", "num_bands")),
    ("rows", ("lsh", "num_rows")),
    ("max_bucket_size", ("lsh", "max_bucket_size")),
    ("verify", ("verify",)),
    ("keep", ("keep",)),
    ("keep_by", ("keep_by",)),
    ("cluster", ("cluster",)),
    ("explain", ("explain",)),
    ("host_templates", ("host_templates",)),
    ("pairs", ("pairs",)),
    ("annotate", ("output", "annotate")),
    ("compress", ("output", "compress")),
    ("input_format", ("read", "input_format")),
    ("text_field", ("read", "text_field")),
    ("html_field", ("read", "html_field")),
    ("html_extract", ("read", "html_extract")),
    ("encoding", ("read", "encoding")),
    ("skip_bad_records", ("read", "skip_bad_records")),
    ("id_field", ("read", "id_field")),
]
"""Where each flag goes: a field of the :class:`~neardup.params.DedupConfig` (through its
nested specs), or of its ``read`` (:class:`~neardup.params.ReadSpec`) or ``output``
(:class:`~neardup.params.OutputSpec`) table, as a ``--config`` file lays them out."""

_FILE_TABLES = ("read", "output")
"""The places of :data:`_FLAG_PLACES` that are a file job's, not the algorithm's."""

READ_OPTIONS = tuple(flag for flag, place in _FLAG_PLACES if place[0] == "read")
"""The parameters of :data:`input_options`: how records are read from files."""

_SCALED_FLAGS = {
    "batch_mb": (("read", "batch_bytes"), 2**20),
    "memory_gb": (("memory_bytes",), 2**30),
}
"""The flags given in MiB or GiB, by their place (as :data:`_FLAG_PLACES`) and unit."""

_SPEC_OF_TABLE: dict[str, type[Spec]] = {"read": ReadSpec, "output": OutputSpec}
"""The spec of a place's first key, where it is not :class:`~neardup.params.DedupConfig`'s."""


PROFILES: dict[str, dict[str, Any]] = {
    # Seed 004, section 6: "removing stop-words and stemming all text", "weights t_i(u) being
    # the normalize TF-IDF score of each word", Algorithm 1 (add or subtract w_i by a hash
    # bit), 64-bit fingerprints, h = 3; a fingerprint within h bits is a match (no cosine).
    "sood-loguinov": {
        "method": "simhash",
        "shingle": "word:1",
        "stopwords": "english",
        "stem": "english",
        "weighting": "tfidf",
        "projection": "sign",
        "simhash_bits": 64,
        "hamming": 3,
        "verify": "none",
    },
    # Seed 000: AltaVista's 6-word shingles of its features (words plus HREF and IMG URLs of
    # HTML), 84 samples in 6 supershingles of 14, two shared make a candidate; verified as
    # every other run (seed 003 notes 8-word shingles: add --shingle word:8).
    "altavista": {
        "sketch_kind": "supershingle",
        "preset": "altavista",
        "num_perm": 84,
        "shingle": "word:6",
        "html_extract": "altavista",
    },
}
"""``--profile``: the settings of a system a seed describes, in one switch."""

profile_option = click.option(
    "--profile",
    type=click.Choice(list(PROFILES)),
    help="Set every option of a published system at once (options given too win): "
    "sood-loguinov (seed 004: SimHash of stemmed words without stop words, TF-IDF, "
    "Algorithm 1's signs, h = 3, no verification) or altavista (seed 000: 6-word "
    "shingles, 6 supershingles of 14, 2 shared). See docs/sketches.md.",
)
"""``--profile NAME`` (:data:`PROFILES`)."""


def with_profile(flags: dict[str, Any]) -> dict[str, Any]:
    """``flags`` with those of ``flags["profile"]`` (:data:`PROFILES`) under the ones given.

    The profile's settings also replace those of ``--config`` (and of an ``--against``
    index) that it sets. A profile chooses its sketch: ``--method`` or ``--sketch`` beside it
    is refused rather than mixed with options of another kind.

    Examples
    --------
    >>> with_profile({"profile": "sood-loguinov", "hamming": 5, "threshold": None})["hamming"]
    5
    >>> with_profile({"profile": None, "hamming": None})
    {'hamming': None}
    """
    flags = dict(flags)
    name = flags.pop("profile", None)
    if name is None:
        return flags
    chooser = next((f for f in ("method", "sketch_kind") if flags.get(f) is not None), None)
    if chooser is not None:
        option = "--method" if chooser == "method" else "--sketch"
        raise ParameterError(
            f"--profile {name} chooses the sketch itself; drop {option} or the profile."
        )
    return {**PROFILES[name], **{key: value for key, value in flags.items() if value is not None}}


def apply_flags(base: DedupConfig, flags: dict[str, Any]) -> DedupConfig:
    """``base`` with every flag that was given on the command line applied on top.

    A ``profile`` flag sets the flags of its system first (:func:`with_profile`).
    """
    flags = with_profile(flags)
    data = base.to_dict()
    _apply_embedding(data, flags)
    kind = _chosen_kind(flags.get("method"), flags.get("sketch_kind"), base.sketch.kind)
    if kind != base.sketch.kind:  # the base's kind options and family do not carry over
        owned = SKETCH_KINDS[base.sketch.kind].options
        data["sketch"] = {k: v for k, v in data["sketch"].items() if k not in owned}
        data["sketch"]["kind"] = kind
        data["lsh"]["family"] = None
    if flags.get("shingle") is not None:
        parsed = ShingleSpec.parse(flags["shingle"])
        shingle = data["sketch"]["shingle"]
        kept = shingle.get("stopwords") if parsed.unit == "stopword" else None
        shingle.update(unit=parsed.unit, k=parsed.k, stopwords=kept)
    if (
        flags.get("fingerprint") is not None
        and flags["fingerprint"] != (data["sketch"]["shingle"]["fingerprint"])
    ):
        data["sketch"]["shingle"].update(fingerprint=flags["fingerprint"], polynomial=None)
    if flags.get("strip_punctuation") is not None:
        data["sketch"]["normalize"]["strip_punctuation"] = flags["strip_punctuation"]
    _apply_word_options(data["sketch"], flags)
    _apply_places(data, flags, lambda place: place[0] not in _FILE_TABLES)
    if flags.get("bbits") is not None:
        data["sketch"]["bbits"] = int(flags["bbits"])
    if flags.get("simhash_bits") is not None:
        data["sketch"]["simhash_bits"] = int(flags["simhash_bits"])
    _apply_measure(data, flags, kind)
    _check_applies(flags, kind, data["lsh"]["family"] or SKETCH_KINDS[kind].family)
    return _with_pairs_to_explain(DedupConfig.from_dict(data), flags)


def apply_file_flags(
    read: ReadSpec, write: OutputSpec, flags: dict[str, Any]
) -> tuple[ReadSpec, OutputSpec]:
    """``read`` and ``write`` with the reading and writing flags given applied on top.

    The counterpart of :func:`apply_flags` for the places of :data:`_FLAG_PLACES` in the
    ``read`` and ``output`` tables (a ``profile``'s among them: ``altavista`` reads HTML as
    its features).
    """
    flags = with_profile(flags)
    data = {"read": read.to_dict(), "output": write.to_dict()}
    _apply_places(data, flags, lambda place: place[0] in _FILE_TABLES)
    return ReadSpec.from_dict(data["read"]), OutputSpec.from_dict(data["output"])


def _apply_places(
    data: dict[str, Any], flags: dict[str, Any], chosen: Callable[[tuple[str, ...]], bool]
) -> None:
    """Write each flag given whose place is ``chosen`` into ``data`` at that place.

    The places of :data:`_FLAG_PLACES`, then of :data:`_SCALED_FLAGS` (a count of MiB or GiB
    above 0, as bytes).
    """
    placed = [(flag, place, flags.get(flag)) for flag, place in _FLAG_PLACES]
    for flag, (place, unit) in _SCALED_FLAGS.items():
        value = flags.get(flag)
        if value is not None and chosen(place):
            option = "--" + flag.replace("_", "-")
            if not value > 0:
                raise ParameterError(f"{option} must be above 0; got {value}.")
            scaled = max(1, int(value * unit))
            bounds = _SPEC_OF_TABLE.get(place[0], DedupConfig)._RULES[place[-1]].bounds
            if bounds is not None and not bounds[0] <= scaled <= bounds[1]:
                low, high = (f"{bound / unit:,.7g}" for bound in bounds)
                raise ParameterError(f"{option} must be in [{low}, {high}]; got {value}.")
            placed.append((flag, place, scaled))
    for _, place, value in placed:
        if value is not None and chosen(place):
            section = data
            for key in place[:-1]:
                section = section[key]
            section[place[-1]] = value


def _with_pairs_to_explain(config: DedupConfig, flags: dict[str, Any]) -> DedupConfig:
    """``config``, unless ``--explain`` is given where no pairs.jsonl is written to explain."""
    if flags.get("explain") and config.pairs == "none":
        raise click.UsageError(
            "--explain gives each pair of pairs.jsonl its shared passages; with --pairs none "
            "(given, or the config's) no pairs.jsonl is written: drop one of them"
        )
    return config


_EMBEDDING_FLAGS = {
    "model": "model",
    "embeddings_file": "embeddings",
    "device": "device",
    "save_embeddings": "save",
    "cosine_threshold": "cosine_threshold",
}
"""The embedding method's flags, by their place in :class:`~neardup.params.EmbeddingSpec`."""


def _apply_embedding(data: dict[str, Any], flags: dict[str, Any]) -> None:
    """``--method embedding`` (or ``minhash+embedding``) and its options into the config.

    The embedding method alone takes its pairs from the texts' embeddings: the shingle options
    that choose candidates (``--sketch`` and the kinds' and families' own) are refused beside
    it; the embedding options are refused without an embedding method, and
    ``--cosine-threshold`` without shingles (``--threshold`` is then the cosine).
    """
    method = flags.get("method")
    if method is not None:
        _choose_embedding(data, method, threshold_given=flags.get("threshold") is not None)
    embedding = data.get("embedding")
    given = [flag for flag in _EMBEDDING_FLAGS if flags.get(flag) is not None]
    if embedding is None:
        if given:
            option = "--" + given[0].replace("_file", "").replace("_", "-")
            method = EMBEDDING_METHODS[given[0] == "cosine_threshold"]
            raise click.UsageError(
                f"{option} applies to --method {method}: add that, or drop {option}"
            )
        return
    if not embedding.get("with_shingles", False):
        _refuse_shingle_flags(flags)
    for flag in given:
        value = flags[flag]
        embedding[_EMBEDDING_FLAGS[flag]] = str(value) if isinstance(value, Path) else value
    _refuse_encoder_flags(embedding, flags)


def _refuse_encoder_flags(embedding: dict[str, Any], flags: dict[str, Any]) -> None:
    """Refuse the encoder's options where no text is encoded: the vectors are read instead.

    With ``--embeddings`` nothing is encoded, so ``--device`` does nothing; ``--model`` is
    still read beside an ``embeddings.npy`` (its digest must be the one the vectors were made
    with), but not beside a ``.parquet`` table of vectors made elsewhere, which nothing checks.
    """
    vectors = embedding.get("embeddings")
    if vectors is None:
        return
    if flags.get("device") is not None:
        raise click.UsageError(
            "--device chooses where --model encodes the texts; with --embeddings the vectors "
            "are read and nothing is encoded: drop --device"
        )
    if flags.get("model") is not None and str(vectors).endswith(".parquet"):
        raise click.UsageError(
            "--model checks that an embeddings.npy was made by that model; a .parquet table's "
            "vectors were made elsewhere and no model reads them: drop --model"
        )


def _choose_embedding(data: dict[str, Any], method: str, *, threshold_given: bool) -> None:
    """The config's ``embedding`` section as ``--method`` says, over the base config's.

    Where the threshold's measure changes (a Jaccard becomes the embedding method's cosine,
    or back) and ``--threshold`` is not given, it takes the new measure's default.
    """
    was = data.get("embedding")
    alone = method == "embedding"
    was_alone = was is not None and not was.get("with_shingles", False)
    if alone != was_alone and not threshold_given:
        data["lsh"]["threshold"] = COSINE_THRESHOLD if alone else DedupConfig().lsh.threshold
    if method not in EMBEDDING_METHODS:
        data["embedding"] = None
        return
    data["embedding"] = {**(was or {}), "with_shingles": not alone}
    if alone:
        data["embedding"].pop("cosine_threshold", None)


def _refuse_shingle_flags(flags: dict[str, Any]) -> None:
    """Refuse the options of shingle candidates beside the embedding method alone."""
    if flags.get("cosine_threshold") is not None:
        raise click.UsageError(
            "--cosine-threshold applies to --method minhash+embedding; with --method "
            "embedding the cosine is --threshold: give that instead"
        )
    owned = [_FLAG_OF_FIELD.get(name, name) for name in (*_owned(SKETCH_KINDS), *_owned(FAMILIES))]
    for flag in ("sketch_kind", "family", "num_perm", "shingle", "fingerprint", "measure", *owned):
        if flags.get(flag) is not None:
            option = "--sketch" if flag == "sketch_kind" else "--" + flag.replace("_", "-")
            raise click.UsageError(
                f"{option} chooses shingle candidates; --method embedding finds pairs by the "
                f"cosine of the texts' embeddings: drop {option}, or use --method "
                "minhash+embedding for pairs found by either"
            )


def _apply_measure(data: dict[str, Any], flags: dict[str, Any], kind: str) -> None:
    """``--measure`` (or ``--family containment``): containment is the containment family.

    ``--keep`` left out keeps the longest document of each cluster (the container), as
    containment requires; the kind's own measure leaves the config as it is.
    """
    measure = flags.get("measure")
    own = SKETCH_KINDS[kind].exact
    family = data["lsh"]["family"]
    if measure is not None and measure != "containment":
        if measure != own or family == "containment":
            raise ParameterError(
                f"--measure {measure}: --sketch {kind} measures {own}"
                + (" (or containment)" if own == "jaccard" else "")
                + (
                    "; the family is containment (--family or the config)"
                    if family == "containment"
                    else ""
                )
                + "."
            )
        return
    if measure is None and flags.get("family") != "containment":
        return
    if own != "jaccard":
        raise ParameterError(
            f"--measure containment compares shingle sets; --sketch {kind} measures {own}: "
            "choose a set sketch (--sketch oph, the default, or minhash, ...)."
        )
    if flags.get("family") not in (None, "containment"):
        raise ParameterError(
            "--measure containment finds its pairs by the exact containment join; drop "
            f"--family {flags['family']}."
        )
    data["lsh"]["family"] = "containment"
    if flags.get("keep") is None:
        data["keep"] = "longest"


def stopwords_option(value: str | None) -> str | None:
    """``--stopwords``: a language as it is, ``@FILE`` as ``"words:"`` and the file's words."""
    if value is None or value in STOPWORD_LANGUAGES:
        return value
    if not value.startswith("@"):
        raise click.BadParameter(
            f"{value!r} is neither a language with a stop-word list "
            f"({', '.join(STOPWORD_LANGUAGES)}) nor @FILE, a file of stop words",
            param_hint="--stopwords",
        )
    path = Path(value[1:])
    try:
        words = path.read_text(encoding="utf-8").split()
    except (OSError, UnicodeDecodeError) as exc:
        raise click.BadParameter(f"cannot read {path}: {exc}", param_hint="--stopwords") from exc
    if not words:
        raise click.BadParameter(f"{path} holds no words", param_hint="--stopwords")
    return STOPWORD_LIST_PREFIX + " ".join(dict.fromkeys(words))


def _apply_word_options(sketch: dict[str, Any], flags: dict[str, Any]) -> None:
    """``--stopwords``, ``--stem`` and ``--tokenizer`` into a sketch spec's dict.

    ``--stopwords`` names the stop words of ``--shingle stopword:K`` with that unit, and the
    words to drop with any other.
    """
    if flags.get("stopwords") is not None:
        if sketch["shingle"]["unit"] == "stopword":
            sketch["shingle"]["stopwords"] = flags["stopwords"]
        else:
            sketch["normalize"]["stopwords"] = flags["stopwords"]
    if flags.get("stem") is not None:
        sketch["normalize"]["stem"] = flags["stem"]
    if flags.get("tokenizer") is not None:
        sketch["normalize"]["tokenizer"] = flags["tokenizer"]


_FLAG_OF_FIELD = {"num_bands": "bands", "num_rows": "rows"}
"""Spec fields whose flag has another name."""

_OPTION_OF_PARAMETER = {**_FLAG_OF_FIELD, "kind": "sketch_kind"}
"""Parameters (of a spec or a function) whose command-line option has another Python name."""

_OPTION_OF_SPEC = {"ShingleSpec": "shingle"}
"""Specs that one option gives whole."""

_NAMED_PARAMETER = re.compile(r"\b([A-Z]\w*(?:Spec|Config)|plan|report|query)((?:\.[a-z_]\w*)*)\b")
"""A parameter as the Python API names it: ``LSHSpec.threshold``, ``DedupConfig.sketch.num_perm``,
``plan.recall``, ``query.measure`` (the spec or function, then the field or argument), or a
whole spec."""


def in_flags(message: str, command: click.Command) -> str:
    """``message`` with every parameter it names as Python does spelled as ``command``'s option.

    The specs and functions name their parameters as their callers write them
    (``LSHSpec.threshold must be ...``); on the command line the same rule reads ``--threshold
    must be ...``. A parameter the command has no option for is left as it is (it came from
    a ``--config`` file, whose sections are the specs).

    Examples
    --------
    >>> @click.command()
    ... @click.option("--threshold", type=float)
    ... @click.option("--bands", type=int)
    ... def job(threshold, bands): ...
    >>> in_flags("LSHSpec.num_bands and LSHSpec.num_rows must be given together", job)
    '--bands and LSHSpec.num_rows must be given together'
    >>> in_flags("plan.threshold must be a float in (0, 1]; got 2.0.", job)
    '--threshold must be a float in (0, 1]; got 2.0.'
    >>> in_flags("ShingleSpec.k must be an int in [1, 64]; got 0.", job)
    'ShingleSpec.k must be an int in [1, 64]; got 0.'
    >>> in_flags("the plan and the report", job)
    'the plan and the report'
    """
    options = {
        param.name: max(param.opts, key=len)
        for param in command.params
        if isinstance(param, click.Option) and param.name is not None
    }

    def spelled(named: re.Match[str]) -> str:
        owner, path = named.groups()
        whole = options.get(_OPTION_OF_SPEC.get(owner, ""))
        if not path:
            return whole or named.group(0)
        parameter = path.rsplit(".", 1)[1]
        for name in (parameter, _OPTION_OF_PARAMETER.get(parameter)):
            if name in options:
                return options[name]
        return f"{whole} {parameter}" if whole else named.group(0)

    return _NAMED_PARAMETER.sub(spelled, message)


def _check_applies(flags: dict[str, Any], kind: str, family: str) -> None:
    """Refuse an option given for a sketch kind or candidate family it does nothing for.

    The registry says which kind or family owns an option (``options`` of
    :class:`~neardup.kinds.SketchKind` and :class:`~neardup.kinds.CandidateFamily`).
    """
    tables: tuple[tuple[Mapping[str, Any], str], ...] = ((SKETCH_KINDS, kind), (FAMILIES, family))
    for owners, chosen in tables:
        for name in _owned(owners):
            flag = _FLAG_OF_FIELD.get(name, name)
            owning = [key for key, entry in owners.items() if name in entry.options]
            if flags.get(flag) is None or chosen in owning:
                continue
            option = "--" + flag.replace("_", "-")
            if owners is SKETCH_KINDS:
                raise click.UsageError(
                    f"{option} applies to --sketch {' or '.join(owning)}, not to {kind}; drop "
                    "it or choose that sketch"
                )
            feeding = [k.name for k in SKETCH_KINDS.values() if set(owning) & set(k.families)]
            raise click.UsageError(
                f"{option} applies to --family {' or '.join(owning)} (--sketch "
                f"{' or '.join(feeding)}), not to {family}; drop it or choose that family"
            )


def narrow_sketch_options(
    command: click.Command, kinds: Sequence[str], families: Sequence[str]
) -> None:
    """Leave ``command`` only the sketch options that ``kinds`` or ``families`` use.

    :data:`sketch_options` offers every kind's options; a command that can use only some kinds
    and families (an index: banded MinHash slots, SimHash fingerprints within h bits) lists only
    what it would not refuse:
    ``--sketch`` with those kinds, and the options the registry gives them
    (:class:`~neardup.kinds.SketchKind` and :class:`~neardup.kinds.CandidateFamily`).
    """
    used = {o for k in kinds for o in SKETCH_KINDS[k].options}
    used |= {o for f in families for o in FAMILIES[f].options}
    unused = {_FLAG_OF_FIELD.get(o, o) for o in {*_owned(SKETCH_KINDS), *_owned(FAMILIES)} - used}
    if "simhash" not in kinds:
        unused.add("method")
    if all(len(set(SKETCH_KINDS[k].families) & set(families)) < 2 for k in kinds):
        unused.add("family")  # each kind has one family to choose
    command.params = [param for param in command.params if param.name not in unused]
    for param in command.params:
        if param.name == "sketch_kind" and isinstance(param, click.Option):
            param.type = click.Choice(list(kinds))
            param.help = _sketch_help(kinds)
    without_embedding(command)


def without_embedding(command: click.Command) -> None:
    """Leave ``command``'s ``--method`` without ``embedding`` (a dedup method only)."""
    for param in command.params:
        if param.name == "method" and isinstance(param, click.Option):
            param.type = click.Choice(["minhash", "simhash"])
            param.help = (param.help or "").replace(_EMBEDDING_METHOD_HELP, "")


def _owned(table: Mapping[str, Any]) -> list[str]:
    """Every option some entry of ``table`` owns, in the order entries list them."""
    return list(dict.fromkeys(name for entry in table.values() for name in entry.options))


def _chosen_kind(method: str | None, kind: str | None, base: str) -> str:
    """The sketch kind of ``--method`` and ``--sketch`` over the ``base`` config's.

    ``--method simhash`` is ``--sketch simhash``; ``--method minhash`` (or
    ``minhash+embedding``) any other sketch.
    """
    if method is not None and kind is not None and (method == "simhash") != (kind == "simhash"):
        raise click.UsageError(f"--method {method} conflicts with --sketch {kind}; give one.")
    if kind is not None:
        return kind
    if method == "simhash":
        return "simhash"
    if method in ("minhash", "minhash+embedding") and base == "simhash":
        return "oph"
    return base


def given_options() -> set[str]:
    """The parameters of the command running that were given on its command line."""
    ctx = click.get_current_context()
    return {
        name for name in ctx.params if ctx.get_parameter_source(name) is ParameterSource.COMMANDLINE
    }


def option_name(name: str) -> str:
    """How the command running spells parameter ``name`` on its command line (``--format``)."""
    for param in click.get_current_context().command.params:
        if param.name == name and isinstance(param, click.Option):
            return max(param.opts, key=len)
    raise AssertionError(f"no option {name!r}")


def input_kinds(inputs: Sequence[Path | str], input_format: str | None = None) -> set[str]:
    """The formats of ``inputs`` (``jsonl``, ``csv``, ``warc``, ...); unknown ones left out."""
    from neardup.errors import InputError
    from neardup.io.readers import detect_format

    if input_format not in (None, "auto"):
        return {str(input_format)}
    kinds = set()
    for path in inputs:
        try:
            kinds.add(detect_format(Path(path)))
        except InputError:  # the reader names it, with what to do
            continue
    return kinds


def refuse_inapplicable(inputs: Sequence[Path | str] = ()) -> None:
    """Refuse, in one line and before any work, a reading or engine option that does nothing.

    The rules every command shares: ``--spark-master`` and ``--spark-conf`` need ``--engine
    spark``; ``--text-field`` and ``--html-field`` name one field, not two; ``--html-extract``
    needs HTML (web archives, or an ``--html-field``); ``--encoding`` needs CSV or ``.txt``
    inputs (JSON Lines and Parquet are UTF-8, web archives name their charsets). Only
    options the command has and that were given on its command line are looked at.
    """
    ctx = click.get_current_context()
    given = given_options()
    values = ctx.params
    kinds = input_kinds(inputs, values.get("input_format"))
    html = "warc" in kinds or values.get("html_field") is not None
    spark = values.get("engine") == "spark"
    rules = (
        ("spark_master", spark, "--spark-master applies with --engine spark only; drop it"),
        ("spark_conf", spark, "--spark-conf applies with --engine spark only; drop it"),
        (
            "text_field",
            "html_field" not in given,
            "give --text-field or --html-field, not both: the HTML field's text is the text",
        ),
        (
            "html_extract",
            html,
            "--html-extract applies to HTML only (web archives, or a table's --html-field); "
            "drop it",
        ),
        (
            "encoding",
            not kinds or bool(kinds & {"csv", "txt"}),
            "--encoding applies to CSV and .txt inputs only (JSON Lines and Parquet are UTF-8, "
            "web archives name their charsets); drop it",
        ),
    )
    for name, applies, message in rules:
        if name in given and not applies:
            raise click.UsageError(message)
