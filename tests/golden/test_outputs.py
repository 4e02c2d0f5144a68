"""The batch job's outputs are frozen: byte for byte what the engine before the columnar rewrite
(commit 9af5692) wrote, for every sketch kind and the main options, but for texts without a
token (empty, or only separators), which since 2026-11-24 are no duplicates of each other: the
sample's hashes were frozen again then, after checking that the only lines that changed were
those of its 21 empty licence texts (each now a cluster of its own, their 20 exact pairs gone).

``clusters.jsonl`` and ``pairs.jsonl`` (with ``--pairs all``, the only mode then) are compared
by SHA-256 on the bundled sample, and on the whole RFC corpus (slow). Since 2026-11-24 each
``clusters.jsonl`` line also carries ``similarity`` and ``min_similarity`` (checked against
exact Jaccard in ``tests/test_pipeline.py``): the hash is of the lines as they were, the first
three fields. Since 2026-11-27 a ``pairs.jsonl`` line names its exact similarity
``similarity`` and its identical-texts flag ``identical`` (they were ``jaccard`` and ``exact``):
the hash is of the lines with the old names, the same bytes otherwise. A change of any hash is a
change of results: find out why before updating a value here.
"""

from __future__ import annotations

import hashlib
import json
import re
import tarfile
from pathlib import Path

import pytest

from neardup import DedupConfig, dedup_files
from neardup.cli.options import apply_flags
from tests.conftest import SAMPLE, shared

FLAGS = {
    "default": {},
    "keep-longest": {"keep": "longest"},
    "minhash": {"sketch_kind": "minhash"},
    "minhash-lead": {"sketch_kind": "minhash-lead"},
    "bbit": {"sketch_kind": "bbit", "bbits": "1"},
    "bottomk": {"sketch_kind": "bottomk"},
    "supershingle": {"sketch_kind": "supershingle", "preset": "altavista-variant", "num_perm": 200},
    "weighted": {"sketch_kind": "weighted"},
    "simhash": {"method": "simhash"},
    "simhash-tfidf": {
        "method": "simhash",
        "shingle": "word:1",
        "weighting": "tfidf",
        "threshold": 0.9,
    },
    "char9-t07": {"shingle": "char:9", "threshold": 0.7, "strip_punctuation": True},
    "verify-signature": {"verify": "signature"},
    "verify-none": {"verify": "none", "threshold": 0.9},
    "rabin": {"fingerprint": "rabin"},
}

