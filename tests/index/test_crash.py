"""Durability: a writer killed with SIGKILL at random points loses no acknowledged batch and
never leaves half a batch; for the LSH index and for the vector index."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest

from neardup._faults import CRASH_VARIABLE
from neardup.index import LSHIndex, VectorIndex
from neardup.index.lsh_index import FLIP_FIT_DOCUMENTS
from neardup.params import JoinSpec, LSHSpec, SketchSpec

NEARDUP = Path(sys.executable).parent / "neardup"
BATCH = 25

WRITER = f"""
import sys
from neardup.index import LSHIndex
path, prefix, first = sys.argv[1], sys.argv[2], int(sys.argv[3])
words = "alpha beta gamma delta epsilon zeta eta theta iota kappa lambda mu nu xi omicron".split()
with LSHIndex.open(path) as index:
    for batch in range(10_000):
        size = first if batch == 0 else {BATCH}
        ids = [f"{{prefix}}-{{batch}}-{{i}}" for i in range(size)]
        texts = [" ".join(words[(batch + i + j) % 15] + str(batch * 31 + i) for j in range(40))
                 for i in range(size)]
        index.add(ids, texts)
        print(batch, flush=True)
"""


def _killed_writer(
    args: list[str], rng: np.random.Generator, *, wait_for_ack: bool = True
) -> list[int]:
    """Run ``python -c ARGS...`` (a writer printing each batch it committed), SIGKILL it at a
    random moment, and return the batches it acknowledged.

    ``wait_for_ack``: kill it only after its first batch (so it was really writing); without
    it, after 1 to 3 seconds, whatever it was doing.
    """
    child = subprocess.Popen([sys.executable, "-c", *args], stdout=subprocess.PIPE, text=True)
    assert child.stdout is not None
    if wait_for_ack:
        acks = [int(child.stdout.readline())]
        time.sleep(float(rng.uniform(0.0, 0.4)))
    else:
        acks = []
        time.sleep(float(rng.uniform(1.0, 3.0)))
    os.kill(child.pid, signal.SIGKILL)
    acks.extend(int(line) for line in child.stdout.read().split())
    child.wait()
    child.stdout.close()
    return acks


@pytest.mark.slow
@pytest.mark.subprocess
@pytest.mark.parametrize("kind", ["minhash", "simhash-psm"])
def test_acknowledged_batches_survive_sigkill(tmp_path: Path, kind: str) -> None:
    """For PSM too, whose first large batch also commits the flip model fitted on it."""
    path = tmp_path / "crash.ndx"
    first = BATCH
    if kind == "minhash":
        LSHIndex.open(path).close()
    else:
        lsh = LSHSpec(family="hamming", hamming=3, search="psm", psm_budget=8)
        LSHIndex.open(path, sketch=SketchSpec(kind="simhash"), lsh=lsh).close()
        first = FLIP_FIT_DOCUMENTS  # a whole number of batches
    rng = np.random.default_rng(11)
    acknowledged: dict[str, list[int]] = {}
    for round_ in range(6):
        prefix = f"r{round_}"
        size = first if round_ == 0 else BATCH
        # PSM's first round is killed while it fits its model, or just after
        acks = acknowledged[prefix] = _killed_writer(
            [WRITER, str(path), prefix, str(size)], rng, wait_for_ack=size == BATCH
        )

        with LSHIndex.open(path) as index:
            assert index.verify_integrity() == []
            if kind != "minhash":  # the model is in the file exactly when its batch is
                assert (index.flips is not None) == (index.get("r0-0-0") is not None)
            for name, batches in acknowledged.items():
                for batch in batches:
                    assert index.get(f"{name}-{batch}-0") is not None
                    assert index.get(f"{name}-{batch}-{BATCH - 1}") is not None
            # A batch is all in or all out: the stored documents of this round form whole batches.
            last = max(acks, default=-1) + 3
            stored = [i for i in range(last) if index.get(f"{prefix}-{i}-0") is not None]
            for batch in stored:
                assert all(index.get(f"{prefix}-{batch}-{i}") is not None for i in range(BATCH))
            assert len(index) % BATCH == 0
    check = subprocess.run(
        [str(NEARDUP), "index", "check", str(path)], check=False, capture_output=True, text=True
    )
    assert check.returncode == 0, check.stderr
    assert check.stdout.startswith("ok:")


DIM = 32
VECTOR_SPEC = JoinSpec(metric="cosine", threshold=0.9, num_bands=12, num_rows=6)

VECTOR_WRITER = f"""
import sys
import numpy as np
from neardup import VectorIndex
path, prefix = sys.argv[1], sys.argv[2]
rng = np.random.default_rng(sum(map(ord, prefix)))
with VectorIndex.open(path, create=False) as index:
    for batch in range(10_000):
        ids = [f"{{prefix}}-{{batch}}-{{i}}" for i in range({BATCH})]
        index.add(ids, rng.normal(size=({BATCH}, {DIM})), [{{"batch": batch}}] * {BATCH})
        print(batch, flush=True)
