"""One story as another outlet writes its figures, dates and titles: the restyles of
:mod:`bench.wrappers` that change the story's own words rather than put something around it.

Each reads a style the text holds and writes it the other way: English numbers, months,
wire units and titles as AP or Reuters write them, and a Chinese story's numerals, large
figures, times, dates and weekdays as other outlets do.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Callable

__all__ = [
    "ap_titles",
    "digit_groups",
    "month_style",
    "number_words",
    "wire_units",
    "zh_numerals",
    "zh_times",
    "zh_wan",
    "zh_weekdays",
]


_GROUPED = re.compile(r"(?<![\d,.])\d{1,3}(?:,\d{3})+(?![\d,])")
_UNGROUPED = re.compile(r"(?<![\d,.#])\d{5,}(?![\d,.;])")  # not a character reference's "&#20013;"


def _either_way(
    one: re.Pattern[str],
    as_other: Callable[[re.Match[str]], str],
    other: re.Pattern[str],
    as_one: Callable[[re.Match[str]], str],
) -> Callable[[str], str]:
    """A restyling between two outlets' styles: a text that writes ``one`` style anywhere gets
    all of it written the other way (``as_other``), and any other text its ``other`` style
    written ``one``'s way (``as_one``)."""

    def restyle(text: str) -> str:
        return one.sub(as_other, text) if one.search(text) else other.sub(as_one, text)

    return restyle


# Numbers: "1,000" as "1000", and "25000" as "25,000".
digit_groups = _either_way(_GROUPED, lambda m: m.group().replace(",", ""), _UNGROUPED, lambda m: f"{int(m.group()):,}")

_WORDS = ("two", "three", "four", "five", "six", "seven", "eight", "nine", "ten")
_SPELT = re.compile(r"\b(" + "|".join(_WORDS) + r")\b", re.I)
_SMALL = re.compile(r"(?<![\d.,])\b([2-9]|10)\b(?![\d.,%])")
# Small numbers: "five" as "5", or, where none is spelt out, "5" as "five" (AP spells out the
# numbers below ten).
number_words = _either_way(
    _SPELT, lambda m: str(_WORDS.index(m.group().lower()) + 2), _SMALL, lambda m: _WORDS[int(m.group()) - 2]
)

_WIRE = {"million": "mln", "billion": "bln", "trillion": "trln", "percent": "pct", "per cent": "pct"}
_WIRE_WORD = {short: word for word, short in _WIRE.items() if word != "per cent"}
_SPELT_UNIT = re.compile(r"(?<=\d )(" + "|".join(_WIRE) + r")\b", re.I)
_WIRE_UNIT = re.compile(r"(?<=\d )(mln|bln|trln|pct)\b")
# A wire's brief style of amounts, as Reuters writes them: "5 million" as "5 mln", "3 percent"
# as "3 pct"; or, where the text has them, back to the words.
wire_units = _either_way(_WIRE_UNIT, lambda m: _WIRE_WORD[m.group()], _SPELT_UNIT, lambda m: _WIRE[m.group().lower()])

_TITLES = {"Governor": "Gov.", "Senator": "Sen.", "Representative": "Rep.", "General": "Gen.", "Lieutenant": "Lt.",
           "Doctor": "Dr.", "Professor": "Prof.", "Mount": "Mt.", "Sergeant": "Sgt.", "Captain": "Capt.",
           "Colonel": "Col.", "Admiral": "Adm."}  # fmt: skip
_FULL_TITLES = {short.rstrip("."): title for title, short in _TITLES.items()}
_FULL_TITLE = re.compile(r"\b(" + "|".join(_TITLES) + r")(?= [A-Z])")
_SHORT_TITLE = re.compile(r"\b(" + "|".join(_FULL_TITLES) + r")\.?(?= [A-Z])")
# A title before a name as AP shortens it ("Governor Gavin Newsom" as "Gov. Gavin Newsom"),
# or, where the text has short ones ("Dr Smith"), written out.
ap_titles = _either_way(
    _FULL_TITLE, lambda m: _TITLES[m.group()], _SHORT_TITLE, lambda m: _FULL_TITLES[m.group().rstrip(".")]
)

_MONTHS = {"January": "Jan.", "February": "Feb.", "August": "Aug.", "September": "Sept.", "October": "Oct.",
           "November": "Nov.", "December": "Dec."}  # fmt: skip
