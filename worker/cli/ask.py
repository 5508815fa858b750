"""``neardup explain`` and ``neardup check``: ask a running worker why, or what it would say.

Any worker of a group answers for any id or text: it forwards to the owners of the
partitions involved (:mod:`worker.stream.inspect`). These commands only speak HTTP to one
worker (``--url``, default ``NEARDUP_WEB_URL`` or the local worker's port) and print what it
says: readable lines, or its JSON with ``--json``. ``check --state`` asks a scan's kept
state instead, with no worker: the same answer, from the scan's decision.
"""

from __future__ import annotations

import http.client
import json
import sys
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, BinaryIO, TextIO
from urllib.parse import quote, urlsplit

from topology.validate import InvalidEvent, Limits, decode_event, validate
from worker.cli.inputs import without_bom
from worker.settings import Settings

_TIMEOUT_S = 30.0
_SHOWN = 160  # characters of a text shown on one line
_CONTEXT = 40  # of them before the first difference, where two texts open alike for longer
# What a kept-alive connection raises when the worker closed it since the last call.
_STALE = (http.client.RemoteDisconnected, ConnectionResetError, BrokenPipeError)


class AskError(ValueError):
    """What the worker answered instead (its JSON error), or why it could not be reached."""

    def __init__(self, message: str, status: int | None = None, reason: str = "") -> None:
        super().__init__(message)
        self.status, self.reason = status, reason or message


def worker_url(url: str, named: str) -> str:
    """``url`` when it can be a worker's address; ``named`` says where it came from. Refused
    in one line here: urllib said only ``unknown url type: 'x/check'``."""
    parts = urlsplit(url.strip())
    try:
        has_host = bool(parts.hostname) and (parts.port or 0) >= 0
    except ValueError:  # a port that is not a number, or past 65535
        has_host = False
    if parts.scheme not in ("http", "https") or not has_host:
        raise AskError(
            f"{named} {url!r} is not a worker's address: give http://HOST:PORT (or https://), "
            "e.g. http://127.0.0.1:6066"
        )
    return url.strip().rstrip("/")


class Worker:
    """A worker's HTTP API over one kept-alive connection: ``check --file`` asks once a line,
    and a connection a call cost a handshake (and a socket left in TIME_WAIT) for each."""

    def __init__(self, url: str) -> None:
        self.url = url
        parts = urlsplit(url)
        kind = http.client.HTTPSConnection if parts.scheme == "https" else http.client.HTTPConnection
        self._connection = kind(parts.hostname or "", parts.port, timeout=_TIMEOUT_S)
        self._base = parts.path.rstrip("/")

    def call(self, path: str, body: Any = None) -> Any:
        """The worker's JSON answer to GET ``path`` (or POST ``body``)."""
        data = None if body is None else json.dumps(body).encode()
        try:
            status, raw = self._exchange(path, data)
        except (http.client.HTTPException, OSError) as exc:
            self._connection.close()
            # Only check reads a scan's kept state; a scan's verdicts are in its output.
            other = (
                ", pass --url, or ask a scan's kept state with --state DIR" if path == "/check" else " or pass --url"
            )
            raise AskError(
                f"cannot reach a worker at {self.url} ({exc}); start one with `neardup worker`{other}"
            ) from None
        if status >= 400:
            try:
                reason = str(json.loads(raw).get("error", http.client.responses.get(status, "")))
            except (ValueError, AttributeError):
                reason = http.client.responses.get(status, "error")
            raise AskError(f"{reason} (HTTP {status})", status, reason)
        return json.loads(raw)

    def _exchange(self, path: str, data: bytes | None) -> tuple[int, bytes]:
        """One request and its answer, sent again once on a new connection when the kept one
        was closed by the worker meanwhile (both calls are reads: asking twice is harmless)."""
        for retry in (True, False):
            try:
                self._connection.request(
                    "GET" if data is None else "POST",
                    self._base + path,
                    body=data,
                    headers={"Content-Type": "application/json"},
                )
                response = self._connection.getresponse()
                return response.status, response.read()
            except _STALE:
                self._connection.close()
                if not retry:
                    raise
        raise AssertionError("unreachable")

    def close(self) -> None:
        self._connection.close()


