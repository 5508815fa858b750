"""Build ``worker/data/tw_phrases.txt``: Taiwan's words for things, and the mainland's, for Traditional texts.

A story converted to Traditional Chinese character by character (OpenCC ``s2t``) comes back
whole under ``t2s``. One converted the way Wikipedia and many news apps convert for Taiwan
(``s2twp``) also takes Taiwan's words: 内存 becomes 記憶體, 软件 軟體, 屏幕 螢幕, and ``t2s`` makes
them 记忆体, 软体, 萤幕, words the original never had. OpenCC's ``TWPhrasesRev`` dictionary
(what its ``tw2sp`` conversion uses) maps them back; applied whole it also rewrites words a
character-by-character copy of a mainland text holds (執行 "execute" becomes 运行 "run"), and
then that copy no longer matches its original.

So the table keeps an entry only where doing so cannot hurt such a copy: its key must be
Traditional (``t2s`` changes it; a key a Simplified text could hold, such as 影片, would be
rewritten in copies and not in originals), and the key converted by ``t2s`` must be a word
mainland text hardly uses, by jieba's dictionary (its frequency at most ``MAX_MAINLAND`` and
under a tenth of the mainland word's, ``MIN_RATIO``): 軟體 (软体: 30, 软件: 4,601) stays, 執行 (执行:
14,504) and 設定 (设定: 406) go. A mainland word more common than that which holds a kept key
(专案组, 软体动物) is kept too, as itself, so that it stays whole (:func:`guards`).

Output: OpenCC's text dictionary format, one ``key<TAB>value`` line per entry, sorted; the
value is the first of OpenCC's, in Traditional characters as OpenCC keeps it (``t2s`` then
converts it). ``worker.engine.t2s`` puts this table before ``t2s``'s own.

Run: ``python scripts/build_tw_phrases.py [output]``.
"""

from __future__ import annotations

import importlib.util
import re
import sys
from collections.abc import Callable
from pathlib import Path

import opencc

from worker.engine import t2s

SOURCE = "TWPhrasesRev.ocd2"
DEFAULT_OUTPUT = Path(__file__).resolve().parent.parent / "worker" / "data" / t2s.TW_PHRASES
MAX_MAINLAND = 50
MIN_RATIO = 10


def jieba_frequencies() -> dict[str, int]:
    """jieba's dictionary (word, frequency), read from its file without importing jieba."""
    spec = importlib.util.find_spec("jieba")
    if spec is None or not spec.submodule_search_locations:
        raise SystemExit("jieba is not installed")
    path = Path(spec.submodule_search_locations[0]) / "dict.txt"
    words = (line.split(" ") for line in path.read_text("utf-8").splitlines())
    return {parts[0]: int(parts[1]) for parts in words if len(parts) >= 2}


def entries() -> list[tuple[str, str]]:
    """The kept (Taiwan phrase, mainland phrase) pairs and the guards of mainland words, sorted."""
    share = t2s.share()
    if share is None:
        raise SystemExit("OpenCC's dictionaries are not installed")
    simplified = opencc.OpenCC("t2s").convert
    frequency = jieba_frequencies()
    kept: dict[str, str] = {}
    for key, value in t2s.read_dictionary(share, SOURCE):
        converted = simplified(key)
        if converted == key:
            continue
        there, wanted = frequency.get(converted, 0), frequency.get(simplified(value), 0)
        if there == 0 or (there <= MAX_MAINLAND and there * MIN_RATIO < wanted):
            kept.setdefault(key, value)
    return sorted({**guards(kept, frequency, simplified), **kept}.items())


def guards(kept: dict[str, str], frequency: dict[str, int], simplified: Callable[[str], str]) -> dict[str, str]:
    """A mainland word that holds a kept key's converted form (专案组 holds 专案, 软体动物 软体), in
    Traditional characters and mapped to itself: OpenCC takes the longest key, so the word
    stays whole and ``t2s`` converts it as before, where 專案 alone would become 项目 and the
    copy's 专案组 项目组."""
    traditional = opencc.OpenCC("s2t").convert
    converted = {simplified(key): key for key in kept}
    inside = re.compile("|".join(sorted(map(re.escape, converted), key=len, reverse=True)))
    found: dict[str, str] = {}
    for word, count in frequency.items():
        if count > MAX_MAINLAND and word not in converted and inside.search(word):
            written = traditional(word)
            if any(key in written for key in converted.values()):
                found[written] = written
    return found


def main(argv: list[str]) -> None:
    output = Path(argv[1]) if len(argv) > 1 else DEFAULT_OUTPUT
    kept = entries()
    output.write_text("".join(f"{key}\t{value}\n" for key, value in kept), "utf-8")
    print(f"{output}: {len(kept)} entries, {sum(key != value for key, value in kept)} Taiwan phrases")


if __name__ == "__main__":
    main(sys.argv)
