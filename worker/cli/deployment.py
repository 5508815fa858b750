"""The deployment's settings record: every worker of a deployment lays out stores and messages alike.

A worker's stores, and the shares it sends its peers, are laid out by its block plan, its
retention and the settings that shape a text's fingerprint, sketch and keys. Its own stores say
what they were built with (:func:`worker.state.layout.misfit`), but a worker without stores had
nothing to compare with: started with another plan beside its peers, it sent shares keyed by
other tables, and copies of what they had stored passed as unique. So a deployment records its
settings once, in ``{p}.settings``: the first worker writes its own, and every worker compares
before it joins the group.

The thresholds a verdict is decided by (and the input limits past which an event is
dead-lettered instead) store nothing and may change between runs, but two workers running at
once with different ones decided an event by whichever held its partitions (and ``/check``
named a match in one line that it refused in the next). So the topic also keeps the
deployment's latest ones, each change a record of its own (``decision``): a worker of others
is refused while others run, and records its own when none does. Every start records them
(changed or not), naming the record it builds on, so that two workers starting at once cannot
both win: of the records built on the same one, the first written counts, and the others' workers
are refused. A worker is in its group only some seconds after its check, so a worker of other
thresholds is also refused while the latest start is younger than ``_JOINING_S``.
"""

from __future__ import annotations

import json
import shutil
import sys
import time
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from topology.topics import group_members
from worker.engine.blocks import Plan
from worker.settings import Settings
from worker.state.layout import features_differ, plan_differs

_KEY = b"settings"
_DECISION_KEY = b"decision"
_READ_S = 10.0
# How long a worker may take from its check to joining its group (making its app, starting
# Faust), with a wide margin for a loaded box: a record younger than this names a worker that
# may be running unseen by the group.
_JOINING_S = 30.0


@dataclass(frozen=True)
class Decision:
    """The deployment's thresholds as its settings topic last recorded them: their values (None:
    none recorded), the offset of the record that set them (-1: none), and when it was written."""

    values: dict[str, Any] | None
    offset: int = -1
    written_ms: int = 0


class DeploymentMismatch(ValueError):
    """This worker's settings are not the ones its deployment records."""


def record_of(settings: Settings) -> dict[str, Any]:
    """What the deployment keeps of a worker's settings, and an id of this deployment: its
    topics deleted and made again under the same names are another deployment, with another id."""
    return {
        "plan": json.loads(settings.block_plan.to_json()),
        "retention_ms": settings.retention_ms,
        "features": settings.stored_features,
        "decision": settings.decision,
        "id": uuid.uuid4().hex,
    }


def differences(recorded: dict[str, Any], settings: Settings) -> list[str]:
    """Each recorded setting that ``settings`` changes, as ``recorded, not this worker's``."""
    plan = Plan.from_json(json.dumps(recorded["plan"]))
    why = [
        f"{w} (NEARDUP_PLAN, NEARDUP_K, NEARDUP_EXPECTED_FINGERPRINTS)" for w in plan_differs(plan, settings.block_plan)
    ]
    if recorded["retention_ms"] != settings.retention_ms:
        days = recorded["retention_ms"] / 86_400_000
        why.append(f"NEARDUP_RETENTION_DAYS={days:.10g}, not {settings.retention_days:.10g}")
    why.extend(features_differ(recorded["features"], settings.stored_features))
    return why


def check(settings: Settings, has_stores: bool) -> dict[str, Any]:
    """Refuse to start when the deployment records other settings than this worker's. With
    none recorded, record this worker's; but refuse when the deployment already holds state
    (made before the record) and this worker has no stores to vouch for its settings: let in,
    a worker of other fingerprint settings decided beside its peers with nothing to say so.
    Returns the deployment's record (its id names this deployment: :func:`stores_of_another`)."""
    topic = f"{settings.topic_prefix}.settings"
    recorded, decided, holds_state = read(settings, topic, f"{settings.topic_prefix}.index-changelog")
    if recorded is None and holds_state and not has_stores:
        raise DeploymentMismatch(
            f"deployment {settings.topic_prefix} holds state but records no settings (it was made before "
            f"{topic} was), and this worker has no stores to show them: start first a worker that kept "
            "its state directory, which records them, or, with none left, record the deployment's "
            "settings with `neardup topics record-settings` run with them"
        )
    if recorded is None:
        recorded, decided = _written(settings, topic)
    _compare(settings, topic, recorded)
    agree_on_decision(settings, topic, decided)
    return recorded


