"""The records of ``{p}.index-changelog``: msgpack, sketches as raw bytes, keys as integers.

An index changelog record is one batch's entries stored in one partition. Four fifths of its
bytes are the entries' sketches (the verification a partition does on its own needs them in
every partition an event reaches), and as JSON a sketch went as base64, a third longer, and
each 64-bit exact key as twenty decimal digits. msgpack (msgspec's, the JSON codec's library)
carries bytes and integers as they are; the record is a typed array of :class:`IndexOp`, so
decoding also checks every field's type.

Records written before this are JSON arrays and are still read (:func:`decode_ops`): their
first byte is ``[``, which no msgpack array begins with. The verdict changelog stays JSON: its
values are JSON documents already (:mod:`worker.state.verdicts`).
"""

from __future__ import annotations

from typing import Any

import msgspec

from topology import codec

_LOW = (1 << 64) - 1


class IndexOp(msgspec.Struct, array_like=True):
    """One event's entry as stored in one index partition: where the changelog replays it.

    msgpack integers stop at 64 bits and an arrival order is 128, so it travels as two halves.
    """

    event_id: str
    fingerprint: int
    order_high: int
    order_low: int
    ts: int
    sketch: bytes
    tables: list[int]
    exact_keys: list[int]

    @classmethod
    def of(cls, event_id: str, fingerprint: int, order: int, ts: int, sketch: bytes) -> IndexOp:
        """An op with no table or key yet: a batch's shares of the event add theirs."""
        return cls(event_id, fingerprint, order >> 64, order & _LOW, ts, sketch, [], [])

    @property
    def order(self) -> int:
        return (self.order_high << 64) | self.order_low


_encoder = msgspec.msgpack.Encoder()
_decoder = msgspec.msgpack.Decoder(list[IndexOp])


def encode_ops(ops: list[IndexOp], max_bytes: int = codec.MAX_MESSAGE_BYTES) -> list[bytes]:
    """``ops`` as records of at most ``max_bytes`` each (an op larger than that goes alone),
    in order: halved until each half fits, since a batch's record almost always fits whole."""
    record = _encoder.encode(ops)
    if len(record) <= max_bytes or len(ops) < 2:
        return [record]
    half = len(ops) // 2
    return encode_ops(ops[:half], max_bytes) + encode_ops(ops[half:], max_bytes)


def decode_ops(raw: bytes) -> list[Any]:
    """A changelog record's operations: :class:`IndexOp` of an index record, or the JSON array of
    a verdict record or of an index record written before this format. Raises ValueError for
    a record that is neither."""
    if raw[:1] == b"[":
        ops = codec.loads(raw)
        if not isinstance(ops, list):
            raise ValueError("a changelog record must be a JSON array of operations")
        return ops
    try:
        return _decoder.decode(raw)
    except msgspec.DecodeError as exc:
        raise ValueError(f"a changelog record is neither a JSON array nor index operations: {exc}") from exc
