"""JSON for what the stages write on every event: internal messages, the verdict changelog, store values, outputs.

(The index changelog, mostly sketches, is msgpack: :mod:`topology.changelog`.)

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


MAX_MESSAGE_BYTES = 512 * 1024
"""Internal messages are split below this size: Kafka refuses requests over 1 MiB by default."""


def encode_batch(items: list[Any]) -> bytes:
    """One internal message: a JSON array of items."""
    return dumps(items)


def encode_chunks(items: list[Any], max_bytes: int = MAX_MESSAGE_BYTES) -> list[bytes]:
    """``items`` as JSON arrays of at most ``max_bytes`` each (an item larger than that goes alone)."""
    chunks: list[bytes] = []
    parts: list[bytes] = []
    size = 2
    for item in items:
        raw = dumps(item)
        if parts and size + len(raw) + 1 > max_bytes:
            chunks.append(b"[" + b",".join(parts) + b"]")
            parts, size = [], 2
        parts.append(raw)
        size += len(raw) + 1
    if parts:
        chunks.append(b"[" + b",".join(parts) + b"]")
    return chunks


def decode_batch(raw: bytes) -> list[dict[str, Any]]:
    items = loads(raw)
    if not isinstance(items, list):
        raise ValueError("an internal batch must be a JSON array")
    return items
