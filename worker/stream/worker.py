"""The three Faust agents — fingerprint, index, verdict — and the stores they own.

Read top to bottom, this is the path of one event through the stream: bytes in
``{p}.events``; fingerprint and fan-out to one bucket per block table (``{p}.probes``,
routed to the bucket's partition); the index stage matches and stores the entry in that
bucket and answers the event's id (``{p}.answers``); the verdict stage gathers the answers
(:mod:`worker.stream.gather`) and publishes to ``{p}.unique`` or ``{p}.duplicates`` once its
store's changelog holds what it published (:mod:`worker.stream.outbox`).

State does not live in Faust tables (one changelog record per assignment, a dozen per event)
but in stores this worker owns, one per (stage, partition), whose changes are logged as ONE
changelog record per partition and batch (for the index, per 50 ms of batches)
(:mod:`worker.state.changelog`). Every stage takes its input in batches (:mod:`worker.stream.batches`) and
sends one message per destination partition per batch — except to a partition this worker
is assigned itself: that share goes straight to the next stage in this process, so one
worker that owns everything talks to Kafka only for input, outputs and changelogs.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections import defaultdict
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, TypeVar, cast

import faust
from aiokafka.errors import KafkaError, MessageSizeTooLargeError
from faust.types import EventT

from topology import codec
from topology.stages import (
    Probe,
    Topics,
    answer_item,
    answer_partition,
    decode_batch,
    decode_probes,
    encode_chunks,
    encode_probes,
    note_item,
    probe_partition,
    total_order,
)
from topology.validate import InvalidEvent, parse_event
from topology.verdicts import Intro, Output, Pending, Published, Ref
from worker.engine import match
from worker.engine.fingerprint import Fingerprint, fingerprint
from worker.engine.match import Candidate, Entry
from worker.engine.simhash import to_hex
from worker.settings import Settings
from worker.state.changelog import ChangelogReader, StoreSet
from worker.state.partition import IndexPartition
from worker.state.verdicts import VerdictPartition
from worker.stream import deadletter, gather, shutdown
from worker.stream.batches import take_batches
from worker.stream.hold import HeldEntry, Hold
from worker.stream.outbox import Outbox
from worker.stream.transactions import TransactionalOutbox, Transactions

log = logging.getLogger("neardup.worker")

_TAKE_MAX = 500  # input events per fingerprint batch
_TAKE_MESSAGES = 32  # internal messages (each already a batch) per index or verdict batch
_LOG_TIMESTAMP_TYPE = 1  # Kafka: 0 = CreateTime, 1 = LogAppendTime
_DRAIN_TIMEOUT_S = 10.0  # how long shutdown waits for in-flight changelog acknowledgements
# Index changelog group commit: batches committed within this long share one record per
# partition. It delays only when source offsets become committable.
_CHANGELOG_GROUP_S = 0.05
# Verdict changelog group commit, for batches with no output waiting for their record alone
# (gathers still incomplete, verdicts held): a batch with outputs to send after its record
# flushes at once, taking the grouped ones along. Kept under the lateness hold, so a held
# verdict's record is usually acknowledged when its hold ends and it goes out at once.
_VERDICT_GROUP_S = 0.01
# Least time between two steps of index bucket upkeep (worker.state.index: one column family created
# or dropped, 10-40 ms with the GIL held): steps one batch apart added up to a stall as long
# as the one they replace.
_UPKEEP_S = 0.25

_T = TypeVar("_T")
# One probes message: its probes and the intros riding along (see topology.stages.encode_probes).
_ProbeMessage = tuple[list[Probe], list[dict[str, Any]]]
# One outbox entry of a verdict batch: its key in the verdict store and its outputs.
_OutboxEntry = tuple[str, list[Output]]


@dataclass(frozen=True)
class Windows:
    """Least time between the end of one batch of a stage and the start of its next (seconds).

    An event that finds its stage idle for longer goes at once (:mod:`worker.stream.batches`); under
    load each stage adds up to its window to an event's latency, and longer windows mean
    bigger batches, hence fewer messages and changelog records per event (see
    docs/architecture.md). ``fingerprint_shared`` replaces ``fingerprint`` while other
    workers own some index partitions: then every batch costs a Kafka message per remote
    partition, and 3 ms batches cut two workers' backlog throughput by a third. 20 ms
    rather than 10: two workers at 700-990 events/s used 1-10 % less CPU an event and had
    a lower p99 in 5 of 6 alternated pairs (docs/architecture.md, "Figures > Before:
    decided at completion"; 40 ms is in "Tried, not adopted" there).

    The index and verdict stages read from Kafka only what another worker sent them, and
    each such message is already one batch of its sender's: spacing them only made every
    event crossing between two workers wait up to twice more. Without it two workers' p99
    was lower in 8 of 10 alternated pairs, their backlog throughput unchanged within noise
    (docs/architecture.md, "Figures").

    Under a backlog a fingerprint batch holds what Faust delivered during the window before
    it — about 18 events in 3 ms, measured — so the costs of a batch (a verdict pass and a
    changelog record per partition, a message per remote partition) came every 18 events.
    The window after a backlog's batch therefore grows with it (``backlog_per_event`` per
    event of it, at most ``backlog_most``), so its batches grow towards ``_TAKE_MAX`` while
    it lasts. A batch counts as a backlog's when its oldest event had waited at least
    ``backlog_wait`` (input record time to batch start): batch size alone is no such sign.
    At a high but sustainable load a batch's size grows with the window that follows it,
    and once ``backlog_per_event`` plus the CPU an event costs exceeds the time between
    events, windows climbed to the cap: one worker at 757 events/s had p99 164 ms. Fresh
    events keep the configured window whatever their number.
    """

    fingerprint: float = 0.003
    fingerprint_shared: float = 0.02
    backlog_per_event: float = 0.0005
    backlog_most: float = 0.1
    backlog_wait: float = 0.2
    index: float = 0.0
    verdict: float = 0.0

    def after(self, events: int, shared: bool, waited: float) -> float:
        """The fingerprint stage's window after a batch of ``events`` whose oldest had waited
        ``waited`` seconds; ``shared`` while other workers own some index partitions."""
        least = self.fingerprint_shared if shared else self.fingerprint
        if waited < self.backlog_wait:
            return least
        return max(least, min(self.backlog_most, events * self.backlog_per_event))


@dataclass
class Counters:
    """What this worker did since it started; logged now and then."""

    events: int = 0
    deadlettered: int = 0
    verdicts: int = 0
    republished: int = 0
    replayed: int = 0  # intros of inputs already answered, read again (at-least-once delivery)
    corrections: int = 0
    # Batches being handled now, by stage: records and since when (time.monotonic()); what a
    # shutdown that runs out of time abandons (worker.stream.shutdown).
    in_flight: dict[str, tuple[int, float]] = field(default_factory=dict)

    def running(self) -> str:
        now = time.monotonic()
        busy = [f"{stage}: {n} records for {now - since:.1f} s" for stage, (n, since) in self.in_flight.items()]
        return "; ".join(busy) or "no batch"


class OffsetHolds:
    """The references one batch holds on its source messages, so none outlives a failed batch.

    ``take_batches`` acks a batch when the agent's loop body returns; each :meth:`hold`
    takes one more reference on every message of the batch, so its offsets become
    committable only when the returned callback runs (once the batch's changelog records
    are acknowledged). A batch that fails :meth:`release_all` its holds: a reference left
    behind would stop offset commits on its partitions and make shutdown wait forever.
    """

    def __init__(self, batch: Sequence[EventT]) -> None:
        self._batch = batch
        self._open: list[Callable[[], None]] = []

    def hold(self) -> Callable[[], None]:
        for event in self._batch:
            event.message.incref()
        released = False

        def release() -> None:
            nonlocal released
            if not released:
                released = True
                for event in self._batch:
                    event.ack()

        self._open.append(release)
        return release

    def release_all(self) -> None:
        for release in self._open:
            release()


def _infrastructure(exc: BaseException) -> bool:
    """Whether a batch failed through no fault of its records (Kafka, the machine): then the
    worker stops, their offsets uncommitted, instead of dead-lettering them. A record too
    large for Kafka is the records' fault: it would fail the same way after every restart."""
    if isinstance(exc, MessageSizeTooLargeError):
        return False
    return isinstance(exc, (KafkaError, OSError, asyncio.TimeoutError))


