"""Decontamination against a plain-Python brute force, on real licence texts with planted items.

The truth is every (evaluation item, training document) pair sharing at least one word
N-gram, from :mod:`tests.reference`'s tokens (the normalisation docs/dedup.md defines), over
every pair; the command must list exactly those pairs with their counts, cover every shared
N-gram with its spans, and keep every other document.
"""

from __future__ import annotations

import json
import random
from pathlib import Path

import pytest

from neardup import ParameterError, ReadSpec, ShingleSpec
from neardup.jobs.contamination import contamination_files
from tests import reference

NGRAM = 13


@pytest.fixture(scope="module")
def corpus(licenses: list[dict[str, object]]) -> tuple[list[dict[str, str]], list[dict[str, str]]]:
    """Training records (400 licences, three with an evaluation item planted inside) and the
    evaluation items: windows of held-out licences, of training ones, one unrelated, one short.
    """
    rng = random.Random(7)
    texts = [str(r["text"]) for r in licenses]
    train = [{"id": f"t{i}", "text": texts[i]} for i in range(400)]
    items: list[dict[str, str]] = []
    for number, doc in enumerate([*rng.sample(range(400, len(texts)), 6), 3, 250]):
        words = texts[doc].split()
        start = rng.randrange(max(1, len(words) - 40))
        items.append({"id": f"q{number}", "text": " ".join(words[start : start + 30])})
    items.append({"id": "unrelated", "text": "the boiling point of water " * 4})
    items.append({"id": "short", "text": "only a few words"})
    for item, target in zip(items[:3], rng.sample(range(400), 3), strict=True):
        words = train[target]["text"].split()
        middle = len(words) // 2
        train[target]["text"] = " ".join([*words[:middle], item["text"], *words[middle:]])
    return train, items


def _ngrams(text: str) -> set[str]:
    return set(reference.shingles(text, ShingleSpec(unit="word", k=NGRAM)))


def _write(path: Path, records: list[dict[str, str]]) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in records), encoding="utf-8")
    return path


def _run(
    tmp_path: Path,
    corpus: tuple[list[dict[str, str]], list[dict[str, str]]],
    name: str,
    **options: object,
) -> tuple[list[dict[str, object]], dict[str, object]]:
    train, items = corpus
    out = tmp_path / name
    summary = contamination_files(
        [_write(tmp_path / "train.jsonl", train)],
        [_write(tmp_path / "eval.jsonl", items)],
        out,
        ngram=NGRAM,
        **options,  # type: ignore[arg-type]
    )
    lines = (out / "contaminated.jsonl").read_text(encoding="utf-8").splitlines()
    return [json.loads(line) for line in lines], summary


@pytest.mark.parametrize("min_share", [None, 0.5])
def test_pairs_equal_the_brute_force(
    tmp_path: Path,
    corpus: tuple[list[dict[str, str]], list[dict[str, str]]],
    min_share: float | None,
) -> None:
    train, items = corpus
    item_grams = {item["id"]: _ngrams(item["text"]) for item in items}
    truth = {}
    for doc in train:
        grams = _ngrams(doc["text"])
        for item in items:
            shared = grams & item_grams[item["id"]]
            wanted = len(shared) >= (min_share or 0) * len(item_grams[item["id"]])
            if shared and wanted:
                truth[(item["id"], doc["id"])] = len(shared)
    found, summary = _run(tmp_path, corpus, f"out-{min_share}", min_share=min_share)
    assert {(r["eval_id"], r["train_id"]): r["shared_ngrams"] for r in found} == truth
    planted = {("q0", d["id"]) for d in train if items[0]["text"] in d["text"]}
    assert planted
    assert planted <= set(truth)  # each planted item is found where it was put
    assert summary["counts"]["eval_items_too_short"] == 1  # type: ignore[index]
    # In training order, then evaluation order.
    place = {item["id"]: number for number, item in enumerate(items)}
    order = [(int(str(r["train_id"])[1:]), place[str(r["eval_id"])]) for r in found]
    assert order == sorted(order)
    # Every shared N-gram lies in the spans given, each span in the training text.
    texts = {d["id"]: d["text"] for d in train}
    for record in found:
        text = texts[str(record["train_id"])]
        covered = set().union(*(_ngrams(text[a:b]) for a, b in record["spans"]))  # type: ignore[union-attr]
        shared = _ngrams(text) & item_grams[str(record["eval_id"])]
        assert shared <= covered
    kept = (tmp_path / f"out-{min_share}" / "kept.jsonl").read_text().splitlines()
    removed = {str(r["train_id"]) for r in found}
    assert [json.loads(line)["id"] for line in kept] == [
        d["id"] for d in train if d["id"] not in removed
    ]
    assert summary["counts"]["removed"] == len(removed)  # type: ignore[index]


def test_a_small_batch_streams_to_the_same_outputs(
    tmp_path: Path, corpus: tuple[list[dict[str, str]], list[dict[str, str]]]
) -> None:
    whole, _ = _run(tmp_path, corpus, "whole")
    streamed, summary = _run(tmp_path, corpus, "streamed", read=ReadSpec(batch_bytes=4096))
    assert streamed == whole
    assert len(whole) >= 3
    bench = summary["benchmarks"][0]  # type: ignore[index]
    assert bench["items"] == 10
    assert bench["contaminated_items"] >= 3


def test_evaluation_sets_of_two_formats_and_odd_text(
    tmp_path: Path, corpus: tuple[list[dict[str, str]], list[dict[str, str]]]
) -> None:
    train, items = corpus
    odd = "lone \ud800 surrogate " + items[0]["text"]  # readers keep lone surrogates
    jsonl = tmp_path / "a.jsonl"
    jsonl.write_text(json.dumps({"id": "odd\ud800", "text": odd}) + "\n", encoding="utf-8")
    txt_dir = tmp_path / "b"
    txt_dir.mkdir()
    (txt_dir / "item.txt").write_text(items[1]["text"], encoding="utf-8")
    out = tmp_path / "out"
    summary = contamination_files([_write(tmp_path / "t.jsonl", train)], [jsonl, txt_dir], out)
    found = (out / "contaminated.jsonl").read_text(encoding="utf-8", errors="surrogatepass")
    assert '"odd\\ud800"' in found or "odd\ud800" in found
    assert [b["contaminated_items"] for b in summary["benchmarks"]] == [1, 1]  # type: ignore[index]


def test_bad_parameters_are_refused(
    tmp_path: Path, corpus: tuple[list[dict[str, str]], list[dict[str, str]]]
) -> None:
    few = _write(tmp_path / "t.jsonl", corpus[0][:3])
    for ngram in (0, 65):
        with pytest.raises(ParameterError, match=r"--ngram must be an int in \[1, 64\]"):
            contamination_files([few], [few], tmp_path / "a", ngram=ngram)
    with pytest.raises(ParameterError, match="--min-share must be a float in"):
        contamination_files([few], [few], tmp_path / "b", min_share=1.5)
    assert not (tmp_path / "a").exists()
    assert not (tmp_path / "b").exists()
