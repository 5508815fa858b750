"""Dead-letter records: what could not be handled, by which stage, why, and where it came from.

Every stage turns a failure on one event into one of these and goes on with the rest of
its batch, so one bad record never stops a partition (docs/reliability.md). A record names
the stage, the reason, the source record (topic, partition, offset) and, when known, the
event id; the raw bytes ride along (base64, capped) so an operator can fix and re-send them.
"""

from __future__ import annotations

import base64
from typing import Any

from topology import codec
from topology.stages import order_source
from topology.validate import InvalidEvent, Limits, parse_event

_PREVIEW_CHARS = 200
_RAW_MAX = 256 * 1024
_REASON_MAX = 1000


def record(
    stage: str,
    reason: str,
    source: tuple[str, int, int],
    raw: bytes | None,
    event_id: str | None = None,
    key: bytes | None = None,
) -> dict[str, Any]:
    """The dead-letter record of one event (``source``: topic, partition, offset of its input;
    ``key``: its record key, which producers set to the id, and all there is of a record too
    large or too broken to read one from)."""
    data = raw or b""
    topic, partition, offset = source
    value: dict[str, Any] = {
        "reason": reason[:_REASON_MAX],
        "stage": stage,
        "topic": topic,
        "partition": partition,
        "offset": offset,
    }
    if event_id is not None:
        value["id"] = event_id
    if key is not None:
        try:
            value["key"] = key[:_RAW_MAX].decode("utf-8")
        except UnicodeDecodeError:
            value["key_b64"] = base64.b64encode(key[:_RAW_MAX]).decode("ascii")
    value.update(
        raw_bytes=len(data),
        raw_b64=base64.b64encode(data[:_RAW_MAX]).decode("ascii"),
        raw_truncated=len(data) > _RAW_MAX,
        raw_preview=data[: _PREVIEW_CHARS * 4].decode("utf-8", "replace")[:_PREVIEW_CHARS],
    )
    return value


def value(
    stage: str,
    reason: str,
    source: tuple[str, int, int],
    raw: bytes | None,
    event_id: str | None = None,
    key: bytes | None = None,
) -> bytes:
    """:func:`record` as the bytes of a Kafka record value."""
    return codec.dumps(record(stage, reason, source, raw, event_id, key))


def input_id(raw: bytes | None, limits: Limits) -> str | None:
    """The id of an input record whose id was valid, for a dead letter of its whole batch."""
    if raw is None:
        return None
    try:
        return parse_event(raw, limits).id
    except InvalidEvent as exc:
        return exc.event_id
    except Exception:  # a record no parse gets through has no id to tell
        return None


def for_event(stage: str, event_id: str, order: object, exc: BaseException, events_topic: str) -> dict[str, Any]:
    """The record of an event that failed after its input was read: it points at that input
    (its order says where it was), its raw bytes being the id and order it was known by."""
    partition, offset = order_source(order) if isinstance(order, int) else (-1, -1)
    raw = codec.dumps({"id": event_id, "order": order})
    return record(stage, failure(exc), (events_topic, partition, offset), raw, event_id)


def describe(exc: BaseException) -> str:
    """An exception as its type and message, never a traceback."""
    text = str(exc)
    return f"{type(exc).__name__}: {text}" if text else type(exc).__name__


def failure(exc: BaseException) -> str:
    """The reason for an unexpected exception while handling one event."""
    return internal(describe(exc))


def internal(described: str) -> str:
    """The reason for an unexpected failure handling one event, given as :func:`describe` gives it."""
    return f"internal error: {described}"
