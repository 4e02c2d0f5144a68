"""Every option that a command's ``--help`` lists does something (issue "one vocabulary").

The walk reads each command's options from its click object, as ``--help`` prints them (and
checks that ``--help`` prints the same ones), and :data:`WALK` says, for every (command,
option), how the option is shown to act:

- :class:`Changes`: a run with it, on small real inputs, differs from the same run without it
  in a named output (a file the run writes, a part of ``summary.json``, stdout, the exit code);
- :class:`Refused`: where it does nothing (another engine, format or option), it is refused
  with one line naming it, exit 2, nothing written;
- :class:`Effect`: an option that changes no output by nature (``--quiet`` silences,
  ``--overwrite`` allows reusing a path, ``--resume`` continues) has its documented effect
  asserted;
- :class:`Serves`: ``neardup serve`` run in this process up to listening, its requests
  answered by the application it built: the start-up line or the requests' statuses differ;
- :class:`Cited`: what needs Spark or a GPU is covered by a test elsewhere, named by its node
  id, and the walk asserts that test exists.

An option without an entry fails :func:`test_every_listed_option_has_an_entry`, so a new option
comes with the run that shows what it does. Runs are in-process (:func:`main`), on a dozen
licence texts of the bundled sample with planted near copies, and each baseline (the run
without the option) is made once per module and asserted deterministic first, so that a
difference is the option's doing.
"""

from __future__ import annotations

import contextlib
import csv
import dataclasses
import gzip
import io
import itertools
import json
import random
import re
import shutil
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from neardup.cli.main import cli, command_options, leaf_commands, main
from tests.integration.conftest import run

ROOT = Path(__file__).resolve().parents[2]
SAMPLE = ROOT / "data" / "sample" / "licenses.jsonl.gz"

# ---------------------------------------------------------------------------------------------
# The inputs: licence texts of the bundled sample with planted near copies, in every shape the
# commands read.

BANNER = "Example Licence Archive: every text as its authors published it."
"""A line every document starts with: a host's template for --host-templates, a repeated unit
for --unit."""

NUM_WORDS = 120
"""Words per licence text (in lines of 12): about 116 word 5-shingles."""


def _licences(count: int) -> list[list[str]]:
    """The words of the first ``count`` sample licences of 150 words or more, cut to
    :data:`NUM_WORDS` words."""
    found: list[list[str]] = []
    with gzip.open(SAMPLE, "rt", encoding="utf-8") as f:
        for line in f:
            words = json.loads(line)["text"].split()
            if len(words) >= 150:
                found.append(words[:NUM_WORDS])
            if len(found) == count:
                return found
    raise AssertionError("the sample has too few long licences")


def _lines(words: Sequence[str]) -> str:
    return "\n".join(" ".join(words[i : i + 12]) for i in range(0, len(words), 12))


def _inserted(words: list[str], rng: random.Random, count: int) -> list[str]:
    """``words`` with ``count`` made-up words inserted: each costs about 4 of ~116 shingles."""
    out = list(words)
    for n in range(count):
        out.insert(rng.randrange(10, len(out) - 10), f"inserted{n}x{rng.randrange(1000)}")
    return out


def _documents() -> list[dict[str, Any]]:
    """Twelve documents: a chain a0 ~ a1 ~ a2 (word 5-shingle Jaccard 0.82 each step, a0 ~ a2
    0.76, below the default threshold) and a3, a0's words again (0.94: its page line
    differs); b0 inside b1 (containment 1, Jaccard about 0.6); c0 the words of c1 without
    their punctuation; d0..d3 unrelated. Each starts with :data:`BANNER` and ends with a
    page-number line; ``body`` holds the lines in reverse, ``html`` a page of them, and
    ``quality`` prefers a2, then a1."""
    rng = random.Random(5)
    licences = _licences(8)
    a0 = licences[0]
    a1 = _inserted(a0, rng, 2)
    a2 = _inserted(a1, rng, 2)
    b0 = licences[1]
    b1 = b0 + licences[2][:60]
    c1 = licences[3]
    c0 = [re.sub(r"[^\w]", "", w) or "x" for w in c1]
    words = {"a0": a0, "a1": a1, "a2": a2, "a3": a0, "b0": b0, "b1": b1, "c0": c0, "c1": c1}
    words.update({f"d{i}": licences[4 + i] for i in range(4)})
    docs = []
    for n, (name, text_words) in enumerate(words.items()):
        text = f"{BANNER}\n{_lines(text_words)}\nPage {n + 1} of the archive"
        paragraphs = "".join(f"<p>{line}</p>" for line in text.splitlines())
        docs.append(
            {
                "id": name,
                "text": text,
                "body": "\n".join(reversed(text.splitlines())),
                "html": (
                    f"<html><head><title>{name}</title></head><body><nav><a href='/'>Home</a> | "
                    "<a href='/licences'>Licences</a> | <a href='/about'>About the archive and "
                    "its many kind contributors</a></nav><article>"
                    f"{paragraphs}</article><footer>Served by the archive's own web server, "
                    "kept by volunteers since the first licence was written down</footer>"
                    "</body></html>"
                ),
                "quality": {"a2": 3, "a1": 2}.get(name, 1),
                "url": f"https://licences.example/{name}",
            }
        )
    return docs


def _page(title: str, words: Sequence[str], extra: str = "") -> str:
    """An HTML page: a navigation bar, the words in paragraphs, a footer."""
    paragraphs = "".join(f"<p>{' '.join(words[i : i + 12])}</p>" for i in range(0, len(words), 12))
    return (
        f"<html><head><title>{title}</title></head><body>{extra}<nav><a href='/'>Home</a> "
        f"<a href='/all.html'>All licences</a></nav><article>{paragraphs}</article>"
        "<footer><a href='/about.html'>About</a> this site</footer></body></html>"
    )


def _write_crawl(directory: Path) -> tuple[Path, list[dict[str, str]]]:
    """A WARC file of four hosts: six licence pages on an origin, a full mirror (a banner
    added), a partial one (three pages) and a stale one (three pages edited); and the same
    pages as table rows (url, html, text)."""
    from tests.web.sitegen import CrawlWriter

    rng = random.Random(11)
    licences = _licences(6)
    path = directory / "crawl.warc.gz"
    writer = CrawlWriter(path)
    rows = []
    hosts = [
        ("docs.example.org", "/", range(6), ""),
        ("mirror.example.net", "/copy/", range(6), "<div>A mirror of docs.example.org</div>"),
        ("part.example.com", "/l/", range(3), "<div>Some licences from docs.example.org</div>"),
        ("old.example.com", "/", range(6), ""),
    ]
    for host, prefix, pages, extra in hosts:
        for i in pages:
            words = licences[i]
            if host.startswith("old") and i % 2:
                words = _inserted(words, rng, 6)
            html = _page(f"Licence {i}", words, extra)
            url = f"https://{host}{prefix}p{i}.html"
            writer.page(url, html.encode("utf-8"))
            rows.append({"url": url, "html": html, "text": " ".join(words)})
    writer.close()
    return path, rows


def _jsonl(path: Path, records: Sequence[Mapping[str, Any]]) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in records), encoding="utf-8")
    return path


