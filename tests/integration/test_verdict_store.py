"""The verdict store on a real RocksDB: what a restore finds in the outbox, and what it sends again."""

from __future__ import annotations

from pathlib import Path

from topology.stages import answer_item, note_item
from worker import gather
from worker.agents import Counters, VerdictBatch
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


LATENESS_MS = 20


def intro_item(event_id: str, order: int) -> dict[str, object]:
    return gather.Intro(event_id, order, 1000, "00ff", 1, {"id": event_id, "text": event_id}).to_dict()


def batch(
    store: VerdictPartition, held: set[str], now: int, items: list[dict[str, object]]
) -> tuple[list[Output], list[Output], list[list[object]]]:
    """One partition's verdict batch as the stage runs it: (outputs sent after its record,
    outputs sent at once, changelog ops)."""
    at_once, after_record = VerdictBatch(store, Counters(), held, LATENESS_MS, now).run(items)
    return (after_record[1] if after_record else []), (at_once[1] if at_once else []), store.take_ops()


def sent_at_once(
    tmp_path: Path,
) -> tuple[VerdictPartition, set[str], list[list[object]], list[Output], list[list[object]]]:
    """x completes at t=0, that record is acknowledged, and x is sent at once when its hold
    runs out: (live store, held ids, completion ops, sent outputs, release ops)."""
    live = VerdictPartition(tmp_path / "live", RETENTION_MS)
    held: set[str] = set()
    _, _, completed = batch(live, held, 0, [intro_item("x", 50), answer_item("x", 50, [0], [])])
    live.settled_through(live.taken)
    _, sent, released = batch(live, held, LATENESS_MS, [])
    assert [role for role, _, _ in sent] == ["unique"]
    return live, held, completed, sent, released


def test_a_held_verdict_goes_out_at_once_only_when_its_state_is_in_the_changelog(tmp_path: Path) -> None:
    store = VerdictPartition(tmp_path / "v", RETENTION_MS)
    held: set[str] = set()
    # x completes at t=0 and is held; y completes at t=0 too.
    completed = [intro_item("x", 50), answer_item("x", 50, [0], []), intro_item("y", 60), answer_item("y", 60, [0], [])]
    out, settled_out, _ = batch(store, held, 0, completed)
    assert (out, settled_out, held) == ([], [], {"x", "y"})
    store.settled_through(store.taken)  # that batch's record is acknowledged
    # y gets a note at t=10, so its latest state is in no acknowledged record yet.
    earlier = gather.Ref("w", 5, 2, 0.9).to_dict()
    batch(store, held, 10, [note_item("y", 60, earlier)])
    out, settled_out, _ = batch(store, held, LATENESS_MS, [])
    assert [(role, event_id) for role, event_id, _ in settled_out] == [("unique", "x")]
    assert [(role, event_id) for role, event_id, _ in out] == [("duplicates", "y")]
    store.close()


def test_a_verdict_sent_at_once_is_in_the_outbox_if_its_record_lands_and_it_does_not(tmp_path: Path) -> None:
    live, _, completed, sent, released = sent_at_once(tmp_path)
    live.close()
    # The release's record is in Kafka, the output never got there: the restore must send it.
    restored = VerdictPartition(tmp_path / "restored", RETENTION_MS)
    restored.apply(completed)
    restored.apply(released)
    assert [outputs for _, outputs in restored.outbox()] == [sent]
    assert restored.complete_ids() == set()  # decided: nothing left to release again
    restored.close()


def test_a_restore_releases_a_verdict_sent_before_its_record_the_same_despite_a_replayed_note(tmp_path: Path) -> None:
    # The hold runs out, then a batch brings a late note: x is sent at once, then corrected.
    live, held, durable_ops, sent, _ = sent_at_once(tmp_path)
    late_note = note_item("x", 50, gather.Ref("w", 5, 2, 0.9).to_dict())
    corrections, _, _ = batch(live, held, LATENESS_MS + 1, [late_note])
    assert [role for role, _, _ in corrections] == ["corrections"]
    live.close()
    # The worker dies before those two batches' records are in Kafka; the next owner replays
    # the acknowledged record, then the note again, in one batch after the hold ran out.
    restored = VerdictPartition(tmp_path / "restored", RETENTION_MS)
    restored.apply(durable_ops)
    again: set[str] = restored.complete_ids()
    out, settled_out, _ = batch(restored, again, LATENESS_MS + 100, [late_note])
    assert settled_out == sent
    assert out == corrections
    restored.close()
