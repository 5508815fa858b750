"""The process memory gauges: what an operator reads when the resident set grows."""

from __future__ import annotations

from worker.stream.heap import process_memory


def test_a_large_allocation_shows_in_the_resident_set_and_the_heap_in_use() -> None:
    before = process_memory()
    held = bytearray(64 << 20)  # zero-filled: every page touched
    after = process_memory()
    assert after["resident"] - before["resident"] >= 60 << 20
    assert after["heap_in_use"] - before["heap_in_use"] >= 64 << 20
    del held
    assert process_memory()["heap_in_use"] < after["heap_in_use"] - (60 << 20)
