"""The development set is deterministic and correctly labelled, and the scorer counts right."""

from __future__ import annotations

import json
import os
from collections import Counter, defaultdict
from functools import cache
from typing import Any

from bench import devset, quality
from bench.quality import Verdict, score


@cache
def _built(size: int = 400, seed: int = 7) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    return devset.build(size, seed)


def test_same_seed_same_stream_other_seed_other_stream() -> None:
    events, truth = _built()
    again = devset.build(400, 7)
    assert (events, truth) == again
    other, _ = devset.build(400, 8)
    assert [e["text"] for e in other] != [e["text"] for e in events]


def test_events_are_well_formed_and_in_arrival_order() -> None:
    events, truth = _built()
    assert len(events) == 400
    assert [e["id"] for e in events] == [t["id"] for t in truth]
    assert len({e["id"] for e in events}) == len(events)
    assert all(set(e) == {"id", "text", "ts"} and e["text"].strip() for e in events)
    stamps = [e["ts"] for e in events]
    assert stamps == sorted(stamps)
    langs = Counter(t["lang"] for t in truth)
    assert min(langs["zh"], langs["en"]) >= 0.35 * len(events)


def test_truth_labels_are_consistent() -> None:
    events, truth = _built()
    text = {e["id"]: e["text"] for e in events}
    row = {t["id"]: t for t in truth}
    position = {e["id"]: i for i, e in enumerate(events)}
    members: dict[str, list[dict[str, Any]]] = defaultdict(list)
    for t in truth:
        members[t["cluster"]].append(t)
    for cluster, rows in members.items():
        roots = [r for r in rows if r["role"] in ("original", "hard_negative")]
        assert len(roots) == 1, cluster
    for t in truth:
        if t["role"] == "copy":
            source = row[t["related"]]
            assert source["cluster"] == t["cluster"] and source["role"] == "original"
            assert t["transforms"] and set(t["transforms"]) <= set(devset.TRANSFORMS)
            assert text[t["id"]] != text[t["related"]]
        elif t["role"] == "hard_negative":
            assert t["hard_negative"] in devset.HARD_NEGATIVE_KINDS
            assert row[t["related"]]["cluster"] != t["cluster"]
            assert len(members[t["cluster"]]) == 1
            assert position[t["related"]] < position[t["id"]]
        else:
            assert t["transforms"] == [] and t["related"] is None


def test_every_hard_negative_kind_looks_like_its_earlier_story() -> None:
    events, truth = _built()
    text = {e["id"]: e["text"] for e in events}
    kinds = Counter(t["hard_negative"] for t in truth if t["hard_negative"])
    assert set(kinds) == set(devset.HARD_NEGATIVE_KINDS) and min(kinds.values()) >= 3
    for t in truth:
        if t["hard_negative"] is None:
            continue
        mine, theirs = text[t["id"]], text[t["related"]]
        assert mine != theirs
        if t["hard_negative"] == "same_boilerplate":
            assert os.path.commonprefix([mine, theirs]) and os.path.commonprefix([mine[::-1], theirs[::-1]])
            assert len(os.path.commonprefix([mine[::-1], theirs[::-1]])) >= 100
        elif t["hard_negative"] == "same_template":
            marker = "早报】" if t["lang"] == "zh" else "Here is what you need to know today."
            assert marker in mine and marker in theirs
        else:
            assert len(os.path.commonprefix([mine, theirs])) >= 10


def test_copies_cover_the_feed_transformations() -> None:
    _, truth = devset.build(1500, 3)
    applied = Counter(name for t in truth for name in t["transforms"])
    assert set(applied) == set(devset.TRANSFORMS)
    seen: set[str] = set()
    late = 0
    for position, t in enumerate(truth):
        if t["role"] == "copy" and t["cluster"] in seen:
            late += position - max(i for i, r in enumerate(truth[:position]) if r["cluster"] == t["cluster"]) > 300
        seen.add(t["cluster"])
    assert late >= 10, "some copies must arrive long after their story"


def test_people_daily_tags_are_stripped_and_latin_tokens_keep_a_space() -> None:
    line = "１２月/t  ３１日/t  ，/w  江/nr  泽民/nr  发表/v  IBM/nx  486/m  电脑/n"
    assert devset.people_daily_paragraph(line) == "１２月３１日，江泽民发表IBM 486电脑"


