"""Similarity joins beyond text: vectors, bit strings, item sets and short strings."""
