"""Every Kafka topic neardup reads, writes or keeps state in, declared in one place.

The worker, the CLI's ``create-topics`` step, the tests and the docs all read this list, so a
topic's name, partition count and configuration cannot drift between them.
"""

from __future__ import annotations

import time
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any, Literal

from kafka import KafkaAdminClient
from kafka.admin import ConfigResource, ConfigResourceType
from kafka.errors import (
    CoordinatorLoadInProgressError,
    CoordinatorNotAvailableError,
    TopicAlreadyExistsError,
    for_code,
)

Role = Literal["input", "output", "internal", "changelog", "meta"]
# Topics whose partition every sender computes from the count it is configured with: theirs
# must be that count (the changelogs are co-partitioned with the internal topics).
ROUTED: tuple[Role, ...] = ("internal", "changelog")

_COMPACT = "compact"
_COORDINATOR_WAIT_S = 10.0


@dataclass(frozen=True)
class TopicSpec:
    """One topic as neardup needs it to exist; ``config`` holds only topic-level overrides."""

    name: str
    partitions: int
    replication: int = 1
    config: dict[str, str] = field(default_factory=dict)
    compacted: bool = False
    role: Role = "output"
    doc: str = ""

    def __post_init__(self) -> None:
        if self.partitions < 1 or self.replication < 1:
            raise ValueError(f"{self.name}: partitions and replication must be >= 1")
        policy = self.config.get("cleanup.policy")
        if self.compacted and policy is None:
            object.__setattr__(self, "config", {**self.config, "cleanup.policy": _COMPACT})
        elif policy is not None and (_COMPACT in policy.split(",")) != self.compacted:
            raise ValueError(f"{self.name}: compacted={self.compacted} contradicts cleanup.policy={policy}")


_DAY_MS = 86_400_000

# What each topic of a deployment carries, by suffix (``neardup topics`` and the docs show these).
_DOCS = {
    "events": "Texts to filter. The broker stamps each record, so producers' clocks cannot reorder "
    "which of two near-duplicates counts as the original.",
    "unique": "Events with no earlier near-duplicate.",
    "duplicates": "Events judged near-duplicates, with the id of the original they match.",
    "deadletter": "Events that could not be parsed or broke a limit, with the reason.",
    "corrections": "Verdicts revised after an earlier original arrived late through another partition.",
    "probes": "Block-key repartition: per batch, one message per partition its events' block keys "
    "reach, so that every fingerprint sharing a key is probed and stored in one partition.",
    "answers": "Per-event gather of the candidate matches found by each probe.",
    "index-changelog": "Changelog of the block-table index, one record per processed batch and partition "
    "(entries are never rewritten, so compaction would keep everything: old segments are "
    "deleted by time instead); a restarted worker rebuilds its RocksDB state from it.",
    "verdict-changelog": "Changelog of the verdict stage's gather states and first verdicts, one record per "
    "processed batch and partition, so a worker that takes a partition over, or lost its "
    "state directory, replays it before deciding anything.",
    "settings": "The settings the deployment's stores and messages are laid out by (plan, retention, "
    "fingerprint settings), recorded by its first worker, and the thresholds and input limits its "
    "workers decide by, recorded when they change: a worker with others (those: beside running ones) "
    "refuses to start.",
}


def topics(
    prefix: str = "neardup", partitions: int = 4, replication: int = 1, retention_ms: int = 7 * _DAY_MS
) -> list[TopicSpec]:
    """The full topology for one deployment, named ``{prefix}.<suffix>``.

    The changelogs keep ``retention_ms`` plus a day: their records are batches of state
    that expires by event time anyway (``worker/state/index.py``), so deleting old segments keeps the
    broker's disk as flat as the workers' while a restore still sees the whole window.
    """
    changelog_keep = {"retention.ms": str(retention_ms + _DAY_MS), "cleanup.policy": "delete"}
    durable: dict[str, str] = {}
    if replication >= 3:
        # With three or more copies, refusing writes that reach only one of them is what
        # makes acks=all survive the loss of a broker without losing acknowledged verdicts.
        durable["min.insync.replicas"] = "2"

    def spec(suffix: str, role: Role, config: dict[str, str] | None = None, count: int = partitions) -> TopicSpec:
        return TopicSpec(
            name=f"{prefix}.{suffix}",
            partitions=count,
            replication=replication,
            config={**durable, **(config or {})},
            role=role,
            doc=_DOCS[suffix],
        )

    return [
        spec("events", "input", config={"message.timestamp.type": "LogAppendTime"}),
        spec("unique", "output"),
        spec("duplicates", "output"),
        spec("deadletter", "output"),
        spec("corrections", "output"),
        spec("probes", "internal"),
        spec("answers", "internal"),
        spec("index-changelog", "changelog", config=changelog_keep),
        spec("verdict-changelog", "changelog", config=changelog_keep),
        spec(
            "settings",
            "meta",
            config={"retention.ms": "-1", "retention.bytes": "-1", "cleanup.policy": "delete"},
            count=1,
        ),
    ]


