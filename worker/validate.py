"""Raw bytes -> a valid :class:`~topology.records.Event`, or a clear reason why not.

Everything a producer can send passes through :func:`parse_event`; it never raises
anything but :class:`InvalidEvent`, so callers can dead-letter the reason and go on.
"""

from __future__ import annotations

import json
import time
from datetime import datetime, timezone
from typing import Any

from topology.records import Event
from worker.settings import Settings

# JSON framing allowance on top of the text limit before we even try to parse a record.
_ENVELOPE_BYTES = 64 * 1024


class InvalidEvent(ValueError):
    """An input that cannot be an event; ``reason`` is what the dead-letter record says."""

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


def parse_event(raw: bytes | str, settings: Settings, now_ms: int | None = None) -> Event:
    """Decode and validate one serialized event (``now_ms``: the wall clock, for the future-skew check)."""
    if isinstance(raw, bytes):
        if len(raw) > settings.max_text_bytes + _ENVELOPE_BYTES:
            raise InvalidEvent(f"record is {len(raw)} bytes, over the limit of {settings.max_text_bytes} bytes of text")
        try:
            raw = raw.decode("utf-8")
        except UnicodeDecodeError as exc:
            raise InvalidEvent(f"invalid UTF-8 at byte {exc.start}") from None
    try:
        data = json.loads(raw)
    except RecursionError:
        raise InvalidEvent("invalid JSON: nested too deeply") from None
    except ValueError as exc:
        raise InvalidEvent(f"invalid JSON: {exc}") from None
    return validate(data, settings, now_ms)


def validate(data: Any, settings: Settings, now_ms: int | None = None) -> Event:
    """Check a decoded JSON value against the event schema."""
    if not isinstance(data, dict):
        raise InvalidEvent(f"event must be a JSON object, got {type(data).__name__}")
    event_id = data.get("id")
    if "id" not in data:
        raise InvalidEvent("missing field 'id'")
    if not isinstance(event_id, str):
        raise InvalidEvent(f"field 'id' must be a string, got {type(event_id).__name__}")
    if not event_id.strip():
        raise InvalidEvent("field 'id' is empty")
    if len(event_id) > settings.max_id_chars:
        raise InvalidEvent(f"field 'id' is {len(event_id)} characters, over the limit of {settings.max_id_chars}")
    _require_encodable(event_id, "id")
    text = data.get("text")
    if "text" not in data:
        raise InvalidEvent("missing field 'text'")
    if not isinstance(text, str):
        raise InvalidEvent(f"field 'text' must be a string, got {type(text).__name__}")
    size = len(_require_encodable(text, "text"))
    if size > settings.max_text_bytes:
        raise InvalidEvent(f"field 'text' is {size} bytes, over the limit of {settings.max_text_bytes}")
    if not text.strip():
        raise InvalidEvent("field 'text' is empty")
    ts = parse_ts(data.get("ts"))
    if ts is not None:
        now = int(time.time() * 1000) if now_ms is None else now_ms
        if ts > now + settings.max_future_skew_ms:
            raise InvalidEvent(f"field 'ts' is {ts - now} ms in the future, over the allowed skew of {settings.max_future_skew_ms} ms")
    extra = {k: v for k, v in data.items() if k not in ("id", "text", "ts")}
    return Event(id=event_id, text=text, ts=ts, extra=extra)


def parse_ts(value: Any) -> int | None:
    """Event time as epoch milliseconds from epoch-ms numbers or ISO-8601 strings."""
    if value is None:
        return None
    if isinstance(value, bool):
        raise InvalidEvent("field 'ts' must be epoch milliseconds or an ISO-8601 string, got a boolean")
    if isinstance(value, int):
        if value < 0 or value > 2**53:
            raise InvalidEvent(f"field 'ts' {value} is out of range for epoch milliseconds")
        return value
    if isinstance(value, float):
        if not value == value or value < 0 or value > 2**53:
            raise InvalidEvent(f"field 'ts' {value} is out of range for epoch milliseconds")
        return int(value)
    if isinstance(value, str):
        try:
            moment = datetime.fromisoformat(value.strip().replace("Z", "+00:00"))
        except ValueError:
            raise InvalidEvent(f"field 'ts' {value[:64]!r} is not ISO-8601") from None
        if moment.tzinfo is None:
            moment = moment.replace(tzinfo=timezone.utc)
        return int(moment.timestamp() * 1000)
    raise InvalidEvent(f"field 'ts' must be epoch milliseconds or an ISO-8601 string, got {type(value).__name__}")


def _require_encodable(value: str, name: str) -> bytes:
    try:
        return value.encode("utf-8")
    except UnicodeEncodeError:
        raise InvalidEvent(f"field {name!r} contains a lone surrogate (invalid Unicode)") from None
