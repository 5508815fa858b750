"""Where a worker's resident memory is: the C heap in use, what it keeps free, and the rest.

RocksDB's own figures (``neardup_store_memory_bytes``) cover its memtables and block cache,
both bounded by settings. A resident set that grows past them is either the C heap in use
(RocksDB's table readers and iterators, Python's large objects) or memory the C allocator
holds free and has not given back (fragmentation across its arenas, one per thread that
allocates). glibc's ``mallinfo2`` tells the two apart; Python's small objects live in its own
arenas, mapped outside the C heap, and are part of the rest.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import os
from functools import cache
from typing import Any

# The worker gives the C heap's free memory back once a minute when it holds more than this
# (:func:`trim`, a timer of worker.stream.wiring, with or without the web server).
TRIM_EVERY_S = 60.0
TRIM_FREE_BYTES = 32 << 20
_FIELDS = ("arena", "ordblks", "smblks", "hblks", "hblkhd", "usmblks", "fsmblks", "uordblks", "fordblks", "keepcost")


class _MallInfo2(ctypes.Structure):
    _fields_ = [(name, ctypes.c_size_t) for name in _FIELDS]


@cache
def _libc() -> Any | None:
    try:
        return ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6")
    except OSError:
        return None


@cache
def _mallinfo2() -> Any | None:
    """glibc's ``mallinfo2`` (2.33 and later), or None on another C library."""
    call = getattr(_libc(), "mallinfo2", None)
    if call is not None:
        call.restype = _MallInfo2
        call.argtypes = []
    return call


def trim(free_bytes: int) -> bool:
    """Give the pages of the C heap's free memory back to the system (glibc's ``malloc_trim``)
    once it holds more than ``free_bytes``; True when it did. In a long soak the heap's memory
    in use levelled off while its free memory kept rising: chunks freed between live ones,
    which glibc keeps mapped in each arena (docs/benchmarks.md, "What the resident set holds")."""
    heap = _heap_bytes()
    call = _malloc_trim()
    if heap is None or call is None or free_bytes <= 0 or heap[1] <= free_bytes:
        return False
    call(0)
    return True


@cache
def _malloc_trim() -> Any | None:
    call = getattr(_libc(), "malloc_trim", None)
    if call is not None:
        call.argtypes = [ctypes.c_size_t]
    return call


def _heap_bytes() -> tuple[int, int] | None:
    """The C heap's bytes (in use, held free), or None without glibc's ``mallinfo2``."""
    call = _mallinfo2()
    if call is None:
        return None
    info = call()
    return int(info.uordblks + info.hblkhd), int(info.fordblks)


def rss_bytes() -> int:
    """This process's resident set (Linux), 0 where /proc is not."""
    try:
        with open("/proc/self/statm") as statm:
            return int(statm.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")
    except OSError:
        return 0


def process_memory() -> dict[str, int]:
    """Bytes by kind: ``resident``; with glibc, ``heap_in_use`` (allocated, small chunks and
    mapped large ones) and ``heap_free`` (held by the allocator, free). It walks each arena's
    free lists, so the sampler reads it every few seconds, not every second."""
    out = {"resident": rss_bytes()}
    heap = _heap_bytes()
    if heap is not None:
        out["heap_in_use"], out["heap_free"] = heap
    return out
