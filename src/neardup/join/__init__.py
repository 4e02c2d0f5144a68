"""Similarity joins beyond text: vectors, bit strings, item sets and short strings."""

from neardup.join.result import JoinResult
from neardup.join.similarity import similarity_join

__all__ = ["JoinResult", "similarity_join"]
