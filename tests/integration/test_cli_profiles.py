"""``--profile``: a seed's whole system in one switch, and the options given beside it win."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from neardup import DedupConfig, OutputSpec, ParameterError, ReadSpec
from neardup.cli.options import PROFILES, apply_file_flags, apply_flags
from tests.conftest import SAMPLE
from tests.integration.conftest import run


def test_sood_loguinov_is_seed_004s_system() -> None:
    config = apply_flags(DedupConfig(), {"profile": "sood-loguinov"})
    sketch, normalize = config.sketch, config.sketch.normalize
    # "removing stop-words and stemming all text": words, the English lists and stems.
    assert (sketch.shingle.unit, sketch.shingle.k) == ("word", 1)
    assert (normalize.stopwords, normalize.stem) == ("english", "english")
    # "weights t_i(u) being the normalize TF-IDF score of each word i on page u".
    assert sketch.weighting == "tfidf"
    # Algorithm 1: "add or subtract the feature's weight w_i ... based on whether the j-th bit
    # of the uniform hash is zero or one": signs, not Gaussian normals; 64-bit fingerprints.
    assert (sketch.kind, sketch.projection, sketch.simhash_bits) == ("simhash", "sign", 64)
    # Objective 1, "find all y in H s.t. H(x, y) <= h", h = 3: a match is a distance, no more.
    assert (config.lsh.hamming, config.verify) == (3, "none")


def test_altavista_is_seed_000s_system() -> None:
    config = apply_flags(DedupConfig(), {"profile": "altavista"})
    # "6 supershingles of 14", "2 matches": 84 samples of 6-word shingles of the features.
    assert (config.sketch.kind, config.sketch.preset, config.sketch.num_perm) == (
        "supershingle",
        "altavista",
        84,
    )
    assert (config.sketch.shingle.unit, config.sketch.shingle.k) == ("word", 6)
    read, _ = apply_file_flags(ReadSpec(), OutputSpec(), {"profile": "altavista"})
    assert read.html_extract == "altavista"


def test_options_given_beside_a_profile_win() -> None:
    flags = {"profile": "sood-loguinov", "hamming": 5, "verify": "exact", "threshold": 0.9}
    config = apply_flags(DedupConfig(), flags)
    assert (config.lsh.hamming, config.verify, config.lsh.threshold) == (5, "exact", 0.9)
    assert config.sketch.weighting == "tfidf"  # the rest of the profile stays
    assert set(PROFILES) == {"sood-loguinov", "altavista"}


@pytest.mark.parametrize("flag", [{"method": "minhash"}, {"sketch_kind": "oph"}])
def test_a_profile_chooses_its_sketch(flag: dict[str, str]) -> None:
    option = "--method" if "method" in flag else "--sketch"
    with pytest.raises(
        ParameterError, match=f"--profile altavista chooses the sketch itself; drop {option}"
    ):
        apply_flags(DedupConfig(), {"profile": "altavista", **flag})


def test_the_command_line_runs_a_profile(tmp_path: Path) -> None:
    out = tmp_path / "out"
    done = run("dedup", SAMPLE, "-o", out, "-q", "--profile", "sood-loguinov")
    assert done.returncode == 0, done.stderr
    summary = json.loads((out / "summary.json").read_text(encoding="utf-8"))
    assert summary["params"]["sketch"]["kind"] == "simhash"
    assert summary["params"]["lsh"]["hamming"] == 3
    assert summary["counts"]["verified_pairs"] > 0
