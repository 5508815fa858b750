"""One worker's Faust declarations: its three agents, timers, web side and rebalance and
shutdown handlers, each a line or two that hands over to :class:`worker.stream.worker.Worker`.

Kept apart from the worker so that an event's path (``worker.py``) reads without Faust's
decorators in between, and so that what a worker subscribes to is one page.
"""

from __future__ import annotations

import logging
from pathlib import Path
from typing import Any, cast

import faust

from worker.settings import Settings
from worker.state.replay import ChangelogReader
from worker.stream.batches import Windows, take_batches
from worker.stream.heap import TRIM_EVERY_S, TRIM_FREE_BYTES, trim
from worker.stream.metrics import Metrics
from worker.stream.transactions import Transactions
from worker.stream.web import install_web
from worker.stream.worker import Worker

log = logging.getLogger("neardup.worker")
_TAKE_MESSAGES = 32  # internal messages (each already a batch) per index or verdict batch


def install(
    app: faust.App,
    settings: Settings,
    datadir: Path,
    reader: ChangelogReader,
    windows: Windows | None = None,
    transactions: Transactions | None = None,
    name: str = "",
) -> Metrics:
    """Declare one worker's agents, timers and rebalance and shutdown handlers on ``app``.

    ``transactions``: publish outputs exactly once (:mod:`worker.stream.transactions`).
    """
    windows = windows or Windows()
    worker = Worker(app, settings, datadir, reader, windows, transactions, name)
    names = worker.names

    def raw_topic(name: str) -> faust.TopicT:
        return app.topic(name, key_type=bytes, value_type=bytes, key_serializer="raw", value_serializer="raw")

    @app.agent(raw_topic(names.events), name="fingerprint")
    async def fingerprint_stage(stream: faust.StreamT[bytes]) -> None:
        await worker.fingerprint_agent(stream)

    @app.agent(raw_topic(names.probes), name="index")
    async def index_stage(stream: faust.StreamT[bytes]) -> None:
        async for batch in take_batches(stream, _TAKE_MESSAGES, lambda: windows.index):
            await worker.guard.run("index", batch, worker.index_batch)

    @app.agent(raw_topic(names.answers), name="verdict")
    async def verdict_stage(stream: faust.StreamT[bytes]) -> None:
        async for batch in take_batches(stream, _TAKE_MESSAGES, lambda: windows.verdict):
            await worker.guard.run("verdict", batch, worker.verdict_batch)

    @app.task
    async def hold_ticks() -> None:
        await worker.hold_ticks()

    @app.timer(interval=10.0, name="counters")
    async def report() -> None:
        log.info("%s", worker.metrics.summary())

    @app.timer(interval=TRIM_EVERY_S, name="trim")
    async def give_back_free_memory() -> None:
        trim(TRIM_FREE_BYTES)

    if settings.web_port:  # without a web server nobody reads the samples

        @app.task
        async def sample() -> None:
            await worker.sampler.run()

        install_web(app, settings, worker.metrics, worker.sampler, worker.inspector)
    else:

        @app.task
        async def watch_topics() -> None:
            await worker.sampler.watch_topics()

    # faust's stubs want a signal= parameter on receivers
    app.on_partitions_assigned.connect(cast(Any, worker.assigned))
    app.on_partitions_revoked.connect(cast(Any, worker.revoked))
    app.on_before_shutdown.connect(cast(Any, worker.close))
    return worker.metrics
