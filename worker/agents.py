"""The three Faust agents — fingerprint, index, verdict — and their tables.

Read top to bottom, this is the path of one event through the stream: bytes in
``{p}.events``; fingerprint and fan-out to one bucket per block table (``{p}.probes``,
routed to the bucket's partition); the index stage matches and stores the entry in that
bucket and answers the event's id (``{p}.answers``); the verdict stage gathers the answers
(:mod:`worker.gather`) and publishes to ``{p}.unique`` or ``{p}.duplicates``.

Faust tables write to the changelog partition of the message being processed, so every
table here is keyed so that its keys live in exactly one partition of its source topic
(see :mod:`topology.stages`). A value is always *assigned*, never mutated in place:
Faust only changelogs assignments. Within one batch message each key is read once and
written once.
"""

from __future__ import annotations

import base64
import json
import logging
import time
from collections import defaultdict
from dataclasses import dataclass, field
from typing import Any

import faust
from faust.types import EventT

from topology.stages import (
    TICK,
    Probe,
    Topics,
    answer_item,
    answer_partition,
    decode_batch,
    decode_probes,
    encode_batch,
    encode_probes,
    note_item,
    probe_partition,
    total_order,
)
from worker import gather
from worker.blocks import hamming, parse_plan
from worker.decide import accepts
from worker.fingerprint import Fingerprint, fingerprint
from worker.settings import Settings
from worker.simhash import to_hex
from worker.store import Candidate, Entry
from worker.validate import InvalidEvent, parse_event

log = logging.getLogger("neardup.worker")

_DAY_MS = 86_400_000
_TAKE_MAX = 500
_TAKE_WITHIN_S = 0.05
_PREVIEW_CHARS = 200
_DEADLETTER_RAW_MAX = 256 * 1024
_SWEEP_EVERY_S = 5.0
_LOG_TIMESTAMP_TYPE = 1  # Kafka: 0 = CreateTime, 1 = LogAppendTime


@dataclass
class Counters:
    """What this worker did since it started; logged now and then."""

    events: int = 0
    deadlettered: int = 0
    verdicts: int = 0
    republished: int = 0
    corrections: int = 0
    held: dict[int, set[str]] = field(default_factory=lambda: defaultdict(set))


def deadletter_value(reason: str, topic: str, partition: int, offset: int, raw: bytes | None) -> bytes:
    """The dead-letter record: why, where from, and the raw bytes (base64, capped at 256 KiB)."""
    data = raw or b""
    value = {
        "reason": reason,
        "topic": topic,
        "partition": partition,
        "offset": offset,
        "raw_bytes": len(data),
        "raw_b64": base64.b64encode(data[:_DEADLETTER_RAW_MAX]).decode("ascii"),
        "raw_truncated": len(data) > _DEADLETTER_RAW_MAX,
        "raw_preview": data[: _PREVIEW_CHARS * 4].decode("utf-8", "replace")[:_PREVIEW_CHARS],
    }
    return json.dumps(value, ensure_ascii=False).encode("utf-8")


