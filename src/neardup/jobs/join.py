"""``neardup join`` on one machine: an input file in, ``pairs.jsonl`` and ``summary.json`` out.

The input is read whole into the arrays the metric compares
(:func:`~neardup.join.inputs.read_join_input`), the join runs
(:func:`neardup.join.similarity.similarity_stream`) within its working memory
(``memory_bytes``, ``--memory-gb``): band keys spilled one file per band to a work directory
inside the output's hidden sibling (read back one band at a time), candidate pairs generated
and measured a bounded chunk at a time, close pairs buffered and spilled there in sorted runs,
then merged into ``pairs.jsonl`` as a stream; the output directory appears atomically.
"""

from __future__ import annotations

import tempfile
import time
from pathlib import Path
from typing import Any

from neardup._faults import crash_point
from neardup._progress import Progress
from neardup.errors import InputError, ParameterError
from neardup.io.output import AtomicDirectory
from neardup.io.results import write_json, write_value_pair_chunks
from neardup.join.inputs import JoinSource, read_join_input
from neardup.join.similarity import similarity_stream
from neardup.join.summary import join_summary
from neardup.kinds import METRICS
from neardup.params import DedupConfig, JoinSpec

__all__ = ["join_files", "join_memory"]


def join_memory(memory_bytes: int | None = None) -> int:
    """A join's working memory: ``memory_bytes``, or ``neardup dedup``'s default.

    That is an eighth of the machine's memory, at most 1 GiB
    (:attr:`~neardup.params.DedupConfig.working_memory`).
    """
    if memory_bytes is not None:
        if memory_bytes < 1:
            raise ParameterError(f"memory_bytes must be an int >= 1; got {memory_bytes!r}.")
        return int(memory_bytes)
    return DedupConfig().working_memory


def join_files(
    path: Path,
    output: Path,
    spec: JoinSpec,
    source: JoinSource | None = None,
    *,
    overwrite: bool = False,
    memory_bytes: int | None = None,
    show_progress: bool = False,
) -> dict[str, Any]:
    """``neardup join``: read ``path``, join, write ``output``; return the summary.

    ``memory_bytes`` (:func:`join_memory`) bounds the candidate chunks and the close pairs
    held at once; beyond it they are spilled to the work directory. The output never depends
    on it. ``show_progress``: the bands of an LSH join on stderr as they are done.
    """
    memory = join_memory(memory_bytes)
    started = time.perf_counter()
    with AtomicDirectory(output, kind="join", overwrite=overwrite, inputs=[path]) as directory:
        items = read_join_input(path, spec.metric, source or JoinSource())
        read = time.perf_counter()
        with tempfile.TemporaryDirectory(prefix=".work-", dir=directory) as work:
            try:
                with Progress("join", 0, unit="bands", enabled=show_progress) as bar:
                    stream = similarity_stream(
                        items.data,
                        spec,
                        dim=items.dim,
                        work_dir=Path(work),
                        memory_bytes=memory,
                        progress=bar,
                    )
            except InputError as exc:  # the items' own faults: name the file they came from
                if exc.path is not None:
                    raise
                raise InputError(exc.reason, path=path) from None
            joined = time.perf_counter()
            crash_point("joined")
            num_pairs = write_value_pair_chunks(
                directory / "pairs.jsonl",
                items.ids,
                stream.chunks(),
                key=METRICS[spec.metric].measure,
                integral=METRICS[spec.metric].integral,
            )
        done = time.perf_counter()
        times = {
            "read": read - started,
            "join": joined - read,
            "write": done - joined,
            "total": done - started,
        }
        info = {**stream.info, "memory_bytes": memory}
        for name in ("num_zero_vectors", "first_zero_vector"):  # the reader refuses them
            info.pop(name, None)
        summary = join_summary(
            info,
            spec,
            num_pairs=num_pairs,
            num_items=len(items.ids),
            inputs=[str(path)],
            times=times,
        )
        write_json(directory / "summary.json", summary)
    return summary
