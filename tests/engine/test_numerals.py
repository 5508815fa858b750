"""Chinese numerals as digits, weekdays one way: one story's figures and dates in either outlet's style."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from tests.engine.pairs import is_duplicate
from worker.engine.normalize import normalize, normalize_reference
from worker.engine.numerals import numerals_as_digits, wan_as_digits, weekdays_as_zhou


@pytest.mark.parametrize(
    ("text", "digits"),
    [
        ("造成三名乘客死亡、十二人受伤", "造成3名乘客死亡、12人受伤"),
        ("已组织两百余人搜救", "已组织200余人搜救"),
        ("具有二百三十多年历史", "具有230多年历史"),
        ("一百零八元", "108元"),
        ("两千零五年", "2005年"),
        ("二〇二五年十一月三十日", "2025年11月30日"),
        ("二零零六年一月一日", "2006年1月1日"),
        ("〇六年的屏幕", "06年的屏幕"),
        ("上涨百分之二点一", "上涨2.1%"),
        ("增长百分之十", "增长10%"),
        ("三点五倍", "3.5倍"),
        ("下午三点开会", "下午3点开会"),
        ("等了十分钟", "等了10分钟"),
        ("第三次会议", "第3次会议"),
        ("一名男子", "1名男子"),
        ("三十万人", "30万人"),
        ("一万多人", "1万多人"),
        ("一亿两千万元", "1亿2000万元"),
    ],
)
def test_a_count_date_or_share_in_numerals_is_written_in_digits(text: str, digits: str) -> None:
    assert numerals_as_digits(text) == digits


@pytest.mark.parametrize(
    "text",
    [
        "一个人",  # a lone 一 is a word before most units
        "一年来",
        "一起去",
        "统一标准",
        "十分重要",  # "very", not ten minutes
        "三心二意",
        "三四个",  # three or four
        "十几个",
        "几十人",
        "数百名",
        "第一次",
        "三分之一",
        "百姓",
        "千万不要",
        "一百二人",  # 120 or 102: left as written
        "五一期间",
        "百分之百",
    ],
)
def test_numerals_in_words_idioms_and_approximations_stay(text: str) -> None:
    assert numerals_as_digits(text) == text


@given(st.text(alphabet="零〇一二两三四五六七八九十百千点分之第几数名人年月日号个%百余多 ", max_size=24))
def test_any_mix_of_numerals_is_put_one_way_and_stays_put(text: str) -> None:
    """Whatever the numerals, the result is a fixed point (normalising twice changes nothing)."""
    once = numerals_as_digits(text)
    assert numerals_as_digits(once) == once


def test_the_normaliser_writes_traditional_numerals_as_digits_too() -> None:
    assert normalize("造成兩名乘客死亡") == normalize("造成2名乘客死亡") == "造成2名乘客死亡"
    assert normalize_reference("二〇二五年十一月三十日") == normalize("2025年11月30日")


@pytest.mark.parametrize(
    ("numerals", "digits"),
    [
        (
            "北京时间昨晚，一辆大巴在高速公路上侧翻，造成三名乘客死亡、十二人受伤，事故原因正在调查中。",
            "北京时间昨晚，一辆大巴在高速公路上侧翻，造成3名乘客死亡、12人受伤，事故原因正在调查中。",
        ),
        (
            "国家统计局今天发布数据显示，十月份全国居民消费价格同比上涨百分之二点一。",
            "国家统计局今天发布数据显示，10月份全国居民消费价格同比上涨2.1%。",
        ),
        ("五名游客在黄山景区走失，当地已组织两百余人搜救。", "5名游客在黄山景区走失，当地已组织200余人搜救。"),
        (
            "会议于十一月三十日在上海举行，共有五十个国家的代表出席。",
            "会议于11月30日在上海举行，共有50个国家的代表出席。",
        ),
    ],
)
def test_a_post_in_another_outlets_numeral_style_is_its_copy(numerals: str, digits: str) -> None:
    """Before, each restyled figure was a number one post stated and the other did not, and the
    numbers check refused every one of these pairs."""
    assert is_duplicate(numerals, digits)
    assert is_duplicate(digits, numerals)


def test_other_figures_in_either_style_are_another_report() -> None:
    assert not is_duplicate(
        "北京时间昨晚，一辆大巴在高速公路上侧翻，造成三名乘客死亡、十二人受伤，事故原因正在调查中。",
        "北京时间昨晚，一辆大巴在高速公路上侧翻，造成5名乘客死亡、20人受伤，事故原因正在调查中。",
    )
    assert not is_duplicate("会议于十一月三十日举行，五十国出席。", "会议于11月29日举行，50国出席。")


@pytest.mark.parametrize(
    ("text", "zhou"),
    [
        ("星期一股市大涨", "周一股市大涨"),
        ("礼拜三见", "周三见"),
        ("星期天和星期日", "周日和周日"),
        ("礼拜天去做礼拜", "周日去做礼拜"),  # worship stays
        ("两个星期以后", "两个星期以后"),  # a week, not a weekday
        ("一周天气", "一周天气"),  # "周天" is not read as a weekday
    ],
)
def test_a_weekday_is_written_as_zhou(text: str, zhou: str) -> None:
    assert weekdays_as_zhou(text) == zhou


def test_a_post_in_another_outlets_weekday_style_is_its_copy() -> None:
    """Before, the word check read 星期一 for 周一 as one word standing for another."""
    assert is_duplicate("星期一股市大涨，沪指涨逾2%", "周一股市大涨，沪指涨逾2%")
    assert not is_duplicate("周二股市大涨，沪指涨逾2%", "周一股市大涨，沪指涨逾2%")


@pytest.mark.parametrize(
    ("text", "full"),
    [
        ("超1.2万人", "超12000人"),
        ("5万元", "50000元"),
        ("1.25万", "12500"),
        ("10万+", "100000+"),
        ("1.2亿元", "120000000元"),
        ("12000万元", "120000000元"),
        ("12,000万元", "120000000元"),
        ("1亿2000万元", "120000000元"),
        ("1万2000人", "12000人"),
        ("3.5万亿元", "3500000000000元"),
        ("1.23456万", "1.23456万"),  # no whole figure
        ("1.2亿3000万", "1.2亿3000万"),  # no outlet's style
        ("99999999999999亿", "99999999999999亿"),  # longer than any figure
        ("万科", "万科"),
        ("亿万富翁", "亿万富翁"),
    ],
)
def test_a_figure_in_wan_is_written_in_full(text: str, full: str) -> None:
    assert wan_as_digits(text) == full


def test_a_post_that_writes_a_figure_in_full_is_a_copy_of_the_one_in_wan() -> None:
    """Before, "1.2" and "12000" were two numbers, and the numbers check refused the pair."""
    assert is_duplicate(
        "春运首日，广州南站发送旅客超1.2万人次，同比增长两成。", "春运首日，广州南站发送旅客超12000人次，同比增长两成。"
    )
    assert normalize("超１．２万人") == normalize("超12000人")
    assert is_duplicate("公司前三季度营收达1.2亿元，同比增长15%", "公司前三季度营收达12000万元，同比增长15%")
    assert normalize("一万二千人参加马拉松") == normalize("12000人参加马拉松")
    assert normalize("营收一亿两千万元") == normalize("营收1.2亿元")
    assert not is_duplicate("公司前三季度营收达1.2亿元，同比增长15%", "公司前三季度营收达1.2万元，同比增长15%")
    assert not is_duplicate(
        "春运首日，广州南站发送旅客超1.2万人次，同比增长两成。", "春运首日，广州南站发送旅客超13000人次，同比增长两成。"
    )
