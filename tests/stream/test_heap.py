"""The process memory gauges: what an operator reads when the resident set grows."""

from __future__ import annotations

from worker.stream.heap import process_memory, trim


def test_a_large_allocation_shows_in_the_resident_set_and_the_heap_in_use() -> None:
    # Free memory an earlier test left resident in the heap could serve the allocation with
    # pages already counted (CI saw 4 KiB of growth): given back first, any page it takes is new.
    trim(1)
    before = process_memory()
    held = bytearray(64 << 20)
    # A large calloc may come as fresh zero pages never touched (not resident): write each page.
    held[::4096] = b"\x01" * len(range(0, len(held), 4096))
    after = process_memory()
    assert after["resident"] - before["resident"] >= 60 << 20
    assert after["heap_in_use"] - before["heap_in_use"] >= 64 << 20
    del held
    assert process_memory()["heap_in_use"] < after["heap_in_use"] - (60 << 20)


def test_trim_gives_back_the_pages_freed_between_live_chunks() -> None:
    """What a long-running worker's heap does: chunks freed between live ones stay resident
    until trimmed."""
    chunks = [bytes(8192) for _ in range(10_000)]  # 80 MiB of heap, every page touched
    del chunks[::2]  # 40 MiB freed, each hole between two live chunks
    freed = process_memory()
    assert freed["heap_free"] >= 32 << 20
    assert not trim(freed["heap_free"] + (1 << 20)), "under the bound: nothing to do"
    assert trim(16 << 20)
    # Each 8 KiB hole holds at least one whole page (4 KiB) that can go back.
    assert process_memory()["resident"] <= freed["resident"] - 5_000 * 4096 * 9 // 10
    assert len(chunks) == 5_000
