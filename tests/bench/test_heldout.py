"""The held-out set is deterministic, has every class, and keeps hard negatives apart."""

from __future__ import annotations

import random
from collections import Counter
from functools import cache
from typing import Any

from bench import devset, heldout


@cache
def _built(size: int = 600, seed: int = 11) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    return heldout.build(size, seed)


def test_same_seed_same_stream_other_seed_other_stream() -> None:
    events, truth = _built()
    assert heldout.build(600, 11) == (events, truth)
    other, _ = heldout.build(600, 12)
    assert [e["text"] for e in other] != [e["text"] for e in events]


def test_every_copy_class_and_hard_negative_kind_is_present_in_both_languages() -> None:
    _, truth = _built()
    classes = Counter((t["lang"], name) for t in truth for name in t["transforms"])
    for name in heldout.COPY_CLASSES:
        langs = {"en"} if name == "typos_keyboard" else {"zh"} if name == "typos_homophone" else {"en", "zh"}
        assert all(classes[(lang, name)] >= 3 for lang in langs), name
    kinds = Counter((t["lang"], t["hard_negative"]) for t in truth if t["hard_negative"])
    assert all(kinds[(lang, kind)] >= 5 for lang in ("zh", "en") for kind in heldout.HARD_NEGATIVE_KINDS)
    assert all(len(t["transforms"]) == 1 for t in truth if t["role"] == "copy")  # recall reads class by class


def test_hard_negatives_are_alone_in_their_cluster_and_look_like_an_earlier_original() -> None:
    events, truth = _built()
    text = {e["id"]: e["text"] for e in events}
    row = {t["id"]: t for t in truth}
    position = {e["id"]: i for i, e in enumerate(events)}
    members = Counter(t["cluster"] for t in truth)
    strangers: list[float] = []
    for t in truth:
        if t["role"] == "copy":
            assert row[t["related"]]["cluster"] == t["cluster"] and row[t["related"]]["role"] == "original"
            assert text[t["id"]] != text[t["related"]]
        if t["role"] != "hard_negative":
            continue
        assert members[t["cluster"]] == 1
        a, b = text[t["related"]], text[t["id"]]
        assert row[t["related"]]["cluster"] != t["cluster"] and position[t["related"]] < position[t["id"]]
        if t["hard_negative"] == "template_numbers":
            assert a != b and row[t["related"]]["source"] == t["source"]  # one template, other fillers
            assert any(ch.isdigit() for ch in a) and any(ch.isdigit() for ch in b)
        elif t["hard_negative"] == "shared_opening":
            assert len(_common_prefix(a, b)) >= 3
            strangers.append(_repeated_share(a, b))
        else:
            assert len(_common_prefix(a[::-1], b[::-1])) >= 60 and len(_common_prefix(a, b)) >= 5
    # A stranger repeats less of its original than a truncation keeps (else it is a copy with a
    # sentence appended); a share coming out higher than the cap is a word the next post starts with.
    assert len(strangers) >= 10 and sum(share >= heldout.STRANGER_SHARE / 100 for share in strangers) <= 1
    assert any(share >= 0.2 for share in strangers)  # and half of them share more than the opener


def _repeated_share(a: str, b: str) -> float:
    """How much of A's post (after the opener both start with) B repeats at its start."""
    opener = next(o for o in heldout._ZH_OPENERS + heldout._EN_OPENERS if a.startswith(o) and b.startswith(o))
    post = a[len(opener) :]
    return len(_common_prefix(post, b[len(opener) :])) / len(post)


def test_no_held_out_text_is_in_the_development_set() -> None:
    dev = {devset._normal(s.text) for sources in devset.load_sources().values() for s in sources}
    held = [s for sources in heldout.load_sources().values() for s in sources]
    assert len(held) > 1000
    assert [s.sid for s in held if devset._normal(s.text) in dev] == []


def test_typo_classes_touch_one_to_five_percent_and_keep_the_rest() -> None:
    text = "The committee approved the new budget for the public library after a long debate on Tuesday."
    rng = random.Random(3)
    for _ in range(20):
        typo = heldout.en_keyboard_typos(text, rng)
        assert typo is not None and typo != text and abs(len(typo) - len(text)) <= 3
    zh = "国务院常务会议今天在北京召开，会议研究部署进一步做好农村饮水安全工作。"
    for _ in range(20):
        sound = heldout.homophone_typos(zh, rng)
        assert sound is not None and len(sound) == len(zh)
        assert 1 <= sum(x != y for x, y in zip(sound, zh, strict=True)) <= 2


def _common_prefix(a: str, b: str) -> str:
    n = 0
    while n < min(len(a), len(b)) and a[n] == b[n]:
        n += 1
    return a[:n]
