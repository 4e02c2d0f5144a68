"""The seeds' systems in one switch (``--profile``) against neardup's defaults, on the RFCs.

Every RFC, each setting run through ``neardup.dedup`` in this process: the share of the
obsoletes pairs (new revision, old RFC) that land in one cluster, per band of their exact
Jaccard of word 5-shingles; the near pairs verified, the documents removed and the seconds
(the first run of each setting compiles nothing new: kernels are cached). The obsoletes pairs
are the labelled near copies; other pairs the runs join are not labelled, so a pair outside
them is not counted as wrong (no precision is claimed).

Settings: the default (OPH, word 5-shingles, Jaccard 0.8, exact verification); SimHash with
its defaults (TF of word 5-shingles, Gaussian hyperplanes, h = 7, exact cosine 0.8);
``--profile sood-loguinov`` (seed 004's system) and ``--profile altavista`` (seed 000's).

Run: ``.venv/bin/python bench/profiles.py`` (needs ``../shared/data/rfc``).
"""

from __future__ import annotations

import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from bench.corpora import load_rfcs  # noqa: E402
from bench.quality import (  # noqa: E402
    DATA,
    band_names,
    band_of,
    pair_similarity,
    rfc_obsoletes,
    table,
)
from neardup import DedupConfig, dedup  # noqa: E402
from neardup.cli.options import apply_flags  # noqa: E402

SETTINGS = {
    "default (OPH)": {},
    "simhash defaults": {"method": "simhash"},
    "--profile sood-loguinov": {"profile": "sood-loguinov"},
    "--profile altavista": {"profile": "altavista"},
}


def main() -> None:
    ids, texts = load_rfcs(DATA / "rfc" / "rfc_txt.tar.xz")
    pairs = rfc_obsoletes(ids)
    new, old = np.array(pairs).T
    band = band_of(pair_similarity(texts, new, old)[0])
    print(f"## RFCs: {len(ids):,} documents, {len(pairs):,} obsoletes pairs (new, old)\n")
    together: dict[str, np.ndarray] = {}
    summary = []
    for name, flags in SETTINGS.items():
        config = apply_flags(DedupConfig(), flags)
        start = time.perf_counter()
        result = dedup(texts, ids, config)
        seconds = time.perf_counter() - start
        labels = result.clusters.labels
        together[name] = labels[new] == labels[old]
        counts = result.summary.counts
        summary.append(
            [
                name,
                f"{together[name].mean():.3f}",
                f"{counts.verified_pairs:,}",
                f"{counts.removed:,}",
                f"{seconds:.1f}",
            ]
        )
    print(table(["setting", "obsoletes pairs joined", "near pairs", "removed", "s"], summary))
    print("\nShare of the obsoletes pairs joined, per band of their exact Jaccard:\n")
    cells = []
    for b, label in enumerate(band_names()):
        of = band == b
        cells.append(
            [label, int(of.sum())]
            + [f"{together[n][of].mean():.2f}" if of.any() else "-" for n in SETTINGS]
        )
    print(table(["J band", "pairs", *SETTINGS], cells))


if __name__ == "__main__":
    main()
