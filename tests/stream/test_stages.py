"""Each stage's ``process`` on its own, without Kafka: what one batch in gives out.

The stages take plain messages (fingerprint), open RocksDB stores (index, verdict) and give
back what the worker then sends, so one event's path from bytes to verdict runs here as
three calls. The same path on the real broker is tests/stream/test_stream.py.
"""

from __future__ import annotations

import asyncio
import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from topology import codec
from topology.records import Event
from topology.stages import (
    EXACT,
    LOOKUP,
    MARK,
    TABLE,
    Share,
    Topics,
    answer_partition,
    decode_probes,
    encode_probes,
    order_time,
    slot_partition,
    total_order,
)
from worker.cli.deduplicator import Deduplicator
from worker.engine import match
from worker.engine.fingerprint import fingerprint
from worker.engine.sketch import NUMBERS_DIFFER
from worker.settings import Settings
from worker.state.changelog import StoreSet
from worker.state.index import BlockIndex
from worker.state.partition import IndexPartition
from worker.state.verdicts import VerdictPartition
from worker.stream.fingerprint import FingerprintStage, ProbeMessage
from worker.stream.helper import FingerprintHelper
from worker.stream.index import IndexStage
from worker.stream.metrics import Metrics
from worker.stream.routes import routed_each
from worker.stream.verdict import VerdictStage

SETTINGS = Settings(partitions=3, topic_prefix="t")
NOW_S = 1_760_000_000.0
STORY = (
    "The central bank raised its benchmark interest rate by a quarter point on Wednesday, "
    "citing persistent inflation in housing and services, and signalled that further "
    "increases remain possible if price growth does not slow in the coming months."
)
REPOST = STORY + " Read more at example.com/markets/rates"
OTHER = (
    "Heavy rain flooded several districts of the coastal city overnight, closing schools and "
    "two metro lines while emergency crews pumped water from underground car parks."
)


@dataclass(frozen=True)
class Message:
    """What a stage reads of an input record (Faust's message has the same fields)."""

    value: bytes | None
    offset: int
    partition: int = 0
    topic: str = "t.events"
    timestamp: float = NOW_S
    key: bytes | None = None


def event(event_id: str, text: str, offset: int) -> Message:
    return Message(json.dumps({"id": event_id, "text": text}).encode(), offset, timestamp=NOW_S + offset / 1000)


def index_stores(tmp_path: Path) -> dict[int, IndexPartition]:
    plan = SETTINGS.block_plan
    return {p: IndexPartition(tmp_path / f"index-{p}", plan, SETTINGS.retention_ms) for p in range(SETTINGS.partitions)}


def as_messages(fanout_shares: dict[int, list[Share]], intros: dict[int, Any]) -> dict[int, list[ProbeMessage]]:
    return {p: [(shares, list(intros[p].values()))] for p, shares in fanout_shares.items()}


def test_fingerprint_fans_an_event_out_to_a_slot_per_table_routed_to_its_bucket() -> None:
    story = STORY + " " + OTHER  # longer than a short text: in the tables
    out = FingerprintStage(SETTINGS).process([event("a", story, 7)])
    slots = [slot for shares in out.shares.values() for share in shares for slot in share.slots]
    tables = len(SETTINGS.block_plan.tables)
    assert out.accepted == 1 and out.dead == []
    assert all(len(shares) == 1 for shares in out.shares.values()), "one share an event and partition"
    assert sorted(t for t, _, kind in slots if kind == TABLE) == list(range(tables))
    assert all(
        part == slot_partition(slot, SETTINGS.partitions)
        for part, shares in out.shares.items()
        for share in shares
        for slot in share.slots
    )
    [(part, intros)] = [(part, intros) for part, intros in out.intros.items() if intros]
    [intro] = intros.values()
    assert intro["id"] == "a" and intro["expected"] == len(slots)
    assert intro["event"]["text"] == story
    assert part in out.shares  # the intro rides with one of the event's own shares


def test_a_short_text_probes_its_exact_keys_and_no_table() -> None:
    out = FingerprintStage(SETTINGS).process([event("a", STORY, 7)])
    slots = [slot for shares in out.shares.values() for share in shares for slot in share.slots]
    fp = fingerprint(STORY, SETTINGS)
    assert fp.bands and not fp.in_tables
    assert sorted(key for _, key, kind in slots if kind == EXACT) == sorted(fp.exact_keys)
    assert sorted(key for _, key, kind in slots if kind == LOOKUP) == sorted(fp.lookups)
    assert sorted(key for _, key, kind in slots if kind == MARK) == sorted(fp.marks)
    assert fp.marks, "a short text over 36 letters and digits is stored under its narrow lead"
    assert len(slots) == len(fp.exact_keys) + len(fp.lookups) + len(fp.marks)


