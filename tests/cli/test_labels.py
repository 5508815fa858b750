"""One headline under two feeds' labels is one story; two headlines under one label are two."""

from __future__ import annotations

from pathlib import Path

from tests.cli.test_scan import duplicate_of, event


def test_a_headline_from_another_outlet_is_a_copy_and_another_headline_is_not(tmp_path: Path) -> None:
    lines = [
        event("a", "Storm closes schools across the north coast - Reuters"),
        event("b", "Storm closes schools across the north coast - The Guardian"),
        event("c", "Storm closes the port of Hull for a second day - Reuters"),
        event("d", "北方沿海多地因暴雨停课_新浪新闻"),
        event("e", "北方沿海多地因暴雨停课|澎湃新闻"),
        event("f", "暴雨致港口连续第二天关闭_新浪新闻"),
    ]
    assert duplicate_of(tmp_path, lines) == {"a": None, "b": "a", "c": None, "d": None, "e": "d", "f": None}


def test_a_headline_under_another_kind_or_medium_is_a_copy(tmp_path: Path) -> None:
    lines = [
        event("a", "BREAKING: Storm closes schools across the north coast"),
        event("b", "JUST IN: Storm closes schools across the north coast"),
        event("c", "BREAKING: Storm closes the port of Hull for a second day"),
        event("d", "Storm closes schools across the north coast (Video)"),
        event("e", "【突发】北方沿海多地因暴雨停课（视频）"),
        event("f", "最新：北方沿海多地因暴雨停课【图】"),
    ]
    assert duplicate_of(tmp_path, lines) == {"a": None, "b": "a", "c": None, "d": "a", "e": None, "f": "e"}
