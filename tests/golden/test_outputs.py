"""The batch job's outputs are frozen: byte for byte what the engine before the columnar rewrite
(commit 9af5692) wrote, for every sketch kind and the main options.

``clusters.jsonl`` and ``pairs.jsonl`` (with ``--pairs all``, the only mode then) are compared
by SHA-256 on the bundled sample, and on the whole RFC corpus (slow). A change of any hash is a
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
        "33d424f2b893ae1ddd6d58bb6b13e42750b6d71f21d4d4af65ef476f4778ed33",
        "470111041bb5053c219464820ac856cde5f681ec48703001dd285a60638e80c0",
    ),
    "keep-longest": (
        "78ec7d8153c9d610fcef71f2f559acc2de74a728bcbfbbe04210a755e2d00405",
        "470111041bb5053c219464820ac856cde5f681ec48703001dd285a60638e80c0",
    ),
    "minhash": (
        "66c3a15fed9d4931f44f7051d6f00833323b2289f6f1c88a7e9a093c8d7a117b",
        "fc26b0bd1f27d6076bdb49dd8040ad56f98dc52664141a63a407f6faf4715054",
    ),
    "minhash-lead": (
        "374ae49c528448f6855982a77301f6c59bc2e2e3d7021287367e29c00372c275",
        "c5f6ec26ab41fe85eec8b4588e30d54c44733e98a6a4f485a5f790c5173daa98",
    ),
    "bbit": (
        "192308740d0e1d435d81049f248a321a762b16c409fd703822d88a1fd6f561fb",
        "9408a47a86e524cee981a547cab8c4cd307e7410c288209985ee43d5895355fe",
    ),
    "bottomk": (
        "a6cfd8a4f7a647f000d884f70ebfcdf7020bf237731bc26c834a8d5d222d1a63",
        "04b7b48a50144d2edfa87eee441e56f186d77c3fa3c0992feda867554384bfb1",
    ),
    "supershingle": (
        "b5eaf502f268cd996885176c619462e8ce96f4a6874007b1f117d337d693ce97",
        "9c1b63cb488bf4b940c58870a0ef6515215dbeea30fe0fa62dbb871e16207034",
    ),
    "weighted": (
        "9241e3df14c5eaaa3a9a09aeefebfe59c21936f31b504c1c0d94c13ad900a9fb",
        "a6cd75920cc648b4bb9523c31b180e7fb5a4c5e5b3411ec41fe8879f22f85c4c",
    ),
    "simhash": (
        "ddb1267b5d4c6f7a89bd742df8be96ae52726320a1dca9a35866350bdef2e96a",
        "1aad00735e242f4fa572d743ae04d6ce4cb2e4eea7c3d1df01160aeaf6b2bb34",
    ),
    "simhash-tfidf": (
        "8c69cecc8c7678570ed79925c0536573f4e94903e3170b16845632ef0100bc2f",
        "c048afc5d8041637975478b6e054d5dfe18eb1b6d136ea6f29cf6bf8cb6d63f7",
    ),
    "char9-t07": (
        "8cbfa6219daa866b1c95db0008ed939f6a5deb2fbd3760e1d64520d41e295795",
        "f7d7add57262dd116c179d7faf13b6629dc2d7e041e222383e4d21d2f86a84a6",
    ),
    "verify-signature": (
        "92180bd197e577c85a99affd3971b26290a06a3b016d7fe58e205cbe995316d2",
        "5937ceb669f3784f3aeebb0aba57e9359e7cb362ccf7f2eace44b96da23b51a4",
    ),
    "verify-none": (
        "fa8e2c9605d4336d43f54091c10259536c79abd93dfde2a1bc3d87f0a9a91278",
        "42fc2fd2f3416cb1289ca09c8486ed59e8610ba618fa83b7724b636aa112471b",
    ),
    "rabin": (
        "a3032ef6909f9da10ce548db9e3298cf4c5e9139488092185b355a19a0693df0",
        "0424be148b667f6bb4a798367d1980bf9f91dfa50c590738949891d55b37e950",
    ),
}

RFC_SHA256 = (
    "209477f611c5fbabc55befc9cb9e4c95a42a54c327d1d6f5e4ce841753437da0",
    "9ad50bd5814bbde70768a08333901c376aaf56f7de7525955db7e3dd737d73c5",
)


def _hashes(output: Path) -> tuple[str, str]:
    files = ("clusters.jsonl", "pairs.jsonl")
    return tuple(hashlib.sha256((output / f).read_bytes()).hexdigest() for f in files)  # type: ignore[return-value]


@pytest.mark.parametrize("name", list(FLAGS))
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
