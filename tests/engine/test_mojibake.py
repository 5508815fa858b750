"""Mojibake: UTF-8 that was read as Windows-1252 or Latin-1 is read again as its writer wrote it."""

from __future__ import annotations

import pytest

from bench.wrappers import misread as misread_as_1252
from tests.engine.pairs import is_duplicate
from worker.engine.mojibake import repair

EN = "Don’t miss the café’s “grand reopening” on Friday — the chef’s new menu features crème brûlée"
ZH = "市议会周一晚间经过长时间辩论后批准了新的滨江公园，两岸居民表示欢迎。"


@pytest.mark.parametrize("original", [EN, ZH, "Größe: 5 m², ½ price, © 2024"])
@pytest.mark.parametrize("misread", [misread_as_1252, lambda t: t.encode().decode("latin-1")])
def test_utf8_misread_as_a_single_byte_codec_is_read_again(original: str, misread: object) -> None:
    garbled = misread(original)  # type: ignore[operator]
    assert garbled != original
    assert repair(garbled) == original


@pytest.mark.parametrize(
    "text",
    [
        "Ça va très bien, merci. Größe und Übermaß. naïve café São Paulo",
        "中国人民银行今天宣布降息",
        "Donâ€™t miss it — and don’t",  # partly garbled: left whole
        "Donâ€™t miss the â€œgrand reopeningâ€�",  # a byte lost to "�": left whole
        "plain ASCII text",
    ],
)
def test_text_that_is_not_whole_misread_utf8_stays(text: str) -> None:
    assert repair(text) == text


def test_a_garbled_copy_is_a_duplicate_of_its_original() -> None:
    assert is_duplicate(misread_as_1252(EN), EN)
    assert is_duplicate(ZH.encode().decode("latin-1"), ZH)
