"""RocksDB memory that every store of one worker shares: one block cache, one memtable budget.

A store that sizes its own memtables and cache makes a worker's memory follow the partitions it
owns, not the data it holds: four index partitions took a 72-minute soak to 1.0-1.4 GB of RSS
for about 40 MB of compacted index, and a worker that takes over its peers' partitions would
multiply that. With one budget RocksDB's write buffer manager flushes a memtable of whichever
store is being written once all of them together pass it, so memory is bounded by the settings,
whatever a worker owns (docs/benchmarks.md, "A worker's stores share one memory budget").
"""

from __future__ import annotations

from dataclasses import dataclass

from rocksdict import Cache, Options, WriteBufferManager

# A store's write-ahead log, at most: past it RocksDB flushes the families the oldest log file
# holds data of, so the idle families that pin old files (an old bucket's few late events, the
# watermark) are flushed and the files go. A store's memtables are a share of the budget, and
# its log need not outgrow them: bounded per store, disk is a quarter of the budget a store.
WAL_SHARE = 4  # a store's WAL bound is the memtable budget divided by this


@dataclass(frozen=True)
class SharedMemory:
    """The cache and memtable budget that a worker's stores are all opened with."""

    cache: Cache
    memtables: WriteBufferManager

    @classmethod
    def of(cls, cache_mb: int, memtable_mb: int) -> SharedMemory:
        # No stall: a write over the budget triggers a flush instead of waiting for one, since a
        # stalled write holds the worker's only thread (rocksdict keeps the GIL through it).
        return cls(Cache(cache_mb << 20), WriteBufferManager(memtable_mb << 20, False))

    def apply(self, options: Options) -> None:
        """Put a store's memtables under the shared budget, and bound its write-ahead log."""
        options.set_write_buffer_manager(self.memtables)
        options.set_max_total_wal_size(self.wal_bytes)

    @property
    def wal_bytes(self) -> int:
        return max(1 << 20, self.memtables.get_buffer_size() // WAL_SHARE)

    def usage(self) -> dict[str, int]:
        """Bytes in use now: the stores' memtables together, and the shared block cache."""
        return {"memtables": self.memtables.get_usage(), "block_cache": self.cache.get_usage()}
