"""Chinese numerals written as digits where outlets write a count, a date or a share either way.

One story reads "造成三名乘客死亡" at one outlet and "造成3名乘客死亡" at another: the national
style (GB/T 15835) asks for digits in counts and dates, and many outlets, and every official
text, write numerals. Left as they are, a restyled copy differs in every figure's words and,
worse, states none of the other's numbers, which the numbers check reads as another report
of a template (:mod:`worker.engine.numbers`). So a numeral becomes digits where a digit would
stand in either style: before a counting unit or a date's 年/月/日 ("三十多人" as "30多人",
"二〇二五年" as "2025年"), and as a share ("百分之二点一" as "2.1%"). A figure in 万 or 亿
is written in full ("1.2万" as "12000", "1.2亿" as "120000000": :func:`wan_as_digits`), and
a weekday, which outlets write as 周一, 星期一 or 礼拜一, as 周一 (:func:`weekdays_as_zhou`).

Everything else stays: numerals inside words and idioms ("统一", "十分", "一起", "三心二意"),
approximations ("三四个", "十几个", "几十人"), fractions ("三分之一"), and a bare 百, 千 or
万 ("百姓", "千万"). A lone 一 is a word more often than a count ("一个", "一年来", "第一"),
so it becomes 1 only before the units a count of one, a date or a figure is written with in
news ("一名", "一例", "一月", "一万"). The rule is the same on both sides of a comparison, so a
numeral it leaves alone costs only a copy that wrote that one figure the other way.
"""

from __future__ import annotations

import re
from functools import lru_cache

__all__ = ["SMALL_NUMERALS", "numeral_value", "numerals_as_digits", "wan_as_digits", "weekdays_as_zhou"]

_DIGITS = {"零": 0, "〇": 0, "○": 0, "一": 1, "二": 2, "两": 2, "三": 3, "四": 4, "五": 5, "六": 6, "七": 7,
           "八": 8, "九": 9}  # fmt: skip
_DIGIT_BY_DIGIT = str.maketrans({numeral: str(value) for numeral, value in _DIGITS.items()})
_PLACES = {"十": 10, "百": 100, "千": 1000}
# The numerals of an hour, a minute or a score (up to 99): digits and 十.
SMALL_NUMERALS = "〇零一二两三四五六七八九十"
_NUMERAL = SMALL_NUMERALS + "○百千"
# Units a count, a measure or a date is written before (multi-character ones where the first
# character alone is a word: "十分" is "very", "十分钟" ten minutes).
_UNITS = "名人个位例岁年月日号天次家辆架艘起所座件项条只头台部元倍级层场轮届周万亿吨度户栋枚批期股种季版米克点"
_UNIT_WORDS = ("分钟", "小时", "公里", "公斤", "公顷", "平方", "美元", "港元", "欧元")
# A lone 一 is a count before these only ("一年" is a time too); "一万", "一亿" are figures.
_ONE_UNITS = frozenset("名例月日号万亿")
_FRACTION = f"(?:点[{''.join(_DIGITS)}]++)?+"
# A whole run of numerals and the unit after it. After its first character, lookbehinds say
# that no numeral came before it, nor 几 or 数 ("几十人", "数百名": approximations), that it is
# not a bare 百 or 千, and that a lone 一 goes on to a numeral or a unit of one (most runs a
# text has are "一个", "一年": not matched at all). Starting with a character class lets the
# regex engine skip to a numeral; the possessive run keeps a long run of numerals linear.
_COUNT = re.compile(
    f"[{_NUMERAL}](?<![{_NUMERAL}几数][{_NUMERAL}])(?<![百千])(?:(?<!一)|(?=[{_NUMERAL}点{''.join(_ONE_UNITS)}]))"
    f"[{_NUMERAL}]*+{_FRACTION}(?=[多余]?(?:[{_UNITS}]|{'|'.join(_UNIT_WORDS)}))"
)
_SHARE = re.compile(f"百分之([{_NUMERAL}]++{_FRACTION})")


def numerals_as_digits(text: str) -> str:
    """``text`` with each count, date or share written in Chinese numerals put in digits."""
    if "百分之" in text:
        text = _SHARE.sub(_share, text)
    return _COUNT.sub(_count, text)


# "星期天" and "礼拜天" are 周日; "周天" is left alone ("一周天气" is a week's weather).
_WEEKDAY = re.compile("(?:星期|礼拜)([一二三四五六日天])")


