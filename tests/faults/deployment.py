"""A fresh deployment (topic prefix, topics, state directory) for one fault test."""

from __future__ import annotations

import random
import threading
import time
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path

from tests.stream_helpers import OutputReader, WorkerProcess, ids_of, real_feed, send_lines, worker_env
from topology.stages import Topics
from topology.topics import create_topics, topics
from worker.settings import Settings


@dataclass
class Deployment:
    """One neardup deployment on a broker: its names, settings and worker environment."""

    bootstrap: str
    prefix: str
    partitions: int
    tmp: Path
    env: dict[str, str]

    @property
    def names(self) -> Topics:
        return Topics(self.prefix)

    @property
    def settings(self) -> Settings:
        return Settings.from_env(self.env)

    @property
    def group(self) -> str:
        return f"{self.prefix}-worker"


@dataclass
class Membership:
    """A stream offered to a deployment while workers join and leave: its reader, the ids
    it sends, and the workers started (stopped at the end of :func:`membership`)."""

    dep: Deployment
    reader: OutputReader
    expected: set[str]
    sender: threading.Thread
    workers: list[WorkerProcess] = field(default_factory=list)

    def join(self, name: str) -> WorkerProcess:
        """Start worker ``name`` and wait until it is ready."""
        worker = WorkerProcess.start(self.dep.env, name, self.dep.tmp)
        self.workers.append(worker)
        worker.wait_ready()
        return worker

    def run_for(self, seconds: float) -> None:
        """Read outputs for ``seconds`` while the stream goes on."""
        end = time.monotonic() + seconds
        while time.monotonic() < end:
            self.reader.poll(200)


@contextmanager
def membership(dep: Deployment, events: int, prefix: str, seed: int, rate: float) -> Iterator[Membership]:
    """``events`` real-feed lines (a fifth near-duplicate variants) to send at ``rate`` a
    second once :attr:`Membership.sender` is started."""
    lines = real_feed(events, prefix, seed=seed, variant_share=0.2)
    reader = OutputReader(dep.bootstrap, dep.names)
    sender = threading.Thread(target=send_lines, args=(dep.bootstrap, dep.names.events, lines, rate))
    live = Membership(dep, reader, ids_of(lines), sender)
    try:
        yield live
    finally:
        for worker in live.workers:
            worker.stop()
        reader.close()


def make_deployment(bootstrap: str, tmp: Path, partitions: int, lateness_ms: int = 20) -> Deployment:
    prefix = f"f{uuid.uuid4().hex[:8]}"
    env = worker_env(bootstrap, prefix, partitions, tmp / "state", lateness_ms)
    create_topics(bootstrap, topics(prefix, partitions, 1))
    return Deployment(bootstrap, prefix, partitions, tmp, env)


def kill_repeatedly(
    dep: Deployment, tmp: Path, reader: OutputReader, kills: int, events: int, seed: int, least_s: float, most_s: float
) -> None:
    """Start a worker and SIGKILL it once it has decided something, ``kills`` times, each run
    living a random ``least_s`` to ``most_s`` more: every kill lands mid-stream, never while joining.

    A run is also killed once it has decided its share of the stream (a random part of
    ``events / (kills + 1)``): how many events a second a worker decides depends on the
    machine and its load, and a fast run must not end the stream before the last kill.
    """
    rng = random.Random(seed)
    for kill in range(kills):
        worker = WorkerProcess.start(dep.env, "victim", tmp)
        try:
            worker.wait_ready()
            before = len(reader.verdicted)
            while len(reader.verdicted) == before:
                assert worker.alive(), worker.cli.tail()
                reader.poll(200)
            deadline = time.monotonic() + rng.uniform(least_s, most_s)
            share = before + int(rng.uniform(0.2, 0.6) * events / (kills + 1))
            while time.monotonic() < deadline and len(reader.verdicted) < share:
                reader.poll(50)
            assert worker.alive(), worker.cli.tail()
            assert len(reader.verdicted) < events, "the stream ended before the last kill"
        finally:
            worker.kill()
        print(
            f"kill {kill + 1}: {len(reader.verdicted) - before} new ids decided by this run, {len(reader.verdicted)}/{events} in all"
        )