def topic_map(
    prefix: str = "neardup", partitions: int = 4, replication: int = 1, retention_ms: int = 7 * _DAY_MS
) -> dict[str, TopicSpec]:
    """``topics()`` keyed by suffix (``"events"``, ``"index-changelog"``, ...) for wiring code."""
    return {spec.name[len(prefix) + 1 :]: spec for spec in topics(prefix, partitions, replication, retention_ms)}


def _admin(bootstrap: str, client_kwargs: dict[str, Any]) -> KafkaAdminClient:
    return KafkaAdminClient(bootstrap_servers=bootstrap, **{"client_id": "neardup-topics", **client_kwargs})


def create_topics(bootstrap: str, specs: Iterable[TopicSpec], **client_kwargs: Any) -> list[str]:
    """Create the missing topics and return their names; topics that already exist are left as they are.

    ``client_kwargs`` go to ``KafkaAdminClient`` (security settings, timeouts).
    """
    wanted = list(specs)
    admin = _admin(bootstrap, client_kwargs)
    try:
        existing = set(admin.list_topics())
        missing = {
            spec.name: {
                "num_partitions": spec.partitions,
                "replication_factor": spec.replication,
                "configs": dict(spec.config),
            }
            for spec in wanted
            if spec.name not in existing
        }
        if not missing:
            return []
        response = admin.create_topics(missing, raise_errors=False)
        created: list[str] = []
        for result in response["topics"]:
            error = for_code(result["error_code"])
            if result["error_code"] == 0:
                created.append(result["name"])
            elif error is not TopicAlreadyExistsError:  # another worker won the race: fine
                raise error(f"creating {result['name']}: {result['error_message']}")
        if created:
            admin.wait_for_topics(created)
        return [spec.name for spec in wanted if spec.name in created]
    finally:
        admin.close()


def describe_topics(bootstrap: str, specs: Iterable[TopicSpec], **client_kwargs: Any) -> list[dict[str, Any]]:
    """What the cluster actually has for each spec, to compare with what was declared.

    Each dict has ``name``, ``exists``, ``partitions``, ``replication`` (None when missing) and
    ``config``: the topic-level overrides set on the broker.
    """
    wanted = list(specs)
    admin = _admin(bootstrap, client_kwargs)
    try:
        metadata = {topic["name"]: topic for topic in admin.describe_topics([spec.name for spec in wanted])}
        present = [spec.name for spec in wanted if metadata.get(spec.name, {}).get("error_code") == 0]
        configs: dict[str, dict[str, Any]] = {}
        if present:
            resources = [ConfigResource(ConfigResourceType.TOPIC, name) for name in present]
            configs = admin.describe_configs(resources)["topic"]
        described: list[dict[str, Any]] = []
        for spec in wanted:
            if spec.name not in present:
                described.append(
                    {"name": spec.name, "exists": False, "partitions": None, "replication": None, "config": {}}
                )
                continue
            partitions = metadata[spec.name]["partitions"]
            described.append(
                {
                    "name": spec.name,
                    "exists": True,
                    "partitions": len(partitions),
                    "replication": min(len(p["replica_nodes"]) for p in partitions),
                    "config": {
                        key: entry["value"]
                        for key, entry in configs.get(spec.name, {}).items()
                        if entry["config_source"] == "DYNAMIC_TOPIC_CONFIG"
                    },
                }
            )
        return described
    finally:
        admin.close()


def existing_topics(bootstrap: str, **client_kwargs: Any) -> set[str]:
    """The names of every topic on the cluster (``client_kwargs`` as for :func:`create_topics`)."""
    admin = _admin(bootstrap, client_kwargs)
    try:
        return set(admin.list_topics())
    finally:
        admin.close()


def group_members(bootstrap: str, group: str, **client_kwargs: Any) -> list[str]:
    """The members of consumer group ``group`` now, each as ``client_id on host`` (none for a
    group that is empty or unknown). A worker's client id is its web address."""
    admin = _admin(bootstrap, client_kwargs)
    try:
        described = _described(admin, group)
    finally:
        admin.close()
    return [
        f"{m.get('client_id', '?')} on {str(m.get('client_host', '?')).lstrip('/')}"
        for m in described.get("members", [])
    ]


def _described(admin: KafkaAdminClient, group: str) -> dict[str, Any]:
    """``group`` described, waiting out a coordinator that is not there yet: a new cluster makes
    its offsets topic at the first group lookup, and answers "not available" meanwhile."""
    deadline = time.monotonic() + _COORDINATOR_WAIT_S
    while True:
        try:
            return dict(admin.describe_groups([group]).get(group, {}))
        except (CoordinatorNotAvailableError, CoordinatorLoadInProgressError):
            if time.monotonic() > deadline:
                raise
            time.sleep(0.5)


def delete_topics(bootstrap: str, prefix: str, **client_kwargs: Any) -> list[str]:
    """Delete one deployment's topics, ``{prefix}.*`` and Faust's own ``{prefix}-worker-*``;
    returns their names. For demos and tests: every verdict and changelog goes with them."""
    admin = _admin(bootstrap, client_kwargs)
    try:
        mine = sorted(t for t in admin.list_topics() if t.startswith((f"{prefix}.", f"{prefix}-worker-")))
        if mine:
            admin.delete_topics(mine)
        return mine
    finally:
        admin.close()
