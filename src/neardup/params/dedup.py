"""The dedup algorithm's parameters (:class:`DedupConfig`) and the ``--config`` file holding them.

How a file job reads its inputs and writes its outputs is not the algorithm's: those settings
are :class:`~neardup.params.ReadSpec` and :class:`~neardup.params.OutputSpec`, which a config
file holds in its ``[read]`` and ``[output]`` tables (:func:`load_config`).
"""

from __future__ import annotations

import os
import tomllib
import warnings
from collections.abc import Mapping
from dataclasses import dataclass, field, fields, replace
from pathlib import Path
from typing import Any, ClassVar, Literal, NamedTuple, cast

from neardup.errors import InputError, NeardupWarning, ParameterError
from neardup.kinds import SKETCH_KINDS, Measure
from neardup.params.embedding import COSINE_THRESHOLD, EmbeddingSpec
from neardup.params.output import OutputSpec
from neardup.params.read import ReadSpec
from neardup.params.rules import (
    Rule,
    Spec,
    boolean,
    one_of,
    optional_integer,
)
from neardup.params.sketch import (
    DEFAULT_NUM_PERM,
    LSHSpec,
    SketchSpec,
    candidate_family,
    check_banding,
    check_bucket_cap,
    check_psm_radius,
)

VerifyMode = Literal["exact", "signature", "none"]
KeepRule = Literal["first", "longest"]
KeepDirection = Literal["max", "min"]
PairsMode = Literal["all", "spanning", "none"]
ClusterMode = Literal["components", "center"]


def keep_field(spec: str) -> tuple[str, KeepDirection]:
    """``"FIELD[:max|:min]"`` as ``(field, direction)``; a field may hold colons itself.

    Examples
    --------
    >>> keep_field("quality"), keep_field("date:min"), keep_field("meta:score:max")
    (('quality', 'max'), ('date', 'min'), ('meta:score', 'max'))
    """
    name, _, direction = spec.rpartition(":")
    if name and direction in ("max", "min"):
        return name, cast(KeepDirection, direction)
    return spec, "max"


def _is_keep_by(value: Any) -> bool:
    if not isinstance(value, tuple) or not all(isinstance(v, str) and v for v in value):
        return False
    names = [keep_field(v)[0] for v in value]
    return all(names) and len(set(names)) == len(names)


def _slots(sketch: object) -> int:
    """The signature slots of a sketch given as a spec or as its dict (a kind's fixed number)."""
    if isinstance(sketch, SketchSpec):
        return sketch.num_perm
    given = sketch if isinstance(sketch, Mapping) else {}
    kind = SKETCH_KINDS.get(str(given.get("kind", SketchSpec().kind)))
    if kind is not None and kind.num_slots is not None:
        return kind.num_slots
    return int(given.get("num_perm", DEFAULT_NUM_PERM))