def _join_inputs(directory: Path) -> dict[str, Path]:
    """Inputs of every join metric: vectors, counts and bits as .npy (pairs planted), a Parquet
    table of vectors, item sets as records and as rows, strings."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    rng = np.random.default_rng(3)
    vectors = rng.normal(size=(16, 8)).astype(np.float32)
    vectors[1] = vectors[0] + 0.05
    vectors[3] = vectors[2] + 0.2
    vectors[5] = vectors[4] + 0.4
    counts = rng.integers(0, 20, size=(16, 8))
    counts[1] = counts[0] + 1
    counts[3] = counts[2] + 2
    counts[5] = counts[4]
    counts[5, 0] += 40
    bits = rng.integers(0, 2, size=(16, 64)).astype(np.uint8)
    bits[1] = bits[0]
    bits[1, :2] ^= 1
    bits[3] = bits[2]
    bits[3, :6] ^= 1
    paths = {}
    for name, array in (("vecs", vectors), ("counts", counts), ("bits", bits)):
        paths[name] = directory / f"{name}.npy"
        np.save(paths[name], array)
    paths["vectors_parquet"] = directory / "vectors.parquet"
    pq.write_table(
        pa.table(
            {
                "key": [f"v{i}" for i in range(16)],
                "v": [list(map(float, row)) for row in vectors],
                "w": [list(map(float, row)) for row in vectors[::-1]],
            }
        ),
        paths["vectors_parquet"],
    )
    words = [f"w{i}" for i in range(60)]
    sets = []
    for i in range(12):
        items = rng.choice(words, size=12, replace=False).tolist()
        if i % 3 == 1:  # a near copy of the set before
            items = [*sets[-1]["items"][:11], "extra"]
        if i % 3 == 2:  # holds the set two before, and more
            items = sets[-2]["items"] + ["more1", "more2", "more3", "more4"]
        sets.append(
            {"id": f"s{i}", "name": f"set-{i}", "items": items, "tags": list(reversed(items))[:9]}
        )
    paths["sets"] = _jsonl(directory / "sets.jsonl", sets)
    rows = ["user,movie,stars,id"]
    for s in sets[:6]:
        for n, item in enumerate(s["items"]):
            rows.append(f"{s['id']},{item},{1 + (n * 7 + int(s['id'][1:])) % 5},{s['id']}")
    paths["rows"] = directory / "ratings.csv"
    paths["rows"].write_text("\n".join(rows) + "\n", encoding="utf-8")
    names = ["neardup", "neardupe", "near-dup", "needup", "dedup", "dedupe", "deduper", "zz"]
    paths["strings"] = _jsonl(
        directory / "strings.jsonl",
        [
            {"id": f"n{i}", "text": name, "name": name[::-1] + "ab"[i % 2]}
            for i, name in enumerate(names)
        ],
    )
    return paths


def _write_inputs(directory: Path) -> dict[str, Path]:
    """Every input the walk's command lines name (``{name}`` in :data:`BASES` and the checks)."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    docs = _documents()
    paths = {"docs": _jsonl(directory / "docs.jsonl", docs)}
    paths["data"] = directory / "docs.data"  # JSON Lines under an extension nothing knows
    shutil.copy(paths["docs"], paths["data"])
    paths["bad"] = directory / "bad.jsonl"
    paths["bad"].write_text(paths["docs"].read_text() + '{"id": "broken", "text": \n')
    paths["csv"] = directory / "docs.csv"
    with paths["csv"].open("w", encoding="cp1252", newline="") as f:
        table = csv.writer(f)
        table.writerow(["id", "text"])
        table.writerows([d["id"], f"{d['text']} café naïve – ‘quoted’"] for d in docs)
    a0, a2 = docs[0]["text"].split(), docs[2]["text"].split()
    paths["eval"] = _jsonl(
        directory / "eval.jsonl",
        [
            {"id": f"q{i}", "url": f"https://bench.example/q{i}", "text": text, "body": text}
            for i, text in enumerate(
                [
                    " ".join(a0[30:60]),
                    " ".join(a2[40:55] + [f"other{i}" for i in range(20)]),
                    " ".join(f"unrelated{i}" for i in range(30)),
                ]
            )
        ],
    )
    rng = np.random.default_rng(7)
    vectors = {d["id"]: rng.normal(size=8) for d in docs}
    vectors["a1"] = vectors["a0"] + 0.1
    vectors["b1"] = vectors["b0"] + 0.5
    paths["embeddings"] = directory / "embeddings.parquet"
    pq.write_table(
        pa.table({"id": list(vectors), "embedding": [v.tolist() for v in vectors.values()]}),
        paths["embeddings"],
    )
    paths["config"] = directory / "config.toml"
    paths["config"].write_text('keep = "longest"\n[lsh]\nthreshold = 0.5\n')
    paths["strip"] = directory / "strip.toml"
    paths["strip"].write_text("[sketch.normalize]\nstrip_punctuation = true\n")
    paths["stopwords"] = directory / "stop.txt"
    paths["stopwords"].write_text("the of and or to in a any\n")
    for name, doc in (("a", docs[0]), ("b", docs[2])):
        paths[f"{name}_txt"] = directory / f"{name}.txt"
        paths[f"{name}_txt"].write_text(doc["text"], encoding="utf-8")
        paths[f"{name}_html"] = directory / f"{name}.html"
        paths[f"{name}_html"].write_text(doc["html"], encoding="utf-8")
    paths["crawl"], pages = _write_crawl(directory)
    paths["pages"] = _jsonl(directory / "pages.jsonl", pages)
    paths.update(_join_inputs(directory))
    paths["tokens"] = directory / "tokens.txt"
    paths["tokens"].write_text("s3cret-token\n")
    for name, options in (("index", ()), ("cindex", ("--containment-sample", "1"))):
        paths[name] = directory / f"{name}.ndx"
        _ok(run("index", "create", paths[name], *options))
        _ok(run("index", "add", paths[name], paths["docs"], "-q"))
    paths["empty_index"] = directory / "empty.ndx"
    _ok(run("index", "create", paths["empty_index"]))
    paths["part"] = _jsonl(directory / "part.jsonl", docs[:4])
    paths["part_index"] = directory / "part.ndx"
    _ok(run("index", "create", paths["part_index"]))
    _ok(run("index", "add", paths["part_index"], paths["part"], "-q"))
    paths["last_index"] = directory / "last.ndx"  # the last document only
    _ok(run("index", "create", paths["last_index"]))
    _ok(run("index", "add", paths["last_index"], _jsonl(directory / "last.jsonl", docs[-1:])))
    paths["bad_pages"] = directory / "bad-pages.jsonl"
    paths["bad_pages"].write_text(paths["pages"].read_text() + '{"url": \n')
    paths["run"] = directory / "run"
    _ok(run("dedup", paths["docs"], "-o", paths["run"], "--threshold", "0.5", "-q"))
    paths["units_run"] = directory / "units-run"
    _ok(run("dedup", paths["docs"], "-o", paths["units_run"], "--unit", "line", "-q"))
    return paths


def _static_model(directory: Path, texts: Sequence[str]) -> Path:
    """A model2vec static model over the words of ``texts`` (seeded vectors), as
    ``StaticModel.save_pretrained`` writes it: ``--model`` without a download."""
    model2vec = pytest.importorskip("model2vec")
    tokenizers = pytest.importorskip("tokenizers")
    words = sorted({w.lower() for text in texts for w in re.findall(r"\w+", text)})
    vocabulary = {"[UNK]": 0, **{word: i + 1 for i, word in enumerate(words)}}
    tokenizer = tokenizers.Tokenizer(tokenizers.models.WordLevel(vocabulary, unk_token="[UNK]"))
    tokenizer.normalizer = tokenizers.normalizers.Lowercase()
    tokenizer.pre_tokenizer = tokenizers.pre_tokenizers.Whitespace()
    vectors = np.random.default_rng(1).normal(size=(len(vocabulary), 16)).astype(np.float32)
    path = directory / "static-model"
    model2vec.StaticModel(vectors, tokenizer, normalize=True).save_pretrained(path)
    return path


def _ok(done: Any) -> None:
    assert done.returncode == 0, done.stderr


# ---------------------------------------------------------------------------------------------
# Runs, and what of a run is compared.

_STEADY = [
    (re.compile(r"^compiling kernels once.*\n", re.MULTILINE), ""),
    (re.compile(r"^[a-z][\w -]*: [^\n]*, [\d.]+ s(?:, about [\d.]+ s left)?\n", re.MULTILINE), ""),
    (re.compile(r" \(and [\d.]+ s compiling kernels, once\)"), ""),
    (re.compile(r"\d[\d,]*(?:\.\d+)? s\b"), "# s"),
    (re.compile(r"\d[\d,]*(?:\.\d+)? MB/s"), "# MB/s"),
]
"""What no two runs share in what a command prints: timings, and what a slow run (kernels
compiled on a cold cache) adds: the note that kernels compile, progress lines every 5 s."""

_TIMING_KEYS = frozenset({"timings_s", "compile_s", "throughput_mb_s"})
"""Keys of a ``summary.json`` that no two runs share."""

_REPORT_TIMINGS = re.compile(rb'"timings_s": \{[^}]*\}')
"""The timings of the run record a report page holds (the page's one such JSON object)."""


def _steady(text: str) -> str:
    for pattern, replacement in _STEADY:
        text = pattern.sub(replacement, text)
    return text


def _without_timings(value: Any) -> Any:
    if isinstance(value, dict):
        return {k: _without_timings(v) for k, v in value.items() if k not in _TIMING_KEYS}
    if isinstance(value, list):
        return [_without_timings(v) for v in value]
    return value


def _file_parts(name: str, path: Path) -> dict[str, Any]:
    """What a written file contributes to a run's outcome: its bytes (a report page's without
    its run record's timings), or for a JSON file its value without timings (a summary's
    ``params`` a part of their own, ``NAME:params``)."""
    if path.suffix == ".html":
        return {name: _REPORT_TIMINGS.sub(b'"timings_s": {}', path.read_bytes())}
    if path.suffix != ".json":
        return {name: path.read_bytes()}
    value = _without_timings(json.loads(path.read_text(encoding="utf-8")))
    if isinstance(value, dict) and "params" in value:
        return {name: {**value, "params": None}, f"{name}:params": value["params"]}
    return {name: value}


@contextlib.contextmanager
def _steady_rates() -> Iterator[None]:
    """``plan`` with the speeds it measures (each stage's seconds per byte, pair or key) set
    to fixed values after measuring them: it chooses the cheapest num_perm, bands and rows by
    them, which on a dozen documents is a matter of timing noise. The rest is measured."""
    from neardup.jobs import plan as plan_module

    measure = plan_module.measure_rates

    def steady(*args: Any, **kwargs: Any) -> Any:
        rates = measure(*args, **kwargs)
        return dataclasses.replace(
            rates,
            read_seconds=0.01,
            normalize_per_byte=1e-9,
            sketch_per_byte={n: n * 1e-10 for n in rates.sketch_per_byte},
            band_per_key=1e-7,
            verify_per_pair=1e-6,
        )

    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(plan_module, "measure_rates", steady)
        yield


@dataclass
class Outcome:
    """One run: its exit code, what it printed and wrote (``parts``, by name)."""

    parts: dict[str, Any]
    stdout: str
    stderr: str
    directory: Path

    @property
    def code(self) -> int:
        return int(self.parts["exit"])


