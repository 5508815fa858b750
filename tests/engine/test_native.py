"""The native pipeline (worker._native) gives exactly what the Python pipeline gives.

These tests import ``worker._native`` directly: without the built extension they fail.
"""

from __future__ import annotations

import json
import random
import re
import unicodedata
from functools import cache

import jieba
import numpy as np
import opencc
from hypothesis import given, settings
from hypothesis import strategies as st

from bench import devfeed, devset
from tests.engine.test_segment import people_daily_paragraphs
from worker import _native
from worker.cli.inputs import default_sample
from worker.engine import leads, numbers, shapes, shorttext, sounds, t2s
from worker.engine import normalize as normalize_module
from worker.engine.fingerprint import Fingerprint, fingerprint, fingerprint_reference, native_engine
from worker.engine.idf import vocabulary
from worker.engine.normalize import normalize, normalize_reference
from worker.engine.segment import ALNUM, DECIMAL, char_classes, tokenize
from worker.engine.simhash import simhash_from_hashes
from worker.engine.sketch import SKETCH_BYTES
from worker.settings import Settings

SETTINGS = Settings()


@cache
def _engine() -> _native.Engine:
    engine = native_engine()
    assert isinstance(engine, _native.Engine)
    return engine


def _word_part(fp: Fingerprint) -> Fingerprint:
    """What both pipelines' word parts must agree on: all of a fingerprint but a short text's
    character part, keys, lookups and marks and a longer one's header leads, which Python adds
    for both (``worker.engine.shorttext``), and the word band keys, which the native side gives
    every text without an exact hash and Python drops for a short one under half
    ``short_chars`` (``fingerprint(text) == fingerprint_reference(text)`` holds them to each
    other)."""
    return fp._replace(sketch=fp.sketch[:SKETCH_BYTES], bands=(), word_bands=(), lookups=(), marks=(), heads=())


def _native_parts(text: str, config: Settings = SETTINGS) -> Fingerprint | None:
    """The native fingerprint of raw text (its word part), or None where the native side declines it."""
    parts = _engine().fingerprint(
        normalize(text, strip_links=config.strip_links, strip_tags=config.strip_tags),
        config.shingle_n,
        config.min_features,
        config.anchor_words,
        config.word_bands,
        config.fold_words,
    )
    return None if parts is None else Fingerprint(*parts[:5])


def _assert_same(texts: list[str], config: Settings = SETTINGS) -> None:
    """Every text: fast and reference normalisation agree, and the native fingerprint (when
    not declined) and ``fingerprint`` both equal the reference; the native side must decline
    almost nothing, or the comparison would say little."""
    declined = 0
    for text in texts:
        expected = fingerprint_reference(text, config)
        assert normalize(text) == normalize_reference(text), text
        native = _native_parts(text, config)
        declined += native is None
        assert native is None or native == _word_part(expected), text
        assert fingerprint(text, config) == expected, text
    assert declined <= 0.02 * len(texts)


@cache
def _dev_texts() -> list[str]:
    events, _ = devset.build()
    return [e["text"] for e in events]


def test_native_equals_python_on_every_development_text() -> None:
    texts = _dev_texts()
    assert len(texts) > 0.99 * devset.DEFAULT_SIZE
    _assert_same(texts)


def test_native_short_part_equals_python_on_the_feed_posts() -> None:
    events, _ = devfeed.extend(*devset.build(400, 7), 7, size=600)
    texts = [e["text"] for e in events[400:]]
    shorts = [normalize(t) for t in texts if len(normalize(t)) <= SETTINGS.short_chars]
    assert len(shorts) > 0.8 * len(texts)
    edges = (
        shorttext.EDGE_CHARS,
        shorttext.DENSE_EDGE_CHARS,
        shorttext.DENSE_EDGE_MAX_CHARS,
        shorttext.INNER_EDGES,
        shorttext.SHORT_LEAD_CHARS,
    )
    for text in shorts:
        native, basis = _engine().short(text, SETTINGS.short_bands, *edges), re.sub(r"[\W_]+", "", text)
        if not basis:  # nothing to sketch: both sides decline
            assert native is None and shorttext.short_part(text, SETTINGS.short_chars, 8) is None
            continue
        if native is None:  # a character outside the BMP: Python computes it
            assert any(ord(c) > 0xFFFF for c in text), text
            continue
        assert native == shorttext._short_reference(text, SETTINGS.short_bands), text
    _assert_same(texts)


