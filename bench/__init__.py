"""Benchmarks: a labelled development set built from real text, and the quality report on it."""