def install(app: faust.App, settings: Settings) -> Counters:
    """Declare the topics, tables, agents and timer of one worker on ``app``."""
    names = Topics(settings.topic_prefix)
    partitions = settings.partitions
    plan = parse_plan(settings.plan, settings.k, settings.expected_fingerprints)
    exact_table = len(plan.tables)
    retention_ms = int(settings.retention_days * _DAY_MS)
    lateness_ms = settings.allowed_lateness_ms
    counters = Counters()

    def raw_topic(name: str) -> faust.TopicT:
        return app.topic(name, key_type=bytes, value_type=bytes, key_serializer="raw", value_serializer="raw")

    events_topic = raw_topic(names.events)
    probes_topic = raw_topic(names.probes)
    answers_topic = raw_topic(names.answers)
    deadletter_topic = raw_topic(names.deadletter)
    outputs = {
        "unique": raw_topic(names.unique),
        "duplicates": raw_topic(names.duplicates),
        "corrections": raw_topic(names.corrections),
    }

    def table(name: str, changelog: str | None = None) -> faust.Table:
        changelog_topic = None
        if changelog is not None:
            changelog_topic = app.topic(
                changelog, key_serializer="raw", value_serializer="raw", partitions=partitions, compacting=True
            )
        return app.Table(
            name,
            partitions=partitions,
            key_type=bytes,  # Faust picks the raw codec for bytes: we encode values ourselves
            value_type=bytes,
            changelog_topic=changelog_topic,
            options={"driver": "rocksdict"},
        )

    buckets = table("buckets", names.index_changelog)
    pending = table("pending")
    verdicts = table("verdicts")

    # ---------------------------------------------------------------- fingerprint stage
    @app.agent(events_topic, name="fingerprint")
    async def fingerprint_stage(stream: faust.StreamT[bytes]) -> None:
        """Raw event -> intro (to the verdict stage) + one probe per table (to the index stage)."""
        warned = False
        async for batch in stream.take_events(_TAKE_MAX, within=_TAKE_WITHIN_S):
            intros: dict[int, list[dict[str, Any]]] = defaultdict(list)
            probes: dict[int, list[Probe]] = defaultdict(list)
            dead: list[bytes] = []
            for event in batch:
                msg = event.message
                if msg.timestamp_type != _LOG_TIMESTAMP_TYPE and not warned:
                    warned = True
                    log.warning("%s does not use LogAppendTime; the total order follows producer clocks", msg.topic)
                try:
                    intro, fanout = _fan_out(msg.value, msg.partition, msg.offset, msg.timestamp)
                except InvalidEvent as exc:
                    dead.append(deadletter_value(exc.reason, msg.topic, msg.partition, msg.offset, msg.value))
                    continue
                except Exception as exc:  # the worker never dies on one record
                    log.exception("unexpected error on %s[%d]@%d", msg.topic, msg.partition, msg.offset)
                    reason = f"internal error: {type(exc).__name__}: {exc}"
                    dead.append(deadletter_value(reason, msg.topic, msg.partition, msg.offset, msg.value))
                    continue
                intros[answer_partition(intro.id, partitions)].append(intro.to_dict())
                for probe in fanout:
                    probes[probe_partition(probe.bucket, partitions)].append(probe)
            counters.events += len(batch) - len(dead)
            counters.deadlettered += len(dead)
            for value in dead:
                await deadletter_topic.send(value=value)
            for part, items in intros.items():
                await answers_topic.send(value=encode_batch(items), partition=part)
            for part, batch_probes in probes.items():
                await probes_topic.send(value=encode_probes(batch_probes), partition=part)

    def _fan_out(
        raw: bytes | None, partition: int, offset: int, timestamp_s: float
    ) -> tuple[gather.Intro, list[Probe]]:
        if raw is None:
            raise InvalidEvent("record has no value (null)")
        event = parse_event(raw, settings)
        append_ms = int(round(timestamp_s * 1000))
        order = total_order(append_ms, partition, offset)
        ts = event.ts if event.ts is not None else append_ms
        fp = fingerprint(event.text, settings)
        fanout: list[Probe] = []
        if fp.exact is None:
            for t, key in enumerate(plan.keys(fp.simhash)):
                fanout.append(Probe(t, key, event.id, order, ts, fp.simhash, fp.sketch, False))
        for i, key in enumerate(fp.exact_keys):
            fanout.append(Probe(exact_table + i, key, event.id, order, ts, fp.simhash, fp.sketch, True))
        intro = gather.Intro(event.id, order, ts, to_hex(fp.simhash), len(fanout), event.to_dict())
        return intro, fanout

    # ---------------------------------------------------------------------- index stage
    @app.agent(probes_topic, name="index")
    async def index_stage(stream: faust.StreamT[bytes]) -> None:
        """Match each probe against its bucket, store it there, answer the event (and later ones)."""
        async for event in stream.events():
            loaded: dict[bytes, list[list[Any]]] = {}
            dirty: set[bytes] = set()
            replies: dict[int, list[dict[str, Any]]] = defaultdict(list)
            for probe in decode_probes(event.value):
                key = probe.bucket.encode()
                if key not in loaded:
                    stored = buckets.get(key)
                    loaded[key] = [] if stored is None else json.loads(stored)
                entries = loaded[key]
                earlier, later, present = _match(probe, entries)
                if not present:
                    horizon = probe.ts - 2 * retention_ms
                    loaded[key] = [e for e in entries if e[3] >= horizon] + [_entry(probe)]
                    dirty.add(key)
                replies[answer_partition(probe.id, partitions)].append(
                    answer_item(probe.id, probe.order, probe.table, [r.to_dict() for r in earlier])
                )
                for later_id, later_order, ref in later:
                    replies[answer_partition(later_id, partitions)].append(
                        note_item(later_id, later_order, ref.to_dict())
                    )
            for key in dirty:
                buckets[key] = json.dumps(loaded[key], separators=(",", ":")).encode()
            for part, items in replies.items():
                await answers_topic.send(value=encode_batch(items), partition=part)

    def _entry(probe: Probe) -> list[Any]:
        return [probe.id, probe.fingerprint, probe.order, probe.ts, base64.b64encode(probe.sketch).decode("ascii")]

    def _match(
        probe: Probe, entries: list[list[Any]]
    ) -> tuple[list[gather.Ref], list[tuple[str, int, gather.Ref]], bool]:
        """The bucket's matches of ``probe``: earlier refs, (later id, later order, ref to probe), present."""
        earlier: list[gather.Ref] = []
        later: list[tuple[str, int, gather.Ref]] = []
        present = False
        probe_fp = Fingerprint(probe.fingerprint, probe.sketch, None, 0)
        for entry_id, entry_fp, entry_order, entry_ts, entry_sketch in entries:
            if entry_id == probe.id:
                present = True
                continue
            if entry_order < probe.order and entry_ts < probe.ts - retention_ms:
                continue
            if entry_order > probe.order and probe.ts < entry_ts - retention_ms:
                continue
            distance = hamming(probe.fingerprint, entry_fp)
            if not probe.exact and distance > settings.max_distance:
                continue  # table candidates are bounded; exact-key ones are not (as in batch mode)
            stored = Entry(entry_id, entry_fp, entry_order, entry_ts, base64.b64decode(entry_sketch))
            similarity = accepts(probe_fp, Candidate(stored, distance), settings)
            if similarity is None:
                continue
            if entry_order < probe.order:
                earlier.append(gather.Ref(entry_id, entry_order, distance, similarity))
            elif entry_order > probe.order:
                later.append((entry_id, entry_order, gather.Ref(probe.id, probe.order, distance, similarity)))
        return earlier, later, present

    # -------------------------------------------------------------------- verdict stage
    @app.agent(answers_topic, name="verdict")
    async def verdict_stage(stream: faust.StreamT[bytes]) -> None:
        """Gather intro + answers per id, publish the verdict once, correct it if an earlier original shows up."""
        async for event in stream.events():
            await _decide_batch(event)

    async def _decide_batch(event: EventT) -> None:
        partition = event.message.partition
        now = int(time.time() * 1000)
        states: dict[str, gather.Pending | None] = {}
        stored_states: set[str] = set()
        published: dict[str, gather.Published | None] = {}
        dirty_states: set[str] = set()
        dirty_published: set[str] = set()
        out: list[tuple[str, str, dict[str, Any]]] = []
        held = counters.held[partition]

        def state_of(event_id: str) -> gather.Pending | None:
            if event_id not in states:
                raw = pending.get(event_id.encode())
                states[event_id] = None if raw is None else gather.Pending.from_dict(json.loads(raw))
                if raw is not None:
                    stored_states.add(event_id)
            return states[event_id]

        def verdict_of(event_id: str) -> gather.Published | None:
            if event_id not in published:
                raw = verdicts.get(event_id.encode())
                published[event_id] = None if raw is None else gather.Published.from_dict(json.loads(raw))
            return published[event_id]

        def publish(event_id: str, state: gather.Pending) -> None:
            first = gather.decide(state)
            published[event_id] = first
            dirty_published.add(event_id)
            states[event_id] = None
            dirty_states.add(event_id)
            held.discard(event_id)
            counters.verdicts += 1
            for _ in range(1 + state.copies):
                out.append((first.topic, event_id, first.value))

        def settle(event_id: str, state: gather.Pending) -> None:
            states[event_id] = state
            dirty_states.add(event_id)
            if not gather.is_complete(state):
                return
            state = gather.mark_complete(state, now)
            states[event_id] = state
            if gather.is_due(state, now, lateness_ms):
                publish(event_id, state)
            else:
                held.add(event_id)

        for item in decode_batch(event.value):
            kind = item.get("kind")
            if kind == "tick":
                if item.get("sweep"):
                    held.update(_complete_ids(partition))
                for event_id in list(held):
                    state = state_of(event_id)
                    if state is None or not gather.is_complete(state):
                        held.discard(event_id)
                    elif gather.is_due(state, now, lateness_ms):
                        publish(event_id, state)
                continue
            event_id = str(item["id"])
            first = verdict_of(event_id)
            if kind == "event":
                if first is not None:
                    counters.republished += 1
                    out.append((first.topic, event_id, first.value))
                    continue
                settle(event_id, gather.add_intro(state_of(event_id), gather.Intro.from_dict(item)))
            elif kind == "answer":
                if first is not None:
                    continue  # a re-sent copy's or a replayed probe's answer
                refs = [gather.Ref.from_dict(r) for r in item["earlier"]]
                settle(event_id, gather.add_answer(state_of(event_id), int(item["order"]), int(item["table"]), refs))
            elif kind == "earlier":
                ref = gather.Ref.from_dict(item["match"])
                if first is None:
                    settle(event_id, gather.add_note(state_of(event_id), ref))
                    continue
                fixed = gather.correct(first, ref)
                if fixed is not None:
                    published[event_id], correction = fixed
                    dirty_published.add(event_id)
                    counters.corrections += 1
                    out.append(("corrections", event_id, correction))
            else:
                log.warning("ignoring an internal message of unknown kind %r", kind)

        for event_id in dirty_states:
            state = states[event_id]
            if state is None:
                if event_id in stored_states:
                    del pending[event_id.encode()]
            else:
                pending[event_id.encode()] = json.dumps(state.to_dict(), separators=(",", ":")).encode()
        for event_id in dirty_published:
            record = published[event_id]
            if record is not None:
                verdicts[event_id.encode()] = json.dumps(record.to_dict(), separators=(",", ":")).encode()
        for topic, event_id, value in out:
            await outputs[topic].send(key=event_id.encode(), value=json.dumps(value, ensure_ascii=False).encode())

    def _complete_ids(partition: int) -> set[str]:
        """Ids of this partition whose verdict is complete but held (e.g. after a restart)."""
        found: set[str] = set()
        for raw_key, raw_value in pending.items():
            event_id = raw_key.decode() if isinstance(raw_key, bytes) else str(raw_key)
            if answer_partition(event_id, partitions) != partition:
                continue
            if json.loads(raw_value).get("complete_at") is not None:
                found.add(event_id)
        return found

    # --------------------------------------------------------------------- hold timer
    last_sweep = [0.0]

    @app.timer(interval=max(0.05, lateness_ms / 4000), name="verdict-ticks")
    async def tick() -> None:
        """Wake partitions that hold verdicts (and now and then sweep every owned one)."""
        if lateness_ms <= 0:
            return
        owned = {tp.partition for tp in app.assignor.assigned_actives() if tp.topic == names.answers}
        sweep = time.monotonic() - last_sweep[0] > _SWEEP_EVERY_S
        if sweep:
            last_sweep[0] = time.monotonic()
        for part in owned:
            if sweep:
                await answers_topic.send(value=encode_batch([dict(TICK, sweep=True)]), partition=part)
            elif counters.held.get(part):
                await answers_topic.send(value=encode_batch([TICK]), partition=part)
        for part in set(counters.held) - owned:
            counters.held.pop(part, None)

    @app.timer(interval=10.0, name="counters")
    async def report() -> None:
        log.info(
            "events %d, dead-lettered %d, verdicts %d, republished %d, corrections %d",
            counters.events,
            counters.deadlettered,
            counters.verdicts,
            counters.republished,
            counters.corrections,
        )

    return counters