def _differing(a: Outcome, b: Outcome) -> list[str]:
    return sorted(k for k in {*a.parts, *b.parts} if a.parts.get(k) != b.parts.get(k))


Prepare = Callable[[Path, Mapping[str, Path]], None]
"""Puts what a run needs into its directory (an index to add to) before it runs."""


def _copy(name: str, to: str) -> Prepare:
    def prepare(directory: Path, inputs: Mapping[str, Path]) -> None:
        source = inputs[name]
        if source.is_dir():
            shutil.copytree(source, directory / to)
        else:
            shutil.copy(source, directory / to)

    return prepare


@dataclass(frozen=True)
class Base:
    """A command line the checks of a command add options to (``{name}``: an input's path)."""

    argv: tuple[str, ...]
    prepare: Prepare | None = None
    index: bool = False
    """The run changes ``seen.ndx``: its documents (``index info``, then every document of
    ``{docs}`` queried) are the part ``index``."""


class Walk:
    """Runs command lines in directories of their own, on the inputs, and keeps baselines."""

    def __init__(self, root: Path, inputs: Mapping[str, Path]) -> None:
        self.root = root
        self.inputs = inputs
        self._names = {name: str(path) for name, path in inputs.items()}
        self._numbers = itertools.count()
        self._baselines: dict[tuple[str, tuple[str, ...]], Outcome] = {}

    def argv(self, template: Sequence[str]) -> list[str]:
        return [arg.format_map(self._names) for arg in template]

    def directory(self, prepare: Prepare | None = None) -> Path:
        directory = self.root / f"run-{next(self._numbers):03d}"
        directory.mkdir()
        if prepare is not None:
            prepare(directory, self.inputs)
        return directory

    def run(
        self,
        argv: Sequence[str],
        *,
        prepare: Prepare | None = None,
        index: bool = False,
        directory: Path | None = None,
    ) -> Outcome:
        """``neardup *argv`` in a new directory (or ``directory``), and what it did there."""
        directory = directory or self.directory(prepare)
        before = set(directory.rglob("*"))
        with _steady_rates() if argv[0] == "plan" else contextlib.nullcontext():
            done = run(*self.argv(argv), cwd=directory)
        parts: dict[str, Any] = {
            "exit": done.returncode,
            "stdout": _steady(done.stdout),
            "stderr": _steady(done.stderr),
        }
        for path in sorted(directory.rglob("*")):
            name = path.relative_to(directory).as_posix()
            if path.is_file() and ".ndx" not in path.name and path not in before:
                parts.update(_file_parts(name, path))
        if index:
            info = run("index", "info", directory / "seen.ndx")
            found = run("index", "query", directory / "seen.ndx", self.inputs["docs"])
            parts["index"] = (info.stdout, found.stdout)
        return Outcome(parts, done.stdout, done.stderr, directory)

    def base(self, name: str, context: Sequence[str] = ()) -> Outcome:
        """A run of :data:`BASES` ``name`` with ``context`` added."""
        base = BASES[name]
        return self.run([*base.argv, *context], prepare=base.prepare, index=base.index)

    def baseline(self, name: str, context: tuple[str, ...] = ()) -> Outcome:
        """The run of :data:`BASES` ``name`` with ``context``, made twice (once per module):
        both runs must give the same outcome, or a difference would prove nothing."""
        key = (name, context)
        if key not in self._baselines:
            first, second = self.base(name, context), self.base(name, context)
            assert first.code == second.code, first.stderr
            assert not _differing(first, second), f"{key} differs run to run"
            self._baselines[key] = first
        return self._baselines[key]


@pytest.fixture(scope="module")
def walk(tmp_path_factory: pytest.TempPathFactory) -> Walk:
    inputs = _write_inputs(tmp_path_factory.mktemp("inputs"))
    return Walk(tmp_path_factory.mktemp("runs"), inputs)


# ---------------------------------------------------------------------------------------------
# How an option is shown to act.


@dataclass(frozen=True)
class Changes:
    """Given with ``args``, the run's part ``shows`` differs from the same run's without them.

    ``context`` is given to both runs (where the option applies); ``base`` names the
    :data:`BASES` command line [default: the command's own]."""

    args: tuple[str, ...]
    shows: str
    context: tuple[str, ...] = ()
    base: str | None = None
    exit: int = 0
    """The exit code of the run with the option."""

    def check(self, walk: Walk, command: str, option: str) -> None:
        assert option in self.args, f"{self} does not give {option}"
        name = self.base or command
        before = walk.baseline(name, self.context)
        after = walk.base(name, (*self.context, *self.args))
        assert after.code == self.exit, after.stderr
        assert self.shows in {*before.parts, *after.parts}, f"no part {self.shows!r}"
        assert before.parts.get(self.shows) != after.parts.get(self.shows), (
            f"{option} left {self.shows} as it was; what differs: {_differing(before, after)}"
        )


@dataclass(frozen=True)
class Refused:
    """Where the option does nothing (``argv``), it is refused: exit 2, one line naming it,
    nothing written."""

    argv: tuple[str, ...]

    def check(self, walk: Walk, command: str, option: str) -> None:
        assert option in self.argv, f"{self} does not give {option}"
        done = walk.run(self.argv)
        lines = done.stderr.strip().splitlines()
        assert done.code == 2, done.stderr
        assert len(lines) == 1, done.stderr
        assert lines[0].startswith("error: "), lines[0]
        assert option in lines[0], lines[0]
        assert not list(done.directory.iterdir())


@dataclass(frozen=True)
class Effect:
    """The option's documented effect, which is no difference of output, asserted by
    ``shows`` (its docstring says what)."""

    shows: Callable[[Walk], None]

    def check(self, walk: Walk, command: str, option: str) -> None:
        self.shows(walk)


@dataclass(frozen=True)
class Cited:
    """A test elsewhere (its node id) shows what the option does where that needs what the
    walk does not start (a Spark session, a GPU); the test must exist."""

    node: str

    def check(self, walk: Walk, command: str, option: str) -> None:
        path, _, name = self.node.partition("::")
        source = (ROOT / path).read_text(encoding="utf-8")
        test = name.split("[")[0]
        assert re.search(rf"^def {test}\(", source, re.MULTILINE), f"no test {self.node}"


# ---------------------------------------------------------------------------------------------
# The command lines the checks add options to, and the documented effects.

DOCS = ("{docs}", "-o", "out")
JACCARD = ("--metric", "jaccard", "--threshold", "0.5", "-o", "out")

BASES: dict[str, Base] = {
    "dedup": Base(("dedup", *DOCS)),
    "dedup csv": Base(("dedup", "{csv}", "-o", "out")),
    "dedup data": Base(("dedup", "{data}", "-o", "out")),
    "dedup bad": Base(("dedup", "{bad}", "-o", "out")),
    "dedup index": Base(("dedup", *DOCS), _copy("part_index", "seen.ndx"), index=True),
    "compare": Base(("compare", "{a_txt}", "{b_txt}")),
    "compare html": Base(("compare", "{a_html}", "{b_html}")),
    "compare crawl": Base(("compare", "{crawl}", "{crawl}")),
    "contamination": Base(("contamination", *DOCS, "--against", "{eval}")),
    "contamination bad": Base(("contamination", "{bad}", "-o", "out", "--against", "{eval}")),
    "index create": Base(("index", "create", "seen.ndx")),
    "index add": Base(
        ("index", "add", "seen.ndx", "{docs}"), _copy("empty_index", "seen.ndx"), True
    ),
    "index add csv": Base(
        ("index", "add", "seen.ndx", "{csv}"), _copy("empty_index", "seen.ndx"), True
    ),
    "index add data": Base(
        ("index", "add", "seen.ndx", "{data}"), _copy("empty_index", "seen.ndx"), True
    ),
    "index add bad": Base(
        ("index", "add", "seen.ndx", "{bad}"), _copy("empty_index", "seen.ndx"), True
    ),
    "index add conflict": Base(  # the last document is indexed: its id stops the run
        ("index", "add", "seen.ndx", "{docs}"), _copy("last_index", "seen.ndx"), True
    ),
    "index add again": Base(
        ("index", "add", "seen.ndx", "{docs}", "--text-field", "body"),
        _copy("index", "seen.ndx"),
        True,
    ),
    "index query": Base(("index", "query", "{index}", "{docs}")),
    "index query csv": Base(("index", "query", "{index}", "{csv}")),
    "index query data": Base(("index", "query", "{index}", "{data}")),
    "index query bad": Base(("index", "query", "{index}", "{bad}")),
    "index query containment": Base(("index", "query", "{cindex}", "{docs}")),
    "index query text": Base(("index", "query", "{index}", "--text", "the licence")),
    "join": Base(("join", "{sets}", *JACCARD)),
    "join rows": Base(("join", "{rows}", *JACCARD)),
    "join edit": Base(("join", "{strings}", "--metric", "edit", "--threshold", "2", "-o", "out")),
    "join l1": Base(("join", "{counts}", "--metric", "l1", "--threshold", "4", "-o", "out")),
    "join l2": Base(("join", "{vecs}", "--metric", "l2", "--threshold", "0.5", "-o", "out")),
    "join parquet": Base(
        ("join", "{vectors_parquet}", "--metric", "cosine", "--threshold", "0.9", "-o", "out")
    ),
    "join crawl": Base(("join", "{crawl}", *JACCARD)),
    "mirrors": Base(("mirrors", "{crawl}", "-o", "out")),
    "mirrors table": Base(("mirrors", "{pages}", "-o", "out")),
    "mirrors bad": Base(
        ("mirrors", "{bad_pages}", "-o", "out", "--url-field", "url", "--html-field", "html")
    ),
    "plan": Base(("plan", "{docs}")),
    "plan csv": Base(("plan", "{csv}")),
    "plan data": Base(("plan", "{data}")),
    "plan bad": Base(("plan", "{bad}")),
    "report": Base(("report", "run"), _copy("run", "run")),
    "substrings": Base(("substrings", *DOCS)),
    "substrings bad": Base(("substrings", "{bad}", "-o", "out")),
    "warmup": Base(("warmup",)),
}
"""Each command's own command line (by its name), and others on other inputs."""


