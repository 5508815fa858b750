"""The verdict store's outbox on a real RocksDB: what a restore finds is what was put and not dropped."""

from __future__ import annotations

from pathlib import Path

from worker import gather
from worker.verdict_store import Output, VerdictPartition

RETENTION_MS = 7 * 86_400_000


def published(event_id: str, text: str) -> gather.Published:
    intro = gather.Intro(event_id, 10, 1000, "00ff", 1, {"id": event_id, "text": text})
    return gather.decide(gather.add_answer(gather.add_intro(None, intro), 10, [0], []))


def test_a_restored_outbox_holds_what_was_put_and_not_dropped_in_order(tmp_path: Path) -> None:
    live = VerdictPartition(tmp_path / "live", RETENTION_MS)
    first = published("a", "上海 news, the whole text")
    live.set_verdict("a", first)
    correction: Output = ("corrections", "b", {"id": "b", "duplicate_of": "a", "previous_verdict": "unique"})
    keys = [
        live.put_outbox([(first.topic, "a", first.value), correction]),
        live.put_outbox([(first.topic, "a", first.value)]),  # a re-sent copy's republished verdict
        live.put_outbox([correction]),
    ]
    assert keys == sorted(keys) and len(set(keys)) == 3
    live.drop_outbox([keys[2]])
    ops = live.take_ops()
    live.close()

    restored = VerdictPartition(tmp_path / "restored", RETENTION_MS)
    restored.apply(ops)
    assert restored.outbox() == [
        (keys[0], [("unique", "a", first.value), correction]),
        (keys[1], [("unique", "a", first.value)]),
    ]
    later = restored.put_outbox([correction])
    assert later > keys[1]  # keys keep their order across a restore
    restored.close()


def test_an_outbox_entry_refers_to_the_stored_verdict_instead_of_copying_its_text(tmp_path: Path) -> None:
    store = VerdictPartition(tmp_path / "v", RETENTION_MS)
    text = "长" * 10_000
    first = published("a", text)
    store.set_verdict("a", first)
    store.take_ops()
    store.put_outbox([(first.topic, "a", first.value)])
    (key, value), = store.take_ops()
    assert key.startswith("o:") and text not in value
    assert store.outbox()[0][1] == [("unique", "a", first.value)]
    store.close()