def agree_on_decision(settings: Settings, topic: str, current: Decision) -> None:
    """Refuse thresholds (and input limits) other than those of the deployment's running or
    starting workers; else record this worker's as the deployment's, built on ``current`` (as
    read before), and refuse them when another worker's record built on it was written first
    (module docstring). A deployment that records none (made before the record kept them)
    records this worker's."""
    mine = settings.decision
    changed = _changed(mine, current.values)
    if changed:
        _refuse_beside_others(settings, current, changed)
    values = mine if changed or current.values is None else {**current.values, **mine}
    written = _write(settings, topic, {"decision": values, "after": current.offset}, _DECISION_KEY)
    first = _successor(topic, _records(settings, topic), current.offset)
    lost = {} if first is None or first.offset == written else _changed(mine, first.values)
    if first is not None and lost:
        differ = _listed(lost, first.values or {})
        raise DeploymentMismatch(
            f"another worker of deployment {settings.topic_prefix} started at the same moment deciding with "
            f"{differ}, and recorded them first: workers that decide apart make a verdict depend on which one "
            "holds an event's partitions; start this one with theirs"
        )
    if changed and current.values is not None:
        was = ", ".join(f"{name}={current.values[name]}" for name in changed)
        print(
            f"neardup worker: deployment {settings.topic_prefix} decides with new settings (was {was})", file=sys.stderr
        )


def _refuse_beside_others(settings: Settings, current: Decision, changed: dict[str, Any]) -> None:
    """Refuse ``changed`` thresholds while workers of the current ones run, or may be joining:
    one that started less than ``_JOINING_S`` ago is not in the group yet."""
    running = group_members(
        settings.connection.bootstrap, settings.group, **settings.connection.kafka_python_security()
    )
    age_s = time.time() - current.written_ms / 1000
    if not running and age_s >= _JOINING_S:
        return
    differ = _listed(changed, current.values or {})
    why = (
        f"the running workers of deployment {settings.topic_prefix} decide with {differ} ({', '.join(running)})"
        if running
        else f"a worker of deployment {settings.topic_prefix} started {age_s:.0f} s ago deciding with {differ}, "
        "and may still be joining its group"
    )
    raise DeploymentMismatch(
        f"{why}: workers that decide apart make a verdict depend on which one holds an event's partitions; "
        "start this one with theirs, or stop them all and start them again with the new values (a worker "
        f"killed a moment ago stays in the group until its session times out, a starting one counts for "
        f"{_JOINING_S:.0f} s)"
    )


def _changed(mine: dict[str, Any], current: dict[str, Any] | None) -> dict[str, Any]:
    """Those of ``mine`` that ``current`` records otherwise: only what both name (a worker of a
    later neardup may agree on more)."""
    return {name: value for name, value in mine.items() if (current or {}).get(name, value) != value}


def _listed(changed: dict[str, Any], current: dict[str, Any]) -> str:
    return " and ".join(f"{name}={current[name]}, not {value}" for name, value in changed.items())


def stores_of_another(path: Path, prefix: str, deployment_id: str | None) -> str | None:
    """Remove a worker's stores (under its state directory ``path``) made for another
    deployment: one of the same topic names, deleted and made again (restored from where their
    checkpoints pointed in the new changelogs, they answered with the deleted deployment's
    events), or another prefix's sharing the directory. Rebuilt from this deployment's
    changelogs, they hold its events. Which deployment they were of, when removed. The
    directory keeps the prefix and id of the deployment it belongs to; one from before the ids
    (or a deployment recorded before them, ``deployment_id`` None) cannot be told apart and is
    kept (a store copying another prefix's changelog is still rebuilt in its restore)."""
    if deployment_id is None:
        return None
    mark = path / "deployment"
    mine = f"{prefix} {deployment_id}"
    belongs = mark.read_text(encoding="utf-8").split() if mark.exists() else mine.split()
    other = None
    if belongs != mine.split() and (path / "stores").exists():
        shutil.rmtree(path / "stores")
        was = belongs[0] if len(belongs) == 2 else prefix
        other = (
            f"deployment {was}, which shares this state directory"
            if was != prefix
            else f"an earlier deployment {prefix} (its topics were deleted and made again)"
        )
    mark.write_text(mine + "\n", encoding="utf-8")
    return other


def record(settings: Settings) -> dict[str, Any]:
    """The deployment's settings record, written from ``settings`` when there is none."""
    topic = f"{settings.topic_prefix}.settings"
    return read(settings, topic, "")[0] or _written(settings, topic)[0]


def _written(settings: Settings, topic: str) -> tuple[dict[str, Any], Decision]:
    """Write ``settings`` as the record, then read back the first record: of two first
    workers at once, the first written wins. The deployment's thresholds as read back too."""
    mine = record_of(settings)
    _write(settings, topic, mine)
    first, decided, _ = read(settings, topic, "")
    return first or mine, decided


def _compare(settings: Settings, topic: str, recorded: dict[str, Any]) -> None:
    why = differences(recorded, settings)
    if why:
        raise DeploymentMismatch(
            f"deployment {settings.topic_prefix} runs with {' and '.join(why)} (recorded in {topic} by its "
            "first worker): a deployment keeps the settings it was created with; start this worker with "
            "them (new ones need a new deployment, with its own NEARDUP_TOPIC_PREFIX)"
        )


