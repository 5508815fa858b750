"""Chinese folded to sound: an input method's slip is no change, other characters stay apart."""

from __future__ import annotations

import pytest

from tests.engine.pairs import is_duplicate
from worker.engine import sounds
from worker.settings import Settings

SETTINGS = Settings()


def test_characters_of_one_syllable_fold_together_and_others_do_not() -> None:
    assert sounds.fold_sounds("在") == sounds.fold_sounds("再")  # zài, zài
    assert sounds.fold_sounds("的") == sounds.fold_sounds("得")  # first readings de, dé
    assert sounds.fold_sounds("文") == sounds.fold_sounds("问")  # wén, wèn: tones are dropped
    assert sounds.fold_sounds("文") != sounds.fold_sounds("目")
    assert sounds.fold_sounds("Tokyo 2026, ｆｕｌｌ") == "Tokyo 2026, ｆｕｌｌ", "only ideographs change"


@pytest.mark.parametrize(
    ("original", "slip"),
    [
        ("无法打开文件", "无法打开问件"),  # six characters: below the size that matches only its equal
        ("文件下载完成", "文件下载完城"),
        ("我们明天再见", "我们明天在见"),
    ],
)
def test_a_homophone_slip_in_a_tiny_notice_is_a_duplicate(original: str, slip: str) -> None:
    assert is_duplicate(slip, original)


@pytest.mark.parametrize(
    ("a", "b"),
    [("无法打开文件", "无法打开目录"), ("正在下载更新", "正在安装更新"), ("今天天气很好", "今天天气不好")],
)
def test_notices_that_differ_by_a_word_stay_apart(a: str, b: str) -> None:
    assert not is_duplicate(a, b)
