"""Structure-aware hostile records: what feeds and attackers send, at and around every limit.

Each generator makes one kind of trouble (nesting, sizes, Unicode classes, numeric extremes,
control characters, timestamps, broken framing); :func:`hostile_records` mixes them, seeded,
so a failure names a record that can be made again.
"""

from __future__ import annotations

import json
import random
from collections.abc import Callable
from typing import Any

from bench import quotes

UNICODE_SAMPLES = [
    "\u202eمرحبا بالعالم\u200f",  # right-to-left override, Arabic, RLM
    "zero\u200bwidth\u200c\u200djoiners\u2060",
    "e\u0301\u0301\u0301 combining marks a\u0308\u0324",
    "👩\u200d👩\u200d👧\u200d👦 family, 🏳️\u200d🌈 flag, 🇯🇵",
    "𠀋𡈽𡌛 CJK extension B, 〇〡〢",
    "\ue000\uf8ff private use \ufffe\uffff noncharacters",
    "ＦＵＬＬ　ＷＩＤＴＨ　ｔｅｘｔ",
    "東京發生地震，臺灣、香港報道",
    "Ⅻ ⅻ ① ᵃᵇᶜ ﬁ ﬂ ligatures",
    "\u00a0\u2028\u2029\u3000 odd spaces",
]
INTEGERS = [0, 1, -1, 2**31, 2**53, 2**53 + 1, 2**63 - 1, -(2**63), 2**63, -(2**63) - 1, 2**64, 10**30]
FLOATS = ["1e308", "-1e308", "1e400", "-1e400", "5e-324", "-0.0", "NaN", "Infinity", "-Infinity", "1.5"]
TIMESTAMPS: list[Any] = [
    "1900-01-01Z",
    "1970-01-01T00:00:00Z",
    "1969-12-31T23:59:59.999Z",
    "2024-02-30T00:00:00Z",
    "2024-06-01T12:00:00+14:00",
    "2024-06-01",
    "9999-12-31T23:59:59Z",
    "yesterday",
    "",
    -5,
    -0.5,
    0,
    1.5,
    2**53,
    2**53 + 1,
    2**63,
    True,
    None,
    [],
    {},
]
CONTROLS = ["\x00", "\x01", "\x07", "\x1b[31m", "\x7f", "\x85", "\x9f", "\n", "\r\n", "\t"]


def story(rng: random.Random) -> str:
    """A text of real sentences, mostly distinct from the others: the hostility is in the
    rest of the record, not in thousands of copies of one text (the index's worst case)."""
    return " ".join(rng.sample(quotes.pieces(), 2))


def _nested(rng: random.Random, levels: int) -> Any:
    value: Any = rng.choice([1, "leaf", None, []])
    for _ in range(levels - 1):
        value = [value] if rng.random() < 0.5 else {"k": value}
    return value


def _event(event_id: str, text: str, **extra: Any) -> bytes:
    return json.dumps({"id": event_id, "text": text, **extra}, ensure_ascii=False).encode("utf-8", "surrogatepass")


def depth(rng: random.Random, n: int, max_text: int) -> bytes:
    return _event(f"depth-{n}", story(rng), x=_nested(rng, rng.choice([1, 2, 30, 31, 32, 33, 60, 200])))


def sizes(rng: random.Random, n: int, max_text: int) -> bytes:
    kind = rng.randrange(4)
    if kind == 0:  # text around its limit, in 1-, 3- and 4-byte characters
        unit = rng.choice(["a", "东", "🙂"])
        count = (max_text + rng.choice([-4, 0, 4])) // len(unit.encode())
        return _event(f"size-{n}", unit * count)
    if kind == 1:  # ids around their limit (256 characters)
        return _event("i" * rng.choice([255, 256, 257]) + str(n), story(rng))
    if kind == 2:  # many small fields
        return _event(f"fields-{n}", story(rng), **{f"f{i}": i for i in range(rng.choice([10, 1000, 5000]))})
    return _event(f"empty-{n}", rng.choice(["", " ", "\u3000\n\t"]))


def unicode_classes(rng: random.Random, n: int, max_text: int) -> bytes:
    text = " ".join(rng.sample(UNICODE_SAMPLES, 3))
    if rng.random() < 0.2:
        return (b'{"id": "uni-%d", "text": "half a pair \\ud83d ' % n) + text.encode() + b'"}'
    if rng.random() < 0.1:  # in another field: it was indexed, then failed where its verdict was written
        where = rng.choice([b'"meta": "\\udfff"', b'"meta": {"tags": ["ok", "\\ud800"]}', b'"meta": {"\\udbff": 1}'])
        return b'{"id": "uni-%d", "text": "%s", %s}' % (n, text.encode(), where)
    return _event(f"uni-{n}-{rng.choice(UNICODE_SAMPLES)[:3]}", text)


def numbers(rng: random.Random, n: int, max_text: int) -> bytes:
    literal = str(rng.choice(INTEGERS)) if rng.random() < 0.5 else rng.choice(FLOATS)
    if rng.random() < 0.1:
        literal = "9" * rng.choice([19, 20, 4301, 5000])
    return f'{{"id": "num-{n}", "text": {json.dumps(story(rng), ensure_ascii=False)}, "n": {literal}}}'.encode()


def controls(rng: random.Random, n: int, max_text: int) -> bytes:
    control = rng.choice(CONTROLS)
    where = rng.randrange(3)
    if where == 0:
        return _event(f"ctl-{n}{control}", story(rng))
    if where == 1:
        return _event(f"ctl-{n}", f"{story(rng)}{control}{n}")
    return _event(f"ctl-{n}", story(rng), **{f"field{control}": n})


def timestamps(rng: random.Random, n: int, max_text: int) -> bytes:
    return _event(f"ts-{n}", story(rng), ts=rng.choice(TIMESTAMPS))


def framing(rng: random.Random, n: int, max_text: int) -> bytes:
    good = _event(f"frame-{n}", story(rng))
    kind = rng.randrange(5)
    if kind == 0:
        return good[: rng.randrange(1, len(good))]
    if kind == 1:
        cut = rng.randrange(len(good))
        return good[:cut] + b"\xff\xfe" + good[cut:]
    if kind == 2:
        return rng.choice([b"", b"null", b"[]", b'"text"', b"{}", b"123"])
    if kind == 3:
        return bytes(rng.randrange(256) for _ in range(rng.randrange(1, 200)))
    return good + b" trailing"


KINDS: list[Callable[[random.Random, int, int], bytes]] = [
    depth,
    sizes,
    unicode_classes,
    numbers,
    controls,
    timestamps,
    framing,
]


def hostile_records(count: int, max_text: int, seed: int = 2026) -> list[bytes]:
    """``count`` hostile records, a mix of every kind, the same for the same seed."""
    rng = random.Random(seed)
    return [KINDS[n % len(KINDS)](rng, n, max_text) for n in range(count)]