def test_fingerprint_dead_letters_what_it_refuses_and_fans_out_the_rest() -> None:
    batch = [
        Message(b"{not json", 1, key=b"post-1"),
        Message(None, 2),
        Message(json.dumps({"id": "no-text"}).encode(), 3),
        event("ok", STORY, 4),
    ]
    out = FingerprintStage(SETTINGS).process(batch)
    assert out.accepted == 1
    letters = [codec.loads(raw) for raw in out.dead]
    assert [(d["offset"], d["stage"]) for d in letters] == [(1, "fingerprint"), (2, "fingerprint"), (3, "fingerprint")]
    assert "null" in letters[1]["reason"] and "text" in letters[2]["reason"]
    assert [d.get("id") for d in letters] == [None, None, "no-text"], "named when its id was valid"
    assert [d.get("key") for d in letters] == ["post-1", None, None], "and its record's key, if it had one"
    assert {intro["id"] for intros in out.intros.values() for intro in intros.values()} == {"ok"}


def test_a_text_whose_fingerprint_failed_is_dead_lettered_with_the_reason_and_the_batch_goes_on() -> None:
    stage = FingerprintStage(SETTINGS)
    parsed = stage.parse([event("broken", OTHER, 1), event("ok", STORY, 2)])
    out = stage.fan_out_all(parsed, ["PanicException: index out of bounds", fingerprint(STORY, SETTINGS)])
    [letter] = [codec.loads(raw) for raw in out.dead]
    assert (letter["offset"], letter["stage"]) == (1, "fingerprint")
    assert letter["reason"] == "internal error: PanicException: index out of bounds"
    assert out.accepted == 1
    assert {intro["id"] for intros in out.intros.values() for intro in intros.values()} == {"ok"}


def test_routes_made_in_the_helper_give_the_shares_the_stage_makes_itself() -> None:
    """The helper process sends each fingerprint back routed; the worker's shares and intros
    must be those it would make from the bare fingerprint."""
    stage = FingerprintStage(SETTINGS)
    texts = [STORY + " " + OTHER, STORY, "ok then", "https://example.com/only-a-link"]
    parsed = stage.parse([event(f"e{i}", text, i) for i, text in enumerate(texts)])
    helped = stage.fan_out_all(parsed, routed_each(parsed.texts, SETTINGS))
    bare = stage.fan_out_all(parsed, [fingerprint(text, SETTINGS) for text in parsed.texts])
    assert helped.accepted == bare.accepted == len(texts)
    assert dict(helped.shares) == dict(bare.shares) and dict(helped.intros) == dict(bare.intros)
    assert [list(intros) for intros in helped.intros.values()] == [list(intros) for intros in bare.intros.values()]


def run_index(stage: IndexStage, stores: dict[int, IndexPartition], *events: Message) -> list[dict[str, Any]]:
    out = FingerprintStage(SETTINGS).process(list(events))
    result = stage.process(stores, as_messages(out.shares, out.intros))
    assert result.dead == []
    return [item for items in result.replies.values() for item in items]


def test_index_answers_a_repost_with_the_earlier_story_and_the_story_with_nothing(tmp_path: Path) -> None:
    stage, stores = IndexStage(SETTINGS, "t.events"), index_stores(tmp_path)
    first = run_index(stage, stores, event("story", STORY, 1), event("other", OTHER, 2))
    assert all(item["earlier"] == [] for item in first if item["kind"] == "answer")
    second = run_index(stage, stores, event("repost", REPOST, 3))
    earlier = {ref["id"] for item in second if item["kind"] == "answer" for ref in item["earlier"]}
    assert earlier == {"story"}


