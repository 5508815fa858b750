"""Build ``worker/data/shapes_zh.txt``, the Chinese look-alike table behind ``worker.engine.shapes``.

An OCR engine, or a reader retyping a scan, takes a character for one that looks like it
(己/已, 土/士, 戊/戌): unlike an input method's slip, the two need not sound alike. This
table names, for each common character that has a close look-alike more common than itself,
the character it is folded to.

Source: the glyphs of WenQuanYi Zen Hei (Debian's ``fonts-wqy-zenhei``, which ``make setup``
installs for the browser test), rendered with FreeType (freetype-py). Characters: the 6,763
Han characters of GB 2312, the common set of Simplified Chinese, ordered by their frequency
in jieba's dictionary (the sum of the frequencies of the words they are in).

Method: each glyph is cut to its ink (but no less than half the em each way) and scaled to
``SIZE`` x ``SIZE`` pixels, so that a character drawn narrower (曰 against 日) compares by its
strokes, not its width. Two glyphs are look-alikes when at most ``MAX_STRAY`` of either one's
ink lies over a pixel from the other's ink: a stroke more or less, or one
longer or shorter, and nothing else. (A mean distance between the inks does not work: the
glyphs of two busy characters lie close together everywhere.) ``MAX_STRAY`` is where about one
in ten thousand pairs of these characters counts as alike. In order of frequency, each
character folds to its closest look-alike among the more frequent characters that fold to
nothing themselves.

Output: UTF-8 text; ``#`` comment lines (font, settings), then one ``character<TAB>folded``
line per character that folds to another, in code-point order.

Run: ``python scripts/build_zh_shapes.py [output] [--font PATH]``.
"""

from __future__ import annotations

import argparse
import importlib.util
from collections import Counter
from collections.abc import Sequence
from pathlib import Path

import numpy as np

DEFAULT_FONT = Path("/usr/share/fonts/truetype/wqy/wqy-zenhei.ttc")
DEFAULT_OUTPUT = Path(__file__).resolve().parent.parent / "worker" / "data" / "shapes_zh.txt"
SIZE = 64
MAX_STRAY = 0.18


def gb2312_han() -> list[str]:
    """The Han characters of GB 2312 (levels 1 and 2: lead bytes 0xB0-0xF7)."""
    out = []
    for code in range(0x4E00, 0xA000):
        try:
            encoded = chr(code).encode("gb2312")
        except UnicodeEncodeError:
            continue
        if len(encoded) == 2 and 0xB0 <= encoded[0] <= 0xF7:
            out.append(chr(code))
    return out


def char_frequency() -> Counter[str]:
    """How often each character occurs in jieba's dictionary, weighted by its words' frequency."""
    spec = importlib.util.find_spec("jieba")
    if spec is None or not spec.submodule_search_locations:
        raise SystemExit("jieba is not installed")
    counts: Counter[str] = Counter()
    with open(Path(spec.submodule_search_locations[0]) / "dict.txt", encoding="utf-8") as lines:
        for line in lines:
            word, frequency = line.split()[:2]
            for char in word:
                counts[char] += int(frequency)
    return counts


def render(font: Path, chars: Sequence[str]) -> np.ndarray:
    """Each character's glyph cut to its ink and scaled to SIZE x SIZE (one row of booleans each)."""
    import freetype  # a build-time dependency only

    face = freetype.Face(str(font))
    face.set_pixel_sizes(0, SIZE)
    rows = np.zeros((len(chars), SIZE * SIZE), dtype=bool)
    for i, char in enumerate(chars):
        face.load_char(char, freetype.FT_LOAD_RENDER)
        bitmap = face.glyph.bitmap
        ink = np.array(bitmap.buffer, dtype=np.uint8).reshape(bitmap.rows, bitmap.width) >= 128
        ys, xs = np.nonzero(ink)
        if ys.size == 0:
            raise SystemExit(f"the font has no glyph for {char!r}")
        ink = _at_least_half(ink[ys.min() : ys.max() + 1, xs.min() : xs.max() + 1])
        scale = np.arange(SIZE) / SIZE
        rows[i] = ink[np.ix_((scale * ink.shape[0]).astype(int), (scale * ink.shape[1]).astype(int))].ravel()
    return rows


def _at_least_half(ink: np.ndarray) -> np.ndarray:
    """``ink`` padded to half the em on each side, centred: scaled to the full square a bar
    would become a block, 一 the same as 丨."""
    height, width = max(ink.shape[0], SIZE // 2), max(ink.shape[1], SIZE // 2)
    top, left = (height - ink.shape[0]) // 2, (width - ink.shape[1]) // 2
    out = np.zeros((height, width), dtype=bool)
    out[top : top + ink.shape[0], left : left + ink.shape[1]] = ink
    return out


def _within_a_pixel(ink: np.ndarray) -> np.ndarray:
    """The pixels at most one pixel across or down from ink (diagonal neighbours are not)."""
    out = ink.copy()
    out[1:] |= ink[:-1]
    out[:-1] |= ink[1:]
    out[:, 1:] |= ink[:, :-1]
    out[:, :-1] |= ink[:, 1:]
    return out


def stray_shares(glyphs: np.ndarray) -> np.ndarray:
    """``out[i, j]``: the larger of the shares of i's ink far from j's and of j's ink far from i's."""
    far = np.array([~_within_a_pixel(g.reshape(SIZE, SIZE)) for g in glyphs])
    ink = glyphs.astype(np.float32)
    shares = (far.reshape(len(glyphs), -1).astype(np.float32) @ ink.T) / ink.sum(axis=1)[None, :]
    return np.maximum(shares, shares.T)


def folds(chars: Sequence[str], shares: np.ndarray) -> dict[str, str]:
    """Character -> the closest more frequent look-alike that folds to nothing itself (``chars``
    most frequent first), for the characters that have one. One step only: along a chain of
    look-alikes (失 like 矢, 矢 like 去) the ends need not look alike, so a group is one
    character and look-alikes of it, two of which differ by at most two strokes."""
    root = np.ones(len(chars), dtype=bool)
    out = {}
    for i in range(1, len(chars)):
        near = np.flatnonzero(root[:i] & (shares[i, :i] <= MAX_STRAY))
        if near.size:
            out[chars[i]] = chars[int(near[np.argmin(shares[i, near])])]
            root[i] = False
    return out


def build(font: Path, chars: Sequence[str] | None = None) -> dict[str, str]:
    """The fold table over ``chars`` (default: GB 2312's Han characters by frequency)."""
    if chars is None:
        frequency = char_frequency()
        chars = sorted(gb2312_han(), key=lambda c: (-frequency[c], c))
    return folds(chars, stray_shares(render(font, chars)))


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("output", nargs="?", type=Path, default=DEFAULT_OUTPUT)
    parser.add_argument("--font", type=Path, default=DEFAULT_FONT)
    args = parser.parse_args(argv)
    table = build(args.font)
    header = [
        "# built by scripts/build_zh_shapes.py: Chinese look-alikes, character<TAB>folded",
        f"# font {args.font.name}; glyphs cut to their ink at {SIZE} px; look-alikes when at most "
        f"{MAX_STRAY} of either's ink lies over 1 px from the other's",
    ]
    lines = [f"{char}\t{table[char]}" for char in sorted(table)]
    args.output.write_text("\n".join(header + lines) + "\n", encoding="utf-8")
    print(f"{args.output}: {len(lines)} characters fold to a look-alike")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
