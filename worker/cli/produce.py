"""``neardup produce``: send a JSON-lines file to ``{p}.events``, one record per line.

Lines go out byte for byte — invalid ones too, so the dead-letter path can be exercised —
keyed by the event id when the line has one: a re-sent id then lands in the partition of
its first copy, behind it.

With ``--rate`` it is a paced replay in the file's order: each record is acknowledged before
the next goes, a millisecond later at least, so that the broker's append times, which order
the stream (``topology.stages.total_order``), follow the lines. Sent in batches, two lines
for two partitions can be appended in one millisecond, and the tie falls to the partition:
a repost could come before its original. Without ``--rate``, lines go in batches, as fast as
the broker takes them.
"""

from __future__ import annotations

import json
import sys
import time
from collections.abc import Collection, Iterable
from dataclasses import dataclass, field
from typing import Any, BinaryIO

from topology.stages import Topics
from topology.validate import InvalidEvent, parse_event
from worker.cli.inputs import count, without_bom
from worker.settings import Settings

_MAX_REQUEST = 8 << 20  # the producer's own bound; a broker's default record limit is 1 MiB


def event_key(line: bytes) -> bytes | None:
    """The event id as the record key, or None when the line has no usable id."""
    try:
        data = json.loads(line)
    except (ValueError, RecursionError):  # sent as it is, unkeyed: the worker dead-letters it
        return None
    if isinstance(data, dict) and isinstance(data.get("id"), str):
        try:
            return data["id"].encode("utf-8")
        except UnicodeEncodeError:
            return None
    return None


@dataclass
class Produced:
    """What a produce run did: records the broker acknowledged, and the lines it refused
    (line number, reason): those never reach the stream, so no verdict or dead letter follows."""

    sent: int
    refused: list[tuple[int, str]]
    # Lines sent that are no valid event (line number, reason): the stream dead-letters them.
    invalid: list[tuple[int, str]] = field(default_factory=list)


def produce(
    lines: Iterable[bytes], settings: Settings, rate: float | None = None, topic: str | None = None
) -> Produced:
    """Send every non-blank line; at most ``rate`` records per second when given."""
    from kafka import KafkaProducer

    target = topic or Topics(settings.topic_prefix).events
    require_topic(target, broker_topics(settings), settings)
    # Not idempotent: an idempotent producer fails every later record of a partition once the
    # broker refused one (over its size limit), where this one fails that record alone. One
    # request in flight keeps the file's order through retries.
    producer = KafkaProducer(
        linger_ms=5,
        acks="all",
        max_request_size=_MAX_REQUEST,
        enable_idempotence=False,
        max_in_flight_requests_per_connection=1,
        **settings.connection.kafka_python(),
    )
    # The first send waits for the topic's metadata: paced from before it, every line read
    # meanwhile went out in one burst, the broker stamped them in the same millisecond, and
    # the total order fell back to the partition (an original could come after its repost).
    producer.partitions_for(target)
    attempted = 0
    failed: list[tuple[int, str]] = []
    invalid: list[tuple[int, str]] = []
    started = time.perf_counter()
    try:
        for number, raw in enumerate(without_bom(lines), 1):
            line = raw.rstrip(b"\r\n")
            if not line.strip():
                continue
            if rate:
                ahead = attempted / rate - (time.perf_counter() - started)
                if ahead > 0:
                    time.sleep(ahead)
            attempted += 1
            try:  # sent all the same: the dead-letter path is there to be exercised
                key: bytes | None = parse_event(line, settings).id.encode("utf-8")
            except InvalidEvent as exc:
                invalid.append((number, exc.reason))
                key = event_key(line)
            _send(producer, target, number, line, key, failed)
            if rate:
                _acknowledged(producer)
        producer.flush()
    finally:
        producer.close()
    refused = {number for number, _ in failed}  # not sent: the stream will not dead-letter them either
    invalid = [(number, reason) for number, reason in invalid if number not in refused]
    return Produced(sent=attempted - len(failed), refused=sorted(failed), invalid=invalid)