def _quiet(name: str) -> Effect:
    """``-q``: the run prints nothing (where it printed a summary without), and does the same
    work."""

    def shows(walk: Walk) -> None:
        loud = walk.baseline(name)
        quiet = walk.base(name, ("--quiet",))
        assert loud.parts["stdout"].strip(), f"{name} prints nothing anyway"
        assert (quiet.code, quiet.parts["stdout"], quiet.parts["stderr"]) == (0, "", "")
        same = {k: v for k, v in quiet.parts.items() if k not in ("stdout", "stderr")}
        assert same == {k: v for k, v in loud.parts.items() if k not in ("stdout", "stderr")}

    return Effect(shows)


def _overwrite(name: str) -> Effect:
    """``--overwrite``: a second run into the first one's output is refused without it, and
    replaces that output with it."""

    def shows(walk: Walk) -> None:
        base = BASES[name]
        directory = walk.directory(base.prepare)
        first = walk.run([*base.argv, "-q"], directory=directory)
        assert first.code == 0, first.stderr
        again = walk.run([*base.argv, "-q"], directory=directory)
        assert again.code != 0, again.stderr
        assert "--overwrite" in again.stderr, again.stderr
        replaced = walk.run([*base.argv, "-q", "--overwrite"], directory=directory)
        assert replaced.code == 0, replaced.stderr

    return Effect(shows)


def _resumes(walk: Walk) -> None:
    """``--resume``: a run that failed after its last checkpoint (the disk full while writing)
    continues from it (``resumed_after``), to the outputs of a run that never failed; without
    it the run starts again."""
    from neardup.jobs import dedup as local_job

    directory = walk.directory()

    def no_space(*args: object) -> None:
        raise OSError(28, "No space left on device")

    for resume in ((), ("--resume",)):
        with pytest.MonkeyPatch.context() as patch:
            patch.setattr(local_job, "_write_outputs", no_space)
            failed = walk.run(["dedup", *DOCS, "-q"], directory=directory)
        assert failed.code == 1, failed.stderr
        assert "No space left" in failed.stderr, failed.stderr
        done = walk.run(["dedup", *DOCS, "-q", *resume], directory=directory)
        assert done.code == 0, done.stderr
        summary = json.loads((directory / "out" / "summary.json").read_text())
        assert summary.get("resumed_after") == ("find" if resume else None)
        outputs = {
            k: v
            for k, v in done.parts.items()
            if k.startswith("out/") and not k.startswith("out/summary.json")
        }
        assert outputs == {k: v for k, v in walk.baseline("dedup").parts.items() if k in outputs}, (
            "--resume changed the outputs"
        )
        assert set(outputs) >= {"out/clusters.jsonl", "out/pairs.jsonl", "out/kept.jsonl"}
        shutil.rmtree(directory / "out")


def _model(walk: Walk) -> None:
    """``--model``: the embedding method encodes the texts with the model (a small model2vec
    static model): its pairs are those of the texts' cosines, which no saved vectors gave."""
    texts = [json.loads(line)["text"] for line in walk.inputs["docs"].read_text().splitlines()]
    model = str(_static_model(walk.directory(), texts))
    method = ("--method", "embedding", "--threshold", "0.9")
    saved = walk.base("dedup", (*method, "--embeddings", "{embeddings}"))
    encoded = walk.base("dedup", (*method, "--model", model))
    again = walk.base("dedup", (*method, "--model", model))
    assert encoded.code == 0, encoded.stderr
    assert encoded.parts["out/pairs.jsonl"] == again.parts["out/pairs.jsonl"]
    assert encoded.parts["out/pairs.jsonl"] != saved.parts["out/pairs.jsonl"]
    refused = walk.run(["dedup", *DOCS, *method, "--model", model, "--device", "cuda"])
    assert refused.code == 2, refused.stderr
    assert "--device" in refused.stderr, refused.stderr


def _version(walk: Walk) -> None:
    """``neardup --version`` prints the version."""
    from neardup import __version__

    done = walk.run(["--version"])
    assert (done.code, done.stdout.strip()) == (0, f"neardup, version {__version__}")


def _debug(walk: Walk) -> None:
    """``neardup --debug``: an error's traceback, not only its one line."""
    argv = ["dedup", "missing.jsonl", "-o", "out"]
    plain, debugged = walk.run(argv), walk.run(["--debug", *argv])
    assert plain.code == debugged.code == 1
    assert len(plain.stderr.strip().splitlines()) == 1, plain.stderr
    assert "Traceback (most recent call last)" in debugged.stderr


SERVED = ("--port", "0", "--token-file", "{tokens}")
"""``neardup serve``'s options in the serve checks: any free port, a token."""


def _serve(walk: Walk, args: Sequence[str]) -> tuple[int, str, tuple[int, ...]]:
    """``neardup serve seen.ndx *args`` in this process, up to listening, where the requests
    are answered by the application the command built instead of by uvicorn's loop.

    Returns the exit code, the start-up line and the statuses of a read without a token, then
    a write of three documents (about 2 kB) without one and with one.
    """
    import uvicorn

    from tests.service.conftest import App

    directory = walk.directory(_copy("index", "seen.ndx"))
    statuses: list[int] = []
    documents = {"documents": [{"id": f"new{i}", "text": "word " * 150} for i in range(3)]}

    def answer(server: uvicorn.Server, sockets: Any = None) -> None:
        app = App(directory / "seen.ndx", server.config.app)
        with app.client(token=None) as anonymous, app.client(token="s3cret-token") as client:
            statuses.append(anonymous.get("/v1/info").status_code)
            statuses.append(anonymous.post("/v1/documents", json=documents).status_code)
            statuses.append(client.post("/v1/documents", json=documents).status_code)

    printed = io.StringIO()
    with (
        pytest.MonkeyPatch.context() as patch,
        contextlib.redirect_stderr(printed),
        contextlib.redirect_stdout(io.StringIO()),
    ):
        patch.setattr(uvicorn.Server, "run", answer)
        patch.delenv("NEARDUP_TOKENS", raising=False)
        patch.chdir(directory)
        code = main(["serve", "seen.ndx", *walk.argv(args)])
    return code, printed.getvalue().strip(), tuple(statuses)


def _any_port(served: tuple[int, str, tuple[int, ...]]) -> tuple[int, str, tuple[int, ...]]:
    """A serve run's outcome with the port it got (``--port 0``) left out."""
    code, line, statuses = served
    return code, re.sub(r":\d+ \(", ":PORT (", line), statuses


@dataclass(frozen=True)
class Serves:
    """``neardup serve`` given ``args`` besides ``base`` differs from it without them in
    ``shows``: the exit code (0), the start-up line (1) or the requests' statuses (2) of
    :func:`_serve`."""

    args: tuple[str, ...]
    shows: int
    base: tuple[str, ...] = SERVED

    def check(self, walk: Walk, command: str, option: str) -> None:
        assert option in self.args, f"{self} does not give {option}"
        before = _any_port(_serve(walk, self.base))
        assert before == _any_port(_serve(walk, self.base)), "serve differs run to run"
        after = _any_port(_serve(walk, (*self.base, *self.args)))
        assert after[0] == 0, after[1]
        assert before[self.shows] != after[self.shows], (before, after)


Check = Changes | Refused | Effect | Cited | Serves
"""One way an option is shown to act."""


def _port(walk: Walk) -> None:
    """``--port N``: the service listens on N (the start-up line says so); one out of range is
    refused."""
    import socket

    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    code, line, statuses = _serve(walk, (*SERVED[2:], "--port", str(port)))
    assert code == 0, line
    assert f"listening on http://127.0.0.1:{port} (" in line, line
    assert statuses == _serve(walk, SERVED)[2]
    refused = walk.run(["serve", "{index}", "--port", "70000"])
    assert refused.code == 2, refused.stderr
    assert refused.stderr.startswith("error: --port"), refused.stderr


# ---------------------------------------------------------------------------------------------
# The table: every (command, option) --help lists, and how it is shown to act.