def test_index_notes_a_later_event_when_an_earlier_one_arrives_after_it(tmp_path: Path) -> None:
    """Partitions race: the repost (later in the total order) is indexed first; the story's
    arrival then tells the repost about it instead of answering the story with a later event."""
    stage, stores = IndexStage(SETTINGS, "t.events"), index_stores(tmp_path)
    fingerprint = FingerprintStage(SETTINGS)
    story, repost = fingerprint.process([event("story", STORY, 1)]), fingerprint.process([event("repost", REPOST, 2)])
    stage.process(stores, as_messages(repost.shares, repost.intros))
    replies = stage.process(stores, as_messages(story.shares, story.intros)).replies
    items = [item for items in replies.values() for item in items]
    notes = [item for item in items if item["kind"] == "earlier"]
    assert notes and {(n["id"], n["match"]["id"]) for n in notes} == {("repost", "story")}
    assert all(item["earlier"] == [] for item in items if item["kind"] == "answer")
    assert all(
        part == answer_partition("repost", SETTINGS.partitions)
        for part, its in replies.items()
        for i in its
        if i in notes
    )


def test_index_dead_letters_one_failing_event_and_answers_the_others(tmp_path: Path) -> None:
    stage, stores = IndexStage(SETTINGS, "t.events"), index_stores(tmp_path)
    good = FingerprintStage(SETTINGS).process([event("good", STORY, 1)])
    broken = FingerprintStage(SETTINGS).process([event("broken", OTHER, 2)])
    for shares in broken.shares.values():
        shares[:] = [share._replace(fingerprint=1 << 70) for share in shares]
    messages = as_messages(good.shares, good.intros)
    for part, shares in broken.shares.items():
        messages.setdefault(part, []).append((shares, []))
    result = stage.process(stores, messages)
    assert {codec.loads(raw)["id"] for raw in result.dead} == {"broken"}
    answered = {item["id"] for items in result.replies.values() for item in items if item["kind"] == "answer"}
    assert answered == {"good"}


class RecordingSends:
    """What the verdict stage needs of the worker's sends; records outputs instead of producing."""

    def __init__(self) -> None:
        self.metrics = Metrics()
        self.names = Topics(SETTINGS.topic_prefix)
        self.outputs = {"unique": self.names.unique, "duplicates": self.names.duplicates}
        self.sent: list[tuple[str, bytes, bytes]] = []

    async def output(self, role: str, key: bytes, value: bytes) -> Any:
        self.sent.append((role, key, value))

    def write_failed(self, exc: BaseException) -> None:
        raise AssertionError(f"nothing is written here: {exc}")


def _stage_verdicts(tmp_path: Path, events: list[tuple[str, str]]) -> tuple[dict[str, dict[str, Any]], RecordingSends]:
    """The verdicts the three stages give ``events`` (id, text), one after the other."""
    fingerprint, index = FingerprintStage(SETTINGS), IndexStage(SETTINGS, "t.events")
    istores = index_stores(tmp_path)
    vstores = {
        p: VerdictPartition(tmp_path / f"verdict-{p}", SETTINGS.retention_ms) for p in range(SETTINGS.partitions)
    }
    sends = RecordingSends()
    verdict = VerdictStage(
        SETTINGS, StoreSet(tmp_path / "unused", "t.verdict-changelog", VerdictPartition, None), sends, None
    )
    decided: dict[str, dict[str, Any]] = {}
    for offset, (event_id, text) in enumerate(events):
        out = fingerprint.process([event(event_id, text, offset)])
        replies = index.process(istores, as_messages(out.shares, out.intros)).replies
        result = verdict.process(vstores, dict(replies), now=int(NOW_S * 1000))
        for _part, decider, held in result.decided:
            if held is not None:
                for held_id in held.ids:
                    output = decider.store.verdict(held_id).output(held_id)
                    decided[held_id] = output[2]
                    sends.metrics.sent([output])
    return decided, sends


def test_one_events_path_from_bytes_to_verdict_without_kafka(tmp_path: Path) -> None:
    decided, sends = _stage_verdicts(tmp_path, [("story", STORY), ("other", OTHER), ("repost", REPOST)])
    assert decided["story"]["verdict"] == "unique"
    assert decided["other"]["verdict"] == "unique"
    assert decided["repost"]["verdict"] == "duplicate"
    assert decided["repost"]["duplicate_of"] == "story"
    assert sends.metrics.verdicts == 3


def test_a_resent_id_is_counted_and_a_changed_text_is_told_apart(tmp_path: Path) -> None:
    """A re-sent id gets its first verdict again; with another text, that text is never decided:
    the operator is told (a counter, and a warning at most once a minute)."""
    events = [("story", STORY), ("other", OTHER), ("story", STORY), ("story", OTHER + " Updated.")]
    decided, sends = _stage_verdicts(tmp_path, events)
    assert decided["story"]["verdict"] == "unique" and decided["story"]["text"] == STORY
    assert (sends.metrics.republished, sends.metrics.resent_changed) == (2, 1)


