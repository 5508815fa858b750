"""Tables kept on disk between processes (lexicon, normalisation's character table, OpenCC's
triggers, the sound table): the same table as a fresh build, and never a reason to fail."""

from __future__ import annotations

from pathlib import Path

import pytest

from worker.engine import features, normalize, segment, sounds, t2s
from worker.engine.lexicon_cache import cached_lexicon_table


@pytest.fixture()
def cache(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Path:
    """The cache directory of the test: ``tmp_path/cache``."""
    monkeypatch.setenv("NEARDUP_CACHE_DIR", str(tmp_path / "cache"))
    return tmp_path / "cache"


def _counting(monkeypatch: pytest.MonkeyPatch, target: str) -> list[int]:
    """Counts calls of the function at ``target`` (module attribute), which still runs."""
    module, _, name = target.rpartition(".")
    real = getattr(__import__(module, fromlist=[name]), name)
    calls: list[int] = []

    def counted(*args: object) -> object:
        calls.append(1)
        return real(*args)

    monkeypatch.setattr(target, counted)
    return calls


@pytest.fixture()
def builds(monkeypatch: pytest.MonkeyPatch, cache: Path) -> list[int]:
    """Counts how often the lexicon table is built."""
    return _counting(monkeypatch, "worker.engine.lexicon_cache._build")


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


def test_the_character_table_of_normalisation_is_built_once_then_read(
    monkeypatch: pytest.MonkeyPatch, cache: Path
) -> None:
    builds = _counting(monkeypatch, "worker.engine.normalize._clean_table")
    first = normalize.kept_clean_table()
    second = normalize.kept_clean_table()
    assert len(builds) == 1, "built once, then read"
    same, changed = second
    assert second == first and len(same) == 0x10000 and (0xFF0C, ",") in changed  # full-width comma
    (stored,) = cache.glob("clean-*.bin")
    stored.write_bytes(stored.read_bytes()[:70_000])  # cut short inside its JSON, as by a full disk
    assert normalize.kept_clean_table() == first
    assert len(builds) == 2


def test_opencc_triggers_are_read_from_opencc_once_then_from_the_cache(
    monkeypatch: pytest.MonkeyPatch, cache: Path
) -> None:
    reads = _counting(monkeypatch, "worker.engine.t2s._read")
    first = t2s.trigger_chars()
    assert t2s.trigger_chars() == first
    assert len(reads) == 1, "OpenCC's dictionaries dumped once, then read from the cache"
    assert "發" in first and "发" not in first and list(first) == sorted(first)
    (stored,) = cache.glob("t2s-triggers-*.bin")
    stored.write_bytes(b"\xff\xfe")  # not UTF-8
    assert t2s.trigger_chars() == first
    assert len(reads) == 2


def test_every_kept_character_table_is_the_one_computed(cache: Path) -> None:
    for _ in range(2):  # built and stored, then read
        assert segment.kept_char_classes() == segment.char_classes()
        junk = normalize._bmp_class("junk-class", normalize._is_junk)
        assert junk == normalize._char_class(normalize._bmp_where(normalize._is_junk))
    kinds = sorted(p.name.rpartition("-")[0] for p in cache.iterdir())
    assert kinds == ["classes", "junk-class"]


def test_an_opencc_configuration_that_is_not_json_gives_no_triggers(
    monkeypatch: pytest.MonkeyPatch, cache: Path, tmp_path: Path
) -> None:
    share = tmp_path / "opencc"
    share.mkdir()
    (share / "t2s.json").write_text("{ not json")
    monkeypatch.setattr(t2s, "share", lambda: share)
    assert t2s.trigger_chars() == "", "no triggers: the normaliser then converts every Chinese text"


def test_the_sound_table_is_kept_on_disk_and_rebuilt_when_damaged(monkeypatch: pytest.MonkeyPatch, cache: Path) -> None:
    builds = _counting(monkeypatch, "worker.engine.sounds._build")
    built = sounds.kept_codes()
    assert sounds.kept_codes() == built and len(builds) == 1, "built once, then read"
    assert built[ord("再") - 0x4E00] == built[ord("在") - 0x4E00]
    (stored,) = cache.glob("sounds-*.bin")
    stored.write_bytes(stored.read_bytes()[:100])  # cut short, as by a full disk
    assert sounds.kept_codes() == built and len(builds) == 2, "a damaged file is not read: built again"