SIMHASH = ("--sketch", "simhash")
SPARK_DEDUP = "tests/engine/test_spark.py::test_the_command_line_engine_flag"
SPARK_JOIN = "tests/integration/test_cli_help_walk.py::test_join_runs_on_spark_as_its_options_say"
UNITS = ("--unit", "line")
EMBEDDED = ("--method", "embedding", "--embeddings", "{embeddings}")
BOTH = ("--method", "minhash+embedding", "--embeddings", "{embeddings}")


def _dedup(*args: str) -> Refused:
    return Refused(("dedup", *DOCS, *args))


def _join(*args: str) -> Refused:
    return Refused(("join", "{sets}", *JACCARD, *args))


WALK: dict[tuple[str, str], tuple[Check, ...]] = {
    # dedup
    ("dedup", "--add-to-index"): (
        Changes(("--add-to-index",), "index", ("--against", "seen.ndx"), "dedup index"),
        _dedup("--add-to-index"),
    ),
    ("dedup", "--against"): (
        Changes(("--against", "seen.ndx"), "out/kept.jsonl", (), "dedup index"),
    ),
    ("dedup", "--annotate"): (Changes(("--annotate",), "out/annotated.jsonl"),),
    ("dedup", "--bands"): (Changes(("--bands", "2", "--rows", "60"), "out/pairs.jsonl"),),
    ("dedup", "--rows"): (Changes(("--bands", "2", "--rows", "60"), "out/pairs.jsonl"),),
    ("dedup", "--batch-mb"): (
        Changes(("--batch-mb", "0.001"), "out/summary.json:params"),
        _dedup("--engine", "spark", "--batch-mb", "1"),
    ),
    ("dedup", "--bbits"): (
        Changes(("--bbits", "1"), "out/pairs.jsonl", ("--sketch", "bbit")),
        _dedup("--bbits", "1"),
    ),
    ("dedup", "--cluster"): (Changes(("--cluster", "center"), "out/clusters.jsonl"),),
    ("dedup", "--compress"): (
        Changes(("--compress", "gzip"), "out/kept.jsonl.gz"),
        _dedup("--engine", "spark", "--compress", "gzip"),
    ),
    ("dedup", "--config"): (Changes(("--config", "{config}"), "out/pairs.jsonl"),),
    ("dedup", "--cosine-threshold"): (
        Changes(("--cosine-threshold", "0.5"), "out/pairs.jsonl", BOTH),
        _dedup("--cosine-threshold", "0.5"),
        _dedup(*EMBEDDED, "--cosine-threshold", "0.5"),
    ),
    ("dedup", "--device"): (
        Cited("tests/semantic/test_bert.py::test_the_gpu_path_is_sentence_transformers"),
        _dedup(*EMBEDDED, "--device", "cpu"),
        _dedup("--device", "cuda"),
    ),
    ("dedup", "--embeddings"): (
        Changes(("--embeddings", "{embeddings}"), "out/pairs.jsonl", ("--method", "embedding")),
        _dedup("--embeddings", "{embeddings}"),
    ),
    ("dedup", "--encoding"): (
        Changes(("--encoding", "cp1252"), "out/kept.csv", (), "dedup csv"),
        _dedup("--encoding", "cp1252"),
    ),
    ("dedup", "--engine"): (
        Cited(SPARK_DEDUP),
        _dedup(*EMBEDDED, "--engine", "spark"),
    ),
    ("dedup", "--explain"): (
        Changes(("--explain",), "out/pairs.jsonl"),
        _dedup("--pairs", "none", "--explain"),
    ),
    ("dedup", "--family"): (Changes(("--family", "containment"), "out/pairs.jsonl"),),
    ("dedup", "--fingerprint"): (Changes(("--fingerprint", "rabin"), "out/pairs.jsonl"),),
    ("dedup", "--format"): (
        Changes(("--format", "jsonl"), "out/kept.jsonl", (), "dedup data"),
        _dedup("--engine", "spark", "--format", "csv"),
    ),
    ("dedup", "--hamming"): (
        Changes(("--hamming", "30"), "out/pairs.jsonl", SIMHASH),
        _dedup("--hamming", "3"),
    ),
    ("dedup", "--hamming-blocks"): (
        Changes(("--hamming-blocks", "10"), "out/summary.json", SIMHASH),
        _dedup("--hamming-blocks", "5"),
        _dedup(*SIMHASH, "--search", "psm", "--hamming-blocks", "5"),
    ),
    ("dedup", "--host-templates"): (
        Changes(("--host-templates",), "out/pairs.jsonl", ("--id-field", "url")),
    ),
    ("dedup", "--html-extract"): (
        Changes(("--html-extract", "main"), "out/pairs.jsonl", ("--html-field", "html")),
        _dedup("--html-extract", "main"),
    ),
    ("dedup", "--html-field"): (Changes(("--html-field", "html"), "out/pairs.jsonl"),),
    ("dedup", "--id-field"): (Changes(("--id-field", "url"), "out/clusters.jsonl"),),
    ("dedup", "--idf-high"): (
        Changes(("--idf-high", "0.9"), "out/pairs.jsonl", ("--sketch", "canonical")),
        _dedup("--idf-high", "0.9"),
    ),
    ("dedup", "--idf-low"): (
        Changes(("--idf-low", "0.01"), "out/summary.json", ("--sketch", "canonical")),
        _dedup("--idf-low", "0.01"),
    ),
    ("dedup", "--keep"): (Changes(("--keep", "longest"), "out/clusters.jsonl"),),
    ("dedup", "--keep-by"): (Changes(("--keep-by", "quality"), "out/clusters.jsonl"),),
    ("dedup", "--keep-digits"): (
        Changes(("--keep-digits",), "out/removed.jsonl", UNITS),
        _dedup("--keep-digits"),
    ),
    ("dedup", "--keep-punctuation"): (
        Changes(("--keep-punctuation",), "out/clusters.jsonl", ("--config", "{strip}")),
    ),
    ("dedup", "--max-bucket-size"): (Changes(("--max-bucket-size", "2"), "out/summary.json"),),
    ("dedup", "--measure"): (Changes(("--measure", "containment"), "out/pairs.jsonl"),),
    ("dedup", "--memory-gb"): (
        Changes(("--memory-gb", "0.5"), "out/summary.json:params"),
        _dedup("--engine", "spark", "--memory-gb", "1"),
    ),
    ("dedup", "--method"): (Changes(("--method", "simhash"), "out/pairs.jsonl"),),
    ("dedup", "--min-doc-chars"): (
        Changes(("--min-doc-chars", "400"), "out/dropped.jsonl", UNITS),
        _dedup("--min-doc-chars", "400"),
    ),
    ("dedup", "--min-unit-chars"): (
        Changes(("--min-unit-chars", "30"), "out/removed.jsonl", UNITS),
        _dedup("--min-unit-chars", "30"),
    ),
    ("dedup", "--model"): (
        Effect(_model),
        _dedup("--model", "m"),
        _dedup(*EMBEDDED, "--model", "m"),
    ),
    ("dedup", "--num-perm"): (Changes(("--num-perm", "32"), "out/pairs.jsonl"),),
    ("dedup", "--output"): (Changes(("--output", "other"), "other/clusters.jsonl"),),
    ("dedup", "--overwrite"): (_overwrite("dedup"),),
    ("dedup", "--pairs"): (
        Changes(("--pairs", "all"), "out/pairs.jsonl"),
        _dedup(*UNITS, "--pairs", "none"),
    ),
    ("dedup", "--preset"): (
        Changes(("--preset", "bing"), "out/pairs.jsonl", ("--sketch", "supershingle")),
        _dedup("--preset", "bing"),
    ),
    ("dedup", "--profile"): (Changes(("--profile", "sood-loguinov"), "out/pairs.jsonl"),),
    ("dedup", "--projection"): (
        Changes(("--projection", "sign"), "out/pairs.jsonl", SIMHASH),
        _dedup("--projection", "sign"),
    ),
    ("dedup", "--psm-budget"): (
        Changes(("--psm-budget", "1"), "out/pairs.jsonl", (*SIMHASH, "--search", "psm")),
        _dedup(*SIMHASH, "--psm-budget", "1"),
    ),
    ("dedup", "--quiet"): (_quiet("dedup"),),
    ("dedup", "--resume"): (
        Effect(_resumes),
        Cited("tests/integration/test_resume.py::test_a_killed_run_resumes_to_the_same_outputs"),
        _dedup("--resume", "--engine", "spark"),
    ),
    ("dedup", "--save-embeddings"): (
        Changes(("--save-embeddings",), "out/embeddings.npy", EMBEDDED),
        _dedup("--save-embeddings"),
    ),
    ("dedup", "--search"): (
        Changes(("--search", "psm"), "out/summary.json", SIMHASH),
        _dedup("--search", "psm"),
    ),
    ("dedup", "--seed"): (
        Changes(("--seed", "7"), "out/pairs.jsonl"),
        _dedup("--against", "{index}", "--seed", "42"),
    ),
    ("dedup", "--shingle"): (
        Changes(("--shingle", "char:9"), "out/pairs.jsonl"),
        _dedup("--against", "{index}", "--shingle", "char:9"),
    ),
    ("dedup", "--simhash-bits"): (
        Changes(("--simhash-bits", "128"), "out/pairs.jsonl", SIMHASH),
        _dedup("--simhash-bits", "128"),
    ),
    ("dedup", "--sketch"): (
        Changes(("--sketch", "minhash"), "out/pairs.jsonl"),
        _dedup("--against", "{index}", "--sketch", "oph"),
    ),
    ("dedup", "--skip-bad-records"): (Changes(("--skip-bad-records",), "exit", (), "dedup bad"),),
    ("dedup", "--spark-conf"): (Cited(SPARK_DEDUP), _dedup("--spark-conf", "a=b")),
    ("dedup", "--spark-master"): (Cited(SPARK_DEDUP), _dedup("--spark-master", "local[2]")),
    ("dedup", "--stem"): (Changes(("--stem", "english"), "out/pairs.jsonl"),),
    ("dedup", "--stopwords"): (Changes(("--stopwords", "@{stopwords}"), "out/pairs.jsonl"),),
    ("dedup", "--strip-punctuation"): (Changes(("--strip-punctuation",), "out/clusters.jsonl"),),
    ("dedup", "--text-field"): (Changes(("--text-field", "body"), "out/pairs.jsonl"),),
    ("dedup", "--threshold"): (Changes(("--threshold", "0.5"), "out/pairs.jsonl"),),
    ("dedup", "--tokenizer"): (Changes(("--tokenizer", "jieba"), "out/pairs.jsonl"),),
    ("dedup", "--unit"): (Changes(UNITS, "out/removed.jsonl"),),
    ("dedup", "--verify"): (Changes(("--verify", "signature"), "out/pairs.jsonl"),),
    ("dedup", "--weighting"): (
        Changes(("--weighting", "tfidf"), "out/pairs.jsonl", SIMHASH),
        _dedup("--weighting", "tfidf"),
    ),
}


