"""The wrappers probe: each copy carries its story under the wrapper it is named for, scored so."""

from __future__ import annotations

import html
import re

import pytest

from bench import wrappers
from worker.engine.mojibake import repair
from worker.engine.sounds import fold_sounds
from worker.engine.t2s import converter

EN = 'The council said on Monday that the "old bridge" will close.\n2,500 drivers a day can\'t cross it.\nShops fear losses.'
ZH = "市政府周一宣布，老桥将封闭维修两年。\n每天1,200名司机需绕行新建的环路。\n两岸商户担心客流减少。"
TEXTS = {"en": [EN], "zh": [ZH]}
_TAG = re.compile(r"<[^<>]+>")


def test_every_wrapper_keeps_its_story_and_adds_only_its_own_kind() -> None:
    tested_below = {name for name, _, _ in RESTYLED} | {"zh_homophones"}
    for wrapper in [w for w in wrappers.WRAPPERS if w not in tested_below]:
        events = wrappers.build(wrapper, TEXTS)
        copies = [e for e in events if e.original is not None]
        assert copies, wrapper
        for copy in copies:
            story = EN if copy.lang == "en" else ZH
            shown = html.unescape(_TAG.sub(" ", copy.text)) if wrapper.startswith(("html", "entities")) else copy.text
            shown = repair(shown) if wrapper == "mojibake" else shown
            shown = converter()(shown) if wrapper in ("zh_traditional", "zh_taiwan") else shown
            words = re.findall(r"\w+", story)
            assert all(word in shown for word in words), (wrapper, copy.text)


def test_a_homophone_copy_differs_by_characters_of_the_same_sound_only() -> None:
    story = ZH * 3  # 117 Chinese characters: at most four slips
    copy = wrappers.WRAPPERS["zh_homophones"](story)
    changed = [(a, b) for a, b in zip(story, copy, strict=True) if a != b]
    assert 1 <= len(changed) <= len(re.findall("[\u4e00-\u9fff]", story)) // 25
    assert fold_sounds(copy) == fold_sounds(story)
    assert wrappers.WRAPPERS["zh_homophones"](story) == copy  # the same copy every run


def test_language_wrappers_go_to_their_language_only() -> None:
    assert [e.lang for e in wrappers.build("zh_source", TEXTS) if e.original] == ["zh"]
    assert [e.lang for e in wrappers.build("markdown_link", TEXTS) if e.original] == ["en"]


def test_a_copy_counts_when_called_a_copy_of_its_own_story_only() -> None:
    events = wrappers.build("byline", TEXTS)  # en0, zh0, byline:en0, byline:zh0
    recall, joined = wrappers.score(events, {"byline:en0": "en0", "byline:zh0": "en0"})
    assert recall == {"en": 1.0, "zh": 0.0}
    assert joined == 1


def test_an_unknown_wrapper_is_refused_with_the_names_to_choose_from(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exit_info:
        wrappers.main(["--only", "html_paragraphs,nosuch"])
    assert exit_info.value.code == 2
    err = capsys.readouterr().err
    assert "unknown wrappers ['nosuch']" in err and "page_frame" in err


# The wrappers that rewrite words (left out of the test above): what each writes, one way
# where the text has the one style and the other way back.
RESTYLED = [
    ("number_words", "Five killed, two hurt", "5 killed, 2 hurt"),
    ("number_words", "5 killed, 2 hurt in 2024 after 3.5 hours", "five killed, two hurt in 2024 after 3.5 hours"),
    ("month_style", "Storm hits on November 30, not in November", "Storm hits on Nov. 30, not in November"),
    ("month_style", "Storm hits on Nov. 30", "Storm hits on November 30"),
    ("zh_numerals", "１９９８年１２月３１日，３名乘客、５００多人", "一九九八年十二月三十一日，三名乘客、五百多人"),
    ("zh_numerals", "上涨2.1%，06年的屏幕，2005人", "上涨百分之二点一，〇六年的屏幕，二千零五人"),
    ("zh_numerals", "每天1,200名司机，价值350000元，XP的2003驱动", "每天1,200名司机，价值350000元，XP的2003驱动"),
    ("zh_weekdays", "星期一开会，礼拜天休息", "周一开会，周日休息"),
    ("zh_weekdays", "周一开会，一周天气", "星期一开会，一周天气"),
    ("wire_units", "Sales rose 5 percent to 2 billion, 3 Per cent of 10 million", "Sales rose 5 pct to 2 bln, 3 pct of 10 mln"),
    ("wire_units", "Sales rose 5 pct to 2 bln", "Sales rose 5 percent to 2 billion"),
    ("wire_units", "A million thanks, per cent", "A million thanks, per cent"),  # no figure in front
    ("ap_titles", "Governor Gavin Newsom met Doctor Jill Biden. The General said", "Gov. Gavin Newsom met Dr. Jill Biden. The General said"),
    ("ap_titles", "Dr Smith and Sen. Jones", "Doctor Smith and Senator Jones"),
    ("zh_wan", "超１．２万人，5万元，3万亿元，营收1.2亿元", "超12000人，50000元，3万亿元，营收12000万元"),
    ("zh_times", "１９９８年１月５日15时20分，9时5分", "1998-01-05下午3点20分，上午9点5分"),
]  # fmt: skip


@pytest.mark.parametrize(("wrapper", "text", "restyled"), RESTYLED)
def test_a_restyling_wrapper_writes_the_other_style(wrapper: str, text: str, restyled: str) -> None:
    assert wrappers.WRAPPERS[wrapper](text) == restyled
