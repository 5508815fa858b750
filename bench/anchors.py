"""Passthrough jobs that copy ``{p}.events`` to ``{p}.unique``: the anchors of bench/stream.py.

Each is what one process can forward on this box through one client, with the worker's
producer settings (acks from every in-sync replica, linger 2 ms), so the worker's events/s
and CPU an event can be read against each in the same run:

* ``faust``: a Faust agent, one event at a time, ``topic.send`` (what Faust's examples do);
* ``faust-batched``: the same agent taking batches of up to 500 events (``take_events``) and
  sending straight through ``app.producer.send``, as the worker's stages do;
* ``aiokafka``: a bare aiokafka consumer and producer (Faust's own client), batches of up to
  1,000 records, the producer flushed and the offsets committed after each batch;
* ``confluent``: confluent-kafka (librdkafka, C), ``consume(1000)`` and ``produce``, flushed
  and committed after each batch.

Every job prints ``Ready`` once it owns its partitions: bench/stream.py waits for that line.
"""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

KINDS = ("faust", "faust-batched", "aiokafka", "confluent")
_LINGER_MS = 2  # worker/stream/app.py: _PRODUCER_LINGER_S
_BATCH = 500  # events a fingerprint batch takes (worker/stream/worker.py: _TAKE_MAX)
_BARE_BATCH = 1000


def main(kind: str, bootstrap: str, prefix: str, partitions: int, datadir: Path) -> None:
    """Run the ``kind`` job until killed."""
    source, sink, group = f"{prefix}.events", f"{prefix}.unique", f"{prefix}-passthrough"
    if kind in ("faust", "faust-batched"):
        _faust(kind == "faust-batched", bootstrap, source, sink, group, partitions, datadir)
    elif kind == "aiokafka":
        asyncio.run(_aiokafka(bootstrap, source, sink, group))
    elif kind == "confluent":
        _confluent(bootstrap, source, sink, group)
    else:
        raise ValueError(f"unknown passthrough {kind!r}; one of {KINDS}")


def _faust(batched: bool, bootstrap: str, source: str, sink: str, group: str, partitions: int, datadir: Path) -> None:
    import faust

    datadir.mkdir(parents=True, exist_ok=True)
    app = faust.App(
        group,
        broker=f"kafka://{bootstrap}",
        topic_partitions=partitions,
        consumer_auto_offset_reset="earliest",
        producer_linger=_LINGER_MS / 1000,
        web_enabled=False,
        autodiscover=False,
        datadir=str(datadir),
    )
    raw = {"key_type": bytes, "value_type": bytes, "key_serializer": "raw", "value_serializer": "raw"}
    inbox, outbox = app.topic(source, **raw), app.topic(sink, **raw)

    if batched:

        @app.agent(inbox)
        async def copy_batches(stream: faust.StreamT[bytes]) -> None:
            async for events in stream.take_events(_BATCH, within=0.01):
                for event in events:
                    await app.producer.send(sink, event.message.key, event.message.value, None, None, None)

    else:

        @app.agent(inbox)
        async def copy(stream: faust.StreamT[bytes]) -> None:
            async for event in stream.events():
                await outbox.send(key=event.message.key, value=event.value)

    faust.Worker(app, loglevel="info", quiet=True).execute_from_commandline()


async def _aiokafka(bootstrap: str, source: str, sink: str, group: str) -> None:
    from aiokafka import AIOKafkaConsumer, AIOKafkaProducer

    consumer = AIOKafkaConsumer(
        source, bootstrap_servers=bootstrap, group_id=group, enable_auto_commit=False, auto_offset_reset="earliest"
    )
    producer = AIOKafkaProducer(bootstrap_servers=bootstrap, acks="all", linger_ms=_LINGER_MS)
    await consumer.start()
    await producer.start()
    ready = False
    try:
        while True:
            batches = await consumer.getmany(timeout_ms=100, max_records=_BARE_BATCH)
            if not ready and consumer.assignment():
                print("Ready", flush=True)
                ready = True
            if not batches:
                continue
            for records in batches.values():
                for record in records:
                    await producer.send(sink, record.value, key=record.key)
            await producer.flush()
            await consumer.commit()
    finally:
        await producer.stop()
        await consumer.stop()


def _confluent(bootstrap: str, source: str, sink: str, group: str) -> None:
    from confluent_kafka import Consumer, Producer

    consumer = Consumer(
        {
            "bootstrap.servers": bootstrap,
            "group.id": group,
            "enable.auto.commit": False,
            "auto.offset.reset": "earliest",
        }
    )
    producer = Producer({"bootstrap.servers": bootstrap, "acks": "all", "linger.ms": _LINGER_MS})

    def assigned(_consumer: Any, partitions: list[Any]) -> None:
        if partitions:
            print("Ready", flush=True)

    consumer.subscribe([source], on_assign=assigned)
    try:
        while True:
            records = consumer.consume(_BARE_BATCH, timeout=0.1)
            if not records:
                continue
            for record in records:
                if record.error() is None:
                    producer.produce(sink, record.value(), record.key())
                producer.poll(0)
            producer.flush()
            consumer.commit(asynchronous=False)
    finally:
        consumer.close()