def _send(
    producer: Any, target: str, number: int, line: bytes, key: bytes | None, failed: list[tuple[int, str]]
) -> None:
    """Send one line under ``key``; a refusal, at once or in the broker's answer, goes into ``failed``."""
    from kafka.errors import KafkaError

    try:
        future = producer.send(target, key=key, value=line)
    except KafkaError as exc:  # too large to send at all
        failed.append((number, _reason(exc, len(line))))
        return
    future.add_errback(lambda exc: failed.append((number, _reason(exc, len(line)))))


def _reason(exc: BaseException, size: int) -> str:
    from kafka.errors import MessageSizeTooLargeError

    if isinstance(exc, MessageSizeTooLargeError) and size > _MAX_REQUEST:
        return f"{size} bytes is over the {_MAX_REQUEST} bytes this command sends in one request"
    if isinstance(exc, MessageSizeTooLargeError):
        return (
            f"{size} bytes is over the broker's record size limit (message.max.bytes, or the topic's max.message.bytes)"
        )
    return f"{type(exc).__name__}: {exc}" if str(exc) else type(exc).__name__


class MissingTopic(ValueError):
    """The topic to produce to is not on the broker."""


def require_topic(target: str, existing: Collection[str], settings: Settings) -> None:
    """Refuse at once, in one line, a topic the broker lacks: neardup's broker creates none on
    its own, and the producer waited 60 s for its metadata, then failed in a traceback."""
    if target in existing:
        return
    raise MissingTopic(
        f"topic {target!r} does not exist on {settings.connection.bootstrap} ({_create_hint(target, settings)})"
    )


def _create_hint(target: str, settings: Settings) -> str:
    """How to make ``target``: ``topics create`` makes ``{prefix}.events`` (with the rest of a
    deployment's topics) for the prefix in ``NEARDUP_TOPIC_PREFIX``, and no other topic."""
    command = f"neardup topics create --bootstrap {settings.connection.bootstrap}"
    if target == Topics(settings.topic_prefix).events:
        return f"create it: {command}"
    if target.endswith(".events"):
        return f"create it: NEARDUP_TOPIC_PREFIX={target.removesuffix('.events')} {command}"
    return (
        f"the worker reads {Topics(settings.topic_prefix).events}, which `{command}` makes; "
        "create other topics with Kafka's own tools"
    )


def broker_topics(settings: Settings) -> set[str]:
    """The topics on the broker, asked within the connect timeout the other commands use."""
    from topology.topics import existing_topics

    timeout_ms = int(settings.connect_timeout_s * 1000)
    return existing_topics(
        settings.connection.bootstrap,
        client_id="neardup-produce",
        request_timeout_ms=timeout_ms,
        bootstrap_timeout_ms=timeout_ms,
        **settings.connection.kafka_python_security(),
    )


def _acknowledged(producer: Any) -> None:
    """Wait for the record just sent, then for the clock's next millisecond: the next record
    is appended after this one, at a later append time."""
    producer.flush()
    acked = time.time_ns() // 1_000_000
    while time.time_ns() // 1_000_000 <= acked:
        time.sleep(0.0002)


def run(source: BinaryIO, settings: Settings, rate: float | None, topic: str | None) -> int:
    """CLI entry (``source``: the opened input, see :func:`worker.cli.inputs.open_input`): returns
    the exit status."""
    started = time.perf_counter()
    done = produce(source, settings, rate, topic)
    seconds = time.perf_counter() - started
    target = topic or Topics(settings.topic_prefix).events
    for number, reason in done.refused:
        print(f"neardup produce: line {number}: the broker refused it, not sent: {reason}", file=sys.stderr)
    refused = f"; {count(len(done.refused), 'line')} refused (above)" if done.refused else ""
    print(f"neardup produce: {count(done.sent, 'record')} to {target} in {seconds:.1f} s{refused}", file=sys.stderr)
    if done.invalid:
        first = "; ".join(f"line {number}: {reason}" for number, reason in done.invalid[:3])
        more = ", …" if len(done.invalid) > 3 else ""
        print(
            f"neardup produce: {count(len(done.invalid), 'line')} sent that the stream dead-letters, not being "
            f"events (`neardup tail` shows them): {first}{more}",
            file=sys.stderr,
        )
    return 2 if done.refused else 0