def test_native_equals_python_on_the_shipped_sample() -> None:
    with open(default_sample(), encoding="utf-8") as lines:
        texts = [json.loads(line)["text"] for line in lines if line.strip()]
    assert len(texts) > 100
    _assert_same(texts)


def test_native_equals_python_under_other_settings() -> None:
    texts = _dev_texts()[::10]
    for config in (
        SETTINGS.replace(shingle_n=1),
        SETTINGS.replace(anchor_words=0),
        SETTINGS.replace(min_features=10_000),
        SETTINGS.replace(strip_links=False, strip_tags=False, anchor_words=3),
        SETTINGS.replace(fold_words=False),
    ):
        _assert_same(texts, config)


def test_unsupported_shingle_sizes_take_the_python_path() -> None:
    text = _dev_texts()[0]
    config = SETTINGS.replace(shingle_n=3)
    assert _native_parts(text, config) is None
    assert fingerprint(text, config) == fingerprint_reference(text, config)


def test_native_jieba_cuts_every_people_daily_paragraph_like_jieba_hmm_off() -> None:
    jieba.setLogLevel(60)
    mismatches = [p for p in people_daily_paragraphs() if _native.cut(p) != list(jieba.cut(p, HMM=False))]
    assert mismatches == []


def test_native_tokenizer_equals_tokenize_on_people_daily() -> None:
    texts = [normalize(p) for p in people_daily_paragraphs()[::10]]
    assert [_engine().tokenize(t) for t in texts] == [tokenize(t) for t in texts]


def test_native_fingerprint_equals_python_on_people_daily() -> None:
    _assert_same(list(people_daily_paragraphs()[::25]))


# Characters that make text hard: CJK (simplified and traditional), full-width forms, Latin
# with and without diacritics, combining marks, Hangul and its jamo, digits of other scripts,
# typographic quotes and dashes, invisible and bidi characters, emoji (with variation
# selectors and keycaps), astral ideographs, punctuation that joins or splits words.
_TRICKY = list(
    "中国人民银行發展經濟體國際乾隆沈默覆蓋藉口甦醒坏了，。！？：；（）【】《》「」、…—"
    "ＡＢＣａｂｃ１２３％＠＃ｉＰｈｏｎｅ"
    "abcXYZ019 \t\n.,:;/'-_#@&()[]!?\"^`"
    "eeiouyllmnrsstt"  # vowels and doubled letters: what a word's skeleton drops
    "éüñçÅßæøĳﬁﬂ"
    "\u0301\u0308\u0327\u20e3\ufe0f\u200b\u200d\u202e\u00ad\ufeff"
    "한국어\u1100\u1161\u11a8ㄱㅏ"
    "٣٤५६²½①ⅷ"
    "‘’“”‐−–"
    "😀👍🏽🇨🇳\U00020000\U0002a6d6"
    "μΣσςДдİı"
)
_text = st.text(alphabet=st.sampled_from(_TRICKY), max_size=60) | st.text(max_size=40)


@settings(max_examples=400, deadline=None)
@given(st.lists(_text, min_size=1, max_size=4).map(" ".join))
def test_native_equals_python_on_random_text(text: str) -> None:
    assert normalize(text) == normalize_reference(text)
    expected = fingerprint_reference(text, SETTINGS)
    native = _native_parts(text)
    assert native is None or native == _word_part(expected)
    assert fingerprint(text, SETTINGS) == expected


@settings(max_examples=200, deadline=None)
@given(st.text(alphabet=st.sampled_from(_TRICKY), min_size=1, max_size=30))
def test_native_tokenizer_equals_tokenize_on_random_normalised_text(text: str) -> None:
    normalised = normalize_reference(text)
    native = _engine().tokenize(normalised)
    assert native is None or native == tokenize(normalised)


