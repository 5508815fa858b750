"""``/explain``'s found-by when a text cannot be fingerprinted now: the stored SimHashes answer
(before, the request failed with a 500)."""

from __future__ import annotations

import asyncio
from types import SimpleNamespace
from typing import Any

from topology.stages import Topics
from worker.engine.fingerprint import fingerprint
from worker.engine.simhash import to_hex
from worker.settings import Settings
from worker.stream.inspect import Inspector
from worker.stream.routes import Routed, routed_each

SETTINGS = Settings(partitions=2, topic_prefix="t")
SHORT = "Breaking: quake hits the coast"


def _inspector(outcome: str) -> Inspector:
    async def prints(texts: list[str]) -> list[Routed | str]:  # as the helper answers
        return routed_each(texts, SETTINGS) if outcome == "ok" else ["fingerprint failed: panic" for _ in texts]

    handoff: Any = SimpleNamespace(names=Topics("t"))
    unused: Any = None
    return Inspector(SETTINGS, handoff, (unused, unused), (unused, unused), unused, unused, prints)


def _found_by(outcome: str) -> list[str] | None:
    simhash = to_hex(fingerprint(SHORT, SETTINGS).simhash)
    original = {"fingerprint": simhash}
    return asyncio.run(_inspector(outcome)._found_by(simhash, SHORT, original, SHORT))


def test_found_by_names_the_exact_text_when_both_texts_fingerprint() -> None:
    assert "exact text" in (_found_by("ok") or [])


def test_found_by_falls_back_to_the_simhashes_when_a_text_fails() -> None:
    tables = len(SETTINGS.block_plan.tables)
    assert _found_by("failed") == [f"table {t}" for t in range(tables)]