def _compare(*args: str) -> Refused:
    return Refused(("compare", "{a_txt}", "{b_txt}", *args))


def _create(*args: str) -> Refused:
    return Refused(("index", "create", "seen.ndx", *args))


WALK.update(
    {
        ("compare", "--color"): (
            Changes(("--color", "always"), "stdout", ("--explain",)),
            _compare("--color", "always"),
        ),
        ("compare", "--explain"): (Changes(("--explain",), "stdout"),),
        ("compare", "--fingerprint"): (Changes(("--fingerprint", "rabin"), "stdout"),),
        ("compare", "--html-extract"): (
            Changes(("--html-extract", "main"), "stdout", (), "compare html"),
            _compare("--html-extract", "main"),
        ),
        ("compare", "--json"): (Changes(("--json",), "stdout"),),
        ("compare", "--keep-punctuation"): (
            Changes(("--keep-punctuation",), "stdout", ("--strip-punctuation",)),
        ),
        ("compare", "--num-perm"): (
            Changes(("--num-perm", "16"), "stdout"),
            _compare("--sketches", "simhash", "--num-perm", "16"),
        ),
        ("compare", "--preset"): (
            Changes(("--preset", "bing"), "stdout", ("--sketches", "supershingle")),
            _compare("--preset", "bing"),
        ),
        ("compare", "--projection"): (
            Changes(("--projection", "sign"), "stdout", ("--sketches", "simhash")),
            _compare("--projection", "sign"),
        ),
        ("compare", "--seed"): (Changes(("--seed", "7"), "stdout"),),
        ("compare", "--shingle"): (Changes(("--shingle", "char:9"), "stdout"),),
        ("compare", "--simhash-bits"): (
            Changes(("--simhash-bits", "128"), "stdout", ("--sketches", "simhash")),
            _compare("--simhash-bits", "128"),
        ),
        ("compare", "--sketches"): (Changes(("--sketches", "minhash"), "stdout"),),
        ("compare", "--stem"): (Changes(("--stem", "english"), "stdout"),),
        ("compare", "--stopwords"): (Changes(("--stopwords", "english"), "stdout"),),
        ("compare", "--strip-punctuation"): (Changes(("--strip-punctuation",), "stdout"),),
        ("compare", "--tokenizer"): (Changes(("--tokenizer", "jieba"), "stdout"),),
        ("compare", "--url-a"): (
            Changes(("--url-a", "https://old.example.com/p1.html"), "stdout", (), "compare crawl"),
            _compare("--url-a", "https://old.example.com/p1.html"),
        ),
        ("compare", "--url-b"): (
            Changes(("--url-b", "https://old.example.com/p1.html"), "stdout", (), "compare crawl"),
            _compare("--url-b", "https://old.example.com/p1.html"),
        ),
        # contamination
        ("contamination", "--against"): (
            Changes(("--against", "{pages}"), "out/contaminated.jsonl"),
        ),
        ("contamination", "--id-field"): (
            Changes(("--id-field", "url"), "out/contaminated.jsonl"),
        ),
        ("contamination", "--min-share"): (
            Changes(("--min-share", "0.9"), "out/contaminated.jsonl"),
        ),
        ("contamination", "--ngram"): (Changes(("--ngram", "8"), "out/contaminated.jsonl"),),
        ("contamination", "--output"): (
            Changes(("--output", "other"), "other/contaminated.jsonl"),
        ),
        ("contamination", "--overwrite"): (_overwrite("contamination"),),
        ("contamination", "--quiet"): (_quiet("contamination"),),
        ("contamination", "--skip-bad-records"): (
            Changes(("--skip-bad-records",), "exit", (), "contamination bad"),
        ),
        ("contamination", "--text-field"): (
            Changes(("--text-field", "body"), "out/contaminated.jsonl"),
        ),
        # index create
        ("index create", "--bands"): (Changes(("--bands", "4", "--rows", "32"), "stdout"),),
        ("index create", "--rows"): (Changes(("--bands", "4", "--rows", "32"), "stdout"),),
        ("index create", "--containment-sample"): (
            Changes(("--containment-sample", "4"), "stdout"),
        ),
        ("index create", "--fingerprint"): (Changes(("--fingerprint", "rabin"), "stdout"),),
        ("index create", "--hamming"): (
            Changes(("--hamming", "5"), "stdout", SIMHASH),
            _create("--hamming", "5"),
        ),
        ("index create", "--hamming-blocks"): (
            Changes(("--hamming-blocks", "8"), "stdout", SIMHASH),
            _create("--hamming-blocks", "8"),
        ),
        ("index create", "--keep-punctuation"): (
            Changes(("--keep-punctuation",), "stdout", ("--strip-punctuation",)),
        ),
        ("index create", "--max-bucket-size"): (Changes(("--max-bucket-size", "9"), "stdout"),),
        ("index create", "--method"): (Changes(("--method", "simhash"), "stdout"),),
        ("index create", "--num-perm"): (Changes(("--num-perm", "64"), "stdout"),),
        ("index create", "--projection"): (
            Changes(("--projection", "sign"), "stdout", SIMHASH),
            _create("--projection", "sign"),
        ),
        ("index create", "--psm-budget"): (
            Changes(("--psm-budget", "2"), "stdout", (*SIMHASH, "--search", "psm")),
            _create(*SIMHASH, "--psm-budget", "2"),
        ),
        ("index create", "--search"): (
            Changes(("--search", "psm"), "stdout", SIMHASH),
            _create("--search", "psm"),
        ),
        ("index create", "--seed"): (Changes(("--seed", "7"), "stdout"),),
        ("index create", "--shingle"): (Changes(("--shingle", "char:9"), "stdout"),),
        ("index create", "--simhash-bits"): (
            Changes(("--simhash-bits", "128"), "stdout", SIMHASH),
            _create("--simhash-bits", "128"),
        ),
        ("index create", "--sketch"): (Changes(("--sketch", "minhash"), "stdout"),),
        ("index create", "--stem"): (Changes(("--stem", "english"), "stdout"),),
        ("index create", "--stopwords"): (Changes(("--stopwords", "english"), "stdout"),),
        ("index create", "--strip-punctuation"): (Changes(("--strip-punctuation",), "stdout"),),
        ("index create", "--threshold"): (Changes(("--threshold", "0.5"), "stdout"),),
        ("index create", "--tokenizer"): (Changes(("--tokenizer", "jieba"), "stdout"),),
        # index add
        ("index add", "--batch-size"): (  # the batches before the one that fails stay
            Changes(("--batch-size", "5"), "index", (), "index add conflict", exit=1),
        ),
        ("index add", "--encoding"): (
            Changes(("--encoding", "cp1252"), "index", (), "index add csv"),
            Refused(("index", "add", "{index}", "{docs}", "--encoding", "cp1252")),
        ),
        ("index add", "--format"): (Changes(("--format", "jsonl"), "index", (), "index add data"),),
        ("index add", "--html-extract"): (
            Changes(("--html-extract", "main"), "index", ("--html-field", "html")),
            Refused(("index", "add", "{index}", "{docs}", "--html-extract", "main")),
        ),
        ("index add", "--html-field"): (Changes(("--html-field", "html"), "index"),),
        ("index add", "--id-field"): (Changes(("--id-field", "url"), "index"),),
        ("index add", "--quiet"): (_quiet("index add"),),
        ("index add", "--skip-bad-records"): (
            Changes(("--skip-bad-records",), "index", (), "index add bad"),
        ),
        ("index add", "--skip-existing"): (
            Changes(("--skip-existing",), "exit", (), "index add again"),
            Refused(("index", "add", "{index}", "{docs}", "--skip-existing", "--upsert")),
        ),
        ("index add", "--text-field"): (Changes(("--text-field", "body"), "index"),),
        ("index add", "--upsert"): (Changes(("--upsert",), "index", (), "index add again"),),
        # index query
        ("index query", "--encoding"): (
            Changes(("--encoding", "cp1252"), "stdout", (), "index query csv"),
            Refused(("index", "query", "{index}", "{docs}", "--encoding", "cp1252")),
        ),
        ("index query", "--format"): (
            Changes(("--format", "jsonl"), "stdout", (), "index query data"),
            Refused(("index", "query", "{index}", "--text", "a", "--format", "csv")),
        ),
        ("index query", "--html-extract"): (
            Changes(("--html-extract", "main"), "stdout", ("--html-field", "html")),
            Refused(("index", "query", "{index}", "{docs}", "--html-extract", "main")),
        ),
        ("index query", "--html-field"): (Changes(("--html-field", "html"), "stdout"),),
        ("index query", "--id-field"): (Changes(("--id-field", "url"), "stdout"),),
        ("index query", "--measure"): (
            Changes(("--measure", "containment"), "stdout", (), "index query containment"),
        ),
        ("index query", "--skip-bad-records"): (
            Changes(("--skip-bad-records",), "exit", (), "index query bad"),
        ),
        ("index query", "--text"): (
            Changes(("--text", "another text"), "stdout", (), "index query text"),
        ),
        ("index query", "--text-field"): (Changes(("--text-field", "body"), "stdout"),),
        ("index query", "--threshold"): (Changes(("--threshold", "0.3"), "stdout"),),
        ("index query", "--top-k"): (Changes(("--top-k", "1"), "stdout"),),
    }
)