def test_an_id_resent_before_its_first_copy_is_decided_is_counted_too(tmp_path: Path) -> None:
    """Both copies in one batch: the second intro reaches the verdict stage before the first
    copy's answers decide it, and is counted (and warned of) as a re-send of a decided id is."""
    fingerprint, index = FingerprintStage(SETTINGS), IndexStage(SETTINGS, "t.events")
    vstores = {
        p: VerdictPartition(tmp_path / f"verdict-{p}", SETTINGS.retention_ms) for p in range(SETTINGS.partitions)
    }
    sends = RecordingSends()
    verdict = VerdictStage(
        SETTINGS, StoreSet(tmp_path / "unused", "t.verdict-changelog", VerdictPartition, None), sends, None
    )
    batch = [event("a", STORY, 0), event("a", OTHER, 1), event("b", REPOST, 2), event("b", REPOST, 3)]
    out = fingerprint.process(batch)
    replies = index.process(index_stores(tmp_path), as_messages(out.shares, out.intros)).replies
    result = verdict.process(vstores, dict(replies), now=int(NOW_S * 1000))
    held = [held_id for _, _, entry in result.decided if entry is not None for held_id in entry.ids]
    assert sorted(held) == ["a", "a", "b", "b"], "each copy gets the first copy's verdict"
    assert (sends.metrics.republished, sends.metrics.resent_changed) == (2, 1)


def test_an_id_resent_with_another_text_leaves_its_first_text_a_candidate(tmp_path: Path) -> None:
    """The second text is stored apart from the first (the known limit: later events may match
    it), not over it: a later copy of the first text is still its duplicate, as in scan."""
    events = [("story", STORY), ("story", OTHER), ("repost", REPOST)]
    decided, _ = _stage_verdicts(tmp_path, events)
    assert decided["story"]["text"] == STORY and decided["repost"]["duplicate_of"] == "story"
    with BlockIndex(tmp_path / "scan", SETTINGS.block_plan) as store:
        dedup = Deduplicator(store, SETTINGS)
        scanned = [dedup.decide(Event(i, text, ts=int(NOW_S * 1000))) for i, text in events]
    assert scanned[2].duplicate_of == "story"


SHORT_POSTS = [
    ("post", "Flood warning for the river valley tonight"),
    ("stranger", "Great game tonight"),
    ("slip", "RT @news: Flood warnign for the river valley tonight"),
    ("cut", "Flood warning for the river val…"),
    ("zh", "这家店的服务态度非常好，下次还会再来"),
    ("zh-slip", "【转】这家店的服务态度非常好，下次还会在来"),
    ("bus", "Route 12 bus to Easton delayed by 15 minutes, next departure 9:30."),
    ("bus-other", "Route 12 bus to Easton delayed by 25 minutes, next departure 9:30."),
]


def test_short_posts_get_the_verdicts_scan_gives_them(tmp_path: Path) -> None:
    decided, _ = _stage_verdicts(tmp_path / "stream", SHORT_POSTS)
    with BlockIndex(tmp_path / "scan", SETTINGS.block_plan) as store:
        dedup = Deduplicator(store, SETTINGS)
        scanned = {i: dedup.decide(Event(i, text, ts=int(NOW_S * 1000) + n)) for n, (i, text) in enumerate(SHORT_POSTS)}
    expected = {"slip": "post", "cut": "post", "zh-slip": "zh"}
    assert {i: v.duplicate_of for i, v in scanned.items() if v.duplicate_of} == expected
    assert {i: v["duplicate_of"] for i, v in decided.items() if v["duplicate_of"]} == expected


def test_a_probes_message_keeps_which_keys_are_looked_up_only() -> None:
    sketch = b"\x01\x02"
    shares = [
        Share("a", 5, 7, 99, sketch, ((0, 11, TABLE), (10, 12, EXACT), (11, 13, LOOKUP))),
        Share("b", 6, 8, 98, sketch, ((11, 14, LOOKUP),)),
    ]
    decoded = [s for raw in encode_probes(shares) for s in decode_probes(raw)[0]]
    assert decoded == shares
    assert shares[0].tables == [0] and shares[0].exact_keys == [12] and shares[0].looked_up == [12, 13]
    assert Share.from_dict(shares[1].to_dict()) == shares[1]
    marked = Share("c", 7, 9, 97, sketch, ((10, 12, EXACT), (12, 15, MARK)))
    assert [s for raw in encode_probes([marked]) for s in decode_probes(raw)[0]] == [marked]
    assert marked.exact_keys == [12, 15] and marked.looked_up == [12] and marked.exact_read == [12, 15]
    wire = marked.to_dict()
    assert wire["slots"] == [[10, 12, EXACT], [12, 15, EXACT]] and wire["marks"] == [12], (
        "a worker before marks reads a mark as an exact key, not as a kind it refuses"
    )
    # tables, stored, looked up, read, answered: what the index stage takes of each share
    assert shares[0].kinds() == ([0], [12], [12, 13], [12, 13], [0, 10, 11])
    assert shares[1].kinds() == ([], [], [14], [14], [11])
    assert marked.kinds() == ([], [12, 15], [12], [12, 15], [10, 12])


