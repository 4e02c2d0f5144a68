"""Connected components of a graph held as a Spark DataFrame of edges: large-star / small-star.

Kiveris, Lattanzi, Mirrokni, Rastogi and Vassilvitskii, "Connected Components in MapReduce and
Beyond" (SoCC 2014). Both operations keep the components and move every node's edges towards
the smallest node of its neighbourhood; alternated, they reach a forest of stars, each centred
on the smallest node of its component, in O(log^2 n) rounds, whatever the shape (long chains
included, where label propagation needs as many rounds as the chain is long). Every round is
checkpointed, so the plan and the lineage stay short and a lost executor recomputes one round.

A node's label is the smallest node of its component: the same as the local union-find.
"""

from __future__ import annotations

from typing import Any

from neardup.errors import NeardupError

__all__ = ["component_labels"]

MAX_ROUNDS = 200


def _both_ways(edges: Any) -> Any:
    """Each undirected edge as two directed rows ``(src, dst)``."""
    return edges.union(edges.selectExpr("dst AS src", "src AS dst"))


def _large_star(edges: Any) -> Any:
    """Connect every larger neighbour of each node to the node's smallest neighbour-or-self."""
    from pyspark.sql import functions as F  # noqa: N812

    directed = _both_ways(edges)
    smallest = directed.groupBy("src").agg(F.least(F.min("dst"), F.col("src")).alias("m"))
    return (
        directed.join(smallest, "src")
        .where(F.col("dst") > F.col("src"))
        .select(F.col("dst").alias("src"), F.col("m").alias("dst"))
        .distinct()
    )


def _small_star(edges: Any) -> Any:
    """Connect each node and its smaller neighbours to the smallest of them."""
    from pyspark.sql import functions as F  # noqa: N812

    directed = _both_ways(edges)
    smaller = directed.where(F.col("dst") <= F.col("src"))
    smallest = smaller.groupBy("src").agg(F.least(F.min("dst"), F.col("src")).alias("m"))
    neighbours = smaller.join(smallest, "src").select(
        F.col("dst").alias("src"), F.col("m").alias("dst")
    )
    centres = smallest.select("src", F.col("m").alias("dst"))
    return neighbours.union(centres).where(F.col("src") != F.col("dst")).distinct()


def _canonical(edges: Any) -> Any:
    """Edges as ``(larger, smaller)``, without self-loops or repeats."""
    from pyspark.sql import functions as F  # noqa: N812

    return (
        edges.select(F.greatest("src", "dst").alias("src"), F.least("src", "dst").alias("dst"))
        .where(F.col("src") != F.col("dst"))
        .distinct()
    )


def _checkpoint(frame: Any, reliable: bool) -> Any:
    return frame.checkpoint(eager=True) if reliable else frame.localCheckpoint(eager=True)


def component_labels(edges: Any, *, reliable_checkpoints: bool = False) -> Any:
    """``(node, label)`` for every node of ``edges`` (columns ``src``, ``dst``, longs).

    ``label`` is the smallest node of the node's component. Nodes without an edge are not in
    the result (their label is themselves). With ``reliable_checkpoints`` each round is
    checkpointed to the SparkContext's checkpoint directory (survives executor loss);
    otherwise to executor storage (faster, enough in local mode).
    """
    from pyspark.sql import functions as F  # noqa: N812

    current = _checkpoint(_canonical(edges), reliable_checkpoints)
    for _ in range(MAX_ROUNDS):
        after = _canonical(_small_star(_large_star(current)))
        after = _checkpoint(after, reliable_checkpoints)
        changed = (
            after.exceptAll(current).limit(1).count() + current.exceptAll(after).limit(1).count()
        )
        current = after
        if changed == 0:
            break
    else:
        raise NeardupError(f"connected components did not converge in {MAX_ROUNDS} rounds")
    # A forest of stars: each edge joins a node to its component's smallest node.
    directed = _both_ways(current)
    return (
        directed.groupBy("src")
        .agg(F.least(F.min("dst"), F.col("src")).alias("label"))
        .select(F.col("src").alias("node"), "label")
    )
