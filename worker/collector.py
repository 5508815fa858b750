"""The cyclic garbage collector, set for batch work (the worker, ``neardup scan``, their benches).

Python's collector looks at the young generation every 700 allocations of container
objects. A batch makes its temporaries by the hundred thousand and keeps them until the
batch is done, so at 700 most of them outlive a young collection, are counted as long-lived,
and every few batches set off a full pass over every object the process keeps: the index's
caches, the verdict stores', Faust's. At 10,000 most of them die before the collector looks
at them, and full passes become rare.
"""

from __future__ import annotations

import gc

YOUNG_THRESHOLD = 10_000


def settle() -> None:
    """Leave what is alive now (modules, tables, the app) out of every later pass, for the
    process's whole life, and look at young objects less often."""
    gc.freeze()
    _, middle, old = gc.get_threshold()
    gc.set_threshold(YOUNG_THRESHOLD, middle, old)
