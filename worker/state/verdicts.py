"""The verdict stage's store for one ``{p}.answers`` partition: gather states and first verdicts.

A plain rocksdict database with three keyspaces, ``p:<id>`` (the :class:`~worker.stream.Pending`
state of an id still gathering), ``v:<id>`` (its :class:`~worker.stream.Published` first
verdict, written when its gather completes, sent or held) and ``o:<seq>`` (a batch's output
records not yet acknowledged by the output topics, :mod:`worker.stream.outbox`). Every write is
also logged as ``[key, value or null]``, the value as the JSON it is rather than a string
of it: escaped a second time, a text of quotes and backslashes doubled and a record
outgrew Kafka's size limit. The stage writes a batch's log as one changelog record
(:mod:`worker.state.changelog`). Restoring replays the log in order, so the last write of a
key wins, as it did live.

With a retention, the database is opened with RocksDB's TTL: records older than the window
(by the time they were written) are removed by compaction, so the seen ids behind replay
idempotency do not grow without bound. The window is the same as the index's, so an id is
remembered as long as it can still be a candidate.
"""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

from rocksdict import AccessType, Options, Rdict, ReadOptions

from topology import codec
from topology.verdicts import Output, Pending, Published

_PENDING = "p:"
_VERDICT = "v:"
_RECORD = "r:"
_OUTBOX = "o:"
_SEQ_DIGITS = 20

# Output roles whose value is always the id's stored first verdict (corrections are not).
_VERDICT_ROLES = ("unique", "duplicates")


