"""The verdict store on a real RocksDB: what a restore finds in the outbox, and what it sends again."""

from __future__ import annotations

from pathlib import Path

from rocksdict import AccessType, Options, Rdict

from topology import codec
from topology.changelog import decode_ops
from topology.codec import encode_chunks
from topology.stages import answer_item, note_item, order_time
from topology.verdicts import Intro, Output, Published, Ref
from worker.state.verdicts import VerdictPartition
from worker.stream import gather
from worker.stream.hold import Hold
from worker.stream.metrics import Metrics
from worker.stream.verdict_batch import VerdictBatch

RETENTION_MS = 7 * 86_400_000


def published(event_id: str, text: str) -> Published:
    intro = Intro(event_id, 10, 1000, "00ff", 1, {"id": event_id, "text": text})
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
    ((key, value),) = store.take_ops()
    assert key.startswith("o:") and text.encode() not in bytes(value)
    assert store.outbox()[0][1] == [("unique", "a", first.value)]
    store.close()


LATENESS_MS = 20


def intro_item(event_id: str, order: int) -> dict[str, object]:
    return Intro(event_id, order, 1000, "00ff", 1, {"id": event_id, "text": event_id}).to_dict()


def batch(
    store: VerdictPartition, hold: Hold, now: int, items: list[dict[str, object]]
) -> tuple[list[Output], list[list[object]]]:
    """One partition's verdict batch as the stage runs it: (outputs sent after its record, changelog ops)."""
    decider = VerdictBatch(store, Metrics(), hold, LATENESS_MS, now, "t.events")
    after_record, held = decider.run(items)
    ops = store.take_ops()
    decider.hold_entry(held, store.taken)
    return (after_record[1] if after_record else []), ops


def due(store: VerdictPartition, hold: Hold, now: int) -> list[tuple[str, str, object]]:
    """What the hold hands to the outbox at ``now``: (topic, id, duplicate_of)."""
    entries = hold.take_due(now, store.settled, store.verdict)
    return [
        (role, event_id, value.get("duplicate_of")) for _, outputs, _ in entries for role, event_id, value in outputs
    ]


EARLIER = Ref("w", 5, 2, 0.9).to_dict()


def test_a_verdict_is_stored_when_decided_and_sent_after_its_hold_and_its_record(tmp_path: Path) -> None:
    store, hold = VerdictPartition(tmp_path / "v", RETENTION_MS), Hold()
    out, ops = batch(store, hold, 0, [intro_item("x", 50), answer_item("x", 50, [0], [])])
    assert out == [] and store.verdict("x") is not None
    assert not any(str(key).startswith("p:") for key, _ in ops)  # decided in one batch: no gather state written
    assert due(store, hold, LATENESS_MS) == []  # its record is not acknowledged yet
    store.settled_through(store.taken)
    assert due(store, hold, LATENESS_MS - 1) == []  # its hold has not run out
    assert due(store, hold, LATENESS_MS) == [("unique", "x", None)]
    assert due(store, hold, 10 * LATENESS_MS) == []  # handed over once
    store.close()


def test_a_note_during_the_hold_revises_the_verdict_and_a_later_one_corrects_it(tmp_path: Path) -> None:
    store, hold = VerdictPartition(tmp_path / "v", RETENTION_MS), Hold()
    batch(
        store,
        hold,
        0,
        [intro_item("x", 50), answer_item("x", 50, [0], []), intro_item("y", 60), answer_item("y", 60, [0], [])],
    )
    store.settled_through(store.taken)
    out, _ = batch(store, hold, 10, [note_item("x", 50, EARLIER)])
    assert out == []  # nothing was sent, so nothing to correct
    assert due(store, hold, LATENESS_MS) == []  # the entry waits for the record of the revision
    store.settled_through(store.taken)
    assert due(store, hold, LATENESS_MS) == [("duplicates", "x", "w"), ("unique", "y", None)]
    out, _ = batch(store, hold, LATENESS_MS + 1, [note_item("y", 60, EARLIER)])
    assert [(role, event_id) for role, event_id, _ in out] == [("corrections", "y")]
    store.close()


