"""A fresh deployment (topic prefix, topics, state directory) for one fault test."""

from __future__ import annotations

import uuid
from dataclasses import dataclass
from pathlib import Path

from tests.stream_helpers import worker_env
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


def make_deployment(bootstrap: str, tmp: Path, partitions: int, lateness_ms: int = 20) -> Deployment:
    prefix = f"f{uuid.uuid4().hex[:8]}"
    env = worker_env(bootstrap, prefix, partitions, tmp / "state", lateness_ms)
    create_topics(bootstrap, topics(prefix, partitions, 1))
    return Deployment(bootstrap, prefix, partitions, tmp, env)
