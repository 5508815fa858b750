"""Which worker owns a partition, and asking it over HTTP: one URL serves a group of workers.

Faust's partition assignor already shares every member's URL (``canonical_url``, here
``NEARDUP_WEB_URL``) and the partitions each was given, with every member, at each
rebalance; :meth:`Peers.owner` reads that. Faust's own ``route_req`` routes by Faust's key
partitioner, while our ids and buckets pick partitions by our own hashes
(:func:`topology.stages.answer_partition`, :func:`~topology.stages.probe_partition`), so
requests are forwarded here by partition instead.
"""

from __future__ import annotations

from typing import Any

import aiohttp
import faust

_TIMEOUT_S = 5.0


class PeerError(Exception):
    """A request another worker could not answer; ``status`` is what this worker answers."""

    def __init__(self, status: int, reason: str) -> None:
        super().__init__(reason)
        self.status = status
        self.reason = reason


class Peers:
    """The other workers of the group, by the partitions they own."""

    def __init__(self, app: faust.App, own_url: str) -> None:
        self.app = app
        self.own_url = own_url.rstrip("/")
        self._session: aiohttp.ClientSession | None = None

    def owner(self, topic: str, partition: int) -> str | None:
        """URL of the worker the group gave ``topic[partition]`` at the last rebalance."""
        assignor: Any = self.app.assignor
        for url, topics in assignor.external_topics_metadata().items():
            if partition in topics.get(topic, ()):
                return str(url).rstrip("/")
        return None

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