def _source(event: EventT) -> tuple[str, int, int]:
    return event.message.topic, event.message.partition, event.message.offset


def _log_batch(batch: Sequence[EventT], started: float, cpu: float) -> None:
    """Where one input batch's latency went (``log_batches``; bench/stream_hops.py reads it).

    Waits run from each input record's time to the batch's start: the fetch, the window and
    any batch still running. What follows is this process's own work, up to the verdicts
    when it owns every partition; its CPU is this thread's alone.
    """
    waits = [started - event.message.timestamp for event in batch]
    log.info(
        "batch: %d events, waited %.1f-%.1f ms, took %.1f ms, %.2f ms CPU",
        len(batch),
        min(waits) * 1000,
        max(waits) * 1000,
        (time.time() - started) * 1000,
        (time.thread_time() - cpu) * 1000,
    )


def install(
    app: faust.App,
    settings: Settings,
    datadir: Path,
    reader: ChangelogReader,
    windows: Windows = Windows(),
    transactions: Transactions | None = None,
) -> Counters:
    """Declare the topics, stores, agents and timer of one worker on ``app``.

    ``transactions``: publish outputs exactly once (:mod:`worker.stream.transactions`).
    """
    names = Topics(settings.topic_prefix)
    partitions = settings.partitions
    plan = settings.block_plan
    exact_table = len(plan.tables)
    retention_ms = settings.retention_ms
    lateness_ms = settings.allowed_lateness_ms
    counters = Counters()

    def raw_topic(name: str) -> faust.TopicT:
        return app.topic(name, key_type=bytes, value_type=bytes, key_serializer="raw", value_serializer="raw")

    events_topic = raw_topic(names.events)
    probes_topic = raw_topic(names.probes)
    answers_topic = raw_topic(names.answers)
    outputs = {
        "unique": names.unique,
        "duplicates": names.duplicates,
        "corrections": names.corrections,
        "deadletter": names.deadletter,
    }

    async def send(topic: str, key: bytes | None, value: bytes, partition: int | None = None) -> Awaitable[Any]:
        """Hand one record to the app's producer; returns its delivery future.

        Straight to Faust's producer, not through ``Topic.send``, which wraps every record in
        a FutureMessage with callbacks and sensors: at 340 events/s that wrapping was ~40 %
        of the stages' send cost (py-spy). The producer is the same, so Faust's flush before
        committing offsets covers these records too.
        """
        return await app.producer.send(topic, key, value, partition, None, None)

    stores_root = datadir / "stores"
    index_stores: StoreSet[IndexPartition] = StoreSet(
        stores_root / "index",
        names.index_changelog,
        lambda path: IndexPartition(path, plan, retention_ms, settings.cache_mb),
        reader,
        _CHANGELOG_GROUP_S,
    )
    verdict_stores: StoreSet[VerdictPartition] = StoreSet(
        stores_root / "verdict",
        names.verdict_changelog,
        lambda path: VerdictPartition(path, retention_ms),
        reader,
        min(_VERDICT_GROUP_S, lateness_ms / 2000),
    )

    async def send_index_log(key: bytes, value: bytes, partition: int) -> Awaitable[Any]:
        return await send(names.index_changelog, key, value, partition)

    async def send_verdict_log(key: bytes, value: bytes, partition: int) -> Awaitable[Any]:
        return await send(names.verdict_changelog, key, value, partition)

    async def dead_letter(values: list[bytes], keys: list[bytes | None] | None = None) -> None:
        counters.deadlettered += len(values)
        for i, value in enumerate(values):
            await send(names.deadletter, keys[i] if keys else None, value)

    async def guarded(
        stage: str, batch: Sequence[EventT], body: Callable[[Sequence[EventT], OffsetHolds], Awaitable[None]]
    ) -> None:
        """Run one batch; if it fails outside any one event, dead-letter its records and go on.

        Each stage catches what goes wrong with one event itself and dead-letters that event
        alone; this is the last line, for a step shared by the whole batch (a send, a commit).
        Its records are dead-lettered with the stage and the reason rather than retried: a
        retry of the same batch would fail the same way, and a stage that dies holding a
        batch stops its partitions' offsets and the worker's shutdown (docs/reliability.md).
        """
        holds = OffsetHolds(batch)
        counters.in_flight[stage] = (len(batch), time.monotonic())
        try:
            await body(batch, holds)
        except Exception as exc:
            if _infrastructure(exc):
                # Not the records' fault: keep their offsets uncommitted and stop; the next
                # owner (this worker, restarted) reads them again.
                log.exception("%s stage: Kafka or the machine failed under a batch; stopping", stage)
                write_failed(exc)
                return
            holds.release_all()
            log.exception("%s stage: batch of %d records failed; dead-lettering them", stage, len(batch))
            reason = f"{stage} stage failed on the batch: {deadletter.describe(exc)}"
            await dead_letter(
                [deadletter.value(stage, reason, _source(e), e.message.value) for e in batch],
                [e.message.key for e in batch],
            )
        finally:
            counters.in_flight.pop(stage, None)

    def write_failed(exc: BaseException) -> None:
        """A changelog or output record was lost: stop this worker; what it did not finish is
        replayed from Kafka (uncommitted batches, outbox entries) by whoever restores next."""
        shutdown.start_deadline(settings.shutdown_timeout_s, counters.running, app)
        asyncio.ensure_future(app.crash(exc))

    async def send_output(role: str, key: bytes, value: bytes) -> Awaitable[Any]:
        return await send(outputs[role], key, value)

    def published(partition: int, keys: list[str]) -> None:
        """Exactly once: a transaction deleted these entries in the changelog; delete them here too,
        also in a store revoked meanwhile: a later restore of it starts from its checkpoint,
        which may already lie past the transaction's record."""
        store = verdict_stores.open_store(partition)
        if store is not None:
            for key in keys:
                store.published(key)
        verdict_stores.settle_unlogged(partition)

    outbox: Outbox | TransactionalOutbox = Outbox(send_output, write_failed)
    if transactions is not None:
        outbox = TransactionalOutbox(transactions, outputs, verdict_stores.begin, published, write_failed)
    holds: dict[int, Hold] = defaultdict(Hold)  # per verdict partition

    def nothing_to_release() -> None:
        """The hold timer's batches have no source messages."""

    # Partitions of the internal topics this worker is assigned now. A stage hands its output
    # for one of these straight to the next stage in this process instead of through Kafka.
    local_index: set[int] = set()
    local_verdict: set[int] = set()

    def _assigned(sender: Any, assigned: set[Any], **_: Any) -> None:
        """``assigned`` is the whole new assignment."""
        local_index.clear()
        local_index.update(tp.partition for tp in assigned if tp.topic == names.probes)
        local_verdict.clear()
        local_verdict.update(tp.partition for tp in assigned if tp.topic == names.answers)

    app.on_partitions_assigned.connect(cast(Any, _assigned))  # faust's stub wants a signal= parameter

    def _revoked(sender: Any, revoked: set[Any], **_: Any) -> None:
        """Another worker may write these partitions' changelogs now: restore again if they come back."""
        local_index.difference_update(tp.partition for tp in revoked if tp.topic == names.probes)
        local_verdict.difference_update(tp.partition for tp in revoked if tp.topic == names.answers)
        index_stores.forget(tp.partition for tp in revoked if tp.topic == names.probes)
        lost = [tp.partition for tp in revoked if tp.topic == names.answers]
        verdict_stores.forget(lost)
        outbox.forget(lost)
        if transactions is not None:
            for part in lost:  # detached now: the next open() of it fences whatever is in flight
                asyncio.ensure_future(transactions.close(part))
        for part in lost:
            holds.pop(part, None)

    app.on_partitions_revoked.connect(cast(Any, _revoked))  # faust's stub wants a signal= parameter

    # ---------------------------------------------------------------- fingerprint stage
    @app.agent(events_topic, name="fingerprint")
    async def fingerprint_stage(stream: faust.StreamT[bytes]) -> None:
        """Raw event -> one probe per table (to the index stage), the first carrying the event's intro."""
        warned = False
        last_size = 0
        last_waited = 0.0

        def spacing() -> float:
            return windows.after(last_size, len(local_index) < partitions, last_waited)

        async for batch in take_batches(stream, _TAKE_MAX, spacing):
            started, cpu = time.time(), time.thread_time()
            last_size = len(batch)
            last_waited = started - min(event.message.timestamp for event in batch)
            if not warned and any(e.message.timestamp_type != _LOG_TIMESTAMP_TYPE for e in batch):
                warned = True
                log.warning("%s does not use LogAppendTime; the total order follows producer clocks", names.events)
            await guarded("fingerprint", batch, _fingerprint_batch)
            if settings.log_batches:
                _log_batch(batch, started, cpu)

    async def _fingerprint_batch(batch: Sequence[EventT], holds: OffsetHolds) -> None:
        intros: dict[int, dict[tuple[str, int], dict[str, Any]]] = defaultdict(dict)
        probes: dict[int, list[Probe]] = defaultdict(list)
        dead: list[bytes] = []
        for event in batch:
            msg = event.message
            try:
                intro, fanout = _fan_out(msg.value, msg.partition, msg.offset, msg.timestamp)
            except InvalidEvent as exc:
                dead.append(deadletter.value("fingerprint", exc.reason, _source(event), msg.value))
                continue
            except Exception as exc:  # the worker never dies on one record
                log.exception("unexpected error on %s[%d]@%d", msg.topic, msg.partition, msg.offset)
                dead.append(deadletter.value("fingerprint", deadletter.failure(exc), _source(event), msg.value))
                continue
            for probe in fanout:
                probes[probe_partition(probe.bucket, partitions)].append(probe)
            intros[probe_partition(fanout[0].bucket, partitions)][(intro.id, intro.order)] = intro.to_dict()
        counters.events += len(batch) - len(dead)
        await dead_letter(dead)
        local: dict[int, list[_ProbeMessage]] = {}
        for part, batch_probes in probes.items():
            if part in local_index:  # handed on as they are: nothing to encode or decode
                local[part] = [(batch_probes, list(intros[part].values()))]
                continue
            for chunk in encode_probes(batch_probes, intros[part]):
                await send(names.probes, None, chunk, part)
        if local:
            async with index_lock:
                await _index_values(local, holds.hold)

    def _fan_out(raw: bytes | None, partition: int, offset: int, timestamp_s: float) -> tuple[Intro, list[Probe]]:
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
        intro = Intro(event.id, order, ts, to_hex(fp.simhash), len(fanout), event.to_dict())
        return intro, fanout

    # ---------------------------------------------------------------------- index stage
    index_lock = asyncio.Lock()  # held by a batch, so shutdown never closes a store under it
    last_upkeep = [0.0]  # when index bucket upkeep last did a step

    @app.agent(probes_topic, name="index")
    async def index_stage(stream: faust.StreamT[bytes]) -> None:
        """Match each probe against its bucket, store it there, answer the event (and later ones)."""
        async for batch in take_batches(stream, _TAKE_MESSAGES, lambda: windows.index):
            await guarded("index", batch, _index_batch)

    async def _decoded(
        stage: str, what: str, batch: Sequence[EventT], decode: Callable[[bytes], _T]
    ) -> dict[int, list[_T]]:
        """Each message of ``batch`` decoded, per partition; one that cannot be is dead-lettered."""
        decoded: dict[int, list[_T]] = defaultdict(list)
        dead: list[bytes] = []
        for event in batch:
            try:
                decoded[event.message.partition].append(decode(event.message.value or b""))
            except Exception as exc:
                reason = f"unreadable {what} message: {deadletter.describe(exc)}"
                dead.append(deadletter.value(stage, reason, _source(event), event.message.value))
        await dead_letter(dead)
        return decoded

    async def _index_batch(batch: Sequence[EventT], holds: OffsetHolds) -> None:
        messages = await _decoded("index", "probes", batch, decode_probes)
        async with index_lock:
            await _index_values(messages, holds.hold)

    async def _index_values(
        by_partition: dict[int, list[_ProbeMessage]], hold: Callable[[], Callable[[], None]]
    ) -> None:
        """Probes and intros per index partition, from Kafka or from this worker's fingerprint stage.

        ``hold`` keeps the source offsets uncommitted until the callback it returns runs;
        it is called once per changelog commit that must land before they may be committed.
        """
        replies: dict[int, list[dict[str, Any]]] = defaultdict(list)
        answers: dict[tuple[str, int], _Answer] = defaultdict(_Answer)
        ops: dict[int, list[Any]] = {}
        # Verify each (probe event, candidate) pair once per batch, whichever partitions meet it.
        verified: dict[tuple[str, int, str, int], float | None] = {}
        touched: list[IndexPartition] = []
        failed: list[bytes] = []
        for part, values in by_partition.items():
            await index_stores.restore(part)
            store = index_stores.begin(part)
            touched.append(store)
            # An event's probes of one partition are handled together: one query over its
            # tables, one write of its rows, one answer.
            groups: dict[tuple[str, int], list[Probe]] = {}
            for probes, intros in values:
                for probe in probes:
                    groups.setdefault((probe.id, probe.order), []).append(probe)
                for intro in intros:  # forwarded to the verdict stage with the answers
                    replies[answer_partition(str(intro["id"]), partitions)].append(intro)
            for probes in groups.values():
                try:
                    _index_event(store, probes, answers, replies, verified)
                except Exception as exc:  # one event's failure is that event's alone
                    log.exception("index stage: event %r failed", probes[0].id)
                    dead = deadletter.for_event("index", probes[0].id, probes[0].order, exc, names.events)
                    failed.append(codec.dumps(dead))
            ops[part] = store.take_ops()
        await dead_letter(failed)
        for (event_id, order), answer in answers.items():
            earlier = [] if answer.earliest is None else [answer.earliest.to_dict()]
            replies[answer_partition(event_id, partitions)].append(answer_item(event_id, order, answer.tables, earlier))
        local: dict[int, list[dict[str, Any]]] = {}
        for part, items in replies.items():
            if part in local_verdict:
                local[part] = items
                continue
            for chunk in encode_chunks(items):
                await send(names.answers, None, chunk, part)
        await index_stores.commit(ops, send_index_log, hold(), write_failed)
        if local:
            async with verdict_lock:
                await _verdict_items(local, hold())
                last_batch[0] = time.monotonic()
        # After the batch's answers and verdicts, now and then one column family created or
        # dropped: the next time bucket is ready before its first event (see worker.state.index).
        now = time.monotonic()
        if now - last_upkeep[0] >= _UPKEEP_S:
            for store in touched:
                if store.maintain():
                    last_upkeep[0] = now
                    break

    def _index_event(
        store: IndexPartition,
        probes: list[Probe],
        answers: dict[tuple[str, int], _Answer],
        replies: dict[int, list[dict[str, Any]]],
        verified: dict[tuple[str, int, str, int], float | None],
    ) -> None:
        """One event's probes of this partition: match its buckets, store it there, answer it."""
        probe = probes[0]
        tables = [p.table for p in probes if not p.exact]
        exact_keys = [p.key for p in probes if p.exact]
        found = {c.entry.event_id: c for c in store.candidates(probe.fingerprint, tables, settings.max_distance)}
        for key in exact_keys:
            for candidate in store.exact_candidates(probe.fingerprint, key):
                found.setdefault(candidate.entry.event_id, candidate)
        earlier, later, present = _match(probe, list(found.values()), verified)
        if not present:  # a replayed probe, or a re-sent id, does not re-add (its first order stays)
            entry = Entry(probe.id, probe.fingerprint, probe.order, probe.ts, probe.sketch)
            store.add(entry, tables=tables, exact_keys=exact_keys)
        answers[(probe.id, probe.order)].add([p.table for p in probes], earlier)
        for later_id, later_order, ref in later:
            replies[answer_partition(later_id, partitions)].append(note_item(later_id, later_order, ref.to_dict()))

    def _match(
        probe: Probe, candidates: list[Candidate], verified: dict[tuple[str, int, str, int], float | None]
    ) -> tuple[list[Ref], list[tuple[str, int, Ref]], bool]:
        """The bucket's matches of ``probe`` by :mod:`worker.engine.match`: its earliest earlier match,
        every later event it matches (each needs a note), and whether it is stored here already."""
        probe_fp = Fingerprint(probe.fingerprint, probe.sketch, None, 0)

        def similarity_of(candidate: Candidate) -> float | None:
            stored = candidate.entry
            pair = (probe.id, probe.order, stored.event_id, stored.order)
            if pair not in verified:
                verified[pair] = match.accepts(probe_fp, candidate, settings)
            return verified[pair]

        others = [c for c in candidates if c.entry.event_id != probe.id]
        found = match.earliest(others, similarity_of, probe.ts - retention_ms, before_order=probe.order)
        earlier = (
            [] if found is None else [Ref(found[0].entry.event_id, found[0].entry.order, found[0].distance, found[1])]
        )
        later: list[tuple[str, int, Ref]] = []
        for candidate in sorted(others, key=lambda c: match.precedence(c.entry.order, c.distance)):
            if candidate.entry.order > probe.order:
                similarity = match.is_later_match(probe.ts, candidate, similarity_of, retention_ms)
                if similarity is not None:
                    ref = Ref(probe.id, probe.order, candidate.distance, similarity)
                    later.append((candidate.entry.event_id, candidate.entry.order, ref))
        return earlier, later, len(others) < len(candidates)

    # -------------------------------------------------------------------- verdict stage
    # Verdict batches and the hold timer's outbox deletes both change verdict stores; one lock
    # keeps them apart.
    verdict_lock = asyncio.Lock()
    last_batch = [0.0]  # when a verdict batch last finished (it deletes acknowledged entries too)
    # Held verdicts go out within a fifth of the hold (at least 4 ms) of falling due: 10 ms
    # ticks left a 20 ms hold at p50 62-67 ms, 4 ms ticks at 46-47 (docs/architecture.md).
    hold_tick_s = max(0.004, lateness_ms / 5000)

    @app.agent(answers_topic, name="verdict")
    async def verdict_stage(stream: faust.StreamT[bytes]) -> None:
        """Gather intro + answers per id, publish the verdict once, correct it if an earlier original shows up."""
        async for batch in take_batches(stream, _TAKE_MESSAGES, lambda: windows.verdict):
            await guarded("verdict", batch, _verdict_batch)

    async def _verdict_batch(batch: Sequence[EventT], holds: OffsetHolds) -> None:
        decoded = await _decoded("verdict", "answers", batch, decode_batch)
        items = {part: [item for message in messages for item in message] for part, messages in decoded.items()}
        async with verdict_lock:
            await _verdict_items(items, holds.hold())
            last_batch[0] = time.monotonic()

    def emit_due(part: int, store: VerdictPartition, everything: bool = False) -> None:
        """Hand the partition's held entries whose hold ran out (all, with ``everything``) and
        whose records are acknowledged to the outbox."""
        hold = holds.get(part)
        if hold:
            for key, outputs in hold.take_due(int(time.time() * 1000), store.settled, store.verdict, everything):
                outbox.emit(part, key, outputs)

    def emit_owned(everything: bool = False) -> None:
        """:func:`emit_due` for every partition this worker owns and has restored."""
        for part in sorted(holds):
            store = verdict_stores.owned_store(part)
            if store is not None:
                emit_due(part, store, everything)

    async def _verdict_items(by_partition: dict[int, list[dict[str, Any]]], release: Callable[[], None]) -> None:
        """Intros, answers and notes per verdict partition, from Kafka or from this worker's index stage.

        Each partition's due held entries go out first (a note in this batch for one of them
        is a correction), and its acknowledged outbox entries are deleted, so the hold timer
        calls this with no items for partitions with deletes only. Verdicts decided here are
        held (:mod:`worker.stream.hold`); other outputs go out once this batch's record is in.
        """
        if any(by_partition.values()):
            await outbox.settled()
        now = int(time.time() * 1000)
        entries: list[tuple[int, str, list[Output]]] = []
        ops: dict[int, list[Any]] = {}
        taken: list[tuple[int, VerdictPartition, int]] = []
        for part, items in by_partition.items():
            fresh = part not in verdict_stores.owned()
            if fresh and transactions is not None:
                await transactions.open(part)  # fences a previous owner before reading the log's end
            store = await verdict_stores.restore(part)
            if fresh:
                holds.pop(part, None)
                unsent = store.outbox()  # durable, perhaps never sent (held ones too): send now
                if unsent:
                    records = sum(len(outputs) for _, outputs in unsent)
                    log.info("%s[%d]: sending %d outbox records again", names.answers, part, records)
                for key, outputs in unsent:
                    outbox.emit(part, key, outputs)
                await dead_letter(
                    [
                        deadletter.value(
                            "verdict", f"unreadable outbox value: {reason}", (names.verdict_changelog, part, -1), raw
                        )
                        for _key, raw, reason in store.unreadable
                    ]
                )
            verdict_stores.begin(part)
            emit_due(part, store)
            decider = VerdictBatch(store, counters, holds[part], lateness_ms, now, names.events)
            after_record, held = decider.run(items)
            if after_record is not None:
                entries.append((part, *after_record))
            store.drop_outbox(outbox.take_acked(part))
            ops[part] = store.take_ops()
            decider.hold_entry(held, store.taken)
            taken.append((part, store, store.taken))

        def durable() -> None:
            for _, store, seq in taken:
                store.settled_through(seq)
            release()
            for part, key, outputs in entries:
                outbox.emit(part, key, outputs)
            for part, store, _ in taken:
                emit_due(part, store)  # with no hold, this batch's verdicts are due now

        # Grouped when no output waits for this record alone: held verdicts wait for their
        # hold, which is at least twice the group time; without items no source offset stays
        # uncommitted to make a rebalance wait for this record.
        grouped = not entries and any(by_partition.values())
        await verdict_stores.commit(ops, send_verdict_log, durable, write_failed, urgent=not grouped)

    async def _drop_acked(partitions: list[int]) -> None:
        """Delete acknowledged outbox entries (shutdown: no batch will carry the deletes)."""
        ops: dict[int, list[Any]] = {}
        for part in partitions:
            store = verdict_stores.begin(part)
            store.drop_outbox(outbox.take_acked(part))
            ops[part] = store.take_ops()
        if ops:
            await verdict_stores.commit(ops, send_verdict_log, nothing_to_release, write_failed)

    # --------------------------------------------------------------------- hold timer
    @app.task
    async def hold_ticks() -> None:
        """Run ``release_held`` every ``hold_tick_s`` until the worker stops.

        A loop of our own rather than ``app.timer``: mode's timer logs a warning whenever one
        run outlasts the interval, and a 4 ms tick on a busy event loop does that a few times
        a second under load (17-70 warnings in an 8 s bench run), burying the warnings that
        matter.
        """
        while not app.should_stop:
            await app.sleep(hold_tick_s)
            try:
                await release_held()
            except Exception:  # the timer outlives one bad tick: held verdicts still need it
                log.exception("hold timer: a tick failed")

    async def release_held() -> None:
        """Send held verdicts whose hold ran out; delete acknowledged outbox entries while no
        verdict batch has run for a while (batches delete them as they go)."""
        emit_owned()
        if not outbox.acked_partitions() or verdict_lock.locked():
            return
        if time.monotonic() - last_batch[0] < _CHANGELOG_GROUP_S:
            return
        async with verdict_lock:
            owned = verdict_stores.owned()
            await _verdict_items({part: [] for part in sorted(outbox.acked_partitions() & owned)}, nothing_to_release)

    @app.timer(interval=10.0, name="counters")
    async def report() -> None:
        log.info(
            "events %d, dead-lettered %d, verdicts %d, republished %d, replayed %d, corrections %d",
            counters.events,
            counters.deadlettered,
            counters.verdicts,
            counters.republished,
            counters.replayed,
            counters.corrections,
        )

    async def _close_stores(sender: Any, **_: Any) -> None:
        """The consumer has stopped: no batch runs any more, so the stores can close."""
        async with index_lock, verdict_lock:
            for stores in (index_stores, verdict_stores):
                try:
                    await asyncio.wait_for(stores.drain(), _DRAIN_TIMEOUT_S)
                except TimeoutError:
                    log.warning("changelog records still unacknowledged at shutdown; their stores stay dirty")
            emit_owned(everything=True)  # durable already: no reason to keep them back now
            try:
                await asyncio.wait_for(outbox.settled(), _DRAIN_TIMEOUT_S)
                await _drop_acked(sorted(outbox.acked_partitions() & verdict_stores.owned()))
                await asyncio.wait_for(verdict_stores.drain(), _DRAIN_TIMEOUT_S)
            except TimeoutError:
                log.warning("outputs still unacknowledged at shutdown; the next owner sends them again")
            await outbox.close()
            if transactions is not None:
                await transactions.close_all()
            index_stores.close()
            verdict_stores.close()
        await reader.close()

    app.on_before_shutdown.connect(cast(Any, _close_stores))  # faust's stub wants a signal= parameter

    return counters


