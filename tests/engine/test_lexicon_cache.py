"""The lexicon table's disk cache: the same table as a fresh build, and never a reason to fail."""

from __future__ import annotations

from pathlib import Path

import pytest

from worker.engine import features
from worker.engine.lexicon_cache import cached_lexicon_table


@pytest.fixture()
def builds(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> list[int]:
    """Counts how often the table is built, with the cache in ``tmp_path/cache``."""
    monkeypatch.setenv("NEARDUP_CACHE_DIR", str(tmp_path / "cache"))
    calls: list[int] = []

    def build() -> features.LexiconTable:
        calls.append(1)
        return features.lexicon_table()

    monkeypatch.setattr("worker.engine.lexicon_cache._build", build)
    return calls


def test_a_second_process_reads_the_table_the_first_built(builds: list[int], tmp_path: Path) -> None:
    first = cached_lexicon_table()
    second = cached_lexicon_table()
    assert len(builds) == 1, "built once, then read"
    assert second == first == features.lexicon_table()
    assert len(list((tmp_path / "cache").glob("lexicon-*.bin"))) == 1
    assert not list((tmp_path / "cache").glob(".lexicon-*")), "no temporary file left behind"


def test_a_damaged_cache_file_is_built_again(builds: list[int], tmp_path: Path) -> None:
    cached_lexicon_table()
    (stored,) = (tmp_path / "cache").glob("lexicon-*.bin")
    stored.write_bytes(stored.read_bytes()[:4096])  # cut short, as by a full disk
    assert cached_lexicon_table() == features.lexicon_table()
    assert len(builds) == 2


def test_an_unwritable_cache_still_gives_the_table(builds: list[int], tmp_path: Path) -> None:
    (tmp_path / "cache").write_text("a file where the directory should be")
    assert cached_lexicon_table() == features.lexicon_table()
    assert cached_lexicon_table() == features.lexicon_table()
    assert len(builds) == 2, "built each time, nothing stored"
