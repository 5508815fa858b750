"""JSON for what the stages write on every event: internal messages, changelogs, store values, outputs.

msgspec's encoder, not the standard library's: a unique verdict carries the whole event, and
the verdict store writes it, logs it and publishes it, so encoding was about a tenth of a
worker's CPU under a backlog (py-spy). msgspec encodes our records about nine times faster
and keeps 128-bit integers (the total order) exact, which orjson refuses. Its output is
compact UTF-8 JSON that any JSON reader parses to the same values.

Input events are still parsed by the standard library (:mod:`topology.validate`), whose
error messages and acceptance rules the dead-letter reasons are written against.
"""

from __future__ import annotations

from typing import Any

import msgspec

# Bytes that are JSON already, spliced into a document as they are (not as a string).
Raw = msgspec.Raw

_encoder = msgspec.json.Encoder()
_decoder = msgspec.json.Decoder()


def dumps(value: Any) -> bytes:
    """``value`` as compact UTF-8 JSON (insertion order kept, non-ASCII unescaped)."""
    return _encoder.encode(value)


def loads(raw: bytes | str) -> Any:
    """Parse JSON written by :func:`dumps` (or any JSON)."""
    return _decoder.decode(raw)
