"""Traditional Chinese: a copy converted for Taiwan, its words too, reads as its mainland original."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import opencc
import pytest

from tests.engine.pairs import is_duplicate
from worker.engine import t2s
from worker.engine.normalize import normalize

_spec = importlib.util.spec_from_file_location(
    "build_tw_phrases", Path(__file__).resolve().parents[2] / "scripts" / "build_tw_phrases.py"
)
assert _spec is not None and _spec.loader is not None
build_tw_phrases = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(build_tw_phrases)
TABLE = Path(t2s.__file__).resolve().parent.parent / "data" / t2s.TW_PHRASES

POSTS = [
    "加上送的1G内存，vista跑得还挺快，上网速度也比原来快，因为还是原来的宽带",
    "配置合理，速度较快，没有系统，没有软件。屏幕没坏点，外观还可以",
    "完美三星屏，三星内存，改ide装xp，装sata驱动，一切顺利，音质不错，比我朋友的索尼强",
]


def test_shipped_table_is_what_the_build_script_produces(tmp_path: Path) -> None:
    """Catches a table left stale after a change to its rule, OpenCC's or jieba's dictionaries."""
    out = tmp_path / "tw_phrases.txt"
    build_tw_phrases.main(["build_tw_phrases.py", str(out)])
    assert out.read_bytes() == TABLE.read_bytes()


def test_every_key_is_traditional_so_the_triggers_still_cover_it() -> None:
    simplified = opencc.OpenCC("t2s").convert
    keys = [line.split("\t")[0] for line in TABLE.read_text("utf-8").splitlines()]
    assert len(keys) > 300
    assert all(simplified(key) != key and t2s.may_change(key) for key in keys)


@pytest.mark.parametrize("post", POSTS)
def test_a_copy_with_taiwans_words_reads_as_its_original(post: str) -> None:
    taiwan = opencc.OpenCC("s2twp").convert(post)
    assert taiwan != opencc.OpenCC("s2t").convert(post)  # Taiwan's words, not only its characters
    assert is_duplicate(taiwan, post)


def test_taiwans_words_become_the_mainlands() -> None:
    assert normalize("記憶體、軟體和螢幕") == "内存、软件和屏幕"
    assert normalize("臺灣的軟體發展") == "台湾的软件发展"


@pytest.mark.parametrize("word", ["执行", "设定", "影片", "程序员", "塑胶跑道", "专案组"])
def test_a_character_by_character_copy_of_mainland_words_is_left_as_it_was(word: str) -> None:
    text = f"他们今天{word}的情况如何"
    assert normalize(opencc.OpenCC("s2t").convert(text)) == normalize(text)
