"""The largest and deepest event the worker accepts can be written and read back by every stage.

A record is accepted at parse only if everything downstream can handle it: the internal
messages (probes with the intro riding along, answers), the verdict store on RocksDB and its
changelog, the index store, the output and dead-letter records. The stages do this deep in
the worker's call stack, where a decoder's recursion budget is smaller than at the top of a
test: the round trip runs with most of Python's recursion limit already used.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

import pytest

from topology.changelog import decode_ops, encode_ops
from topology.codec import decode_batch, encode_chunks
from topology.stages import TABLE, Share, answer_item, decode_probes, encode_probes, total_order
from topology.validate import InvalidEvent, parse_event, record_limit
from topology.verdicts import Intro
from worker.engine.blocks import parse_plan
from worker.engine.fingerprint import fingerprint
from worker.engine.match import Entry
from worker.settings import Settings
from worker.state.partition import IndexPartition
from worker.state.verdicts import VerdictPartition
from worker.stream import deadletter, gather
from worker.stream.outbox import encode

SETTINGS = Settings()
KAFKA_DEFAULT_MAX_RECORD = 1_048_588  # the broker's message.max.bytes default
STACK_LEFT = 150  # frames left below the recursion limit while the round trip runs

T = TypeVar("T")


def nested(levels: int) -> Any:
    """A value that adds ``levels`` levels, alternating arrays and objects."""
    value: Any = [1]
    for level in range(levels - 1):
        value = [value] if level % 2 else {"k": value}
    return value


# Text made of one repeated unit: a feed's mix (a few escapes, CJK, 4-byte UTF-8), and the
# worst case for every stage that writes JSON inside JSON: nothing but characters to escape.
UNITS = {
    "mixed": 'An earthquake "struck" the coast 东京湾 发生地震 🙂 more soon on the wire. ',
    "escapes": '"\\"\\\t',
}


def largest_deepest_event(unit: str = UNITS["mixed"]) -> bytes:
    """An accepted event at every limit at once: the whole record, the text (as much as fits),
    the id, the nesting, the numbers."""
    base = {
        "id": "长" * SETTINGS.max_id_chars,
        "ts": 2**53,
        "deep": nested(SETTINGS.max_depth - 1),  # the event object is level 1
        "ints": [2**63 - 1, -(2**63)],
        "floats": [1.7976931348623157e308, 5e-324],
        "text": "",
    }
    envelope = len(json.dumps(base, ensure_ascii=False).encode())
    unit_json = len(json.dumps(unit, ensure_ascii=False).encode()) - 2
    units = min(SETTINGS.max_text_bytes // len(unit.encode()), (record_limit(SETTINGS) - envelope - 16) // unit_json)
    base["text"] = unit * units
    base["pad"] = ""
    filler = record_limit(SETTINGS) - len(json.dumps(base, ensure_ascii=False).encode())
    assert filler > 0, envelope
    base["pad"] = "p" * filler
    raw = json.dumps(base, ensure_ascii=False).encode()
    assert len(raw) == record_limit(SETTINGS)
    return raw


def at_depth(frames: int, call: Callable[[], T]) -> T:
    """``call()`` with ``frames`` more frames on the stack."""
    if frames <= 0:
        return call()
    return at_depth(frames - 1, call)


def round_trip(raw: bytes, tmp: Path) -> dict[str, Any]:
    event = parse_event(raw, SETTINGS, now_ms=2**53)
    fp = fingerprint(event.text, SETTINGS)
    order = total_order(2**40, 3, 123_456)
    intro = Intro(event.id, order, event.ts or 0, f"{fp.simhash:016x}", 1, event.to_dict())
    plan = parse_plan(SETTINGS.plan, SETTINGS.k, SETTINGS.expected_fingerprints)
    slots = tuple((t, key, TABLE) for t, key in enumerate(plan.keys(fp.simhash)))
    shares = [Share(event.id, order, intro.ts, fp.simhash, fp.sketch, slots)]

    # fingerprint -> index: the probes message carries the intro.
    messages = encode_probes(shares, {(event.id, order): intro.to_dict()})
    assert all(len(m) < KAFKA_DEFAULT_MAX_RECORD for m in messages)
    got_shares, got_intros = [], []
    for message in messages:
        p, i = decode_probes(message)
        got_shares += p
        got_intros += i
    assert got_shares == shares and got_intros == [intro.to_dict()]

    # The index store keeps the id, the fingerprint and the sketch.
    index = IndexPartition(tmp / "index", plan, SETTINGS.retention_ms)
    index.add(Entry(event.id, fp.simhash, order, intro.ts, fp.sketch), tables=range(len(plan.tables)))
    assert [c.entry.event_id for c in index.candidates(fp.simhash, [0], 0)] == [event.id]
    restored_index = IndexPartition(tmp / "index-restored", plan, SETTINGS.retention_ms)
    for record in encode_ops(index.take_ops()):  # its changelog record, and a store restored from it
        assert len(record) < KAFKA_DEFAULT_MAX_RECORD
        restored_index.apply(decode_ops(record))
    assert [c.entry.sketch for c in restored_index.candidates(fp.simhash, [0], 0)] == [fp.sketch]
    index.close()
    restored_index.close()

    # index -> verdict: the answers message.
    items = [
        i for chunk in encode_chunks([*got_intros, answer_item(event.id, order, [0], [])]) for i in decode_batch(chunk)
    ]
    state = gather.add_intro(None, Intro.from_dict(items[0]))

    # The verdict store on RocksDB, its changelog, and a store restored from that changelog.
    live = VerdictPartition(tmp / "live", SETTINGS.retention_ms)
    live.set_pending(event.id, state)
    published = gather.decide(gather.add_answer(state, order, range(intro.expected), []))
    live.set_verdict(event.id, published)
    live.put_outbox([published.output(event.id)])
    ops = live.take_ops()
    restored = VerdictPartition(tmp / "restored", SETTINGS.retention_ms)
    for chunk in encode_chunks(ops):
        assert len(chunk) < KAFKA_DEFAULT_MAX_RECORD
        restored.apply(decode_ops(chunk))
    assert restored.pending(event.id) == state
    assert restored.verdict(event.id) == published
    [(_, outputs)] = restored.outbox()
    live.close()
    restored.close()

    # The output record, as a consumer reads it.
    key, value = encode(outputs[0])
    assert key == event.id.encode() and len(value) < KAFKA_DEFAULT_MAX_RECORD
    dead = deadletter.value("fingerprint", "a reason", ("t", 0, 0), raw)
    assert len(dead) < KAFKA_DEFAULT_MAX_RECORD and json.loads(dead)["raw_bytes"] == len(raw)
    return dict(json.loads(value))


@pytest.mark.parametrize("text", list(UNITS))
def test_the_largest_deepest_accepted_event_round_trips_through_every_codec_and_store(
    tmp_path: Path, text: str
) -> None:
    raw = largest_deepest_event(UNITS[text])
    frames = sys.getrecursionlimit() - STACK_LEFT
    output = at_depth(frames, lambda: round_trip(raw, tmp_path))
    sent = json.loads(raw)
    assert output["verdict"] == "unique"
    for field in ("id", "text", "ts", "deep", "ints", "floats", "pad"):
        assert output[field] == sent[field], field


def test_one_level_deeper_or_one_byte_larger_is_refused() -> None:
    event = json.loads(largest_deepest_event())
    deeper = dict(event, deep=[event["deep"]], pad="")
    with pytest.raises(InvalidEvent, match="nested more than 32 levels"):
        parse_event(json.dumps(deeper, ensure_ascii=False).encode(), SETTINGS, now_ms=2**53)
    larger = dict(event, pad=event["pad"] + "p")
    with pytest.raises(InvalidEvent, match="over the limit of .* bytes for a record"):
        parse_event(json.dumps(larger, ensure_ascii=False).encode(), SETTINGS, now_ms=2**53)
