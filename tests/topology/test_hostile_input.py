"""Hostile input: every record is either fingerprinted or rejected with a reason — never a crash.

A hypothesis fuzz run of 10 000 generated records (valid events, mangled events and raw
garbage) goes through the same path the worker and ``neardup scan`` use: decode + validate
(``parse_event``), then normalise, segment and fingerprint. A fixed corpus of nasties, the ones
real feeds and attackers produce, is counted the same way.
"""

from __future__ import annotations

import json
from collections import Counter

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from topology.validate import InvalidEvent, parse_event
from worker.engine.fingerprint import fingerprint
from worker.settings import Settings

SETTINGS = Settings()
TEXTS = st.text(
    alphabet=st.characters(codec="utf-8", exclude_categories=()),
    max_size=400,
) | st.sampled_from(
    ["", " ", "\u200b\u200f", "🙂🙂🙂", "東京發生地震", "ＦＵＬＬ　ＷＩＤＴＨ", "a\x00b", "\u202e!dlrow olleh"]
)
IDS = st.one_of(
    st.text(max_size=300), st.integers(), st.none(), st.floats(allow_nan=True), st.lists(st.integers(), max_size=2)
)
TS = st.one_of(
    st.none(), st.integers(min_value=-(2**63), max_value=2**63), st.text(max_size=30), st.booleans(), st.floats()
)


def json_events() -> st.SearchStrategy[bytes]:
    records = st.fixed_dictionaries(
        {},
        optional={"id": IDS, "text": TEXTS | st.integers() | st.none(), "ts": TS, "source": st.text(max_size=20)},
    )
    return records.map(lambda r: json.dumps(r, ensure_ascii=False).encode("utf-8", "surrogatepass"))


def mangled(raw: bytes) -> st.SearchStrategy[bytes]:
    return st.integers(min_value=0, max_value=max(len(raw) - 1, 0)).map(
        lambda cut: raw[:cut] + b"\xff" + raw[cut + 1 :]
    )


def valid_events() -> st.SearchStrategy[bytes]:
    ids = st.text(alphabet=st.characters(exclude_categories=("Cc", "Cs")), min_size=1, max_size=40)
    records = st.fixed_dictionaries({"id": ids.filter(str.strip), "text": TEXTS.filter(str.strip)})
    return records.map(lambda r: json.dumps(r).encode())


RECORDS = st.one_of(
    valid_events(),
    json_events(),
    json_events().flatmap(mangled),
    st.binary(max_size=300),
    st.recursive(
        st.none() | st.booleans() | st.integers() | st.text(max_size=10),
        lambda kids: st.lists(kids, max_size=3) | st.dictionaries(st.text(max_size=5), kids, max_size=3),
    ).map(lambda v: json.dumps(v).encode()),
)


def handle(raw: bytes) -> str:
    """What the worker does with one record: 'processed' or 'rejected: <reason>'."""
    try:
        event = parse_event(raw, SETTINGS)
    except InvalidEvent as exc:
        assert exc.reason and len(exc.reason) < 400
        return "rejected: " + exc.reason
    fp = fingerprint(event.text, SETTINGS)
    assert 0 <= fp.simhash < 2**64
    assert fp.exact is not None or len(fp.anchors) == 2
    return "processed"


def test_fuzz_every_record_is_processed_or_rejected_with_a_reason() -> None:
    outcomes: Counter[str] = Counter()

    @settings(
        max_examples=10_000, deadline=None, suppress_health_check=list(HealthCheck), derandomize=True, database=None
    )
    @given(RECORDS)
    def one(raw: bytes) -> None:
        outcomes[handle(raw).split(":")[0]] += 1

    one()
    print(f"fuzz: {outcomes['processed']} processed, {outcomes['rejected']} rejected with a reason")
    assert sum(outcomes.values()) >= 10_000
    assert outcomes["processed"] >= 1000 and outcomes["rejected"] >= 1000, outcomes


def nasties() -> dict[str, bytes]:
    def ev(event_id: object, text: object) -> bytes:
        return json.dumps({"id": event_id, "text": text}, ensure_ascii=False).encode()

    return {
        "invalid UTF-8": b'{"id": "u1", "text": "caf\xe9 au lait"}',
        "NUL bytes": ev("n1", "breaking\x00news\x00 from the wire service today, more soon"),
        "lone surrogate escape": b'{"id": "s1", "text": "half a pair \\ud83d here"}',
        "20 MB text": ev("big", "新闻" * 3_500_000),
        "1 MB word": ev("word", "x" * 1_000_000),
        "1 MB CJK run": ev("cjk", "的" * 330_000),
        "deeply nested JSON": b'{"id": "d1", "text": ' + b"[" * 50_000 + b"]" * 50_000 + b"}",
        "number as id": ev(12345, "numbers are not ids"),
        "empty id": ev("", "no id at all"),
        "id over the limit": ev("i" * 1000, "a very long id"),
        "RTL and zero-width": ev("rtl", "\u202eمرحبا بالعالم\u200b\u200c\u200d hello \u2066world\u2069"),
        "emoji only": ev("emoji", "🔥🔥🔥😮👀🚀"),
        "same id, first text": ev("same", "The council approved the budget on Monday after a long debate."),
        "same id, other text": ev("same", "A different story under a reused id, about the weather."),
        "not an object": b'"just a string"',
        "empty record": b"",
    }


def test_nasty_corpus_is_counted() -> None:
    results = {name: handle(raw) for name, raw in nasties().items()}
    rejected = {name for name, outcome in results.items() if outcome.startswith("rejected")}
    print(f"nasties: {len(results) - len(rejected)} processed, {len(rejected)} rejected with a reason")
    assert rejected == {
        "invalid UTF-8",
        "lone surrogate escape",
        "20 MB text",
        "1 MB word",
        "1 MB CJK run",
        "deeply nested JSON",
        "number as id",
        "empty id",
        "id over the limit",
        "not an object",
        "empty record",
    }, results
    assert "over the limit" in results["20 MB text"]
    assert "nested more than 32 levels deep" in results["deeply nested JSON"]