def call(url: str, path: str, body: Any = None) -> Any:
    """The worker's JSON answer to GET ``path`` (or POST ``body``), on a connection of its own."""
    worker = Worker(url)
    try:
        return worker.call(path, body)
    finally:
        worker.close()


def explain(url: str, event_id: str, as_json: bool, out: TextIO = sys.stdout) -> int:
    if not event_id.strip():
        raise AskError("give an event id (an empty one names no event)")
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
    if found["verdict"] == "unique" and found.get("in_window") is False:
        yield (
            f"{event_id}  unique, and behind the retention window (NEARDUP_RETENTION_DAYS) of the newest "
            "event indexed: it was not indexed, or no longer is, so nothing later matches it"
        )
    elif found["verdict"] == "unique":
        kept = "; inside the retention window: later copies still find it" if found.get("in_window") else ""
        yield f"{event_id}  unique (no earlier event within the thresholds{kept})"
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
    original = found.get("original")
    text, its = _shown_apart(found.get("text"), original.get("text") if original else None)
    yield f"  text       {text}"
    if original:
        yield f"  original   {its}"
        yield f"  its time   {_time(original.get('event_time'))}"


def check(
    url: str, text: str, as_json: bool, event_id: str | None = None, out: TextIO = sys.stdout, ts: int | None = None
) -> int:
    """Ask for one text's would-be verdict (as the event ``event_id`` of time ``ts``, if given)."""
    _require_text(text)
    body = {"text": text} | ({} if event_id is None else {"id": event_id}) | ({} if ts is None else {"ts": ts})
    answer = call(url, "/check", body)
    _show(answer if event_id is None else {"id": event_id} | answer, as_json, out)
    return 0


def check_state(
    state: Path, text: str, as_json: bool, settings: Settings, ts: int | None = None, out: TextIO = sys.stdout
) -> int:
    """One text's would-be verdict against a scan's kept state (``neardup scan --state``), by
    the scan's decision rule; nothing is stored. Opening the state expires what its window
    left behind, as the next scan would."""
    from worker.cli.deduplicator import Deduplicator
    from worker.cli.paths import check_state_dir
    from worker.cli.scan import open_index

    _require_text(text)
    if state.is_file():
        raise AskError(f"--state {state} is a file: give the directory `neardup scan FILE --state DIR` kept")
    if not (state / "CURRENT").exists():
        if state.is_dir() and any(state.iterdir()):  # a scan refuses to keep its index there
            raise AskError(
                f"--state {state} holds no scan's index (a worker's state directory is asked through "
                "the worker: --url); give the directory `neardup scan FILE --state DIR` kept"
            )
        raise AskError(f"--state {state} holds no index: `neardup scan FILE --state {state}` keeps one")
    check_state_dir(state, settings)
    with open_index(state, settings) as index:
        answer = Deduplicator(index, settings, durable=False).check(text, ts)
    _show(answer, as_json, out)
    return 0


def _require_text(text: str) -> None:
    if not text.strip():  # the stream refuses such an event; nothing need be asked
        raise AskError("give a text to check (an empty one is no event: the stream dead-letters it)")


def check_file(
    url: str,
    source: BinaryIO,
    name: str,
    settings: Limits,
    out: TextIO = sys.stdout,
    err: TextIO = sys.stderr,
) -> int:
    """One JSON line per valid line of ``source``, in order, as scan gives; each bad line is one
    line on ``err`` naming ``name`` and its number, and makes the status 2. A line is refused
    here as scan and the worker refuse it (no request is spent on it), or by the worker."""
    worker = Worker(url)
    bad = 0
    try:
        for number, raw in enumerate(without_bom(source), 1):
            if not raw.strip():
                continue
            try:  # the record a line is, as scan and produce take it: without its line end
                answer = _check_line(worker, raw.rstrip(b"\r\n"), settings)
            except InvalidEvent as exc:
                bad += 1
                print(f"neardup check: {name}:{number}: {exc.reason}", file=err, flush=True)
                continue
            _show(answer, True, out)
    finally:
        worker.close()
    return 2 if bad else 0


