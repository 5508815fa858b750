"""Times of day and dates in Chinese text, written one way whichever way an outlet wrote them."""

from __future__ import annotations

import pytest

from tests.engine.pairs import is_duplicate
from worker.engine.datetimes import dates_as_nian, times_as_clock
from worker.engine.normalize import normalize


@pytest.mark.parametrize(
    ("text", "written"),
    [
        ("30日15时20分发生地震", "30日15:20发生地震"),
        ("30日15点20分发生地震", "30日15:20发生地震"),
        ("30日下午3点20分发生地震", "30日15:20发生地震"),
        ("30日下午3时20分发生地震", "30日15:20发生地震"),
        ("30日下午三点二十分发生地震", "30日15:20发生地震"),
        ("下午3点半开会", "15:30开会"),
        ("晚上10点钟", "22时"),
        ("中午1点", "13时"),
        ("凌晨3点", "3时"),
        ("09:05发布", "9:05发布"),
        ("15时许", "15时许"),
    ],
)
def test_a_time_of_day_is_written_as_a_clock_reads(text: str, written: str) -> None:
    assert times_as_clock(text) == written


@pytest.mark.parametrize(
    "text",
    [
        "提出3点建议",  # three suggestions
        "指数上涨12点",  # index points
        "上涨0.5点",
        "比分3:1",  # a score
        "15:20:33写入日志",  # a log's clock
        "8时41分47秒发生地震",  # seconds
        "一时半会儿",  # for a while
        "他一时说不出话",
        "二十五点",
        "25:30",
    ],
)
def test_what_is_no_time_of_day_stays(text: str) -> None:
    assert times_as_clock(text) == text


@pytest.mark.parametrize(
    ("text", "written"),
    [
        ("会议于2025-11-30举行", "会议于2025年11月30日举行"),
        ("2025/1/5起施行", "2025年1月5日起施行"),
        ("截至2025.11.30", "截至2025年11月30日"),
        ("编号2025-13-40", "编号2025-13-40"),  # no month or day
        ("2025-11/30", "2025-11/30"),  # two separators
        ("见 /2022/06/16/ 页", "见 /2022/06/16/ 页"),  # a link's path
    ],
)
def test_a_date_of_digits_is_written_with_nian_yue_ri(text: str, written: str) -> None:
    assert dates_as_nian(text) == written


def test_an_alert_in_another_outlets_time_or_date_style_is_its_copy() -> None:
    """Before, "15:20" was one number and "15时20分" two, neither stated by the other post, and
    the numbers check read the two as two reports."""
    alert = "中国地震台网正式测定：11月30日15时20分在四川甘孜州泸定县发生5.2级地震，震源深度10千米。"
    for styled in ("15:20", "下午3点20分", "下午三点二十分"):
        assert is_duplicate(alert.replace("15时20分", styled), alert)
    assert not is_duplicate(alert.replace("15时20分", "16:20"), alert)
    notice = "本办法自2025年12月1日起施行，原办法同时废止。"
    assert is_duplicate(notice.replace("2025年12月1日", "2025-12-01"), notice)
    assert normalize("２０２５－１２－０１起施行") == normalize("2025年12月1日起施行")