SAMPLE_SHA256 = {
    "default": (
        "6d75354d2515c38d156ef8b2bf7e175665c19d78da4d14272bdb7dbaa55063a2",
        "27e53936fbb38e3b54d4abb5053029f915a4ca60ed81cedf4395a9d62fc50ddd",
    ),
    "keep-longest": (
        "d4e6d4af60d45eba79fecd0e2d548b5fbe0e86d147abb6725c82d16031f8c144",
        "27e53936fbb38e3b54d4abb5053029f915a4ca60ed81cedf4395a9d62fc50ddd",
    ),
    "minhash": (
        "6c0b45d52ebe07f8abe6d001615879fcea7d84a46c0d2231e20920c30062c63c",
        "588a59c57a5577d30642b8e278210ba815ba365ae1533b2d12cca2b23d01af10",
    ),
    "minhash-lead": (
        "94229f48eac6b2a679f327ca8864bef2e3e47ed9e437f12bf37344d1fe7a8f9f",
        "112e78bef1b9dd9c17fe15f05abfe7eb2635ec94b9ba8538ada25a9a239cca50",
    ),
    "bbit": (
        "8d3b0fbc6799b7e4fe14702e3b9423e49f05fe66847e7b71e48b205cf15674b1",
        "17497c366048161b1d26fbd62ff64d9c475cf9f015ab31c41e32f05b5f4b388b",
    ),
    "bottomk": (
        "bce6696bbfbcc7a2296589b74c52ea1ae790a9125baa35fd25d3d2604922e136",
        "d04d935ed4aaaba0cbbc02b9a8652db0deaf4ba52190a5484e1e5ed18c6ad211",
    ),
    "supershingle": (
        "9bd1ee73ac02f6ffdc88ecca4dd16f61407e27628db90e3e3d4889d2d0f3a8da",
        "78e67cd56afc90f866abe2770a859de23304356d18c2a02b3025949f2208c4b1",
    ),
    "weighted": (
        "ff44b9a56736cdf279a2fb00217718149a63023f169227c093d35b2a205f4a61",
        "a89eab53bbf627747f4b5666ae1a8596e5ffa3cd882a2bc2a34913cefc94ac13",
    ),
    "simhash": (
        "2cd29a69599f467ee1252c0121b7db02d2abb5cec6e13f0b8ef84e552b1d73c1",
        "1b90d3fa089184cdaff43bddb8f614b6f5a85a4a1dad222bf44ae3e0b0fa3983",
    ),
    "simhash-tfidf": (
        "6a03137c3e3dec9e2bd03d800a096043075838770766ede160f81a268c5291d0",
        "c344b75cf9cf7660f452379a948f2d5e88543370ee34adecd1376df0e3fd3ae1",
    ),
    "char9-t07": (
        "b9e2d87e42762e54b28a8c1d58c8bff6db43dca19568e42f8d73d61290747eb2",
        "9a0c6b7b8bbc83b7917df6e8930d71e1246b551c537f237654ac3079e1026ed6",
    ),
    "verify-signature": (
        "e16a984e699e6f0ceff5f35a2bfe826e13203f780bd44da53d1927fdc96f4b39",
        "6d681fec0a882b9cb042663b7d95b411364da502837b3413a9744ed4608d9028",
    ),
    "verify-none": (
        "b7cdeed6c45b6299e9e1694850f0ab5e85edb9227dd3b8f828d3ec03d274f0d1",
        "68b67817c70479bb52e35eea63511a129101d67eb43239661c995eb2e1e2034c",
    ),
    "rabin": (
        "e7229dc26c22d64eb688f713fcf2242d0740c55a410d249e1dd56f4905b3a0a8",
        "b14f9122e2577e3245cf3ffdc1f85914dc8dc12508b3b755123353559c4fcf63",
    ),
}

RFC_SHA256 = (
    "209477f611c5fbabc55befc9cb9e4c95a42a54c327d1d6f5e4ce841753437da0",
    "9ad50bd5814bbde70768a08333901c376aaf56f7de7525955db7e3dd737d73c5",
)


def _hashes(output: Path) -> tuple[str, str]:
    frozen = "".join(
        json.dumps({key: record[key] for key in ("id", "cluster", "keep")}, ensure_ascii=False)
        + "\n"
        for record in map(json.loads, (output / "clusters.jsonl").read_text("utf-8").splitlines())
    )
    pairs = (
        (output / "pairs.jsonl")
        .read_bytes()
        .replace(b', "similarity": ', b', "jaccard": ')
        .replace(b', "identical": ', b', "exact": ')
    )
    return hashlib.sha256(frozen.encode()).hexdigest(), hashlib.sha256(pairs).hexdigest()


@pytest.mark.parametrize(
    "name", [pytest.param(n, marks=pytest.mark.slow) if n == "weighted" else n for n in FLAGS]
)
def test_outputs_are_byte_identical_to_the_previous_engine(tmp_path: Path, name: str) -> None:
    config = apply_flags(DedupConfig(pairs="all"), FLAGS[name])
    dedup_files([SAMPLE], tmp_path / "out", config)
    assert _hashes(tmp_path / "out") == SAMPLE_SHA256[name]


@pytest.mark.slow
def test_rfc_corpus_outputs_are_byte_identical_to_the_previous_engine(tmp_path: Path) -> None:
    archive = shared("rfc/rfc_txt.tar.xz")
    corpus = tmp_path / "rfc.jsonl"
    with tarfile.open(archive, "r:xz") as tar, corpus.open("w", encoding="utf-8") as out:
        for member in tar:
            match = re.search(r"/rfc(\d+)\.txt$", member.name)
            if not match or not member.isfile():
                continue
            f = tar.extractfile(member)
            assert f is not None
            text = f.read().decode("utf-8", "replace")
            out.write(json.dumps({"id": f"rfc{match.group(1)}", "text": text}) + "\n")
    dedup_files([corpus], tmp_path / "out", DedupConfig(pairs="all"))
    assert _hashes(tmp_path / "out") == RFC_SHA256
