"""``neardup explain`` and ``neardup check``: ask a running worker why, or what it would say.

Any worker of a group answers for any id or text: it forwards to the owners of the
partitions involved (:mod:`worker.stream.inspect`). These commands only speak HTTP to one
worker (``--url``, default ``NEARDUP_WEB_URL`` or the local worker's port) and print what it
says: readable lines, or its JSON with ``--json``.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Iterator
from datetime import UTC, datetime
from typing import Any, TextIO
from urllib import error, request
from urllib.parse import quote

_TIMEOUT_S = 30.0
_SHOWN = 160  # characters of a text shown on one line


class AskError(ValueError):
    """What the worker answered instead (its JSON error), or why it could not be reached."""


def call(url: str, path: str, body: Any = None) -> Any:
    """The worker's JSON answer to GET ``path`` (or POST ``body``)."""
    data = None if body is None else json.dumps(body).encode()
    req = request.Request(url.rstrip("/") + path, data=data, headers={"Content-Type": "application/json"})
    try:
        with request.urlopen(req, timeout=_TIMEOUT_S) as response:
            return json.loads(response.read())
    except error.HTTPError as exc:
        try:
            reason = json.loads(exc.read()).get("error", exc.reason)
        except ValueError:
            reason = exc.reason
        raise AskError(f"{reason} (HTTP {exc.code})") from None
    except (error.URLError, OSError) as exc:
        why = getattr(exc, "reason", exc)
        raise AskError(
            f"cannot reach a worker at {url} ({why}); start one with `neardup worker`, or pass --url"
        ) from None


def explain(url: str, event_id: str, as_json: bool, out: TextIO = sys.stdout) -> int:
    found = call(url, f"/explain/{quote(event_id, safe='')}")
    if as_json:
        print(json.dumps(found, ensure_ascii=False), file=out)
        return 0
    for line in explanation_lines(found):
        print(line, file=out)
    return 0


def explanation_lines(found: dict[str, Any]) -> Iterator[str]:
    """An explanation as a person reads it."""
    event_id = found["id"]
    if found.get("verdict") is None:
        yield f"{event_id}  no verdict yet (its answers are still being gathered)"
        return
    if found["verdict"] == "unique":
        yield f"{event_id}  unique (no earlier event within the thresholds)"
    else:
        yield (
            f"{event_id}  duplicate of {found['duplicate_of']}  "
            f"(distance {found['distance']}, similarity {found['similarity']:.3f})"
        )
        if found.get("found_by"):
            yield f"  found by   {', '.join(found['found_by'])}"
        yield f"  chain      {' -> '.join(found['chain'])}"
    if found.get("corrections"):
        first = found["published"]
        was = first["verdict"] if first["verdict"] == "unique" else f"duplicate of {first['duplicate_of']}"
        yield f"  corrected  published first as {was}; {found['corrections']} correction(s) since"
    yield f"  event time {_time(found.get('event_time'))}"
    yield f"  text       {_short(found.get('text'))}"
    original = found.get("original")
    if original:
        yield f"  original   {_short(original.get('text'))}"
        yield f"  its time   {_time(original.get('event_time'))}"


def check(url: str, events: list[dict[str, Any]], as_json: bool, out: TextIO = sys.stdout) -> int:
    """Ask for each event's would-be verdict; one line (or JSON line) each."""
    for event in events:
        body = {"text": event["text"]} | ({"ts": event["ts"]} if event.get("ts") is not None else {})
        answer = call(url, "/check", body)
        if "id" in event:
            answer = {"id": event["id"]} | answer
        if as_json:
            print(json.dumps(answer, ensure_ascii=False), file=out)
            continue
        for line in check_lines(answer):
            print(line, file=out)
    return 0


def check_lines(answer: dict[str, Any]) -> Iterator[str]:
    """A check's answer as a person reads it: the verdict, then each candidate and why it
    counts or not."""
    label = f"{answer['id']}  " if "id" in answer else ""
    if answer["verdict"] == "duplicate":
        yield (
            f"{label}duplicate of {answer['duplicate_of']}  "
            f"(distance {answer['distance']}, similarity {answer['similarity']:.3f})"
        )
    else:
        yield f"{label}unique"
    for candidate in answer["candidates"]:
        why = "verified" if candidate["verified"] else candidate.get("refused", "not similar enough")
        if not candidate["in_window"]:
            why += ", older than the retention window"
        yield f"  candidate {candidate['id']}  distance {candidate['distance']}  ({why})"


def read_events(path: str) -> list[dict[str, Any]]:
    """JSON lines ``{id?, text, ts?}`` from a file ('-' for stdin)."""
    stream = sys.stdin if path == "-" else open(path, encoding="utf-8")  # noqa: SIM115
    with stream:
        events = []
        for number, line in enumerate(stream, 1):
            if not line.strip():
                continue
            try:
                event = json.loads(line)
            except ValueError as exc:
                raise AskError(f"{path}:{number}: not JSON ({exc})") from None
            if not isinstance(event, dict) or not isinstance(event.get("text"), str):
                raise AskError(f"{path}:{number}: expected an object with a string 'text'")
            events.append(event)
        return events


def _short(text: str | None) -> str:
    if text is None:
        return "(no longer retained in Kafka)"
    flat = " ".join(text.split())
    return flat if len(flat) <= _SHOWN else flat[: _SHOWN - 1] + "…"


def _time(ms: int | None) -> str:
    if ms is None:
        return "unknown"
    return datetime.fromtimestamp(ms / 1000, UTC).strftime("%Y-%m-%d %H:%M:%S UTC")