def test_native_declines_what_it_cannot_classify() -> None:
    # astral characters are not in the handed-over tables; no words means no exact basis here
    assert _engine().tokenize("中文\U00020000") is None
    assert _engine().fingerprint("\U00020000 words", 2, 8, 12, 8) is None
    assert _engine().fingerprint("!!! ???", 2, 8, 12, 8) is None
    assert normalize_module._cleaner().clean("e\u0301") is None


# --- the premises of exactness -------------------------------------------------------------


def test_char_classes_are_what_re_tests_for_word_and_digit() -> None:
    import re

    classes = char_classes()
    word, digit = re.compile(r"\w"), re.compile(r"\d")
    for cp in range(0x10000):
        c = chr(cp)
        assert bool(classes[cp] & ALNUM) == (word.match(c) is not None and c != "_"), hex(cp)
        assert bool(classes[cp] & DECIMAL) == (digit.match(c) is not None), hex(cp)


def test_every_weight_is_a_float32_of_at_least_one_half() -> None:
    vocab = vocabulary()
    weights = np.append(vocab.weights, [vocab.zh_default, vocab.en_default])
    assert weights.min() >= 0.5
    assert np.array_equal(weights.astype(np.float32).astype(np.float64), weights)


def test_simhash_does_not_depend_on_the_order_of_rows() -> None:
    rng = np.random.default_rng(3)
    vocab = vocabulary()
    hashes = rng.integers(0, 2**64, size=3000, dtype=np.uint64)
    weights = rng.choice(vocab.weights, size=3000)
    weights[::2] = (weights[::2] + rng.choice(vocab.weights, size=1500)) / 2
    expected = simhash_from_hashes(hashes, weights)
    for _ in range(5):
        order = rng.permutation(hashes.size)
        assert simhash_from_hashes(hashes[order], weights[order]) == expected


def test_composition_seconds_of_the_bmp_are_all_there_are_for_bmp_text() -> None:
    bmp = normalize_module._composition_seconds()
    for cp in range(0x10000, 0x110000):
        parts = unicodedata.decomposition(chr(cp)).split()
        if len(parts) == 2 and not parts[0].startswith("<"):
            first, second = (chr(int(p, 16)) for p in parts)
            assert ord(first) > 0xFFFF or second in bmp, hex(cp)


@cache
def _t2s() -> opencc.OpenCC:
    return opencc.OpenCC("t2s")


def test_opencc_triggers_are_read_from_opencc() -> None:
    triggers = t2s.triggers()
    assert triggers is not None
    for traditional in "發經體國際乾沈藉覆甦":
        assert triggers.search(traditional)
    for simplified in "中国人民发展经济体":
        assert not triggers.search(simplified)


@cache
def _quiet_characters() -> list[str]:
    """CJK characters without a trigger, weighted towards those inside OpenCC phrase keys."""
    triggers = t2s.triggers()
    assert triggers is not None
    quiet = [chr(cp) for cp in range(0x4E00, 0xA000) if not triggers.search(chr(cp))]
    rng = random.Random(5)
    return rng.sample(quiet, 400) + list("藉沈覆坏一目了然深沉")


@settings(max_examples=300, deadline=None)
@given(st.text(alphabet=st.sampled_from(_quiet_characters() + list("，。 a1")), max_size=40))
def test_opencc_leaves_text_without_triggers_unchanged(text: str) -> None:
    triggers = t2s.triggers()
    assert triggers is not None
    if not triggers.search(text):
        assert _t2s().convert(text) == text


def test_opencc_leaves_every_people_daily_paragraph_without_triggers_unchanged() -> None:
    triggers = t2s.triggers()
    assert triggers is not None
    quiet = [p for p in people_daily_paragraphs()[::5] if not triggers.search(p)]
    assert len(quiet) > 3000
    assert [p for p in quiet if _t2s().convert(p) != p] == []


