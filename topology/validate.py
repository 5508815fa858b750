"""Raw bytes -> a valid :class:`~topology.records.Event`, or a clear reason why not.

Everything a producer can send passes through :func:`parse_event`; it never raises
anything but :class:`InvalidEvent`, so callers can dead-letter the reason and go on.

An event is accepted only if every stage can write it and read it back: the stages store
and forward the whole event (extra fields included) through msgspec and RocksDB, deep
inside the worker's call stack. Hence the structural rules beyond the schema: nesting at
most ``max_depth`` levels, integers within 64 bits (what any JSON consumer reads exactly),
finite numbers only (JSON has no NaN), no control characters in ids (they become Kafka
keys), and event times from 1970 on.
"""

from __future__ import annotations

import json
import math
import re
import time
import unicodedata
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import UTC, datetime
from typing import Any, Protocol

from topology.records import Event


# JSON framing allowance on top of the text limit before we even try to parse a record.
class Limits(Protocol):
    """What validation reads (``worker.settings.Settings`` has it): topology names its needs
    rather than importing the worker's configuration."""

    @property
    def max_text_bytes(self) -> int: ...

    @property
    def max_id_chars(self) -> int: ...

    @property
    def max_future_skew_ms(self) -> int: ...

    @property
    def max_depth(self) -> int: ...


_ENVELOPE_BYTES = 64 * 1024
_INT_MIN, _INT_MAX = -(2**63), 2**63 - 1
_PARSER_SURE_DEPTH = 256  # the parser takes this many levels wherever in a stack it runs
_CONTROL = re.compile("[\x00-\x1f\x7f-\x9f]")


class InvalidEvent(ValueError):
    """An input that cannot be an event; ``reason`` is what the dead-letter record says, and
    ``event_id`` the event's id when it was valid (an operator finds the record by it)."""

    def __init__(self, reason: str, event_id: str | None = None) -> None:
        super().__init__(reason)
        self.reason = reason
        self.event_id = event_id


def record_limit(settings: Limits) -> int:
    """The largest record, in bytes, worth parsing: the text limit plus room for the other fields."""
    return settings.max_text_bytes + _ENVELOPE_BYTES


def parse_event(raw: bytes | str, settings: Limits, now_ms: int | None = None) -> Event:
    """Decode and validate one serialized event (``now_ms``: the wall clock, for the future-skew check)."""
    # json.loads is called here, not in a helper: a frame more under it is a level less of
    # nesting the parser reads (tests/faults/test_poison_pill.py walks that boundary).
    with _reading(settings):
        data = json.loads(_record_text(raw, settings), **_HOOKS)
    return validate(data, settings, now_ms)


def decode_event(raw: bytes | str, settings: Limits) -> Any:
    """One serialized event's JSON value, or ``InvalidEvent`` saying why it cannot be read (its
    size, its UTF-8, its JSON, its numbers, its depth), as :func:`parse_event` reads it."""
    with _reading(settings):
        return json.loads(_record_text(raw, settings), **_HOOKS)


def _record_text(raw: bytes | str, settings: Limits) -> str:
    """A record's text, refused when it is too large to be an event or not UTF-8."""
    if isinstance(raw, str):
        return raw
    if len(raw) > record_limit(settings):
        raise InvalidEvent(
            f"record is {len(raw)} bytes, over the limit of {record_limit(settings)} bytes for a record "
            f"({settings.max_text_bytes} bytes of text and {_ENVELOPE_BYTES} for the other fields, as sent: "
            "a character sent as a \\u escape counts its 6 bytes)"
        )
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise InvalidEvent(f"invalid UTF-8 at byte {exc.start}") from None


@contextmanager
def _reading(settings: Limits) -> Iterator[None]:
    """The parser's failures as ``InvalidEvent``s (a context, not a call around the parser:
    see :func:`parse_event`)."""
    try:
        yield
    except InvalidEvent:
        raise
    except RecursionError:
        # Under the default limits the parser's recursion ends far beyond max_depth; past
        # _PARSER_SURE_DEPTH (a limit raised by hand) it is the parser's own limit that was hit.
        reason = (
            _too_deep(settings.max_depth)
            if settings.max_depth <= _PARSER_SURE_DEPTH
            else "event is nested too deeply to parse"
        )
        raise InvalidEvent(reason) from None
    except json.JSONDecodeError as exc:
        # A record is one line: its line number would stand beside the file's in a tool's message.
        where = f"column {exc.colno}" if exc.lineno == 1 else f"line {exc.lineno} column {exc.colno}"
        if exc.msg.startswith("Unexpected UTF-8 BOM"):  # Python's hint names its own codec
            raise InvalidEvent(
                "invalid JSON: a byte order mark (U+FEFF) before the record, as files joined by cat have"
            ) from None
        said = exc.msg if exc.msg.endswith(" at") else f"{exc.msg} at"
        raise InvalidEvent(f"invalid JSON: {said} {where}") from None
    except ValueError as exc:
        raise InvalidEvent(f"invalid JSON: {exc}") from None