"""


@pytest.mark.slow
@pytest.mark.subprocess
def test_acknowledged_vector_batches_survive_sigkill(tmp_path: Path) -> None:
    """The vector index's file keeps every batch ``add`` returned from, and no half batch."""
    path = tmp_path / "vectors.ndx"
    VectorIndex.open(path, spec=VECTOR_SPEC, dim=DIM, create=True).close()
    rng = np.random.default_rng(12)
    acknowledged: dict[str, list[int]] = {}
    for round_ in range(6):
        prefix = f"r{round_}"
        acks = acknowledged[prefix] = _killed_writer([VECTOR_WRITER, str(path), prefix], rng)

        with VectorIndex.open(path, create=False) as index:
            assert index.verify_integrity() == []
            for name, batches in acknowledged.items():
                for batch in batches:
                    for i in (0, BATCH - 1):
                        stored = index.get(f"{name}-{batch}-{i}")
                        assert stored is not None
                        assert stored.metadata == {"batch": batch}
            last = max(acks) + 3
            stored_batches = [b for b in range(last) if index.get(f"{prefix}-{b}-0") is not None]
            for batch in stored_batches:  # whole batches only
                assert all(index.get(f"{prefix}-{batch}-{i}") is not None for i in range(BATCH))
            assert len(index) % BATCH == 0
            index._check()


UPSERT_WRITER = f"""
import sys
import numpy as np
from neardup import VectorIndex
with VectorIndex.open(sys.argv[1], create=False) as index:
    ids = [f"old-{{i}}" for i in range({BATCH})] + [f"new-{{i}}" for i in range(5)]
    index.upsert(ids, np.full(({BATCH} + 5, {DIM}), -1.0))
    print("upserted", flush=True)
"""


@pytest.mark.subprocess
def test_a_vector_batch_killed_inside_its_transaction_leaves_nothing(tmp_path: Path) -> None:
    """``NEARDUP_CRASH_AT=vector-batch-inserted`` kills the writer after it has deleted the
    stored vectors it replaces and inserted the new ones, before the commit: none of it stays."""
    path = tmp_path / "vectors.ndx"
    old = np.random.default_rng(3).normal(size=(BATCH, DIM))
    with VectorIndex.open(path, spec=VECTOR_SPEC, dim=DIM, create=True) as index:
        index.add([f"old-{i}" for i in range(BATCH)], old)
        before = index.query(old)
    killed = subprocess.run(
        [sys.executable, "-c", UPSERT_WRITER, str(path)],
        env={**os.environ, CRASH_VARIABLE: "vector-batch-inserted"},
        capture_output=True,
        text=True,
        check=False,
    )
    assert killed.returncode == -signal.SIGKILL, killed.stderr
    assert killed.stdout == ""
    with VectorIndex.open(path, create=False) as index:
        assert index.verify_integrity() == []
        assert len(index) == BATCH
        assert index.get("new-0") is None
        stored = index.get("old-3")
        assert stored is not None
        assert np.array_equal(stored.vector, old[3])
        assert index.query(old) == before
