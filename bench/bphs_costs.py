"""Fit seed 004's BPHS delays (eq. 9) to timed queries: ``delta_P``, ``delta_R``, ``delta_L``.

For each ``n`` (``--sizes``, 2^20 and 2^22 by default) ``n`` random 64-bit fingerprints are
stored, and for each design ``(G, g)`` in :data:`DESIGNS` (h = 3) a :class:`BlockPermutedIndex`
is built and queried with stored fingerprints carrying 0..3 flipped bits (each query has a
neighbour, as a near-duplicate lookup does), all matches, on one thread, timed in CPU seconds
(the best of 3; CPU time, not wall time, because the machine is shared). Per query and table
the model is ``delta_P + t delta_R + 2^(d - t) delta_L`` (``d = log2 n``,
``t = min(g 64 / G, d)``); the three delays are fitted by non-negative least squares on the
relative error of the total time per query (each measurement weighs alike). Printed: the
measurements with the model's fit, and the fitted delays, which go into
``neardup.hamming.bphs`` (``PERMUTE_NS``, ``RANDOM_ACCESS_NS``, ``SCAN_NS``).

Run: ``.venv/bin/python bench/bphs_costs.py [--sizes 20 22]``.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import numba
import numpy as np
from scipy.optimize import nnls

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from neardup.hamming.bphs import BlockPermutedIndex, BPHSDesign  # noqa: E402

H = 3
DESIGNS = [(4, 1), (5, 1), (5, 2), (6, 1), (6, 2), (6, 3), (7, 1), (7, 2), (8, 1), (8, 2)]
WORK = 1 << 27
"""Entries scanned, about, per timed run: sets the number of queries of each design."""


def _features(design: BPHSDesign, num_fingerprints: int) -> np.ndarray:
    """``T [1, t, 2^(d - t)]``: eq. 9's coefficients of ``delta_P``, ``delta_R``, ``delta_L``."""
    d = np.log2(num_fingerprints)
    t = min(design.header_bits, d)
    return design.num_tables * np.array([1.0, t, 2.0 ** (d - t)])


def measure(
    sizes: list[int],
    rng: np.random.Generator,
    designs: list[tuple[int, int]] = DESIGNS,
    repeat: int = 3,
) -> list[tuple[int, BPHSDesign, float]]:
    """``(n, design, ns per query)``: the best of ``repeat`` timed runs for each size and design."""
    out = []
    numba.set_num_threads(1)
    for n in sizes:
        values = rng.integers(0, 2**64, size=n, dtype=np.uint64)
        for blocks, leading in designs:
            design = BPHSDesign(blocks, leading)
            index = BlockPermutedIndex(
                values, max_distance=H, num_blocks=blocks, leading_blocks=leading
            )
            per_query = _features(design, n) @ np.array([1.0, 1.0, 1.0])
            num_queries = int(np.clip(WORK / per_query, 1 << 10, 1 << 18))
            queries = values[rng.integers(0, n, size=num_queries)]
            for _ in range(H):
                flip = rng.integers(0, 64, size=num_queries).astype(np.uint64)
                queries ^= (rng.random(num_queries) < 0.5).astype(np.uint64) << flip
            index.query(queries[:16])  # compiled
            best = np.inf
            for _ in range(repeat):
                start = time.process_time()
                index.query(queries)
                best = min(best, time.process_time() - start)
            out.append((n, design, best / num_queries * 1e9))
            print(f"  n=2^{int(np.log2(n))} G={blocks} g={leading} T={design.num_tables}: "
                  f"{out[-1][2]:9.1f} ns/query ({num_queries} queries)", flush=True)  # fmt: skip
            del index
    return out


def fit(measurements: list[tuple[int, BPHSDesign, float]]) -> np.ndarray:
    """``[delta_P, delta_R, delta_L]`` in ns, by non-negative least squares on relative error."""
    features = np.array([_features(design, n) for n, design, _ in measurements])
    seconds = np.array([ns for *_, ns in measurements])
    delays, _ = nnls(features / seconds[:, None], np.ones(seconds.shape[0]))
    return np.asarray(delays)


def main() -> None:
    """Measure, fit and print."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[20, 22], help="log2 n")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    measurements = measure([1 << s for s in args.sizes], np.random.default_rng(args.seed))
    delays = fit(measurements)
    print("\n  n     G  g   T   measured ns   model ns   ratio")
    for n, design, ns in measurements:
        model = float(_features(design, n) @ delays)
        print(f"  2^{int(np.log2(n)):<3d} {design.num_blocks:2d} {design.leading_blocks:2d} "
              f"{design.num_tables:3d} {ns:12.1f} {model:10.1f} {model / ns:7.2f}")  # fmt: skip
    print(f"\nPERMUTE_NS = {delays[0]:.3g}\nRANDOM_ACCESS_NS = {delays[1]:.3g}\n"
          f"SCAN_NS = {delays[2]:.3g}")  # fmt: skip


if __name__ == "__main__":
    main()