def test_simplified_to_traditional_and_teaser_transformations() -> None:
    import random

    doc = devset.Doc("zh", "news", "国家主席发表新年讲话。他说，经济发展很快。我们要继续努力。明年会更好。")
    traditional = devset.t_s2t(doc, random.Random(1), devset._Donors([]))
    assert traditional is not None and "國家" in traditional.body and "講話" in traditional.body
    teaser = devset.t_truncation(doc, random.Random(1), devset._Donors([]))
    assert teaser is not None and teaser.body.startswith("国家主席发表新年讲话。")
    assert len(teaser.body) < len(doc.body)


def test_scorer_counts_precision_recall_f1_by_hand() -> None:
    def row(i: str, cluster: str, role: str = "original", **extra: Any) -> dict[str, Any]:
        base = {"id": i, "cluster": cluster, "lang": "en", "kind": "news", "role": role, "transforms": [],
                "hard_negative": None, "related": None, "source": i}  # fmt: skip
        return base | extra

    truth = [
        row("a", "A"),
        row("b", "B"),
        row("a1", "A", "copy", transforms=["typos"], related="a"),
        row("h", "H", "hard_negative", hard_negative="same_opening", related="b"),
        row("a2", "A", "copy", transforms=["truncation"], related="a"),
        row("b1", "B", "copy", transforms=["typos", "footer"], related="b"),
    ]
    verdicts = [
        Verdict("a", None),
        Verdict("b", None),
        Verdict("a1", "a"),  # TP
        Verdict("h", "b"),  # FP on a hard negative
        Verdict("a2", "a1"),  # TP: any earlier member of the cluster will do
        Verdict("b1", "a"),  # FP: wrong cluster, and a missed true duplicate
    ]
    s = score("hand", verdicts, truth)
    assert (s.tp, s.fp, s.duplicate_verdicts, s.true_duplicates) == (2, 2, 4, 3)
    assert s.precision == 0.5 and abs(s.recall - 2 / 3) < 1e-12
    assert abs(s.f1 - 2 * 0.5 * (2 / 3) / (0.5 + 2 / 3)) < 1e-12
    assert s.recall_by_transform == {"typos": [1, 2], "truncation": [1, 1], "footer": [0, 1]}
    assert s.hard_negative_fp == {"same_opening": [1, 1]}
    assert s.fp_by_role == {"hard_negative": 1, "copy": 1}


def test_scorer_handles_no_duplicate_verdicts() -> None:
    truth = [{"id": "x", "cluster": "X", "lang": "zh", "kind": "short", "role": "original", "transforms": [],
              "hard_negative": None, "related": None, "source": "x"}]  # fmt: skip
    s = score("silent", [Verdict("x", None)], truth)
    assert (s.precision, s.recall, s.f1) == (0.0, 0.0, 0.0)


def test_minhash_baseline_finds_a_copy_and_not_a_stranger() -> None:
    story = "The council approved the new bridge over the river after a long debate on its cost and safety."
    events = [
        {"id": "1", "text": story},
        {"id": "2", "text": "Completely unrelated words about cooking pasta with garlic, olive oil and fresh basil."},
        {"id": "3", "text": story + " Read more: https://t.co/abc"},
    ]
    verdicts = quality.run_minhash(events, verify=True)
    assert [v.duplicate_of for v in verdicts] == [None, None, "1"]


def test_shipped_sample_is_the_generated_one_and_small() -> None:
    assert devset.SAMPLE_PATH.stat().st_size < 300_000
    shipped = [json.loads(line) for line in devset.SAMPLE_PATH.read_text("utf-8").splitlines()]
    events, truth = devset.build(devset.SAMPLE_SIZE, devset.DEFAULT_SEED, max_chars=devset.SAMPLE_MAX_CHARS)
    assert shipped == events
    assert {t["lang"] for t in truth} == {"zh", "en"}
    assert sum(t["role"] == "copy" for t in truth) >= 20


def test_a_sets_digest_changes_with_any_event_and_not_otherwise() -> None:
    events = [{"id": "a", "text": "one", "ts": 1}, {"id": "b", "text": "two", "ts": 2}]
    same = [{"ts": 1, "text": "one", "id": "a"}, {"id": "b", "text": "two", "ts": 2}]
    assert quality.digest(events) == quality.digest(same)  # the fields' order is not the set
    assert quality.digest(events) != quality.digest([events[0], {**events[1], "text": "two!"}])
    assert quality.digest(events) != quality.digest(events[::-1])
    assert len(quality.digest(events)) == 16