ROWS = ("--entity-field", "user", "--item-field", "movie")
L1 = ("join", "{counts}", "--metric", "l1", "--threshold", "4")
L1_UNARY = ("--family", "unary")


def _out(*argv: str) -> Refused:
    return Refused((*argv, "-o", "out"))


WALK.update(
    {
        # join
        ("join", "--bands"): (Changes(("--bands", "2", "--rows", "3"), "out/pairs.jsonl"),),
        ("join", "--rows"): (Changes(("--bands", "2", "--rows", "3"), "out/pairs.jsonl"),),
        ("join", "--bucket-width"): (
            Changes(("--bucket-width", "1"), "out/summary.json", (), "join l2"),
            _join("--bucket-width", "1"),
            _out(*L1, *L1_UNARY, "--bucket-width", "1"),
        ),
        ("join", "--engine"): (
            Cited(SPARK_JOIN),
            _out("join", "{bits}", "--metric", "hamming", "--threshold", "3", "--engine", "spark"),
        ),
        ("join", "--entity-field"): (
            Changes(ROWS, "out/pairs.jsonl", (), "join rows"),
            _out("join", "{vecs}", "--metric", "cosine", "--threshold", "0.5", *ROWS[:2]),
        ),
        ("join", "--item-field"): (
            Changes(ROWS, "out/pairs.jsonl", (), "join rows"),
            _out("join", "{vecs}", "--metric", "cosine", "--threshold", "0.5", *ROWS[2:]),
        ),
        ("join", "--exact"): (
            Changes(("--exact",), "out/summary.json"),
            _out("join", "{vecs}", "--metric", "cosine", "--threshold", "0.5", "--exact"),
        ),
        ("join", "--family"): (
            Changes(("--family", "unary"), "out/summary.json", (), "join l1"),
            _join("--family", "unary"),
        ),
        ("join", "--html-extract"): (
            Changes(("--html-extract", "main"), "out/pairs.jsonl", (), "join crawl"),
            _join("--html-extract", "main"),
        ),
        ("join", "--id-field"): (
            Changes(("--id-field", "name"), "out/pairs.jsonl"),
            _out("join", "{vecs}", "--metric", "cosine", "--threshold", "0.5", "--id-field", "x"),
        ),
        ("join", "--items-field"): (
            Changes(("--items-field", "tags"), "out/pairs.jsonl"),
            _out(
                "join", "{vecs}", "--metric", "cosine", "--threshold", "0.5", "--items-field", "x"
            ),
        ),
        ("join", "--max-bucket-size"): (
            Changes(("--max-bucket-size", "2"), "out/pairs.jsonl"),
            _join("--exact", "--max-bucket-size", "2"),
        ),
        ("join", "--max-value"): (
            Changes(("--max-value", "100"), "out/summary.json", L1_UNARY, "join l1"),
            _join("--max-value", "100"),
            _out(*L1, "--max-value", "100"),
        ),
        ("join", "--memory-gb"): (
            Changes(("--memory-gb", "0.5"), "out/summary.json"),
            _join("--exact", "--memory-gb", "1"),
        ),
        ("join", "--metric"): (Changes(("--metric", "containment"), "out/pairs.jsonl"),),
        ("join", "--output"): (Changes(("--output", "other"), "other/pairs.jsonl"),),
        ("join", "--overwrite"): (_overwrite("join"),),
        ("join", "--qgram"): (
            Changes(("--qgram", "3"), "out/summary.json", (), "join edit"),
            _join("--qgram", "3"),
        ),
        ("join", "--quiet"): (_quiet("join"),),
        ("join", "--rating-field"): (
            Changes(
                ("--rating-field", "stars", "--ratings", "set:3"),
                "out/pairs.jsonl",
                ROWS,
                "join rows",
            ),
            _join("--rating-field", "stars"),
        ),
        ("join", "--ratings"): (
            Changes(
                ("--rating-field", "stars", "--ratings", "set:3"),
                "out/pairs.jsonl",
                ROWS,
                "join rows",
            ),
            _join("--ratings", "set:3"),
        ),
        ("join", "--recall"): (
            Changes(("--recall", "0.5"), "out/summary.json"),
            _join("--exact", "--recall", "0.5"),
            _join("--bands", "2", "--rows", "3", "--recall", "0.5"),
        ),
        ("join", "--seed"): (
            Changes(("--seed", "7"), "out/summary.json"),
            _join("--exact", "--seed", "7"),
        ),
        ("join", "--spark-conf"): (Cited(SPARK_JOIN), _join("--spark-conf", "a=b")),
        ("join", "--spark-master"): (Cited(SPARK_JOIN), _join("--spark-master", "local[2]")),
        ("join", "--text-field"): (
            Changes(("--text-field", "name"), "out/pairs.jsonl", (), "join edit"),
            _join("--text-field", "name"),
        ),
        ("join", "--threshold"): (Changes(("--threshold", "0.8"), "out/pairs.jsonl"),),
        ("join", "--vector-field"): (
            Changes(
                ("--vector-field", "w"), "out/pairs.jsonl", ("--vector-field", "v"), "join parquet"
            ),
            _join("--vector-field", "v"),
        ),
        # mirrors
        ("mirrors", "--copy-threshold"): (
            Changes(("--copy-threshold", "0.95"), "out/mirrors.jsonl"),
        ),
        ("mirrors", "--html-extract"): (
            Changes(("--html-extract", "altavista"), "out/mirrors.jsonl"),
            _out(
                "mirrors",
                "{pages}",
                "--url-field",
                "url",
                "--text-field",
                "text",
                "--html-extract",
                "main",
            ),
        ),
        ("mirrors", "--html-field"): (
            Changes(
                ("--html-field", "html"), "out/pages.jsonl", ("--url-field", "url"), "mirrors table"
            ),
            _out("mirrors", "{crawl}", "--html-field", "html"),
        ),
        ("mirrors", "--min-coverage"): (Changes(("--min-coverage", "0.3"), "out/mirrors.jsonl"),),
        ("mirrors", "--output"): (Changes(("--output", "other"), "other/mirrors.jsonl"),),
        ("mirrors", "--overwrite"): (_overwrite("mirrors"),),
        ("mirrors", "--quiet"): (_quiet("mirrors"),),
        ("mirrors", "--seed"): (Changes(("--seed", "7"), "out/mirrors.jsonl"),),
        ("mirrors", "--skip-bad-records"): (
            Changes(("--skip-bad-records",), "exit", (), "mirrors bad"),
        ),
        ("mirrors", "--text-field"): (
            Changes(
                ("--text-field", "text"), "out/pages.jsonl", ("--url-field", "url"), "mirrors table"
            ),
            _out("mirrors", "{crawl}", "--text-field", "text"),
        ),
        ("mirrors", "--threshold"): (Changes(("--threshold", "0.5"), "out/pages.jsonl"),),
        ("mirrors", "--url-field"): (
            Changes(
                ("--url-field", "url"), "out/pages.jsonl", ("--html-field", "html"), "mirrors table"
            ),
            _out("mirrors", "{crawl}", "--url-field", "url"),
        ),
        # plan
        ("plan", "--config"): (Changes(("--config", "{config}"), "plan.toml"),),
        ("plan", "--encoding"): (
            Changes(("--encoding", "cp1252"), "plan.toml", (), "plan csv"),
            Refused(("plan", "{docs}", "--encoding", "cp1252")),
        ),
        ("plan", "--format"): (Changes(("--format", "jsonl"), "plan.toml", (), "plan data"),),
        ("plan", "--html-extract"): (
            Changes(("--html-extract", "main"), "plan.toml", ("--html-field", "html")),
            Refused(("plan", "{docs}", "--html-extract", "main")),
        ),
        ("plan", "--html-field"): (Changes(("--html-field", "html"), "plan.toml"),),
        ("plan", "--id-field"): (Changes(("--id-field", "url"), "plan.toml"),),
        ("plan", "--output"): (Changes(("--output", "other.toml"), "other.toml"),),
        ("plan", "--overwrite"): (_overwrite("plan"),),
        ("plan", "--precision"): (Changes(("--precision", "0.99"), "plan.toml"),),
        ("plan", "--quiet"): (_quiet("plan"),),
        ("plan", "--recall"): (Changes(("--recall", "0.5"), "plan.toml"),),
        ("plan", "--sample"): (Changes(("--sample", "4"), "plan.toml"),),
        ("plan", "--sample-mb"): (Changes(("--sample-mb", "0.002"), "plan.toml"),),
        ("plan", "--seed"): (Changes(("--seed", "7"), "plan.toml", ("--sample", "4")),),
        ("plan", "--skip-bad-records"): (Changes(("--skip-bad-records",), "exit", (), "plan bad"),),
        ("plan", "--text-field"): (Changes(("--text-field", "body"), "plan.toml"),),
        ("plan", "--threshold"): (Changes(("--threshold", "0.5"), "plan.toml"),),
        # report
        ("report", "--clusters"): (
            Changes(("--clusters", "0"), "run/report.html"),
            Refused(("report", "{units_run}", "--clusters", "3")),
        ),
        ("report", "--no-texts"): (
            Changes(("--no-texts",), "run/report.html"),
            Refused(("report", "{units_run}", "--no-texts")),
        ),
        ("report", "--output"): (Changes(("--output", "page.html"), "page.html"),),
        ("report", "--overwrite"): (_overwrite("report"),),
        ("report", "--pairs-per-band"): (
            Changes(("--pairs-per-band", "0"), "run/report.html"),
            Refused(("report", "{units_run}", "--pairs-per-band", "1")),
        ),
        ("report", "--quiet"): (_quiet("report"),),
        ("report", "--seed"): (
            Changes(("--seed", "7"), "run/report.html", ("--pairs-per-band", "1")),
            Refused(("report", "{units_run}", "--seed", "7")),
        ),
        # serve
        ("serve", "--auth-reads"): (Serves(("--auth-reads",), 2),),
        ("serve", "--host"): (Serves(("--host", "localhost"), 1),),
        ("serve", "--max-batch"): (Serves(("--max-batch", "2"), 2),),
        ("serve", "--max-body-mb"): (Serves(("--max-body-mb", "0.001"), 2),),
        ("serve", "--no-auth"): (
            Serves(("--no-auth",), 2, ("--port", "0")),
            Refused(("serve", "{index}", "--port", "0", "--token-file", "{tokens}", "--no-auth")),
        ),
        ("serve", "--port"): (Effect(_port),),
        ("serve", "--token-file"): (Serves(("--token-file", "{tokens}"), 0, ("--port", "0")),),
        # substrings
        ("substrings", "--against"): (Changes(("--against", "{eval}"), "out/repeats.jsonl"),),
        ("substrings", "--id-field"): (Changes(("--id-field", "url"), "out/repeats.jsonl"),),
        ("substrings", "--memory-gb"): (Changes(("--memory-gb", "0.000001"), "out/summary.json"),),
        ("substrings", "--min-tokens"): (Changes(("--min-tokens", "10"), "out/repeats.jsonl"),),
        ("substrings", "--output"): (Changes(("--output", "other"), "other/repeats.jsonl"),),
        ("substrings", "--overwrite"): (_overwrite("substrings"),),
        ("substrings", "--quiet"): (_quiet("substrings"),),
        ("substrings", "--skip-bad-records"): (
            Changes(("--skip-bad-records",), "exit", (), "substrings bad"),
        ),
        ("substrings", "--text-field"): (Changes(("--text-field", "body"), "out/repeats.jsonl"),),
        # warmup
        ("warmup", "--all"): (Changes(("--all",), "stderr"),),
    }
)
"""How each option acts; :func:`test_every_listed_option_has_an_entry` keeps it complete."""