@dataclass
class _Answer:
    """One event's answer from one index batch: the tables it probed here, its earliest match."""

    tables: list[int] = field(default_factory=list)
    earliest: Ref | None = None

    def add(self, tables: list[int], earlier: list[Ref]) -> None:
        self.tables.extend(tables)
        self.earliest = match.first([*earlier, self.earliest] if self.earliest else earlier)


class VerdictBatch:
    """One partition's share of a verdict batch: states read once, written once at :meth:`save`.

    An event is decided when its gather completes; its first verdict is stored at once and
    its outputs held (:mod:`worker.stream.hold`) until ``lateness_ms`` has passed. A note for a held
    verdict revises it; for a sent one it gives a correction.
    """

    def __init__(
        self, store: VerdictPartition, counters: Counters, hold: Hold, lateness_ms: int, now: int, events_topic: str
    ) -> None:
        self.store = store
        self.events_topic = events_topic
        self.counters = counters
        self.hold = hold
        self.lateness_ms = lateness_ms
        self.now = now
        self.out: list[Output] = []  # sent once this batch's changelog record is acknowledged
        self.held_ids: list[str] = []  # outputs held with this batch's entry, one per id and copy
        self.decided: set[str] = set()  # ids whose first verdict this batch decided
        self.revised: list[str] = []  # held verdicts of earlier batches revised in this one
        self.states: dict[str, Pending | None] = {}
        self.stored: set[str] = set()
        self.published: dict[str, Published | None] = {}
        self.dirty_states: set[str] = set()
        self.dirty_published: set[str] = set()
        self.failed: set[str] = set()  # ids dead-lettered by this batch: their other items are skipped

    def state_of(self, event_id: str) -> Pending | None:
        if event_id not in self.states:
            state = self.store.pending(event_id)
            self.states[event_id] = state
            if state is not None:
                self.stored.add(event_id)
        return self.states[event_id]

    def verdict_of(self, event_id: str) -> Published | None:
        if event_id not in self.published:
            self.published[event_id] = self.store.verdict(event_id)
        return self.published[event_id]

    def is_held(self, event_id: str) -> bool:
        return event_id in self.decided or self.hold.holds(event_id)

    def settle(self, event_id: str, state: Pending) -> None:
        """Keep a gathering state; decide a complete one and hold its outputs."""
        self.states[event_id] = state
        self.dirty_states.add(event_id)
        if not gather.is_complete(state):
            return
        first = gather.decide(state)
        self._set_verdict(event_id, first)
        self.states[event_id] = None
        self.decided.add(event_id)
        self.counters.verdicts += 1
        self.held_ids.extend([event_id] * (1 + state.copies))

    def _set_verdict(self, event_id: str, published: Published) -> None:
        self.published[event_id] = published
        self.dirty_published.add(event_id)

    def item(self, item: dict[str, Any]) -> None:
        kind = item.get("kind")
        event_id = str(item["id"])
        first = self.verdict_of(event_id)
        if kind == "event":
            if first is not None:
                order = int(item["order"])
                if first.answered(order):  # its input read again: the verdict is out, or in the outbox
                    self.counters.replayed += 1
                    return
                self._set_verdict(event_id, replace(first, copies=(*first.copies, order)))
                self.counters.republished += 1
                if self.is_held(event_id):  # goes out with (after) its first verdict, as that is then
                    self.held_ids.append(event_id)
                else:
                    self.out.append(first.output(event_id))
                return
            self.settle(event_id, gather.add_intro(self.state_of(event_id), Intro.from_dict(item)))
        elif kind == "answer":
            if first is not None:
                return  # a re-sent copy's or a replayed probe's answer
            refs = [Ref.from_dict(r) for r in item["earlier"]]
            tables = [int(t) for t in item["tables"]]
            state = gather.add_answer(self.state_of(event_id), int(item["order"]), tables, refs)
            self.settle(event_id, state)
        elif kind == "earlier":
            ref = Ref.from_dict(item["match"])
            if first is None:
                self.settle(event_id, gather.add_note(self.state_of(event_id), ref))
            elif self.is_held(event_id):
                revised = gather.revise(first, ref)
                if revised is not None:
                    self._set_verdict(event_id, revised)
                    if event_id not in self.decided:
                        self.revised.append(event_id)
            else:
                fixed = gather.correct(first, ref)
                if fixed is not None:
                    corrected, correction = fixed
                    self._set_verdict(event_id, corrected)
                    self.counters.corrections += 1
                    self.out.append(("corrections", event_id, correction))
        else:
            log.warning("ignoring an internal message of unknown kind %r", kind)

    def run(self, items: list[dict[str, Any]]) -> tuple[_OutboxEntry | None, HeldEntry | None]:
        """Apply ``items``, write what changed, and put the batch's outbox entries.

        Returns the entry to send once this batch's record is acknowledged (``(key,
        outputs)``, or None), and the entry to hold (or None). Call :meth:`hold_entry` after
        the store's ``take_ops``, which numbers the batch.
        """
        for item in items:
            event_id = str(item.get("id"))
            if event_id in self.failed:
                continue
            try:
                self.item(item)
            except Exception as exc:  # one id's failure is that id's alone
                self.fail(event_id, item.get("order"), exc)
        self.save()
        after_record = (self.store.put_outbox(self.out), self.out) if self.out else None
        held = None
        if self.held_ids:
            outputs = [self._verdict(event_id).output(event_id) for event_id in self.held_ids]
            held = HeldEntry(self.store.put_outbox(outputs), self.now + self.lateness_ms, 0, self.held_ids)
        return after_record, held

    def _verdict(self, event_id: str) -> Published:
        """The verdict this batch holds for an id it decided, revised or republishes."""
        published = self.published[event_id]
        assert published is not None
        return published

    def hold_entry(self, held: HeldEntry | None, seq: int) -> None:
        """Hold this batch's entry, the ``seq``-th batch of its store, and mark revisions."""
        if held is not None:
            held.seq = seq
            self.hold.add(held, {event_id: self._verdict(event_id) for event_id in self.decided})
        for event_id in self.revised:
            self.hold.revise(event_id, self._verdict(event_id), seq)

    def fail(self, event_id: str, order: Any, exc: BaseException) -> None:
        """Dead-letter ``event_id`` and undo what this batch did to it; the store keeps its state before."""
        log.error("verdict stage: event %r failed: %s", event_id, deadletter.failure(exc), exc_info=exc)
        self.failed.add(event_id)
        self.counters.deadlettered += 1
        if event_id in self.decided:
            self.decided.discard(event_id)
            self.counters.verdicts -= 1
        for cache in (self.states, self.published):
            cache.pop(event_id, None)
        self.dirty_states.discard(event_id)
        self.dirty_published.discard(event_id)
        self.held_ids = [i for i in self.held_ids if i != event_id]
        self.revised = [i for i in self.revised if i != event_id]
        self.out = [output for output in self.out if output[1] != event_id]
        self.out.append(
            ("deadletter", event_id, deadletter.for_event("verdict", event_id, order, exc, self.events_topic))
        )

    def save(self) -> None:
        """Write each changed state and verdict once (and log it for the changelog)."""
        for event_id in list(self.dirty_states):
            state = self.states[event_id]
            try:
                if state is not None:
                    self.store.set_pending(event_id, state)
                elif event_id in self.stored:
                    self.store.set_pending(event_id, None)
            except Exception as exc:
                self.fail(event_id, state.intro.order if state and state.intro else None, exc)
        for event_id in list(self.dirty_published):
            record = self.published[event_id]
            try:
                if record is not None:
                    self.store.set_verdict(event_id, record)
            except Exception as exc:
                self.fail(event_id, None if record is None else record.order, exc)
