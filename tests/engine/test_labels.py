"""A feed's labels around a headline go; words that may tell two texts apart stay."""

from __future__ import annotations

import pytest

from worker.engine.labels import strip_labels, strip_publisher
from worker.engine.normalize import normalize

HEAD = "Fed holds rates steady as inflation cools"
HEAD_ZH = "美联储宣布维持利率不变"


@pytest.mark.parametrize(
    "suffix",
    [" - Reuters", " - The New York Times", " | CNN Politics", " – Times of India", " — Al-Monitor",
     " - Barron's", " - Investing.com", " - news.com.au", " - Reuters - Yahoo Finance", " Source: AP"],
)  # fmt: skip
def test_an_outlets_name_after_a_headline_goes(suffix: str) -> None:
    assert strip_publisher(HEAD + suffix) == HEAD


@pytest.mark.parametrize("suffix", ["_新浪新闻", "|澎湃新闻", " - 人民网", "——央视网", "_网易订阅", "_新浪新闻_新浪网"])
def test_a_chinese_sites_name_after_a_headline_goes(suffix: str) -> None:
    assert strip_publisher(HEAD_ZH + suffix) == HEAD_ZH


@pytest.mark.parametrize(
    "text",
    [
        HEAD + " - Round 2",  # a number: what the numbers check compares
        "Fun fact: Feb 15 - Galileo's 430th Birthday",
        "Let It Be - The Beatles",  # a head too short to be a headline
        HEAD + " - live updates",  # not a name
        HEAD + " | Opinion | the",
        HEAD + " - Reuters reports that the vote was close",  # a sentence, not a name
        "Reuters - " + HEAD,  # a name in front is the dateline's business
        HEAD + "|CNN",  # a bare bar is Chinese sites' separator
        HEAD_ZH + "_张三李四",  # no site's ending
        "【暴雨致北京多地停课】今天上午全市中小学停课",  # a title in brackets, not a masthead
        "维持利率_新浪新闻",  # too few characters before it
        "x - Reuters",
        "New release available for download (Linux)",  # a bracket at the end is as often news
        "Unarmed Man Shot And Killed By Police In Chicago",  # a title-case headline's "By"
    ],
)
def test_words_that_may_be_content_stay(text: str) -> None:
    assert strip_publisher(text) == text


def test_the_whole_pipeline_makes_two_outlets_headlines_one() -> None:
    assert normalize(HEAD + " - Reuters") == normalize(HEAD + " | Yahoo Finance") == normalize(HEAD)
    assert normalize(HEAD_ZH + "_新浪新闻") == normalize(HEAD_ZH + "|澎湃新闻")


@pytest.mark.parametrize(
    "label",
    ["BREAKING: ", "JUST IN: ", "Breaking News: ", "UPDATE: ", "LIVE | ", "Watch - ", "EXCLUSIVE: ", "Opinion | ",
     "Analysis: ", "  News alert: "],
)  # fmt: skip
def test_a_kind_before_a_headline_goes(label: str) -> None:
    assert strip_labels(label + HEAD) == HEAD


@pytest.mark.parametrize(
    "label", ["【突发】", "突发！", "重磅:", "【独家】", "最新:", "视频|", "(视频)", "【新华社】", "【央视新闻】"]
)
def test_a_chinese_kind_before_a_headline_goes(label: str) -> None:
    assert strip_labels(label + HEAD_ZH) == HEAD_ZH


@pytest.mark.parametrize(
    "label",
    [
        " (Video)",
        " [PHOTOS]",
        " (updated)",
        "(视频)",
        "【图】",
        " [Watch] - Reuters",
        "（来源：新华网）",
        "(稿源:澎湃新闻)",
    ],
)
def test_a_medium_after_a_headline_goes_and_an_outlet_after_it(label: str) -> None:
    head = HEAD_ZH if any("\u4e00" <= char <= "\u9fff" for char in label) else HEAD
    assert strip_labels(head + label) == head


@pytest.mark.parametrize(
    "text",
    [
        "watch: Add upstream vcs url.",  # a changelog's file, not a label: not capitalised
        "Watch-list grows longer for the Fed",
        "Breaking: the news",  # too little left
        "Updates to the tax code were passed today",  # a kind with no separator is the sentence's word
        HEAD + " (videos of the crash)",  # a parenthesis saying more than the medium
    ],
)
def test_words_that_only_look_like_labels_stay(text: str) -> None:
    assert strip_labels(text) == text
