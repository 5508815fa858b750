"""Which worker owns a partition, and asking it over HTTP: one URL serves a group of workers.

Each worker's Kafka client id is its URL (``NEARDUP_WEB_URL``), so the consumer group's own
description, which the broker keeps and gives to anyone who asks, says which URL holds which
partitions (:meth:`Peers.owner`; ``kafka-consumer-groups --describe`` shows the same). Faust's
table routing shares URLs through its own partition assignor, which Faust only uses for apps
with tables (ours keep their state in their own stores), and it routes by Faust's key
partitioner, while our ids and buckets pick partitions by our own hashes
(:func:`topology.stages.answer_partition`, :func:`~topology.stages.slot_partitions`).
"""

from __future__ import annotations

import time
from typing import Any

import aiohttp
from aiokafka.admin import AIOKafkaAdminClient
from aiokafka.coordinator.protocol import ConsumerProtocolMemberAssignment

_TIMEOUT_S = 5.0
_OWNERS_FRESH_S = 2.0  # a description this young is reused; a miss reads it again at once


class PeerError(Exception):
    """A request another worker could not answer; ``status`` is what this worker answers."""

    def __init__(self, status: int, reason: str) -> None:
        super().__init__(reason)
        self.status = status
        self.reason = reason


class Peers:
    """The other workers of the group, by the partitions they own."""

    def __init__(self, client: dict[str, Any], group: str, own_url: str) -> None:
        self._client = client  # aiokafka's connection keywords (worker.stream.connection)
        self.group = group
        self.own_url = own_url.rstrip("/")
        self._session: aiohttp.ClientSession | None = None
        self._admin: AIOKafkaAdminClient | None = None
        self._owners: dict[tuple[str, int], str] = {}
        self._read_at = 0.0

    async def owner(self, topic: str, partition: int) -> str | None:
        """URL of the worker the group gave ``topic[partition]`` at its last rebalance."""
        key = (topic, partition)
        if key not in self._owners or time.monotonic() - self._read_at > _OWNERS_FRESH_S:
            self._owners = await self._describe()
            self._read_at = time.monotonic()
        return self._owners.get(key)

    async def _describe(self) -> dict[tuple[str, int], str]:
        if self._admin is None:
            self._admin = AIOKafkaAdminClient(**self._client)
            await self._admin.start()
        owners: dict[tuple[str, int], str] = {}
        for response in await self._admin.describe_consumer_groups([self.group]):
            for group in response.groups:
                for member in group[5]:  # (member_id, client_id, client_host, metadata, assignment)
                    url, assignment = str(member[1]).rstrip("/"), member[4]
                    if not assignment:
                        continue
                    for topic, partitions in ConsumerProtocolMemberAssignment.decode(assignment).assignment:
                        owners.update(((topic, p), url) for p in partitions)
        return owners

    async def call(self, url: str, path: str, body: Any = None) -> Any:
        """GET ``path`` (or POST ``body`` as JSON) on worker ``url``; its JSON, or :class:`PeerError`."""
        if self._session is None:
            self._session = aiohttp.ClientSession(timeout=aiohttp.ClientTimeout(total=_TIMEOUT_S))
        method = "GET" if body is None else "POST"
        try:
            async with self._session.request(method, url + path, json=body) as response:
                data = await response.json(content_type=None)
                if response.status >= 400:
                    raise PeerError(response.status, str(data.get("error", data)))
                return data
        except PeerError:
            raise
        except Exception as exc:
            raise PeerError(503, f"worker {url} did not answer: {type(exc).__name__} {exc}".strip()) from None

    async def close(self) -> None:
        if self._session is not None:
            await self._session.close()
            self._session = None
        if self._admin is not None:
            await self._admin.close()
            self._admin = None