def test_a_copy_of_a_held_id_goes_out_after_its_first_verdict_and_the_same(tmp_path: Path) -> None:
    store, hold = VerdictPartition(tmp_path / "v", RETENTION_MS), Hold()
    batch(store, hold, 0, [intro_item("x", 50), answer_item("x", 50, [0], [])])
    out, _ = batch(store, hold, 5, [intro_item("x", 70)])  # a producer retry of x
    assert out == []
    batch(store, hold, 10, [note_item("x", 50, EARLIER)])
    store.settled_through(store.taken)
    assert due(store, hold, LATENESS_MS) == [("duplicates", "x", "w")]
    assert due(store, hold, LATENESS_MS + 5) == [("duplicates", "x", "w")]
    store.close()


def test_a_restore_sends_held_verdicts_as_stored_and_replayed_notes_correct_them(tmp_path: Path) -> None:
    live, hold = VerdictPartition(tmp_path / "live", RETENTION_MS), Hold()
    _, completed = batch(live, hold, 0, [intro_item("x", 50), answer_item("x", 50, [0], [])])
    _, revised = batch(live, hold, 10, [note_item("x", 50, EARLIER)])
    live.close()
    # Only the first record reached Kafka: x was never sent (it waited for the second), so
    # the next owner sends it as first decided, and the replayed note corrects it.
    first = VerdictPartition(tmp_path / "first", RETENTION_MS)
    first.apply(completed)
    assert [(role, event_id) for _, outputs in first.outbox() for role, event_id, _ in outputs] == [("unique", "x")]
    out, _ = batch(first, Hold(), 30, [note_item("x", 50, EARLIER)])
    assert [(role, value["duplicate_of"]) for role, _, value in out] == [("corrections", "w")]
    first.close()
    # Both records reached Kafka: the entry goes out revised, its topic included.
    both = VerdictPartition(tmp_path / "both", RETENTION_MS)
    both.apply(completed)
    both.apply(revised)
    sent = [output for _, outputs in both.outbox() for output in outputs]
    assert [(role, value["duplicate_of"]) for role, _, value in sent] == [("duplicates", "w")]
    both.close()


def test_an_id_whose_stored_state_is_unreadable_is_dead_lettered_and_its_batch_goes_on(tmp_path: Path) -> None:
    """A value written before the parse limits existed (or damaged) fails to decode on read:
    that id is dead-lettered with the stage and the reason, every other id of the batch
    gets its verdict, and nothing of the failed id is written."""
    store, hold = VerdictPartition(tmp_path / "v", RETENTION_MS), Hold()
    too_deep = "[" * 5000 + "]" * 5000  # more than any decoder takes back
    store.apply([["v:bad", too_deep], ["p:worse", too_deep]])
    counters = Metrics()
    decider = VerdictBatch(store, counters, hold, LATENESS_MS, 0, "t.events")
    items = [
        intro_item("bad", 70),
        intro_item("good", 80),
        answer_item("good", 80, [0], []),
        answer_item("worse", 90, [0], []),
        answer_item("bad", 70, [0], []),  # skipped: its id already failed in this batch
    ]
    after_record, held = decider.run(items)
    ops = store.take_ops()
    assert held is not None and held.ids == ["good"]
    assert after_record is not None
    dead = {event_id: value for role, event_id, value in after_record[1] if role == "deadletter"}
    assert set(dead) == {"bad", "worse"}
    assert dead["bad"]["stage"] == "verdict" and "RecursionError" in dead["bad"]["reason"]
    assert (dead["bad"]["topic"], dead["bad"]["partition"], dead["bad"]["offset"]) == ("t.events", 0, 70)
    counters.sent(after_record[1])  # what the outbox reports once the broker acknowledged it
    published = store.verdict("good")
    assert published is not None
    counters.sent([published.output("good")])
    assert counters.verdicts == 1 and counters.deadletters == {"internal_error": 2}
    expires = f"e:{order_time(published.order) // store.bucket_ms:012d}:good"  # the id's entry for expiry
    assert {str(key) for key, _ in ops} == {"v:good", expires, after_record[0], held.key}
    store.close()


