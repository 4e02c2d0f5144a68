"""Hypothesis strategies shared by the property-based tests."""

from __future__ import annotations

from hypothesis import strategies as st

from neardup import NormalizeSpec, ShingleSpec

# Letters and digits, upper and lower case, accents, CJK, Thai, punctuation and many kinds of
# whitespace: every class the tokeniser distinguishes.
ALPHABET = st.sampled_from(
    list("abcdeABCDE019 éÉßﬁ")
    + list("漢字かなカナ한국ไทย")
    + list(".,;!?-'\"()、。「」")
    + [" ", "\t", "\n", "\r", "\u00a0", "\u3000", "\u2003", "\u2028", "\x0b"]
    + ["Ｆ", "①", "\U0002070e"]
)

texts = st.text(alphabet=ALPHABET, max_size=80)
words_texts = st.lists(
    st.sampled_from(["alpha", "beta", "Gamma", "delta", "ε", "字", "x."]), max_size=30
).map(" ".join)

# The shingle and normalisation settings that tests comparing a kernel with its reference sweep.
SHINGLE_SPECS = [ShingleSpec(k=1), ShingleSpec(k=3), ShingleSpec(unit="char", k=4)]
NORMALIZE_SPECS = [
    NormalizeSpec(),
    NormalizeSpec(strip_punctuation=True),
    NormalizeSpec(casefold=False),
]


@st.composite
def graphs(draw: st.DrawFn, max_nodes: int = 40) -> tuple[int, list[tuple[int, int]]]:
    """A node count and an edge list (self-loops and repeats allowed)."""
    num_nodes = draw(st.integers(1, max_nodes))
    node = st.integers(0, num_nodes - 1)
    edges = draw(st.lists(st.tuples(node, node), max_size=3 * num_nodes))
    return num_nodes, edges
