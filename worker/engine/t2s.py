"""Traditional to Simplified Chinese (OpenCC ``t2s``), and the characters that make it change a text.

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


@cache
def converter() -> Callable[[str], str]:
    """One OpenCC Traditional->Simplified converter (phrase-level tables, C++; ~15 µs/KB)."""
    import opencc

    return opencc.OpenCC("t2s").convert


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
    share = _share()
    if share is None:
        return ""
    try:
        return disk_cache.kept(
            lambda: _inputs(share), "t2s-triggers", lambda: _read(share), str.encode, disk_cache.text
        )
    except ValueError:  # a t2s.json that is not JSON: no triggers, every text converted
        return ""


def _share() -> Path | None:
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
    files = _ocd2_files(json.loads((share / "t2s.json").read_text("utf-8")))
    tool = share.parent.parent / "bin" / "opencc_dict"
    entries: dict[str, str] = {}
    with tempfile.TemporaryDirectory() as tmp:
        for name in files:
            dumped = Path(tmp) / f"{name}.txt"
            command = [str(tool), "-i", str(share / name), "-o", str(dumped), "-f", "ocd2", "-t", "text"]
            subprocess.run(command, check=True, capture_output=True, timeout=60)
            for line in dumped.read_text("utf-8").splitlines():
                key, _, values = line.partition("\t")
                if key and key not in entries:
                    entries[key] = values.split(" ")[0]
    return entries


def _ocd2_files(config: Any) -> list[str]:
    """Every ``ocd2`` dictionary file named anywhere in an OpenCC configuration."""
    if isinstance(config, dict):
        own = [config["file"]] if config.get("type") == "ocd2" and "file" in config else []
        return own + [f for value in config.values() for f in _ocd2_files(value)]
    if isinstance(config, list):
        return [f for value in config for f in _ocd2_files(value)]
    return []