def _parse_int(literal: str) -> int:
    """JSON integers within 64 bits; longer literals are refused before Python converts them."""
    if len(literal.lstrip("-")) > 19 or not _INT_MIN <= (value := int(literal)) <= _INT_MAX:
        shown = literal if len(literal) <= 24 else f"{literal[:12]}…({len(literal)} digits)"
        raise InvalidEvent(
            f"number {shown} is outside the 64-bit integer range (ts: epoch ms or ISO-8601; else a string)"
        )
    return value


def _parse_float(literal: str) -> float:
    value = float(literal)
    if value in (float("inf"), float("-inf")):
        raise InvalidEvent(f"number {literal[:24]} overflows a 64-bit float")
    return value


def _parse_constant(name: str) -> float:
    raise InvalidEvent(f"invalid JSON: {name} is not a JSON number")


_HOOKS: dict[str, Any] = {"parse_int": _parse_int, "parse_float": _parse_float, "parse_constant": _parse_constant}


def _too_deep(limit: int) -> str:
    return f"event is nested more than {limit} levels deep"


def _check_extra(extra: dict[str, Any], limit: int) -> None:
    """Refuse fields beside id, text and ts nested more than ``limit`` levels (the event object
    is level 1), or holding a string or name UTF-8 cannot carry (a lone surrogate): accepted,
    such an event was stored in the index and then failed where its verdict was written, and
    its copies were called copies of an event never published.

    Iterative, so a record the parser accepted never costs this check a recursion.
    """
    stack: list[tuple[str, Any, int]] = [(name, value, 2) for name, value in extra.items()]
    for name in extra:
        _require_encodable(name, "")
    while stack:
        field, item, depth = stack.pop()
        if isinstance(item, str):
            _require_encodable(item, field)
        elif isinstance(item, (dict, list)):
            if depth > limit:
                raise InvalidEvent(_too_deep(limit))
            for key in item if isinstance(item, dict) else ():
                _require_encodable(key, field, "a name in it")
            children = item.values() if isinstance(item, dict) else item
            stack.extend((field, child, depth + 1) for child in children if isinstance(child, (str, dict, list)))


def validate(data: Any, settings: Limits, now_ms: int | None = None) -> Event:
    """Check a decoded JSON value against the event schema."""
    event_id = _valid_id(data, settings)
    try:
        return _valid_event(data, event_id, settings, now_ms)
    except InvalidEvent as exc:
        exc.event_id = event_id
        raise


def _valid_id(data: Any, settings: Limits) -> str:
    if not isinstance(data, dict):
        raise InvalidEvent(f"event must be a JSON object, got {json_type(data)}")
    event_id = data.get("id")
    if "id" not in data:
        raise InvalidEvent("missing field 'id'")
    if not isinstance(event_id, str):
        raise InvalidEvent(f"field 'id' must be a string, got {json_type(event_id)}")
    if not _visible(event_id):
        raise InvalidEvent("field 'id' is empty" + ("" if not event_id.strip() else " (only invisible characters)"))
    if len(event_id) > settings.max_id_chars:
        raise InvalidEvent(f"field 'id' is {len(event_id)} characters, over the limit of {settings.max_id_chars}")
    _require_encodable(event_id, "id")
    control = _CONTROL.search(event_id)
    if control:
        raise InvalidEvent(f"field 'id' contains a control character (U+{ord(control.group()):04X})")
    return event_id


_JSON_TYPES = {
    str: "a string",
    int: "a number",
    float: "a number",
    bool: "a boolean",
    list: "an array",
    dict: "an object",
}


def json_type(value: Any) -> str:
    """What a decoded JSON value is, in JSON's words ("null", "an array"), for messages to
    whoever wrote it."""
    return "null" if value is None else _JSON_TYPES.get(type(value), type(value).__name__)


def _visible(value: str) -> bool:
    """Whether ``value`` has a character a person sees: not only spaces and format characters
    (zero-width space, BOM, bidi marks), which made ids that look empty in every tool."""
    if value.isascii():
        return bool(value.strip())
    return any(not char.isspace() and unicodedata.category(char) != "Cf" for char in value)


