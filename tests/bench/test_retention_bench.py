"""``bench/retention.py``'s measuring run: a window's figures are the store's at that window's end.

The bench is run by hand at its real size (60,000 dev-set events); this holds its run to what
it reports on a small feed of its own, so that its figures keep meaning what the docs say.
"""

from __future__ import annotations

import random
from pathlib import Path

from bench.retention import report, run
from topology.records import Event
from worker.engine.fingerprint import Fingerprint, fingerprint
from worker.settings import Settings

WINDOWS, PER_WINDOW = 4, 300


def _events() -> list[tuple[Event, Fingerprint]]:
    rng = random.Random(5)
    words = [f"w{n}" for n in range(3000)]
    retention = Settings().retention_ms
    out = []
    for n in range(WINDOWS * PER_WINDOW):
        text = " ".join(rng.choices(words, k=60))
        event = Event(f"e{n}", text, n * WINDOWS * retention // (WINDOWS * PER_WINDOW))
        out.append((event, fingerprint(text, Settings())))
    return out


def test_data_stays_flat_with_retention_and_grows_without(tmp_path: Path) -> None:
    events = _events()
    kept = run(tmp_path / "kept", events, WINDOWS, Settings().retention_ms)
    everything = run(tmp_path / "all", events, WINDOWS, None)
    assert len(kept) == len(everything) == WINDOWS
    assert kept[-1].data <= 1.3 * kept[0].data, kept
    assert everything[-1].data >= 3 * everything[0].data, everything
    assert all(w.cpu_us > 0 for w in kept + everything)
    lines = report({"7 d": kept, "none": everything}, PER_WINDOW)
    assert len(lines) == WINDOWS + 3 and lines[-1].startswith("other files at the end")