def test_a_long_post_is_stored_under_its_marks_and_a_short_cut_finds_it_there(tmp_path: Path) -> None:
    """A mark is stored under, never looked up: the cut of 10-15 characters that looks it up
    finds the post, and the post's own probe does not read it."""
    post = "中华人民共和国国务院新闻办公室今天上午举行新闻发布会，介绍今年前三季度国民经济运行情况。"
    fp = fingerprint(post, SETTINGS)
    assert fp.marks and not set(fp.marks) & set(fp.probe_keys)
    stage, stores = IndexStage(SETTINGS, "t.events"), index_stores(tmp_path)
    run_index(stage, stores, event("post", post, 1))
    under_marks = {c.entry.event_id for store in stores.values() for c in store.exact_candidates(0, fp.marks)}
    assert under_marks == {"post"}
    second = run_index(stage, stores, event("cut", post[:12] + "…", 2))
    assert {ref["id"] for item in second if item["kind"] == "answer" for ref in item["earlier"]} == {"post"}


def test_a_probe_item_of_a_worker_before_shares_reads_as_a_share_of_one_slot() -> None:
    item = {"t": 11, "key": 13, "id": "a", "order": 5, "ts": 7, "fp": 99, "sketch": "AQI=", "exact": True}
    assert Share.from_dict(item | {"lookup": True}) == Share("a", 5, 7, 99, b"\x01\x02", ((11, 13, LOOKUP),))
    assert Share.from_dict(item).slots == ((11, 13, EXACT),)
    assert Share.from_dict(item | {"exact": False}).tables == [11]


def test_inner_edges_find_a_post_under_a_header_and_are_never_stored(tmp_path: Path) -> None:
    post = "再次表示疑问：这样的酒店上怎么会有这么高的分数，"
    copy = "10月28日 一只猫 发布\n再次表示疑问：这样的洒店上怎么会有这么高的分数，总之对此宾馆印象极差。"
    a, b = fingerprint(post, SETTINGS), fingerprint(copy, SETTINGS)
    assert not set(a.exact_keys) & set(b.exact_keys), "only an inner edge of the copy can find the post"
    stage, stores = IndexStage(SETTINGS, "t.events"), index_stores(tmp_path)
    run_index(stage, stores, event("post", post, 1))
    second = run_index(stage, stores, event("copy", copy, 2))
    assert {ref["id"] for item in second if item["kind"] == "answer" for ref in item["earlier"]} == {"post"}
    under_lookups = {c.entry.event_id for store in stores.values() for c in store.exact_candidates(0, b.lookups)}
    assert under_lookups == {"post"}, "the copy is stored under its own keys only"


def test_an_event_whose_share_of_a_partition_is_lookups_alone_is_answered(tmp_path: Path) -> None:
    # Which partitions an event's keys reach is its keys' hashes: this text's happen to leave
    # one partition its lookups alone (another text was needed when the short keys changed).
    text = "真是让人郁闷，当当的速度真是慢的让人崩溃，12月10日发货到12月26日还没收到，半个月了都"
    out = FingerprintStage(SETTINGS).process([event("a", text, 1)])
    shares = [share for mine in out.shares.values() for share in mine]
    assert any(not share.exact_keys and not share.tables for share in shares), "a partition gets lookups alone"
    items = run_index(IndexStage(SETTINGS, "t.events"), index_stores(tmp_path), event("a", text, 1))  # no dead letter
    answered = sorted(t for item in items if item["kind"] == "answer" for t in item["tables"])
    assert answered == sorted(slot for share in shares for slot in share.answered)


