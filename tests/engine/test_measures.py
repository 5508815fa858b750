"""Scores, temperatures and shares in tenths in Chinese text, written one way."""

from __future__ import annotations

import pytest

from tests.engine.pairs import is_duplicate
from worker.engine.measures import measures_one_way


@pytest.mark.parametrize(
    ("text", "written"),
    [
        ("国足2比1战胜泰国队", "国足2:1战胜泰国队"),
        ("国足以二比一战胜泰国队", "国足以2:1战胜泰国队"),
        ("中国队以2∶1获胜", "中国队以2:1获胜"),
        ("以7比2的投票结果通过", "以7:2的投票结果通过"),
        ("约3成受访者支持", "约30%受访者支持"),
        ("3.5成", "35%"),
        ("明晨最低气温零下5度", "明晨最低气温-5"),
        ("零下5.5摄氏度", "-5.5"),
        ("最高气温25摄氏度", "最高气温25"),
    ],
)
def test_a_score_temperature_or_share_is_written_one_way(text: str, written: str) -> None:
    assert measures_one_way(text) == written


@pytest.mark.parametrize(
    "text",
    [
        "比去年同期增长",  # no figure before 比
        "无与伦比",
        "1.5比2",  # a ratio of decimals: no score
        "他八成是忘了",  # "probably", in numerals
        "10成",  # no share
        "转动30度",  # an angle
        "变成3个",
    ],
)
def test_what_no_style_says_for_sure_stays(text: str) -> None:
    assert measures_one_way(text) == text


@pytest.mark.parametrize(
    ("styled", "plain", "other"),
    [
        ("国足2比1战胜泰国队晋级", "国足2:1战胜泰国队晋级", "国足2:0战胜泰国队晋级"),
        ("国足以二比一战胜泰国队晋级", "国足以2:1战胜泰国队晋级", "国足以3:1战胜泰国队晋级"),
        ("北京明晨最低气温零下5度，注意防寒", "北京明晨最低气温-5℃，注意防寒", "北京明晨最低气温-6℃，注意防寒"),
        ("调查显示约3成受访者支持延迟退休", "调查显示约30%受访者支持延迟退休", "调查显示约40%受访者支持延迟退休"),
    ],
)
def test_a_short_post_in_another_style_is_a_copy_and_another_figure_is_not(styled: str, plain: str, other: str) -> None:
    """Before, each pair held numbers or characters the other did not, and was refused."""
    assert is_duplicate(styled, plain) and is_duplicate(plain, styled)
    assert not is_duplicate(styled, other)