@dataclass(frozen=True, slots=True, kw_only=True)
class DedupConfig(Spec):
    """The dedup algorithm's parameters: how texts are compared, clustered and kept.

    What a file job reads and writes is set apart (:class:`~neardup.params.ReadSpec`,
    :class:`~neardup.params.OutputSpec`), so :func:`neardup.dedup` of texts in memory takes
    only what it uses.

    Parameters
    ----------
    sketch, lsh
        The sketch and candidate specs; the bands are cut from ``sketch.num_perm`` slots
        (:func:`check_banding`), and ``lsh.family`` left ``None`` becomes the sketch kind's
        first (:func:`candidate_family`).
    verify
        ``"exact"``: keep a candidate pair when the exact Jaccard of its shingle sets reaches the
        threshold; ``"signature"``: when the signature estimate does; ``"none"``: keep every
        candidate. ``None`` picks ``"exact"`` (texts are always reachable by a second pass).
    keep
        The representative of each cluster: the ``"first"`` document in input order, or the
        ``"longest"`` (ties go to the first). With ``lsh.family="containment"`` it must be
        ``"longest"``: the container is kept.
    keep_by
        Fields that choose the representative instead: ``"FIELD"`` or ``"FIELD:max"`` prefers
        the largest value, ``"FIELD:min"`` the smallest; each later field breaks the ties of
        the ones before, and input order the rest. Numbers (JSON numbers, Parquet numeric,
        date and time columns, CSV columns whose every value is a number) compare as numbers,
        strings by code point (ISO dates in order); a record without the field, or with
        null, is preferred last (:func:`~neardup.cluster.preference_order`). ``keep`` must be
        ``"first"`` then.
    cluster
        ``"components"``: the connected components of the verified pairs (single link: A ~ B
        ~ C joins A and C even when they share little); ``"center"``: clusters that do not
        chain, every member verified against its representative at the threshold
        (:func:`~neardup.cluster.center_clusters`). Either way each document's similarity to
        its representative is measured and written.
    pairs
        Which verified near-duplicate pairs are reported (``pairs.jsonl``, ``DedupResult.pairs``):
        ``"spanning"`` (the default) keeps those that join two clusters, taken in pair order:
        a spanning forest of each cluster, at most one pair per duplicate, enough to explain
        every cluster; ``"all"`` keeps every verified pair (it grows quadratically in
        near-identical groups); ``"none"`` reports none and writes no pairs file at all. In
        ``pairs.jsonl``, the first two also list every exact duplicate, linked to the first
        document of its group (``DedupResult.exact_pairs`` always holds those links). Clusters
        do not depend on it.
    memory_bytes
        Working memory for verification chunks (``--memory-gb``); ``None`` takes an eighth of
        the machine's memory, at most 1 GiB. Results never depend on it.
    explain
        Give each near pair of ``pairs.jsonl`` its shared passages
        (:func:`neardup.explain.shared_passages`, character offsets into the texts as read),
        at the cost of one more pass over the inputs. Local engine only.
    host_templates
        Leave each web host's template (the shingles on half or more of its pages: navigation,
        footers, a mirror's banner) out of its pages' texts before they are compared, each
        host's template learned from its first pages in a first pass
        (:class:`neardup.templates.HostTemplates`, ``--host-templates``). A page's host is that
        of its id when the id is an ``http(s)`` URL, as web archives give it. Local engine.
    embedding
        The embedding method (:class:`EmbeddingSpec`, ``--method embedding``): pairs by the
        cosine of the texts' vectors, at ``lsh.threshold``; with its ``with_shingles``
        (``--method minhash+embedding``), by either the shingles' Jaccard or the cosine.
        ``None``: shingles only.
    """

    sketch: SketchSpec = field(default_factory=SketchSpec)
    lsh: LSHSpec = field(default_factory=LSHSpec)
    verify: VerifyMode | None = None
    keep: KeepRule = "first"
    keep_by: tuple[str, ...] = ()
    cluster: ClusterMode = "components"
    pairs: PairsMode = "spanning"
    memory_bytes: int | None = None
    explain: bool = False
    host_templates: bool = False
    embedding: EmbeddingSpec | None = None

    _NESTED: ClassVar[Mapping[str, type[Spec]]] = {
        "sketch": SketchSpec,
        "lsh": LSHSpec,
        "embedding": EmbeddingSpec,
    }
    _RULES: ClassVar[Mapping[str, Rule]] = {
        "verify": Rule(
            "None or one of 'exact', 'signature', 'none'",
            lambda v: v is None or v in ("exact", "signature", "none"),
        ),
        "keep": one_of("first", "longest"),
        "keep_by": Rule(
            "a tuple of 'FIELD', 'FIELD:max' or 'FIELD:min' (each field once)", _is_keep_by
        ),
        "cluster": one_of("components", "center"),
        "pairs": one_of("all", "spanning", "none"),
        "memory_bytes": optional_integer(1 << 24, 1 << 50),
        "explain": boolean(),
        "host_templates": boolean(),
        "embedding": Rule(
            "None or an EmbeddingSpec", lambda v: v is None or isinstance(v, EmbeddingSpec)
        ),
    }

    def __post_init__(self) -> None:
        given: Any = self.keep_by
        if isinstance(given, list):  # as a dict or TOML file gives it
            object.__setattr__(self, "keep_by", tuple(given))
        self._validate()
        check_banding(self.sketch, self.lsh)
        family = candidate_family(self.sketch, self.lsh)
        if self.lsh.family is None:
            object.__setattr__(self, "lsh", replace(self.lsh, family=family))
        check_bucket_cap(self.lsh, family, with_embedding=self.embedding is not None)
        if family == "hamming" and self.lsh.search == "psm":
            check_psm_radius(self.sketch.simhash_bits, self.lsh.hamming)
        if family == "containment":
            self._check_containment()
        if self.keep_by and self.keep != "first":
            raise ParameterError(
                "keep_by (--keep-by) chooses each cluster's representative, ties in input "
                f"order; keep={self.keep!r} (--keep {self.keep}) would choose it too: drop it."
            )
        if self.embedding is not None:
            self._check_embedding()

    def _check_embedding(self) -> None:
        """The embedding method measures the exact cosine of vectors (and Jaccard, combined)."""
        assert self.embedding is not None
        method = self.embedding_method
        if self.lsh.family == "containment":
            raise ParameterError(
                f"{method} joins by the cosine of embeddings; containment (--measure "
                "containment) measures how much of one shingle set is in another: drop one of them"
            )
        if self.verify_mode != "exact":
            measures = "Jaccard and cosine" if self.embedding.with_shingles else "cosine"
            raise ParameterError(
                f"{method} measures every pair's {measures} exactly: drop --verify {self.verify}"
            )
        if not self.embedding.with_shingles:
            if self.explain:
                raise ParameterError(
                    "the embedding method (--method embedding) has no shared passages to show: "
                    "drop --explain, or find pairs by shingles too (--method minhash+embedding)"
                )
            return
        if SKETCH_KINDS[self.sketch.kind].exact != "jaccard":
            raise ParameterError(
                f"--method minhash+embedding measures the shingles' Jaccard beside the cosine; "
                f"--sketch {self.sketch.kind} measures {SKETCH_KINDS[self.sketch.kind].exact}: "
                "choose a MinHash sketch (the default, oph) or --method embedding"
            )
        if self.cluster == "center":
            raise ParameterError(
                "--cluster center ranks each document's pairs by one measure; "
                "--method minhash+embedding joins by two: use --cluster components, or one method"
            )

    def _check_containment(self) -> None:
        """Containment is measured exactly, and a cluster keeps its container (the longest)."""
        if self.verify_mode != "exact":
            raise ParameterError(
                "DedupConfig.verify must be 'exact' (or None) with the containment family: "
                f"containment is measured on the shingle sets; got {self.verify!r}."
            )
        if self.keep != "longest" or self.keep_by:
            raise ParameterError(
                "DedupConfig.keep must be 'longest' with the containment family: a cluster "
                "keeps its container, the longest document (the shorter is the contained "
                f"one); got keep={self.keep!r}"
                + (f", keep_by={list(self.keep_by)!r}." if self.keep_by else ".")
            )

    @property
    def keep_fields(self) -> tuple[tuple[str, KeepDirection], ...]:
        """``keep_by`` as ``(field, "max" | "min")`` pairs, in order of precedence."""
        return tuple(keep_field(spec) for spec in self.keep_by)

    @property
    def measure(self) -> Measure:
        """What the similarity of a pair is: the kind's exact measure, containment, or cosine.

        With ``embedding.with_shingles`` it is the shingles' measure; the cosine comes beside it.
        """
        if self.lsh.family == "containment":
            return "containment"
        if self.embedding_only:
            return "cosine"
        return SKETCH_KINDS[self.sketch.kind].exact

    @property
    def embedding_only(self) -> bool:
        """Whether pairs are found and measured by embeddings alone (``--method embedding``)."""
        return self.embedding is not None and not self.embedding.with_shingles

    @property
    def embedding_method(self) -> str:
        """The ``--method`` of a run with embeddings, as typed (``""`` without them)."""
        if self.embedding is None:
            return ""
        return "--method " + ("minhash+embedding" if self.embedding.with_shingles else "embedding")

    @property
    def combined(self) -> bool:
        """Whether a pair is joined by its shingles or by its embeddings (minhash+embedding)."""
        return self.embedding is not None and self.embedding.with_shingles

    @property
    def cosine_threshold(self) -> float | None:
        """The cosine at which the embedding method joins a pair (``None``: no embeddings)."""
        if self.embedding is None:
            return None
        if self.embedding_only:
            return self.lsh.threshold
        given = self.embedding.cosine_threshold
        return COSINE_THRESHOLD if given is None else given

    @property
    def verify_mode(self) -> VerifyMode:
        """The verification in use (``verify``, or ``"exact"`` when left to choose)."""
        return "exact" if self.verify is None else self.verify

    @property
    def working_memory(self) -> int:
        """``memory_bytes``, or an eighth of the machine's memory, at most 1 GiB."""
        if self.memory_bytes is not None:
            return self.memory_bytes
        try:
            physical = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
        except (ValueError, OSError, AttributeError):
            physical = 8 << 30
        return max(1 << 26, min(1 << 30, physical // 8))

    @classmethod
    def from_toml(cls, path: Path | str) -> DedupConfig:
        """Deprecated: the ``config`` of :func:`load_config`, which reads the file's settings.

        The file's ``[read]`` and ``[output]`` tables are :func:`load_config`'s ``read`` and
        ``write``; this method, kept for one version, returns the algorithm's part, and refuses
        a file that sets either (it would drop them).
        """
        warnings.warn(
            "DedupConfig.from_toml is deprecated: use neardup.params.load_config(path), whose "
            ".config this is (its .read and .write are the file's [read] and [output] tables)",
            NeardupWarning,
            stacklevel=2,
        )
        loaded = load_config(path)
        if (loaded.read, loaded.write) != (ReadSpec(), OutputSpec()):
            raise ParameterError(
                f"{path} sets how files are read or written ([read], [output], or their keys "
                "at the top level), which a DedupConfig no longer holds: load it with "
                "neardup.params.load_config and pass its .read and .write to the job"
            )
        return loaded.config

    @classmethod
    def _implied_dropped(cls, data: Mapping[str, Any]) -> Mapping[str, Any]:
        """``data`` as it is; an older ``lsh.num_perm`` other than the sketch's is refused.

        Older versions kept a copy of ``sketch.num_perm`` in ``lsh`` (``LSHSpec`` drops it when
        it reads one); a copy that differs was set on purpose, and would do nothing now.
        """
        lsh, sketch = data.get("lsh"), data.get("sketch")
        if isinstance(lsh, Mapping) and "num_perm" in lsh:
            slots = _slots(sketch)
            if lsh["num_perm"] != slots:
                raise ParameterError(
                    f"lsh.num_perm ({lsh['num_perm']!r}) differs from sketch.num_perm "
                    f"({slots!r}): the slots are set once, as sketch.num_perm, and the bands are "
                    "cut from them; drop lsh.num_perm"
                )
        return data


class ConfigFile(NamedTuple):
    """What a ``--config`` TOML file holds: the algorithm, and how files are read and written.

    The algorithm's keys are at the top level (:class:`DedupConfig`), the reading settings in
    a ``[read]`` table (:class:`ReadSpec`) and the writing settings in ``[output]``
    (:class:`OutputSpec`); a summary's ``params`` have the same layout. ``ConfigFile()``:
    the defaults, as no file gives them.
    """

    config: DedupConfig = DedupConfig()
    read: ReadSpec = ReadSpec()
    write: OutputSpec = OutputSpec()

    def to_dict(self) -> dict[str, Any]:
        """The layout of a config file and of a summary's ``params``, as a plain dict."""
        return {
            **self.config.to_dict(),
            "read": self.read.to_dict(),
            "output": self.write.to_dict(),
        }

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> ConfigFile:
        """Read :meth:`to_dict`'s layout; reading and writing keys at the top level too.

        Configs and summaries before the ``[read]`` and ``[output]`` tables held those keys at
        the top level, beside the algorithm's (:func:`moved_keys` names them). A key given in
        both places is an error.
        """
        settings = dict(data)
        tables: dict[str, dict[str, Any]] = {}
        for table, spec in (("read", ReadSpec), ("output", OutputSpec)):
            given = settings.pop(table, None) or {}
            if not isinstance(given, Mapping):
                raise ParameterError(
                    f"{table} must be a table of {spec.__name__} settings; got {given!r}."
                )
            tables[table] = dict(given)
            for key in _SPEC_KEYS[table]:
                if key not in settings:
                    continue
                if key in tables[table]:
                    raise ParameterError(
                        f"{key} is given both at the top level and in [{table}]: "
                        "drop the top-level one"
                    )
                tables[table][key] = settings.pop(key)
        return cls(
            DedupConfig.from_dict(settings),
            ReadSpec.from_dict(tables["read"], where="read"),
            OutputSpec.from_dict(tables["output"], where="output"),
        )


_SPEC_KEYS = {
    "read": tuple(f.name for f in fields(ReadSpec)),
    "output": tuple(f.name for f in fields(OutputSpec)),
}
"""The keys of the ``[read]`` and ``[output]`` tables, which older configs held at the top."""


def moved_keys(data: Mapping[str, Any]) -> dict[str, list[str]]:
    """The keys of ``data``'s top level that belong in its ``[read]`` or ``[output]`` table.

    Examples
    --------
    >>> moved_keys({"text_field": "body", "keep": "longest", "compress": "gzip"})
    {'read': ['text_field'], 'output': ['compress']}
    """
    return {
        table: found
        for table, keys in _SPEC_KEYS.items()
        if (found := [key for key in keys if key in data])
    }


def load_config(path: Path | str) -> ConfigFile:
    """Load a ``--config`` TOML file; unknown keys are errors naming the file and key.

    Reading and writing keys at the top level (as files before ``[read]`` and ``[output]``
    held them) are read for one more version, with a :class:`~neardup.errors.NeardupWarning`
    saying where they go.

    Examples
    --------
    A file with ``[lsh]`` ``threshold = 0.7`` and ``[read]`` ``text_field = "body"`` gives
    ``ConfigFile(DedupConfig(lsh=LSHSpec(threshold=0.7)), ReadSpec(text_field="body"),
    OutputSpec())``.
    """
    path = Path(path)
    try:
        with path.open("rb") as f:
            data = tomllib.load(f)
    except OSError as exc:
        raise InputError(f"cannot read config: {exc.strerror}", path=path) from exc
    except tomllib.TOMLDecodeError as exc:
        raise InputError(f"not valid TOML: {exc}", path=path) from exc
    for table, keys in moved_keys(data).items():
        warnings.warn(
            f"{path}: key(s) {', '.join(keys)} belong in the [{table}] table now, not at the "
            "top level: move them there (this version still reads them at the top level; the "
            "next will not)",
            NeardupWarning,
            stacklevel=2,
        )
    try:
        return ConfigFile.from_dict(data)
    except ParameterError as exc:
        raise ParameterError(f"{path}: {exc}") from exc