_NUMBERY = list("0123456789012345.,:-/ %aboxz1l") + list("年月日点亿元 ") + ["０", "٣", "²", "\u00a0", "\n"]


@settings(max_examples=400, deadline=None)
@given(st.text(alphabet=st.sampled_from(_NUMBERY), max_size=80))
def test_native_number_tags_equal_python(text: str) -> None:
    tags = _engine().number_tags(text, numbers._TAG_SEED, numbers.MAX_NUMBER_TAGS, numbers.MIN_OTHER_NUMBERS)
    assert tags == numbers._number_tags_reference(text)


def test_native_number_tags_equal_python_on_every_development_story() -> None:
    texts = [normalize(text) for text in _dev_texts()]
    assert sum(bool(numbers._number_tags_reference(t)) for t in texts) > 500
    for text in texts:
        assert numbers.number_tags(text, _engine()) == numbers._number_tags_reference(text)


@settings(max_examples=400, deadline=None)
@given(st.text(alphabet=st.sampled_from(_NUMBERY), max_size=80))
def test_native_numbers_mask_equals_python(text: str) -> None:
    """A decimal digit other than ASCII's ("٣"), which Python's ``\\d`` reads, is Python's to compute."""
    mask = _engine().numbers_mask(text, numbers._SEED, numbers.NUMBER_BITS)
    assert (mask is None) == any(c.isdecimal() and not c.isascii() for c in text)
    assert numbers.numbers_mask(text, _engine()) == numbers._numbers_mask_reference(text)
    assert mask is None or mask == numbers._numbers_mask_reference(text)


def test_native_numbers_mask_equals_python_on_every_development_text() -> None:
    texts = [normalize(text) for text in _dev_texts()]
    assert sum(bool(numbers._numbers_mask_reference(t)) for t in texts) > 1000
    for text in texts:
        assert numbers.numbers_mask(text, _engine()) == numbers._numbers_mask_reference(text)


_FOLDABLE = list("在再的得文件问件己已土士未末人入八 ab1，") + ["𠀀", "😀", "\ud800", "\n"]


@settings(max_examples=300, deadline=None)
@given(st.text(alphabet=st.sampled_from(_FOLDABLE), max_size=60))
def test_native_folds_equal_str_translate(text: str) -> None:
    """A lone surrogate (which Rust cannot hold) is Python's to fold."""
    for table, folder in _folds():
        assert folder.fold(text) == (None if "\ud800" in text else text.translate(table))
        assert sounds.translate(text, table, folder) == text.translate(table)


@cache
def _folds() -> list[tuple[dict[int, int], _native.Folder]]:
    """Both tables the short-text part folds by, each with its native folder."""
    tables = (sounds.sound_table(), shapes._shape_sound_table())
    return [(table, sounds.native_folder(table)) for table in tables]


def test_native_folds_equal_str_translate_on_people_daily() -> None:
    paragraphs = people_daily_paragraphs()[::7]
    for table, folder in _folds():
        changed = 0
        for paragraph in paragraphs:
            folded = paragraph.translate(table)
            assert folder.fold(paragraph) == folded
            changed += folded != paragraph
        assert changed > len(paragraphs) // 2


_LEADY = list("abcxyz012 ,._-") + list("新闻港口") + ["\u00e9", "٣", "\n", "😀", "𠀀"]


@settings(max_examples=400, deadline=None)
@given(st.text(alphabet=st.sampled_from(_LEADY), max_size=400), st.booleans())
def test_native_lead_windows_equal_python(text: str, short: bool) -> None:
    """Non-BMP characters (an emoji, a CJK extension B character) are Python's to compute."""
    assert leads.lead_windows(text, short, _engine()) == leads._lead_windows_reference(text, short)


def test_native_lead_windows_equal_python_on_every_development_text() -> None:
    texts = [normalize(text) for text in _dev_texts()]
    for text in texts:
        for short in (True, False):
            assert leads.lead_windows(text, short, _engine()) == leads._lead_windows_reference(text, short)
    assert sum(len(leads._lead_windows_reference(t, False)) == leads.MAX_WINDOWS for t in texts) > 500
