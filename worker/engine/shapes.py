"""Chinese characters folded to a look-alike, so that an OCR engine's misreading is no change.

A scan read by OCR, or retyped from one, takes a character for one that looks like it (己/已,
土/士, 未/末, 问/间). The two rarely sound alike, so folding to sound
(:mod:`worker.engine.sounds`) does not help, and in a notice of ten characters one misread
character breaks three of its eight character 3-grams. Folding both ways in one table would
merge every syllable a look-alike touches with another, so a very short text keeps a second
list of 3-grams over its text folded by shape, then by sound (:mod:`worker.engine.shorttext`),
and :func:`worker.engine.sketch.compare` takes the better of the two lists.

The table (``worker/data/shapes_zh.txt``) is built by ``scripts/build_zh_shapes.py`` from a
font's glyphs: a common character (GB 2312) folds to its closest look-alike, a stroke or so
apart, among the more common ones. The classic misreadings whose glyphs lie further apart than
its bound (人/入/八, 白/自, 天/夫) are written by hand (``worker/data/shapes_zh_classic.txt``)
and joined with it: a font's pixels do not know which strokes an OCR engine loses.
"""

from __future__ import annotations

from functools import cache
from importlib import resources
from typing import Any

from worker.engine.sounds import native_folder, sound_table, translate

__all__ = ["fold_shapes", "fold_shapes_and_sounds", "shape_table"]

_TABLE = "shapes_zh.txt"
_CLASSIC = "shapes_zh_classic.txt"


def fold_shapes(text: str) -> str:
    """``text`` with every character that has a more common look-alike replaced by it."""
    return text.translate(shape_table())


def fold_shapes_and_sounds(text: str) -> str:
    """``text`` folded by shape, then by sound, in one pass."""
    return translate(text, _shape_sound_table(), _shape_sound_folder())


@cache
def _shape_sound_folder() -> Any | None:
    return native_folder(_shape_sound_table())


@cache
def _shape_sound_table() -> dict[int, int]:
    sounds = sound_table()
    return sounds | {char: sounds.get(folded, folded) for char, folded in shape_table().items()}


@cache
def shape_table() -> dict[int, int]:
    """``str.translate`` table: character -> the one its group folds to (only those that change).

    The font's groups (a character and its look-alikes) joined with the hand-written ones that
    share a character with them, each joined group folded to the font's choice when it made one."""
    root: dict[str, str] = {}
    for line in _lines(_TABLE):
        char, folded = line.split("\t")
        root[char] = folded
    for group in _lines(_CLASSIC):
        members = set(group)
        members |= {root.get(char, char) for char in group}
        members |= {char for char, folded in root.items() if folded in members}
        rep = next((root[char] for char in group if char in root), group[0])
        for char in members - {rep}:
            root[char] = rep
    return {ord(char): ord(folded) for char, folded in root.items() if char != folded}


def _lines(name: str) -> list[str]:
    text = resources.files("worker").joinpath("data", name).read_text(encoding="utf-8")
    return [line for line in text.splitlines() if line and not line.startswith("#")]