GROUP: dict[str, Check] = {"--debug": Effect(_debug), "--version": Effect(_version)}
"""The options of ``neardup`` itself."""


# ---------------------------------------------------------------------------------------------
# The tests.


def _listed() -> set[tuple[str, str]]:
    return {
        (name, option)
        for name, command in leaf_commands().items()
        for option in command_options(command)
    }


def test_every_listed_option_has_an_entry() -> None:
    """A new option needs a row in WALK saying how it acts; a row of a gone option goes."""
    listed = _listed()
    assert not listed - set(WALK), f"options without a row in WALK: {sorted(listed - set(WALK))}"
    assert not set(WALK) - listed, f"rows of options no command lists: {sorted(set(WALK) - listed)}"
    assert set(GROUP) == command_options(cli)


_OPTION_COLUMN = re.compile(r"^  (-[^ ].*?)(?:  |$)")
"""The first column of an option's line in ``--help`` (``-o, --output PATH``)."""


@pytest.mark.parametrize("name", ["", *sorted(leaf_commands())])
def test_help_lists_the_commands_options(name: str) -> None:
    """``--help`` (and ``-h``) prints every option of the command object, and no other (for
    ``neardup`` itself too: ``--debug``, ``--version``)."""
    done = run(*name.split(), "--help")
    command = leaf_commands()[name] if name else cli
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith(f"Usage: neardup {name} ".replace("  ", " "))
    shown = {
        option
        for line in done.stdout.splitlines()
        if (column := _OPTION_COLUMN.match(line))
        for option in re.findall(r"--[a-z][a-z0-9-]*", column.group(1))
    }
    assert shown == command_options(command) | {"--help"}
    assert "-h, --help" in done.stdout
    assert run(*name.split(), "-h").stdout == done.stdout


WALKED = sorted(WALK.items())


@pytest.mark.slow  # 240 runs: about 30 s on 2 cores with the kernels compiled
@pytest.mark.parametrize(
    ("key", "checks"), WALKED, ids=[f"{name} {option}" for (name, option), _ in WALKED]
)
def test_the_option_acts(key: tuple[str, str], checks: tuple[Check, ...], walk: Walk) -> None:
    """Each way WALK says the option acts holds."""
    command, option = key
    for check in checks:
        check.check(walk, command, option)


@pytest.mark.slow
@pytest.mark.parametrize("option", sorted(GROUP))
def test_the_group_option_acts(option: str, walk: Walk) -> None:
    """``neardup --debug`` and ``--version`` do what they say."""
    GROUP[option].check(walk, "", option)


@pytest.mark.spark
def test_join_runs_on_spark_as_its_options_say(tmp_path: Path) -> None:
    """``join --engine spark`` (cited by the walk for ``--engine``, ``--spark-master`` and
    ``--spark-conf``): the local engine's pairs, on a session with the master and the setting
    given; a setting that is no KEY=VALUE is refused."""
    pytest.importorskip("pyspark")
    import pyarrow as pa
    import pyarrow.parquet as pq
    from pyspark.sql import SparkSession

    records = _join_inputs(tmp_path)["sets"].read_text().splitlines()
    sets = tmp_path / "sets.parquet"  # what the Spark join reads: one Parquet file
    pq.write_table(pa.Table.from_pylist([json.loads(line) for line in records]), sets)
    options = ("--metric", "jaccard", "--threshold", "0.5", "--items-field", "items", "-q")
    local = run("join", sets, *options, "-o", tmp_path / "local")
    assert local.returncode == 0, local.stderr
    running = SparkSession.getActiveSession()
    spark = ("--engine", "spark", "--spark-master", "local[2]")
    done = run("join", sets, *options, *spark, "--spark-conf", "spark.sql.shuffle.partitions=3",
               "-o", tmp_path / "spark")  # fmt: skip
    assert done.returncode == 0, done.stderr
    pairs = (tmp_path / "local" / "pairs.jsonl").read_bytes()
    assert pairs
    assert (tmp_path / "spark" / "pairs.jsonl").read_bytes() == pairs
    session = SparkSession.getActiveSession()
    assert session is not None
    assert session.conf.get("spark.sql.shuffle.partitions") == "3"
    if running is None:  # a session this test started: the master given
        assert session.sparkContext.master == "local[2]"
        session.stop()
    bad = run("join", sets, *options, *spark, "--spark-conf", "no-equals", "-o", tmp_path / "x")
    assert bad.returncode == 2, bad.stderr
    assert "KEY=VALUE" in bad.stderr, bad.stderr


@pytest.mark.parametrize(
    "options", [("--family", "prefix"), ("--measure", "containment")], ids=["prefix", "containment"]
)
def test_max_bucket_size_is_refused_where_no_bucket_is_capped(
    options: tuple[str, ...], tmp_path: Path
) -> None:
    """``--max-bucket-size`` where the candidates come from no buckets (the exact families):
    refused, as the registry says which families read it."""
    source = _jsonl(tmp_path / "in.jsonl", _documents()[:3])
    done = run("dedup", source, "-o", tmp_path / "out", *options, "--max-bucket-size", "5")
    assert done.returncode == 2, done.stderr
    assert "--max-bucket-size" in done.stderr