def read(settings: Settings, topic: str, changelog: str) -> tuple[dict[str, Any] | None, Decision, bool]:
    """The first settings record of ``topic`` (None: there is none), the thresholds recorded
    since, and whether ``changelog`` holds any record (False when none is named)."""
    with _consumer(settings) as consumer:
        records = _records_of(consumer, topic)
        holds_state = _holds_state(consumer, changelog) if changelog else False
    if not records:
        return None, Decision(None), holds_state
    first = _parsed(topic, records[0].value)
    return first, _latest(topic, records, first), holds_state


def _latest(topic: str, records: list[Any], first: dict[str, Any]) -> Decision:
    """The thresholds in force: the first record's, then each record built on those in force
    (the first written of those built on the same one), or naming none (an older neardup's)."""
    # The first record's thresholds are no start's: its worker's start is the record after it.
    current = Decision(first.get("decision"), records[0].offset)
    for record in records[1:]:  # one pass: the topic keeps a record of every start
        current = _built_on(topic, record, current.offset) or current
    return current


def _successor(topic: str, records: list[Any], base: int) -> Decision | None:
    """The first thresholds record built on the record at offset ``base``."""
    return next((d for r in records if r.offset > base and (d := _built_on(topic, r, base))), None)


def _built_on(topic: str, record: Any, base: int) -> Decision | None:
    """``record``'s thresholds if it is a thresholds record built on the record at offset ``base``
    (or naming none: an older neardup's, which took the latest)."""
    if record.key != _DECISION_KEY:
        return None
    values, after = _decision(topic, record.value)
    return Decision(values, record.offset, record.timestamp) if after is None or after == base else None


@contextmanager
def _consumer(settings: Settings) -> Iterator[Any]:
    from kafka import KafkaConsumer

    consumer = KafkaConsumer(enable_auto_commit=False, group_id=None, **settings.connection.kafka_python())
    try:
        yield consumer
    finally:
        consumer.close()


def _records(settings: Settings, topic: str) -> list[Any]:
    """Every record of the settings topic, oldest first."""
    with _consumer(settings) as consumer:
        return _records_of(consumer, topic)


def _records_of(consumer: Any, topic: str) -> list[Any]:
    from kafka import TopicPartition

    tp = TopicPartition(topic, 0)
    start, stop = consumer.beginning_offsets([tp])[tp], consumer.end_offsets([tp])[tp]
    if start >= stop:
        return []
    consumer.assign([tp])
    consumer.seek(tp, start)
    records: list[Any] = []
    deadline = time.monotonic() + _READ_S
    while consumer.position(tp) < stop and time.monotonic() < deadline:
        for batch in consumer.poll(timeout_ms=500).values():
            records.extend(batch)
    if not records:
        raise TimeoutError(f"could not read the settings record of {topic} within {_READ_S:g} s")
    return records


def _holds_state(consumer: Any, changelog: str) -> bool:
    from kafka import TopicPartition

    logs = [TopicPartition(changelog, p) for p in sorted(consumer.partitions_for_topic(changelog) or ())]
    first, end = consumer.beginning_offsets(logs), consumer.end_offsets(logs)
    return any(end[tp] > first[tp] for tp in logs)


def _decision(topic: str, raw: bytes | None) -> tuple[dict[str, Any], int | None]:
    """A thresholds record's values, and the offset of the record it was built on (None: an
    older neardup's, which named none)."""
    record = _json_object(raw)
    if record is not None and isinstance(record.get("decision"), dict):
        after = record.get("after")
        return dict(record["decision"]), after if isinstance(after, int) else None
    raise ValueError(f"a thresholds record of {topic} is not neardup's; is the topic another program's?")


def _parsed(topic: str, raw: bytes | None) -> dict[str, Any]:
    record = _json_object(raw)
    if record is not None and {"plan", "retention_ms", "features"} <= record.keys():
        return record
    raise ValueError(f"the first record of {topic} is not a neardup settings record; is the topic another program's?")


def _json_object(raw: bytes | None) -> dict[str, Any] | None:
    """A record's value as a JSON object, or None when it is none (another program's record)."""
    try:
        record = json.loads(raw or b"")
    except ValueError:
        return None
    return record if isinstance(record, dict) else None


def _write(settings: Settings, topic: str, record: dict[str, Any], key: bytes = _KEY) -> int:
    """Append ``record`` and return its offset."""
    from kafka import KafkaProducer

    producer = KafkaProducer(acks="all", **settings.connection.kafka_python())
    try:
        sent = producer.send(topic, key=key, value=json.dumps(record, sort_keys=True).encode())
        return int(sent.get(timeout=_READ_S).offset)
    finally:
        producer.close()