def weekdays_as_zhou(text: str) -> str:
    """``text`` with each weekday written as 周一…周日 (星期一, 礼拜天 as 周一, 周日)."""
    if "星期" not in text and "礼拜" not in text:
        return text
    return _WEEKDAY.sub(lambda m: "周" + ("日" if m.group(1) == "天" else m.group(1)), text)


# A figure in 万 (ten thousands), 亿 (hundred millions) or 万亿 (trillions), as outlets write
# it ("1.2万", "1.2亿", "12000万", "1亿2000万", "1万2000") and as others write it in full
# ("12000", "120000000"; digits grouped by thousands, "12,000万", too). Not after a figure's
# digits, point or comma; at most twelve digits on each side of the point, so a hostile run of
# digits is left as it is. The pattern opens with a digit and looks behind after it: a
# lookbehind first made the regex engine try every position of a story that states a 万.
_BIG = re.compile(
    r"(\d(?<![\d.,]\d)(?:\d{0,2}(?:,\d{3}){1,3}|\d{0,11}))(?:\.(\d{1,12}))?"
    r"(?:(万亿)|(亿)(?:(\d{1,4})万)?|(万)(?:(\d{1,4})(?![\d.,]))?)"
)
_POWERS = {"万亿": 12, "亿": 8, "万": 4}


def wan_as_digits(text: str) -> str:
    """``text`` with each figure in 万, 亿 or 万亿 written in full ("1.2万" as "12000",
    "1.2亿" and "12000万" as "120000000")."""
    if "万" not in text and "亿" not in text:
        return text
    return _BIG.sub(_in_full, text)


def _in_full(match: re.Match[str]) -> str:
    whole, fraction, trillions, hundred_millions, and_wan, wan, and_ones = match.groups()
    power = _POWERS[trillions or hundred_millions or wan]
    fraction = fraction or ""
    if len(fraction) > power or fraction and (and_wan or and_ones):  # "1.23456万"; "1.2亿3000万"
        return match.group()  # no whole figure, or no outlet's style
    value = int(whole.replace(",", "") + fraction.ljust(power, "0"))
    return str(value + int(and_wan or 0) * 10_000 + int(and_ones or 0))


def _share(match: re.Match[str]) -> str:
    value = _number(match.group(1), False)
    return match.group() if value is None else value + "%"


def _count(match: re.Match[str]) -> str:
    count, end = match.group(), match.end()
    following = match.string[end : end + 1]
    if count == "一" and following not in _ONE_UNITS:  # "一点" (a little), not a decimal
        return count
    value = _number(count, following == "年")
    return count if value is None else value


@lru_cache(maxsize=4096)  # a feed writes the same few figures over and over: 十二月, 三名
def _number(numeral: str, year: bool) -> str | None:
    """The digits of ``numeral`` ("三十五" 35, "二点一" 2.1; with ``year``, "二〇二五" 2025), or
    None where it is not one number ("三四", "百")."""
    whole, _, fraction = numeral.partition("点")
    if fraction:
        fraction = "." + fraction.translate(_DIGIT_BY_DIGIT)
    if year and len(whole) > 1 and all(c in _DIGITS for c in whole):
        return whole.translate(_DIGIT_BY_DIGIT) + fraction
    value = _positional(whole)
    return None if value is None else str(value) + fraction


def numeral_value(figure: str) -> int | None:
    """The value of a figure in digits, or of a numeral written with places ("二十三" 23, "两千零五"
    2005); None for a numeral that is not one number."""
    return int(figure) if figure.isdigit() else _positional(figure)


def _positional(numeral: str) -> int | None:
    """A numeral written with places ("两千零五" 2005, "十二" 12), or None where it is not one:
    two digits in a row ("三四"), a place with no digit before it but a leading 十 ("百"), or a
    digit after 百 or 千 that stands for the next place down ("一百二", read 120 or 102)."""
    total, digit, last = 0, None, ""
    for c in numeral:
        if c in _PLACES:
            if digit is None and not (c == "十" and not last):
                return None
            total += (1 if digit is None else digit) * _PLACES[c]
            digit = None
        elif digit is not None:  # "三四", or a zero after a digit ("二〇")
            return None
        else:
            digit = _DIGITS[c] or None
        last = c
    if digit is not None and len(numeral) > 1 and numeral[-2] in "百千":
        return None
    return total + (digit or 0)
