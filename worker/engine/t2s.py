"""Traditional to Simplified Chinese (OpenCC ``t2s``, Taiwan's words first put as the mainland's),
and the characters that make it change a text.

A copy converted for Taiwan with its words (OpenCC ``s2twp``: 内存 as 記憶體) would come back from
``t2s`` as 记忆体, a word its original never had; :data:`TW_PHRASES` turns such words back first
(only Traditional ones that mainland text hardly uses: scripts/build_tw_phrases.py says why).

A conversion changes a text only where one of OpenCC's dictionary keys whose value differs
occurs in it, and every such key contains one of the *trigger* characters read here from the
installed OpenCC's own dictionaries; the normaliser skips OpenCC for a text without one
(:func:`may_change`). Reading them runs OpenCC's ``opencc_dict`` tool once per dictionary, so
the characters are kept between processes (:mod:`worker.engine.disk_cache`) under a name that
hashes the dictionaries and this module.
"""

from __future__ import annotations

import json
import subprocess
import tempfile
from collections.abc import Callable
from functools import cache
from pathlib import Path
from typing import Any, Protocol

from worker.engine import disk_cache

__all__ = ["converter", "may_change", "trigger_chars", "triggers"]


# Taiwan's words for things and the mainland's (scripts/build_tw_phrases.py), in worker/data.
TW_PHRASES = "tw_phrases.txt"


@cache
def converter() -> Callable[[str], str]:
    """One OpenCC Traditional->Simplified converter (phrase-level tables, C++; ~15 µs/KB): a
    Taiwan word first becomes the mainland's (:data:`TW_PHRASES`: "記憶體" is "内存", not
    "记忆体"), then OpenCC's ``t2s``. The table's keys are all Traditional, so a text without a
    trigger (:func:`may_change`) holds none of them either."""
    import opencc

    found = share()
    if found is None:
        return opencc.OpenCC("t2s").convert
    config = json.loads((found / "t2s.json").read_text("utf-8"))
    _absolute(config, found)
    table = Path(__file__).resolve().parent.parent / "data" / TW_PHRASES
    config["conversion_chain"].insert(0, {"dict": {"type": "text", "file": str(table)}})
    with tempfile.TemporaryDirectory() as tmp:  # OpenCC reads its configuration and tables once
        path = Path(tmp) / "t2s-tw.json"
        path.write_text(json.dumps(config), "utf-8")
        return opencc.OpenCC(str(path)).convert


def _absolute(config: Any, found: Path) -> None:
    """Make every dictionary file an OpenCC configuration names absolute (it moves elsewhere)."""
    for entry in _file_entries(config):
        entry["file"] = str(found / entry["file"])


class _Triggers(Protocol):
    def search(self, text: str, /) -> object: ...


def may_change(text: str) -> bool:
    """Whether OpenCC t2s could change ``text`` (always True when the triggers cannot be read)."""
    found = triggers()
    return found is None or bool(found.search(text))


@cache
def triggers() -> _Triggers | None:
    """The trigger characters as a set to search texts with; None if they cannot be read, and
    then every text with Chinese characters is converted."""
    chars = trigger_chars()
    if not chars:
        return None
    try:
        from worker import _native

        native: _Triggers = _native.CharSet(chars)
        return native
    except ImportError:
        import re

        return re.compile("[" + "".join(re.escape(c) for c in chars) + "]")


def trigger_chars() -> str:
    """The trigger characters, sorted: from the cache, else read from OpenCC ("" without it)."""
    found = share()
    if found is None:
        return ""
    try:
        return disk_cache.kept(
            lambda: _inputs(found), "t2s-triggers", lambda: _read(found), str.encode, disk_cache.text
        )
    except ValueError:  # a t2s.json that is not JSON: no triggers, every text converted
        return ""


def share() -> Path | None:
    """The installed OpenCC's dictionary directory, or None without OpenCC."""
    try:
        import opencc
    except ImportError:
        return None
    share = Path(opencc.__file__).parent / "clib" / "share" / "opencc"
    return share if (share / "t2s.json").is_file() else None


def _inputs(share: Path) -> list[bytes]:
    """What the triggers are read from: t2s's configuration, its dictionaries, this module."""
    config = (share / "t2s.json").read_bytes()
    files = [(share / name).read_bytes() for name in _ocd2_files(json.loads(config))]
    return [config, *files, Path(__file__).read_bytes()]


def _read(share: Path) -> str:
    """The trigger characters, sorted ("" if OpenCC's dictionaries cannot be dumped).

    OpenCC replaces, at each position, the longest dictionary key found there by its first
    value, and keeps any other character. So only keys whose first value differs from the key
    can change a text. Each single-character such key is a trigger; a longer such key is
    covered by a trigger it contains, else by its characters that are keys of their own
    (ambiguous ones such as 沈, 藉, 覆), else by all of its characters.
    """
    try:
        entries = _dictionary(share)
    except (OSError, ValueError, subprocess.SubprocessError):
        return ""
    changing = [key for key, value in entries.items() if value != key]
    found = {key for key in changing if len(key) == 1}
    keyed = {key for key in entries if len(key) == 1}
    for key in changing:
        if not found.intersection(key):
            found.update([c for c in key if c in keyed] or key)
    return "".join(sorted(found))


def _dictionary(share: Path) -> dict[str, str]:
    """Every key of t2s's dictionaries with its first value (the first dictionary's wins)."""
    entries: dict[str, str] = {}
    for name in _ocd2_files(json.loads((share / "t2s.json").read_text("utf-8"))):
        for key, value in read_dictionary(share, name):
            entries.setdefault(key, value)
    return entries


def read_dictionary(share: Path, name: str) -> list[tuple[str, str]]:
    """One of OpenCC's ``ocd2`` dictionaries as (key, first value) pairs, dumped by its own tool."""
    tool = share.parent.parent / "bin" / "opencc_dict"
    with tempfile.TemporaryDirectory() as tmp:
        dumped = Path(tmp) / f"{name}.txt"
        command = [str(tool), "-i", str(share / name), "-o", str(dumped), "-f", "ocd2", "-t", "text"]
        subprocess.run(command, check=True, capture_output=True, timeout=60)
        lines = dumped.read_text("utf-8").splitlines()
    pairs = [(key, values.split(" ")[0]) for key, _, values in (line.partition("\t") for line in lines)]
    return [(key, value) for key, value in pairs if key]


def _ocd2_files(config: Any) -> list[str]:
    """Every ``ocd2`` dictionary file named anywhere in an OpenCC configuration."""
    return [entry["file"] for entry in _file_entries(config) if entry.get("type") == "ocd2"]


def _file_entries(config: Any) -> list[dict[str, Any]]:
    """Every object of an OpenCC configuration that names a dictionary ``file``, in order."""
    if isinstance(config, dict):
        own = [config] if "file" in config else []
        return own + [entry for value in config.values() for entry in _file_entries(value)]
    if isinstance(config, list):
        return [entry for value in config for entry in _file_entries(value)]
    return []
