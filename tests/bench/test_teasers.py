"""The teasers probe: each cut is its story's opening, at a word's end in Latin script."""

from __future__ import annotations

import pytest

from bench import teasers

EN = "The council said on Monday that the old bridge will close for two years."
ZH = "市政府周一宣布，老桥将封闭维修两年，司机需绕行新建的环路。"


def test_a_cut_is_the_stories_opening_and_ends_at_a_word() -> None:
    assert teasers.cut(EN, 0.3, latin=True) == "The council said on"
    assert teasers.cut(EN, 0.25, latin=True) == "The council said"  # "on" cut in half is left out
    assert teasers.cut(ZH, 0.3, latin=False) == "市政府周一宣布，"  # Chinese: at any character


def test_each_cut_names_its_story() -> None:
    events = teasers.build(0.5, {"en": [EN], "zh": [ZH]})
    copies = {e.id: e.original for e in events if e.original is not None}
    assert copies == {"cut0.5:en0": "en0", "cut0.5:zh0": "zh0"}
    assert all(EN.startswith(e.text) or ZH.startswith(e.text) for e in events)


@pytest.mark.parametrize("fractions", ["0", "1.5", "half", ""])
def test_fractions_outside_zero_and_one_are_refused(fractions: str, capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exit_info:
        teasers.main(["--fractions", fractions])
    assert exit_info.value.code == 2
    assert "--fractions" in capsys.readouterr().err
