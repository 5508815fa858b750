"""`neardup topics`, and the worker's check of its topics before it starts.

Every sender computes the partition of a probe or an answer from the partition count it is
configured with (``NEARDUP_PARTITIONS``), not from the topic: a worker that counts otherwise than
the topics (or than its peers) routes an event's shares and answers where nobody gathers them,
and those events get no verdict at all. So the count is checked against the topics first.
"""

from __future__ import annotations

import json
import sys
import time
from typing import Any

from topology.topics import (
    ROUTED,
    TopicSpec,
    create_topics,
    delete_topics,
    describe_topics,
    group_members,
    topics,
)
from worker.settings import Settings


class PartitionMismatch(ValueError):
    """The deployment's topics do not have the partition count this process routes over."""


def declared(settings: Settings) -> list[TopicSpec]:
    return topics(settings.topic_prefix, settings.partitions, settings.replication, settings.retention_ms)


def ensure(settings: Settings) -> list[str]:
    """Create the missing topics; the names of those created."""
    security = settings.connection.kafka_python_security()
    return create_topics(settings.connection.bootstrap, declared(settings), **security)


def _miscounted(spec: TopicSpec, row: dict[str, Any]) -> bool:
    """A routed topic that exists with another partition count than declared: the workers'."""
    return spec.role in ROUTED and row["exists"] and row["partitions"] != spec.partitions


def check_routing(settings: Settings) -> None:
    """Refuse to run over topics whose partition count is not the one this worker routes over."""
    routed = [spec for spec in declared(settings) if spec.role in ROUTED]
    security = settings.connection.kafka_python_security()
    rows = describe_topics(settings.connection.bootstrap, routed, **security)
    wrong = [row for spec, row in zip(routed, rows, strict=True) if _miscounted(spec, row)]
    if wrong:
        found = ", ".join(f"{row['name']} has {row['partitions']}" for row in wrong)
        raise PartitionMismatch(
            f"{found} partitions, but this worker routes over {settings.partitions} (--partitions, "
            f"NEARDUP_PARTITIONS): every worker must use the count its topics have, or events get no "
            f"verdict; start it with --partitions {wrong[0]['partitions']}"
        )
    short = [(spec, row) for spec, row in zip(routed, rows, strict=True) if _keeps_too_little(spec, row)]
    if short:
        spec, row = short[0]
        days = int(row["config"]["retention.ms"]) / 86_400_000 - 1
        raise ValueError(
            f"{spec.name} keeps {days:.10g} days of state and a day more (retention.ms={row['config']['retention.ms']}), "
            f"but NEARDUP_RETENTION_DAYS={settings.retention_days:.10g}: a store restored from it would miss "
            f"events; a deployment keeps the retention it was created with (start this worker with "
            f"NEARDUP_RETENTION_DAYS={days:.10g}, or start a new deployment)"
        )


def _keeps_too_little(spec: TopicSpec, row: dict[str, Any]) -> bool:
    """A changelog that deletes records younger than the window this worker restores."""
    kept, needed = row["config"].get("retention.ms"), spec.config.get("retention.ms")
    return spec.role == "changelog" and kept is not None and needed is not None and int(kept) < int(needed)


def run(settings: Settings, action: str, force: bool = False) -> int:
    """create, describe or delete; 1 when a declared topic is missing or a routed one has another
    partition count than ``settings.partitions``, or when ``delete`` finds workers running (the
    deployment's verdicts and state go with the topics: ``force`` deletes them anyway)."""
    security = settings.connection.kafka_python_security()
    if action == "record-settings":
        return _record_settings(settings)
    if action == "delete":
        group = settings.group
        running = [] if force else group_members(settings.connection.bootstrap, group, **security)
        if running:
            print(
                f"neardup topics: {len(running)} {'worker' if len(running) == 1 else 'workers'} of {group} "
                f"running ({', '.join(running)}); "
                "stop them first, or delete anyway with --force",
                file=sys.stderr,
            )
            return 1
        for name in delete_topics(settings.connection.bootstrap, settings.topic_prefix, **security):
            print(f"deleted {name}")
        return 0
    if action == "create":
        for name in ensure(settings):
            print(f"created {name}")
    specs = declared(settings)
    missing, mismatched = 0, []
    for spec, row in zip(specs, describe_topics(settings.connection.bootstrap, specs, **security), strict=True):
        if not row["exists"]:
            print(f"{row['name']:<40} missing")
            missing += 1
            continue
        config = " ".join(f"{k}={v}" for k, v in sorted(row["config"].items()))
        wrong = _miscounted(spec, row)
        mismatched += [row["name"]] if wrong else []
        flag = f" (configured: {spec.partitions})" if wrong else ""
        print(
            f"{row['name']:<40} partitions={row['partitions']}{flag} replication={row['replication']} {config}".rstrip()
        )
    if missing:  # a script's check that a deployment's topics are there
        print(
            f"neardup topics: {missing} of {len(specs)} topics missing: `neardup topics create` makes them",
            file=sys.stderr,
        )
    else:
        _print_thresholds(settings)
    if mismatched:
        print(
            f"neardup topics: {', '.join(mismatched)} have another partition count than {settings.partitions} "
            "(--partitions, NEARDUP_PARTITIONS); workers must route over the count the topics have",
            file=sys.stderr,
        )
    return 1 if missing or mismatched else 0


def _print_thresholds(settings: Settings) -> None:
    """The thresholds the deployment decides by, as its workers agreed on them: an operator's
    answer to why a worker of others was refused."""
    from worker.cli import deployment

    topic = f"{settings.topic_prefix}.settings"
    _, decided, _ = deployment.read(settings, topic, "")
    if decided.values is None:
        print(f"{topic}: no thresholds recorded yet (the first worker records its own)")
        return
    since = f", recorded by a start {time.time() - decided.written_ms / 1000:.0f} s ago" if decided.written_ms else ""
    print(f"{topic}: deciding with {json.dumps(decided.values, sort_keys=True)}{since}")


def _record_settings(settings: Settings) -> int:
    """Record these settings as the deployment's when it records none; 1 when it records others."""
    from worker.cli import deployment

    ensure(settings)
    recorded = deployment.record(settings)
    why = deployment.differences(recorded, settings)
    if why:
        print(
            f"neardup topics: deployment {settings.topic_prefix} already records {' and '.join(why)}", file=sys.stderr
        )
        return 1
    print(f"{settings.topic_prefix}.settings: {json.dumps(recorded, sort_keys=True)}")
    return 0