_FULL_MONTHS = {short: month for month, short in _MONTHS.items()}
_FULL_MONTH = re.compile(r"\b(" + "|".join(_MONTHS) + r")(?= \d)")
_SHORT_MONTH = re.compile("(" + "|".join(map(re.escape, _MONTHS.values())) + r")(?= \d)")
# Dates: "November 30" as AP writes it, "Nov. 30", or back.
month_style = _either_way(_FULL_MONTH, lambda m: _MONTHS[m.group()], _SHORT_MONTH, lambda m: _FULL_MONTHS[m.group()])


_ZH_DIGITS = "零一二三四五六七八九"
_ZH_FIGURE = re.compile(
    r"(?<![0-9０-９.．,a-zA-Zａ-ｚＡ-Ｚ])([0-9０-９]+(?:[.．][0-9０-９]+)?)"
    r"([%％]|(?=[多余]?[名人个位例岁年月日号天次家辆架艘起所座件项条只头台部元倍级层场轮届周万亿吨度户]))"
)


def _zh_numeral(figure: str, year: bool) -> str:
    """A figure in ASCII digits as Chinese numerals: a year digit by digit ("二〇二五"), a number
    below 10,000 with places ("三十五", "两千零五"), a fraction's digits after 点."""
    whole, _, fraction = figure.partition(".")
    after = "点" + "".join(_ZH_DIGITS[int(c)] for c in fraction) if fraction else ""
    if year:
        return "".join("〇" if c == "0" else _ZH_DIGITS[int(c)] for c in whole) + after
    number, said, zero = int(whole), "", False
    for place, name in ((1000, "千"), (100, "百"), (10, "十"), (1, "")):
        digit = number // place % 10
        if digit == 0:
            zero = bool(said)
            continue
        said += ("零" if zero else "") + ("" if place == 10 and digit == 1 and not said else _ZH_DIGITS[digit]) + name
        zero = False
    return (said or "零") + after


def zh_numerals(text: str) -> str:
    """Another outlet's style of figures in Chinese: counts, dates and shares in numerals
    ("3名" as "三名", "1998年" as "一九九八年", "2.1%" as "百分之二点一"), below 10,000."""

    def spelt(m: re.Match[str]) -> str:
        figure, unit = unicodedata.normalize("NFKC", m.group(1)), m.group(2)
        if int(figure.partition(".")[0]) >= 10_000:
            return m.group()
        year = text.startswith("年", m.end()) and (len(figure) == 4 or figure[0] == "0")  # "06年" too
        if unit:
            return "百分之" + _zh_numeral(figure, False)
        return _zh_numeral(figure, year)

    return _ZH_FIGURE.sub(spelt, text)


_ZH_WAN = re.compile(r"(?<![0-9０-９.．])([0-9０-９]{1,4})(?:[.．]([0-9０-９]{1,4}))?([万亿])(?![万亿])")


def zh_wan(text: str) -> str:
    """Another outlet's style of large figures in Chinese: "1.2万" written in full, "12000";
    "1.2亿" in 万, "12000万", as a company's report writes it."""

    def full(m: re.Match[str]) -> str:
        whole, part = unicodedata.normalize("NFKC", m.group(1)), unicodedata.normalize("NFKC", m.group(2) or "")
        return str(int(whole) * 10_000 + int(part.ljust(4, "0") or "0")) + ("" if m.group(3) == "万" else "万")

    return _ZH_WAN.sub(full, text)


_ZH_CLOCK = re.compile(r"(?<![0-9０-９])([0-9０-９]{1,2})时([0-9０-９]{1,2})分")
_ZH_DATE = re.compile(r"(?<![0-9０-９])([0-9０-９]{4})年([0-9０-９]{1,2})月([0-9０-９]{1,2})日")


def zh_times(text: str) -> str:
    """Another outlet's style of times and dates in Chinese: "15时20分" as "下午3点20分",
    "1998年1月5日" as "1998-01-05"."""

    def said(m: re.Match[str]) -> str:
        hour, minute = (int(unicodedata.normalize("NFKC", g)) for g in m.groups())
        return f"下午{hour - 12}点{minute}分" if 12 < hour < 24 else f"上午{hour}点{minute}分"

    def iso(m: re.Match[str]) -> str:
        year, month, day = (int(unicodedata.normalize("NFKC", g)) for g in m.groups())
        return f"{year}-{month:02d}-{day:02d}"

    return _ZH_DATE.sub(iso, _ZH_CLOCK.sub(said, text))


_XINGQI = re.compile("(?:星期|礼拜)([一二三四五六日天])")
_ZHOU = re.compile("周([一二三四五六日])")
# Weekdays in Chinese: "星期一" as "周一", or back.
zh_weekdays = _either_way(
    _XINGQI, lambda m: "周" + m.group(1).replace("天", "日"), _ZHOU, lambda m: "星期" + m.group(1)
)
