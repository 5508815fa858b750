"""Chinese folded by shape: an OCR engine's misreading of a short post is no change, and the
look-alike table is what its builder makes of the font's glyphs."""

from __future__ import annotations

from pathlib import Path

import pytest

from scripts import build_zh_shapes
from tests.engine.pairs import is_duplicate, without_words
from worker.engine import shapes, shorttext
from worker.engine.fingerprint import fingerprint
from worker.engine.sketch import SHORT_SKETCH_BYTES, SKETCH_BYTES, compare
from worker.settings import Settings

ROOT = Path(__file__).resolve().parents[2]
SETTINGS = Settings()


def test_look_alikes_fold_together_and_other_characters_do_not() -> None:
    fold = shapes.fold_shapes
    for a, b in ["己已", "土士", "日曰", "大太", "失矢", "免兔", "问间"]:
        assert fold(a) == fold(b), (a, b)
    for a, b in ["好差", "天地", "大小", "开关"]:
        assert fold(a) != fold(b), (a, b)
    assert fold("Tokyo 2026, 土地") == "Tokyo 2026, " + fold("土") + "地", "only listed characters change"


def test_classic_misreadings_the_font_misses_fold_too() -> None:
    fold = shapes.fold_shapes
    for group in ["人入八", "白自", "天夫", "拔拨", "木本", "千干", "日曰田由"]:
        assert len(set(fold(group))) == 1, group
    for a, b in ["天大", "人大", "木林", "白黑"]:
        assert fold(a) != fold(b), (a, b)


def test_every_character_folds_one_step_to_one_that_stays() -> None:
    table = shapes.shape_table()
    assert len(table) > 500
    assert all(0x4E00 <= c <= 0x9FFF and 0x4E00 <= t <= 0x9FFF for c, t in table.items())
    assert not set(table.values()) & set(table), "a character folded to stays itself"


@pytest.mark.parametrize(
    ("original", "misread"),
    [
        ("我已经到家了", "我己经到家了"),  # six characters: below the size that matches only its equal
        ("今日天气晴朗", "今曰天气晴朗"),
        ("土地出让金上涨", "士地出让金上涨"),
        ("请勿失信于人", "请勿矢信于人"),
    ],
)
def test_a_misread_look_alike_in_a_short_post_is_a_duplicate(original: str, misread: str) -> None:
    assert is_duplicate(misread, original)
    assert is_duplicate(original, misread)


@pytest.mark.parametrize(
    ("original", "misread"),
    [("4.房间很小", "4.房问很小"), ("会见美国客人", "会见美国客入"), ("今日天晴", "今曰天晴")],
)
def test_a_misread_post_of_four_to_seven_characters_shares_a_key_with_its_original(original: str, misread: str) -> None:
    probe, stored = fingerprint(misread, SETTINGS), fingerprint(original, SETTINGS)
    assert set(probe.probe_keys) & set(stored.exact_keys), "every band and edge breaks; the whole folded key holds"
    assert is_duplicate(misread, original)


@pytest.mark.parametrize(("a", "b"), [("今天天气很好", "今天天气不好"), ("土地出让金上涨", "土地出让金下跌")])
def test_posts_that_differ_by_a_word_stay_apart(a: str, b: str) -> None:
    assert not is_duplicate(a, b)


def test_entries_stored_without_the_second_list_compare_as_before() -> None:
    stored = without_words(fingerprint("我己经到家了", SETTINGS).sketch)  # 己 folds to 已
    assert len(stored) % 2 == 1, "a text with a look-alike to fold carries the second list"
    before = stored[: SHORT_SKETCH_BYTES + 2 * stored[-1]]  # as an entry stored before it was
    probe = fingerprint("我已经到家了", SETTINGS).sketch
    assert compare(probe, stored).resemblance == 1.0
    assert compare(before, stored).resemblance == 1.0, "the same text, stored before, still matches"
    assert compare(probe, before).resemblance < 1.0, "a misreading stored before stays one"


def test_a_text_without_look_alikes_has_no_second_list() -> None:
    part = shorttext.short_part("好好学习", SETTINGS.short_chars, SETTINGS.short_bands)
    assert part is not None and len(without_words(bytes(SKETCH_BYTES) + part.sketch)) % 2 == 0


def test_the_builder_finds_look_alikes_in_the_font_and_nothing_else() -> None:
    table = build_zh_shapes.build(build_zh_shapes.DEFAULT_FONT, ["土", "士", "日", "曰", "好", "差", "天", "地"])
    assert table == {"士": "土", "曰": "日"}


def test_the_shipped_table_is_the_builders(tmp_path: Path) -> None:
    out = tmp_path / "shapes_zh.txt"
    assert build_zh_shapes.main([str(out)]) == 0
    assert out.read_bytes() == (ROOT / "worker" / "data" / "shapes_zh.txt").read_bytes()
