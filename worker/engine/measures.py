"""A score, a temperature and a share in tenths written one way in Chinese text.

Sports pages write a result "2:1", "2∶1" or "2比1" (or "二比一"), a weather report "零下5度",
"零下5摄氏度" or "-5℃", a survey "3成" or "30%". Each pair states one figure, but a short post in
one style holds numbers or characters the other does not, and the checks of a short text read
them as two posts. So, in text with Han characters (normaliser step 4, after numerals are put
in digits):

* a score or a vote, a figure 比 a figure or a ratio sign between figures ("2∶1"), is written
  "2:1" (numerals too: "二比一");
* a temperature below zero, "零下5度" or "零下5摄氏度", is "-5" (what "-5℃" normalises to: the
  symbol goes), and a figure before 摄氏度 is the figure;
* a share in tenths, "3成", is "30%" ("3.5成" "35%").

What a style does not say for sure stays: "5度" alone (an angle, a degree of something),
"八成" in numerals ("he probably …"), "比" with no figure on both sides ("比去年").
"""

from __future__ import annotations

import re

from worker.engine.numerals import SMALL_NUMERALS, numeral_value

__all__ = ["measures_one_way"]

_N = SMALL_NUMERALS  # in the character classes below

_FIGURE = rf"\d(?<![\d.]\d)\d{{0,2}}|[{_N}](?<![\d{_N}][{_N}])[{_N}]{{0,2}}"
_SCORE = re.compile(rf"({_FIGURE})比(\d{{1,3}}(?![\d.])|[{_N}]{{1,3}}(?![{_N}]))")
_TENTHS = re.compile(r"(\d(?<![\d.]\d))(?:\.(\d))?成")
_BELOW_ZERO = re.compile(r"零下(\d{1,2}(?:\.\d)?)(?:摄氏度|度)?")
_CELSIUS = re.compile(r"(?<=\d)摄氏度")
_RATIO = re.compile(r"(?<=\d)∶(?=\d)")
# Looked for first, each opening with the character it turns on, which the regex engine skips
# to: 比 and 成 are common characters, a figure before them is not.
_SCORE_HINT = re.compile(rf"比(?<=[\d{_N}]比)")
_TENTHS_HINT = re.compile(r"成(?<=\d成)")


def measures_one_way(text: str) -> str:
    """``text`` with each score as "2:1", temperature below zero as "-5" and share in tenths
    as "30%"."""
    if "∶" in text:  # the ratio sign papers print a score with: "２∶１"
        text = _RATIO.sub(":", text)
    if "比" in text and _SCORE_HINT.search(text):
        text = _SCORE.sub(_score, text)
    if "成" in text and _TENTHS_HINT.search(text):
        text = _TENTHS.sub(lambda m: f"{m.group(1)}{m.group(2) or 0}%", text)
    if "零下" in text:
        text = _BELOW_ZERO.sub(r"-\1", text)
    if "摄氏度" in text:
        text = _CELSIUS.sub("", text)
    return text


def _score(match: re.Match[str]) -> str:
    a, b = map(numeral_value, match.groups())
    return match.group() if a is None or b is None else f"{a}:{b}"
