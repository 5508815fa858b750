"""Text that was decoded with the wrong codec on its way: UTF-8 read as Windows-1252 or Latin-1.

A scraper or a legacy system that reads UTF-8 bytes as Windows-1252 turns "don’t" into
"donâ€™t", "café" into "cafÃ©" and every Chinese character into three Latin ones; the copy
shares no word with its original. It is still the original's bytes, so encoding it back as
it was misread and decoding those bytes as UTF-8 gives the original back exactly.

Only a whole text that comes back as valid UTF-8 is repaired: Latin-1 or Windows-1252 prose
almost never is valid UTF-8, and a text only partly garbled, or whose garbling lost bytes (a
"�"), stays as it is. Windows-1252 leaves five bytes undefined, which decoders pass through
as the control characters U+0081, U+008D, U+008F, U+0090 and U+009D, and Latin-1 reads every
byte 0x80-0x9F as a control: such a character is read back as its byte. UTF-8 read as GBK
is not repaired: GBK refuses most UTF-8 byte pairs, so decoders replace them and the bytes
are lost.
"""

from __future__ import annotations

import re

# A UTF-8 lead byte read as Windows-1252 (Â-ô) before a continuation byte read as Windows-1252
# (0x80-0xBF, where 0x80-0x9F are its typographic characters or the five pass-through controls).
_HINT = re.compile(
    "[\u00c2-\u00f4][\u0080-\u00bf\u20ac\u201a\u0192\u201e\u2026\u2020\u2021\u02c6\u2030\u0160"
    "\u2039\u0152\u017d\u2018\u2019\u201c\u201d\u2022\u2013\u2014\u02dc\u2122\u0161\u203a\u0153\u017e\u0178]"
)


# A character neither codec has: a text holding one cannot be a misreading. Looked for at the
# start only, where a Chinese text shows one at once, so that such a text costs no scan.
_BEYOND = re.compile("[\u2123-\U0010ffff]")
_START = 64


def repair(text: str) -> str:
    """``text`` as its writer wrote it, if it is UTF-8 that was read as Windows-1252 or
    Latin-1; else ``text`` unchanged. An ASCII text costs one test, and so does a Chinese one."""
    if text.isascii() or _BEYOND.search(text, 0, _START):
        return text
    return _reread(text) if _HINT.search(text) else text


def _reread(text: str) -> str:
    raw = _cp1252_bytes(text)
    if raw is None:
        return text
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError:  # the usual end for a text that was no misread UTF-8, at its first high byte
        return text


def _cp1252_bytes(text: str) -> bytes | None:
    try:
        return text.encode("cp1252")
    except UnicodeEncodeError:
        pass
    out = bytearray()
    for char in text:  # a character beyond Windows-1252: a control it passed through, or Latin-1's
        if ord(char) < 0x100:
            out.append(ord(char))
            continue
        try:
            out += char.encode("cp1252")
        except UnicodeEncodeError:
            return None
    return bytes(out)