def _check_line(worker: Worker, raw: bytes, settings: Limits) -> dict[str, Any]:
    """The worker's answer for one ``{id?, text, ts?}`` line; ``InvalidEvent`` when the line, or
    the worker, refuses it (an unreachable worker is an ``AskError``: it ends the run)."""
    data = decode_event(raw, settings)  # as scan and the worker read a line
    # The id is optional here (nothing is stored under it); when given, it is held to the rules.
    anonymous = isinstance(data, dict) and "id" not in data
    event = validate({"id": "check"} | data if anonymous else data, settings)
    body: dict[str, Any] = {"text": event.text} | ({} if event.ts is None else {"ts": event.ts})
    if not anonymous:  # checked as that event: not a copy of itself, and a published id keeps its verdict
        body["id"] = event.id
    try:
        answer: dict[str, Any] = worker.call("/check", body)
    except AskError as exc:
        if exc.status not in (400, 413):  # not about this line: the worker is away or elsewhere
            raise
        raise InvalidEvent(f"the worker refused it: {exc.reason}") from None
    return answer if anonymous else {"id": event.id} | answer


def _show(answer: dict[str, Any], as_json: bool, out: TextIO) -> None:
    if as_json:
        print(json.dumps(answer, ensure_ascii=False), file=out)
        return
    for line in check_lines(answer):
        print(line, file=out)


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
    if answer.get("already_published") and answer.get("another_text"):
        yield "  (this id is already published with another text: it gets its first verdict again, this text is not decided)"
    elif answer.get("already_published"):
        yield "  (this id is already published: a re-sent id gets its first verdict again)"
    if not answer["candidates"] and not answer.get("already_published"):
        yield "  (no stored event shares a block-table or exact key with it)"
    for candidate in answer["candidates"]:
        why = "verified" if candidate["verified"] else candidate.get("refused", "not similar enough")
        if not candidate["in_window"]:
            why += ", older than the retention window"
        yield f"  candidate {candidate['id']}  distance {candidate['distance']}  ({why})"
    if answer["verdict"] == "unique" and any(c["verified"] and not c["in_window"] for c in answer["candidates"]):
        # A check is of an event of now unless given a time: a feed of last month's events is all behind it.
        yield "  (checked as an event of now: give the text's time with --ts to check it as of then)"


def _shown_apart(text: str | None, original: str | None) -> tuple[str, str]:
    """Both texts on a line each; where they open alike for longer than a line shows, both from
    a little before their first difference, which two lines of one opening hid."""
    if text is None or original is None:
        return _short(text), _short(original)
    a, b = " ".join(text.split()), " ".join(original.split())
    same = next((i for i, (x, y) in enumerate(zip(a, b, strict=False)) if x != y), min(len(a), len(b)))
    start = same - _CONTEXT if same > _SHOWN - _CONTEXT else 0
    if start == 0:
        return _short(a), _short(b)
    space = a.find(" ", start, same)  # from a word's start where there are words (both read a[:same])
    start = space + 1 if space != -1 else start
    return "…" + _short(a[start:]), "…" + _short(b[start:])


def _short(text: str | None) -> str:
    if text is None:
        return "(no longer retained in Kafka)"
    flat = " ".join(text.split())
    return flat if len(flat) <= _SHOWN else flat[: _SHOWN - 1] + "…"


def _time(ms: int | None) -> str:
    if ms is None:
        return "unknown"
    return datetime.fromtimestamp(ms / 1000, UTC).strftime("%Y-%m-%d %H:%M:%S UTC")