def _valid_event(data: dict[str, Any], event_id: str, settings: Limits, now_ms: int | None) -> Event:
    text = data.get("text")
    if "text" not in data:
        raise InvalidEvent("missing field 'text'")
    if not isinstance(text, str):
        raise InvalidEvent(f"field 'text' must be a string, got {json_type(text)}")
    size = len(_require_encodable(text, "text"))
    if size > settings.max_text_bytes:
        raise InvalidEvent(f"field 'text' is {size} bytes, over the limit of {settings.max_text_bytes}")
    if not text.strip():
        raise InvalidEvent("field 'text' is empty")
    ts = parse_ts(data.get("ts"))
    if ts is not None:
        now = int(time.time() * 1000) if now_ms is None else now_ms
        if ts > now + settings.max_future_skew_ms:
            raise InvalidEvent(
                f"field 'ts'{_date(ts)} is {_span(ts - now)} in the future, over the allowed skew of "
                f"{_span(settings.max_future_skew_ms)}"
            )
    extra = {k: v for k, v in data.items() if k not in ("id", "text", "ts")}
    if extra:
        _check_extra(extra, settings.max_depth)
    return Event(id=event_id, text=text, ts=ts, extra=extra)


_UNITS = (("years", 365.25 * 86_400_000), ("days", 86_400_000), ("h", 3_600_000), ("min", 60_000), ("s", 1_000))


def _date(ms: int) -> str:
    """`` (2098-02-03 10:00:00 UTC)``, or nothing past the calendar's year 9999."""
    try:
        return datetime.fromtimestamp(ms / 1000, UTC).strftime(" (%Y-%m-%d %H:%M:%S UTC)")
    except (ValueError, OverflowError, OSError):
        return ""


def _span(ms: float) -> str:
    """A time span as a person reads it: ``72.1 years``, ``1 h``, ``250 ms``."""
    for unit, size in _UNITS:
        if ms >= size:
            value = ms / size
            return f"{value:,.0f} {unit}" if value >= 1000 else f"{value:.3g} {unit}"
    return f"{ms:.3g} ms"


def parse_ts(value: Any) -> int | None:
    """Event time as epoch milliseconds from epoch-ms numbers or ISO-8601 strings."""
    if value is None:
        return None
    if isinstance(value, bool):
        raise InvalidEvent("field 'ts' must be epoch milliseconds or an ISO-8601 string, got a boolean")
    if isinstance(value, (int, float)):
        if not math.isfinite(value):
            raise InvalidEvent("field 'ts' is not a finite number")
        ms = _epoch_ms(math.floor(value), value)
        if ms < _SECONDS_BELOW:  # decided as 1970, every such event would be late and never matched
            when = datetime.fromtimestamp(ms / 1000, UTC).strftime("%Y-%m-%d")
            raise InvalidEvent(
                f"field 'ts' {value} is {when} in epoch milliseconds, the unit of ts: if it is "
                "seconds, send it x 1000 (or an ISO-8601 string)"
            )
        return ms
    if isinstance(value, str):
        try:
            moment = datetime.fromisoformat(value.strip().replace("Z", "+00:00"))
        except ValueError:
            raise InvalidEvent(f"field 'ts' {value[:64]!r} is not ISO-8601") from None
        if moment.tzinfo is None:
            moment = moment.replace(tzinfo=UTC)
        return _epoch_ms(int(moment.timestamp() * 1000), value)
    raise InvalidEvent(f"field 'ts' must be epoch milliseconds or an ISO-8601 string, got {json_type(value)}")


# Epoch milliseconds below this (1973-03-03) are refused: they are nearly always seconds.
_SECONDS_BELOW = 10**11


def _epoch_ms(ms: int, shown: object) -> int:
    """One range for every form of ``ts``: from 1970-01-01 to 2**53 ms (exact in any JSON reader)."""
    text = repr(shown[:64]) if isinstance(shown, str) else str(shown)
    if ms < 0:
        raise InvalidEvent(f"field 'ts' {text} is before 1970-01-01 (negative epoch milliseconds)")
    if ms > 2**53:
        raise InvalidEvent(f"field 'ts' {text} is out of range for epoch milliseconds")
    return ms


def _require_encodable(value: str, name: str, part: str = "") -> bytes:
    """``value`` as UTF-8, or why not: it is ``part`` of field ``name``, or without a ``name``
    a field's name."""
    try:
        return value.encode("utf-8")
    except UnicodeEncodeError:
        where = f"field {name!r}" + (f", {part}," if part else "") if name else "field name"
        raise InvalidEvent(f"{where} contains a lone surrogate (invalid Unicode)") from None
