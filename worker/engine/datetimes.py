"""A time of day and a date written one way in Chinese text, as outlets write them several ways.

Xinhua writes "30日15时20分", another outlet "30日下午3点20分" or "15:20", and a notice
"2025-11-30" where a paper writes "2025年11月30日". In a long story that is a word among
many; in a short post (an alert, a headline) the numbers check reads "15:20" as one number
and "15时20分" as two, neither stated by the other post (:mod:`worker.engine.numbers`), and
the two posts as two reports. So, in text with Han characters
(normaliser step 4, after :mod:`worker.engine.numerals` has put numerals in digits):

* a time of day becomes "H:MM", the shortest way and the one the numbers check reads as one
  number: "15:20", "15时20分", "15点20分", "下午3点20分" and "下午三点二十分" alike, a half hour
  ("3点半") as 30 minutes; an hour without minutes becomes "H时" ("下午3点" and "15点" as
  "15时"), 钟 after it dropped ("10点钟");
* a date of digits with one separator twice ("2025-11-30", "2025/11/30", "2025.11.30"; a
  year from 1000 to 2999) becomes "2025年11月30日".

A number before 点 with no part of the day before it and no minutes or half after it stays
("提出3点建议" is three suggestions, "上涨12点" twelve index points); so do an hour above 24, a
minute above 59, a time with seconds ("15:20:33", "8时41分47秒") and a colon with one digit
after it ("3:1", a score). The rule is the same on both sides of a comparison, so a
time it leaves alone costs only a copy that wrote that one time the other way.
"""

from __future__ import annotations

import re

from worker.engine.numerals import SMALL_NUMERALS, numeral_value

__all__ = ["dates_as_nian", "times_as_clock"]

_N = SMALL_NUMERALS  # in the character classes below

# Each pattern opens with a character class or a literal and looks behind after it: a
# lookbehind first makes the regex engine try every position, where it can skip ahead to the
# character. The hints, looked for before their patterns run, open with a character rarer than
# digits and numerals: a colon between digits; 点 or 时 after a digit or numeral.
_CLOCK = re.compile(r"(\d(?<![\d:.]\d)\d?):([0-5]\d)(?![\d:])")
_CLOCK_HINT = re.compile(r":(?<=\d:)\d")
# The parts of a day a time is said in (two characters each); the evening ones are twelve
# hours on ("下午3点" 15时).
_PARTS = ("上午", "早上", "早晨", "凌晨", "中午", "下午", "傍晚", "晚上", "夜间")
_EVENING = frozenset(("下午", "傍晚", "晚上", "夜间"))
# An hour and its minutes in digits, or in numerals where numerals_as_digits left them ("三点
# 二十分": its 点 read as a decimal point first); a lone numeral hour only with a part of the
# day or minutes, since "一时半会" is "for a while". The part of the day before the hour is
# looked up by :func:`_hour`, and dropped once the time is written (``_PART``).
_HOUR = re.compile(
    rf"(\d(?<![\d.{_N}]\d)\d?|[{_N}](?<![\d.{_N}][{_N}])[{_N}]{{0,2}})"
    rf"([点时])钟?(?:(\d{{1,2}}|[{_N}]{{1,3}})分|(半))?(?![\d:])"  # not before seconds: "8时41分47秒"
)
_HOUR_HINTS = tuple(re.compile(rf"{unit}(?<=[\d{_N}]{unit})") for unit in "点时")
_PART = re.compile(f"(?:{'|'.join(_PARTS)})(?=\\d{{1,2}}(?::\\d\\d|时))")
_DATE = re.compile(r"([12](?<![\d./-][12])\d{3})([-/.])(\d{1,2})\2(\d{1,2})(?![\d./-])")


def times_as_clock(text: str) -> str:
    """``text`` with each time of day written as "H:MM" ("15时20分", "下午3点20分" as "15:20"),
    or "H时" without minutes ("下午3点" as "15时")."""
    if ":" in text and _CLOCK_HINT.search(text):
        text = _CLOCK.sub(_clock, text)
    if not any(hint.search(text) for hint in _HOUR_HINTS):
        return text
    parted = False

    def hour(match: re.Match[str]) -> str:
        nonlocal parted
        written, part = _hour(match)
        parted = parted or part
        return written

    text = _HOUR.sub(hour, text)
    return _PART.sub("", text) if parted else text


def _clock(match: re.Match[str]) -> str:
    hour, minutes = match.groups()
    return f"{int(hour)}:{minutes}" if int(hour) < 24 else match.group()


def _hour(match: re.Match[str]) -> tuple[str, bool]:
    """The time ``match`` holds as "H:MM" or "H时" (else as it is), and whether a part of the
    day came before it."""
    hour, unit, minutes, half = match.groups()
    before = match.string[max(0, match.start() - 2) : match.start()]
    part = before if before in _PARTS else None
    if not (part or minutes or (half or unit == "时") and hour.isdigit()):  # "3点建议": points
        return match.group(), False
    h, m = numeral_value(hour), 30 if half else numeral_value(minutes or "0")
    if h is None or m is None or h > 24 or m > 59:
        return match.group(), False
    if part in _EVENING and 1 <= h <= 11 or part == "中午" and 1 <= h <= 2:
        h += 12
    return (f"{h}:{m:02d}" if minutes or half else f"{h}时"), part is not None


def dates_as_nian(text: str) -> str:
    """``text`` with each date of digits ("2025-11-30", "2025/11/30") written as "2025年11月30日"."""
    if "-" not in text and "/" not in text and "." not in text:
        return text
    return _DATE.sub(_date, text)


def _date(match: re.Match[str]) -> str:
    year, _, month, day = match.groups()
    if not (1 <= int(month) <= 12 and 1 <= int(day) <= 31):
        return match.group()
    return f"{year}年{int(month)}月{int(day)}日"