def test_check_finds_what_process_would_and_stores_nothing(tmp_path: Path) -> None:
    """``/check``'s share of one partition: the index stage's matching, without its write."""
    fingerprint, index = FingerprintStage(SETTINGS), IndexStage(SETTINGS, "t.events")
    stores = index_stores(tmp_path)
    out = fingerprint.process([event("story", STORY, 0)])
    index.process(stores, as_messages(out.shares, out.intros))
    before = {p: store.index.entry_count for p, store in stores.items()}
    raw = codec.dumps({"id": "check", "text": REPOST})
    _, shares = asyncio.run(fingerprint.fan_out(raw, 0, 1, NOW_S + 1, FingerprintHelper(SETTINGS).fingerprints))
    found = []
    for part, share in shares.items():
        earliest, candidates = index.check(stores[part], share)
        found.append(earliest)
        assert all(c["id"] == "story" and c["verified"] and c["in_window"] for c in candidates)
    best = match.first(ref for ref in found if ref is not None)
    assert best is not None and best.id == "story"
    assert {p: store.index.entry_count for p, store in stores.items()} == before


def test_the_verdict_stage_expires_verdicts_behind_the_window_a_slice_at_a_time(tmp_path: Path) -> None:
    _stage_verdicts(tmp_path, [("story", STORY), ("other", OTHER)])
    stores = [VerdictPartition(tmp_path / f"verdict-{p}", SETTINGS.retention_ms) for p in range(SETTINGS.partitions)]
    owner = next(s for s in stores if s.verdict("story") is not None)
    story = owner.verdict("story")
    assert story is not None
    later = order_time(story.order) + SETTINGS.retention_ms + 2 * owner.bucket_ms
    owner.set_verdict("late", story._replace(order=total_order(later, 0, 0)))  # a window and two buckets later
    unused = StoreSet(tmp_path / "unused", "t.verdict-changelog", VerdictPartition, None)
    stage = VerdictStage(SETTINGS, unused, RecordingSends(), None)
    stage.last_batch = 100.0  # a batch just ended
    stage.expire(stores)
    assert owner.verdict("story") is None and owner.verdict("late") is not None
    owner.set_verdict("story", story)
    stage.last_batch = 100.5  # within a second of the last slice: none now
    stage.expire(stores)
    assert owner.verdict("story") is not None
    for store in stores:
        store.close()


def test_check_says_why_a_candidate_is_refused(tmp_path: Path) -> None:
    """A report of the same template with other numbers is a candidate ``/check`` shows, refused
    for its numbers (the index stage itself leaves such candidates unread)."""
    fingerprint, index = FingerprintStage(SETTINGS), IndexStage(SETTINGS, "t.events")
    stores = index_stores(tmp_path)
    out = fingerprint.process([event("bus", SHORT_POSTS[6][1], 0)])
    index.process(stores, as_messages(out.shares, out.intros))
    raw = codec.dumps({"id": "check", "text": SHORT_POSTS[7][1]})
    _, shares = asyncio.run(fingerprint.fan_out(raw, 0, 1, NOW_S + 1, FingerprintHelper(SETTINGS).fingerprints))
    shown = [c for part, share in shares.items() for c in index.check(stores[part], share)[1]]
    assert shown and all(c["id"] == "bus" and not c["verified"] for c in shown)
    assert {c["refused"] for c in shown} == {NUMBERS_DIFFER}


def test_an_event_older_than_the_window_is_answered_counted_late_and_not_stored(tmp_path: Path) -> None:
    """Late: older than the retention window behind the newest event the partitions stored. It
    still gets its answers (a verdict), but a later copy cannot match it, and the worker counts it."""
    stage, stores = IndexStage(SETTINGS, "t.events"), index_stores(tmp_path)
    out = FingerprintStage(SETTINGS).process([event("story", STORY, 1)])
    assert stage.process(stores, as_messages(out.shares, out.intros)).late == 0
    old_ts = int(NOW_S * 1000) - 2 * SETTINGS.retention_ms
    late = Message(json.dumps({"id": "old", "text": OTHER, "ts": old_ts}).encode(), 2, timestamp=NOW_S + 0.002)
    out = FingerprintStage(SETTINGS).process([late])
    result = stage.process(stores, as_messages(out.shares, out.intros))
    assert result.late == 1
    assert {item["id"] for items in result.replies.values() for item in items if item["kind"] == "answer"} == {"old"}
    again = run_index(stage, stores, event("again", OTHER, 3))
    assert all(item["earlier"] == [] for item in again if item["kind"] == "answer"), "the late event was not stored"
