"""Where a slot's bucket lives: part of the on-disk format, so it never moves between versions."""

from __future__ import annotations

from topology.stages import EXACT, LOOKUP, TABLE, slot_partition, slot_partitions

# Block-table keys, exact keys stored and looked up; a 128-bit exact key among them.
SLOTS = [(0, 0x1234567, TABLE), (9, 0x3FFFFFF, TABLE), (10, 2**127 + 12345, EXACT), (11, 0xDEADBEEF, LOOKUP)]
SLOTS += [(3, 0, TABLE), (12, 0, EXACT)]


def test_slots_keep_the_partitions_stores_were_written_with() -> None:
    # Made by the routing before slot_partitions (murmur3 of "t:key" / "x:key", seed 0x9E0B).
    assert slot_partitions(SLOTS, 4) == [3, 1, 0, 0, 3, 2]
    assert slot_partitions(SLOTS, 64) == [31, 5, 24, 0, 43, 6]
    assert [slot_partition(slot, 64) for slot in SLOTS] == [31, 5, 24, 0, 43, 6]


def test_an_exact_key_lives_in_one_partition_whether_stored_or_looked_up() -> None:
    stored, looked_up = (10, 0xABCDEF, EXACT), (15, 0xABCDEF, LOOKUP)
    assert len({slot_partition(slot, 64) for slot in (stored, looked_up)}) == 1
    assert slot_partition((10, 0xABCDEF, TABLE), 64) != slot_partition(stored, 64), "a table key's bucket is another"