class VerdictPartition:
    """One partition's gather states and verdicts, with the writes since the last :meth:`take_ops`."""

    def __init__(self, path: Path, retention_ms: int | None = None) -> None:
        options = Options(raw_mode=True)
        options.create_if_missing(True)
        access = AccessType.with_ttl(max(1, retention_ms // 1000)) if retention_ms else AccessType.read_write()
        self._db = Rdict(str(path), options, access_type=access)
        self._ops: list[list[Any]] = []
        # Gather states are read back many times while an event gathers; keeping the live
        # ones decoded saves a JSON parse per read (they are few: published ones are deleted).
        self._states: dict[str, Pending] = {}
        self._last_seq: int | None = None
        # Batches taken for the changelog (take_ops) and how many of them it acknowledged:
        # a held verdict goes out only once the records it depends on are in (worker.stream.hold).
        self.taken = 0
        self.settled = 0
        # Outbox values that did not decode at the last outbox() (key, raw value, reason).
        self.unreadable: list[tuple[str, bytes, str]] = []

    def _get(self, key: str) -> bytes | None:
        value = self._db.get(key.encode())
        return None if value is None else bytes(value)

    def _set(self, key: str, raw: bytes | None) -> None:
        if raw is None:
            self._db.delete(key.encode())
        else:
            self._db.put(key.encode(), raw)

    def _write(self, key: str, raw: bytes | None) -> None:
        """Write, and log the write (the value inline, as JSON)."""
        self._set(key, raw)
        self._ops.append([key, None if raw is None else codec.Raw(raw)])

    def pending(self, event_id: str) -> Pending | None:
        state = self._states.get(event_id)
        if state is None:
            raw = self._get(_PENDING + event_id)
            if raw is None:
                return None
            state = self._states[event_id] = Pending.from_dict(codec.loads(raw))
        return state

    def set_pending(self, event_id: str, state: Pending | None) -> None:
        if state is None:
            self._states.pop(event_id, None)
        else:
            self._states[event_id] = state
        self._write(_PENDING + event_id, None if state is None else codec.dumps(state.to_dict()))

    def settled_through(self, taken: int) -> None:
        """The changelog acknowledged every batch up to the ``taken``-th (its records' order)."""
        self.settled = max(self.settled, taken)

    def verdict(self, event_id: str) -> Published | None:
        raw = self._get(_VERDICT + event_id)
        return None if raw is None else Published.from_dict(codec.loads(raw))

    def set_verdict(self, event_id: str, published: Published) -> None:
        self._write(_VERDICT + event_id, codec.dumps(published.to_dict()))

    def _items(self, prefix: str) -> list[tuple[str, bytes]]:
        """Every record of one keyspace (``prefix`` ends in ':'), in key order."""
        read = ReadOptions()
        read.set_iterate_upper_bound(prefix[:-1].encode() + bytes([ord(":") + 1]))
        it = self._db.iter(read)
        it.seek(prefix.encode())
        items: list[tuple[str, bytes]] = []
        while it.valid():
            items.append((bytes(it.key()).decode(), bytes(it.value())))
            it.next()
        del it
        return items

    def put_outbox(self, outputs: list[Output]) -> str:
        """Keep a batch's outputs until they are acknowledged; returns their outbox key.

        A verdict is kept as a reference to the id's stored first verdict, whose value it
        always is: a unique verdict carries the event's text, which the changelog then need
        not carry twice. Keys sort in the order outputs were put, across restarts too: a key
        is the wall clock in nanoseconds, or one past the last key when the clock has not
        moved past it.
        """
        if self._last_seq is None:
            entries = self._items(_OUTBOX)
            self._last_seq = int(entries[-1][0][len(_OUTBOX) :]) if entries else 0
        self._last_seq = max(time.time_ns(), self._last_seq + 1)
        key = f"{_OUTBOX}{self._last_seq:0{_SEQ_DIGITS}d}"
        kept = [[role, event_id, None if role in _VERDICT_ROLES else value] for role, event_id, value in outputs]
        self._write(key, codec.dumps({"outputs": kept}))
        return key

    def outbox(self) -> list[tuple[str, list[Output]]]:
        """Every outbox entry, oldest first: outputs that may not have reached their topics.

        A verdict is sent as its stored first verdict is now, topic included: a held verdict
        revised after its entry was put (worker.stream.hold) goes out revised. One whose stored
        verdict is gone (expired with the retention) is left out. A value that no longer
        decodes is left out too and listed in :attr:`unreadable` (key, raw value, reason), so
        the stage dead-letters it instead of failing its restore on every start.
        """
        entries: list[tuple[str, list[Output]]] = []
        self.unreadable = []
        for key, raw in self._items(_OUTBOX):
            outputs: list[Output] = []
            try:
                kept = codec.loads(raw)["outputs"]
            except Exception as exc:
                self.unreadable.append((key, raw, f"{type(exc).__name__}: {exc}"))
                continue
            for role, event_id, value in kept:
                if value is not None:
                    outputs.append((str(role), str(event_id), dict(value)))
                    continue
                try:
                    published = self.verdict(str(event_id))
                except Exception as exc:
                    self.unreadable.append((_VERDICT + str(event_id), b"", f"{type(exc).__name__}: {exc}"))
                    continue
                if published is not None:
                    outputs.append(published.output(str(event_id)))
            entries.append((key, outputs))
        return entries

    def published(self, key: str) -> None:
        """Delete an outbox entry whose deletion the changelog already holds (an exactly-once
        transaction wrote it with the entry's records), so it is not logged again."""
        self._set(key, None)

    def drop_outbox(self, keys: list[str]) -> None:
        """Forget entries whose outputs every output topic has acknowledged."""
        for key in keys:
            self._write(key, None)

    def take_ops(self) -> list[Any]:
        """The writes since the last call: one batch, the :attr:`taken`-th, for the changelog."""
        ops, self._ops = self._ops, []
        self.taken += 1
        return ops

    def apply(self, ops: list[Any]) -> None:
        self._states.clear()
        self._last_seq = None
        for key, value in ops:
            self._set(str(key), _stored(value))

    def get_record(self, key: str) -> bytes | None:
        return self._get(_RECORD + key)

    def put_record(self, key: str, value: bytes) -> None:
        self._db.put((_RECORD + key).encode(), bytes(value))

    def close(self) -> None:
        self._db.close()


def _stored(value: Any) -> bytes | None:
    """A logged value as the bytes to store: inline JSON (decoded, or still raw from this
    process), or a string holding the JSON, as records were logged before."""
    if value is None:
        return None
    if isinstance(value, codec.Raw):
        return bytes(value)
    if isinstance(value, str):
        return value.encode()
    return codec.dumps(value)