def test_an_input_read_again_publishes_nothing_and_a_new_copy_publishes_once(tmp_path: Path) -> None:
    """At-least-once delivery reads an input again after a crash; its verdict is out (or in
    the outbox) already. A re-sent copy (a new input) gets the verdict, once however often
    it is read."""
    store, hold = VerdictPartition(tmp_path / "v", RETENTION_MS), Hold()
    batch(store, hold, 0, [intro_item("x", 50), answer_item("x", 50, [0], [])])
    store.settled_through(store.taken)
    due(store, hold, 10 * LATENESS_MS)
    replayed, _ = batch(store, hold, 100, [intro_item("x", 50)])
    assert replayed == []
    copy, _ = batch(store, hold, 200, [intro_item("x", 70)])
    assert [(role, event_id) for role, event_id, _ in copy] == [("unique", "x")]
    again, _ = batch(store, hold, 300, [intro_item("x", 70), intro_item("x", 50)])
    assert again == []
    store.close()


def test_a_changelog_written_before_values_were_inlined_still_restores(tmp_path: Path) -> None:
    """Records logged each value as a JSON string of its JSON; an upgraded worker restores them."""
    first = published("a", 'a text with "quotes" and \\ backslashes')
    old_style = [["v:a", codec.dumps(first.to_dict()).decode()]]
    new_style = VerdictPartition(tmp_path / "live", RETENTION_MS)
    new_style.set_verdict("a", first)
    logged = decode_ops(encode_chunks(new_style.take_ops())[0])
    new_style.close()
    for ops in (old_style, logged):
        restored = VerdictPartition(tmp_path / f"restored-{len(str(ops))}", RETENTION_MS)
        restored.apply(ops)
        assert restored.verdict("a") == first
        restored.close()
    assert isinstance(logged[0][1], dict)  # inline: the text is escaped once


def test_a_store_opened_again_and_again_keeps_two_old_info_logs(tmp_path: Path) -> None:
    """Each open rolls RocksDB's info LOG to a LOG.old file; a worker restarted for months
    left one per restart in every verdict store."""
    for _ in range(5):
        VerdictPartition(tmp_path / "v", RETENTION_MS).close()
    assert len(list((tmp_path / "v").glob("LOG.old*"))) <= 2


def _stored_keys(path: Path) -> set[bytes]:
    """What another reader of the database finds in it now (the live store stays open)."""
    db = Rdict(str(path), Options(raw_mode=True), access_type=AccessType.read_only(False))
    try:
        return {bytes(key) for key in db.keys()}
    finally:
        db.close()


def test_a_batch_is_in_the_database_when_taken_and_no_record_lands_before_earlier_writes(tmp_path: Path) -> None:
    """The store writes a batch's changes together: they are readable at once, in the
    database by the time the batch is taken for its changelog record, and a record (the
    changelog checkpoint) is never stored without every write made before it, so a crash
    cannot leave a checkpoint past writes the store lacks."""
    store = VerdictPartition(tmp_path / "v", RETENTION_MS)
    store.set_verdict("a", published("a", "first"))
    assert store.verdict("a") is not None  # read back before any write of the batch
    store.take_ops()
    assert b"v:a" in _stored_keys(tmp_path / "v")
    store.set_verdict("b", published("b", "second"))
    store.put_record("checkpoint", b"7")
    assert {b"v:b", b"r:checkpoint"} <= _stored_keys(tmp_path / "v")
    store.close()
